// Where the archive walk's bytes come from. libarchive recognizes and decompresses every compressed
// archive itself, except two, decompressed here where the libraries are there:
// - gzip, with ISA-L (Debian: libisal-dev), 2.7x as fast as libarchive's zlib on a Linux source .tar.gz,
//   whose inflate had made it a slower source than the extracted tree
//   (bench/results/2026-11-27-archive-isal-zen5-vm.txt);
// - xz, with liblzma 5.4's multi-threaded decoder (liblzma-dev), for files of several blocks (as
//   `xz -T` writes them), where libarchive decodes on one thread and leaves a core idle
//   (bench/results/2026-11-27-archive-ingest-xz-zen5-vm.txt).
// Every gzip member's CRC-32 and length, and every xz block's check, are verified to the end of the
// stream: also the part after the archive's own end, which libarchive never asks for.
#pragma once

#include <archive.h>

#include <memory>
#include <string>

namespace gdfs::mkfs {

class Diag;

// libarchive's message for the last error on `a` ("unknown error" where it has none).
std::string archive_error(archive* a);

class ArchiveInput {
 public:
  // `path`: a file, or "-" for standard input; `label` names it in messages; `threads`: for xz.
  ArchiveInput(std::string path, std::string label, Diag& diag, unsigned threads);
  ~ArchiveInput();
  ArchiveInput(const ArchiveInput&) = delete;
  ArchiveInput& operator=(const ArchiveInput&) = delete;

  // Opens `a` (formats and filters already chosen) on the input. Throws MkfsError.
  void open(archive* a);

  // After the archive's last member: reads what is left of a gzip stream, checking its CRCs. A damaged
  // stream is an MkfsError: members read before the damage may hold wrong bytes.
  void finish();

  // Whether this build inflates gzip itself (with ISA-L), and decodes xz itself (with liblzma's
  // multi-threaded decoder), rather than leaving them to libarchive.
  static bool inflates_gzip();
  static bool decodes_xz();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gdfs::mkfs
