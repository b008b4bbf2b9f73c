#include <iostream>

#include "cli.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);  // `cat` streams file contents through std::cout
  return gdfs::tools::inspect_main(argc, argv, std::cout, std::cerr);
}
