// What the remote tests share: the images they serve (built once per test process, lazily), the servers'
// configurations, and checks of what a Reader returns against the source tree.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gdfs/reader.h"
#include "servers.h"
#include "tree_util.h"

namespace gdfs::test {

// The test process's scratch folder (world-readable, so nginx could serve it even as another user).
const std::string& scratch();
// A fresh, empty folder under scratch().
std::string fresh_dir(const std::string& tag);

// Two images under scratch()/www: the edge-case tree (every entry kind and edge case, tree_util.h) and a
// data tree of about 8 MiB (text, incompressible bytes, many small files) spanning several disk cache
// blocks. Built on first use.
struct TestImage {
  std::string src;                 // the source tree
  std::string file;                // the image file (under www/)
  std::string name;                // its file name, for URLs
  TreeCaps caps;                   // what the source tree could hold here
  std::vector<std::string> files;  // regular files, as "/a/b"
};
const TestImage& edge_image();
const TestImage& data_image();
std::string www();  // the folder the servers serve

// Removes proxy settings from the environment: every request goes straight to 127.0.0.1.
void no_proxies();

// nginx serving www() over HTTP (and HTTPS with HTTP/2 when `cert` is given).
struct WebServer {
  explicit WebServer(const TestCert* cert = nullptr);
  std::unique_ptr<Nginx> nginx;
  int http = 0, https = 0;
  std::string http_url(const std::string& name) const;
  std::string https_url(const std::string& name) const;
};

// Every entry of `img`'s source tree against the reader: the same paths, types, permission bits, sizes,
// symlink targets and file contents (sparse files by their data segments and samples of their holes).
// Returns the number of regular files whose contents were compared.
size_t expect_same_tree(Reader& r, const TestImage& img);
// Reads one whole file through the reader and compares it with the source. False on any difference.
bool same_file(Reader& r, const TestImage& img, const std::string& path);
// `count` random reads (offsets, lengths, some past the end) of random files, each compared with the
// source by pread. Returns how many failed with EIO; a wrong byte fails the test. Other errors too.
size_t random_reads(Reader& r, const TestImage& img, uint64_t seed, int count, size_t max_len = 300000);

// Bytes of the files under `dir` (recursively).
uint64_t tree_bytes(const std::string& dir);
// Regular files under `dir` whose name ends with `suffix`.
std::vector<std::string> files_named(const std::string& dir, const std::string& suffix);

// One value from a Reader's counters (stats_json), 0 when missing.
uint64_t counter(Reader& r, const std::string& name);

}  // namespace gdfs::test
