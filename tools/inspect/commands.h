// The gdfs-inspect subcommands. Each takes its parsed options and the output streams and returns the exit
// code; problems that end the command (an image that does not open, a missing path) are thrown as
// exceptions and reported by inspect_main.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace gdfs::inspect {

struct Options {
  std::string image;
  std::string path;      // inside the image; "/" when not given
  std::string dir;       // extract: the target directory
  std::string archive;   // extract --archive: the archive file, "-" for standard output; "" = to DIR
  std::string format;    // extract --format: "" = from the archive's name
  std::string compress;  // extract --compress: "" = from the archive's name
  bool json = false;
  bool long_format = false;        // ls -l
  bool recursive = false;          // ls -R
  unsigned threads = 0;            // verify: 0 = all cores
  bool force = false;              // flatten: replace OUTPUT
  std::string sign_key;            // flatten --sign: the publisher's private key, PEM
  std::vector<std::string> bases;  // --base: where a layered image's bases are
  std::string key;                 // --key: trusted public key(s), PEM (SourceOptions::trusted_key)
};

int info(const Options& o, std::ostream& out);
int ls(const Options& o, std::ostream& out);
int pages(const Options& o, std::ostream& out);
int stats(const Options& o, std::ostream& out);
int verify(const Options& o, std::ostream& out, std::ostream& err);
int cat(const Options& o, std::ostream& out);
int extract(const Options& o, std::ostream& out, std::ostream& err);
// extract --archive (extract_archive.cc): the archive goes to o.archive, or to `out` when that is "-".
int extract_archive(const Options& o, std::ostream& out, std::ostream& err);
// A layered image as one standalone image at o.dir.
int flatten(const Options& o, std::ostream& out);
// Not about an image: the counters of a mounted gdfs (o.dir is the mount point).
int counters(const Options& o, std::ostream& out);

}  // namespace gdfs::inspect
