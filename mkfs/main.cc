#include <iostream>

#include "cli.h"

int main(int argc, char** argv) {
  return gdfs::mkfs::mkfs_main(argc, argv, std::cout, std::cerr);
}
