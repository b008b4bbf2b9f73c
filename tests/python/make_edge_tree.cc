// gdfs_make_edge_tree DIR: builds the edge-case tree of tests/image/tree_util.h in DIR (created if
// missing, must be empty) for the Python tests, and prints what the process could not create.
#include <cstdio>
#include <exception>
#include <filesystem>

#include "tree_util.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  try {
    std::filesystem::create_directories(argv[1]);
    const gdfs::test::TreeCaps caps = gdfs::test::make_edge_tree(argv[1]);
    for (const std::string& note : caps.notes) std::printf("note: %s\n", note.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 1;
  }
  return 0;
}
