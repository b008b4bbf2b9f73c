// The order in which a directory build reads and packs the regular files: inode order, except that a
// Python module's compiled files follow its source. `__pycache__/NAME.TAG[.opt-N].pyc` repeats the
// names, strings and docstrings of the `NAME.py` beside that `__pycache__`, but inode order puts it a
// whole breadth-first level later, in another tail pack. Placed right after its source, and started in a
// fresh pack when the group's tails fit in one page but not in the rest of the current one, the
// bytecode's tail is coded against the source's: the images of two Python trees came out 1.8% and 2.2%
// smaller (bench/results/2026-11-27-tail-pairs-zen5-vm.txt). Trees without bytecode keep inode order
// exactly. Readers need nothing of this: page ranges and tails are found through the inodes. Archive
// builds pair the same files as they come (bytecode_hold.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scan.h"
#include "tree.h"

namespace gdfs::mkfs {

struct DataOrderEntry {
  uint32_t node;  // scan node of a regular file
  // On the first file of a group of two or more (a source and its compiled files): the sum of their
  // tails (size % page, at most UINT32_MAX), which the packer keeps in one pack when they fit in one.
  // 0 elsewhere. 32 bits: a tree of a million files holds a million of these while it is packed.
  uint32_t group_tails;
  // A compiled file: its tail goes after the other tails of its pack, so that the source text and the
  // bytecode each lie in one stretch (Huffman blocks fitted to each). A source still precedes its
  // bytecode within the pack's 64 KiB window.
  bool compiled;
};

// Every regular file of `tree` once (a hard link at its first sighting), in packing order.
std::vector<DataOrderEntry> data_order(const ScanResult& scan, const Tree& tree, uint64_t page);

// The source name a compiled file's name belongs to ("mod.cpython-311.opt-1.pyc" -> "mod.py"), or "" if
// `pyc` is not named like one: NAME.TAG.pyc, NAME.TAG.opt-N.pyc, NAME and TAG not empty.
std::string pyc_source_name(const std::string& pyc);

}  // namespace gdfs::mkfs
