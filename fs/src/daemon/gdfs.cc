// The gdfs FUSE daemon. See gdfs --help and README.md.
#include "daemon/daemon.h"

int main(int argc, char** argv) {
  return gdfs::daemon::gdfs_main(argc, argv);
}
