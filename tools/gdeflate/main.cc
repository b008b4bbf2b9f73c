#include <iostream>

#include "cli.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);  // binary data goes through std::cout; large writes need no syncing
  return gdfs::tools::gdeflate_main(argc, argv, std::cin, std::cout, std::cerr);
}
