// --chmod MODE: one permission change for every inode of the image (symlinks excepted), in chmod(1)'s
// words: octal ("0644"), or comma-separated symbolic clauses [ugoa]*[+-=][rwxXst]* ("u+w,go-w,a+rX",
// which gives files 0644 or 0755 and directories 0755 whatever umask their builder had). No umask
// applies to a clause without [ugoa]: it means a. Copying another class's bits ("g=u") is not taken.
// Directories keep their setuid and setgid bits unless MODE names them (s, or octal 2000/4000) or is
// octal of 5 digits ("00755"), as with GNU chmod.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gdfs::mkfs {

struct ModeAction {
  uint32_t who = 07777;  // the bits of the classes named (u 04700, g 02070, o 01007; none or a: all)
  char op = '+';         // + - =
  uint32_t bits = 0;     // r w x s t as mode bits (before `who` masks them)
  bool cond_x = false;   // X: x for directories and for files with an x bit already
};

struct ModeChange {
  bool octal = false;
  uint32_t mode = 0;          // octal: the permission bits every inode gets
  bool keep_dir_ids = false;  // octal of at most 4 digits: directories keep setuid and setgid
  std::vector<ModeAction> actions;
};

// Parses MODE; "" or a message naming what is wrong with it.
std::string parse_mode_change(const std::string& text, ModeChange& out);

// `mode` (type and permission bits) after the change; a symlink's is kept as it is.
uint32_t apply_mode_change(const ModeChange& change, uint32_t mode);

}  // namespace gdfs::mkfs
