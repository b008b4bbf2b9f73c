// The corpus: files cut into 64 KiB pages, each coded as mkfs.gdfs codes it (gdfs/page_encode.h), and
// the CPU decoder over all of them (the baseline the GPU runs are compared with).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "args.h"
#include "gdfs/page.h"

namespace gdfs::gpubench {

inline constexpr uint32_t kPageBytes = 65536;
inline constexpr uint64_t kAlign = 16;  // every page's input and output start 16-byte aligned

inline uint64_t align_up(uint64_t n) {
  return (n + kAlign - 1) & ~(kAlign - 1);
}

struct Page {
  uint64_t raw_off = 0;  // its source bytes: Corpus::raw[raw_off, raw_off + raw_size)
  uint64_t enc_off = 0;  // its stored bytes: Corpus::enc[enc_off, enc_off + enc_size)
  uint64_t out_off = 0;  // where it is decoded to in an output buffer of Corpus::out_bytes
  uint32_t raw_size = 0;
  uint32_t enc_size = 0;  // == raw_size for stored pages
  format::Codec codec = format::kCodecStored;
  uint16_t param = 0;  // bitpack parameters
};

struct Corpus {
  std::string name;
  std::vector<std::string> roots;  // the PATHs given
  uint64_t files = 0;
  std::vector<uint8_t> raw;  // every file's bytes, concatenated in load order
  std::vector<uint8_t> enc;  // every page's stored bytes, each page 16-byte aligned, in page order
  std::vector<Page> pages;
  uint64_t out_bytes = 0;     // bytes of a buffer holding every decoded page, each 16-byte aligned
  uint64_t stored_bytes = 0;  // sum of enc_size: what an image would hold for the data
  uint64_t count[4] = {};     // pages per codec (index: format::Codec)
  uint64_t raw_by_codec[4] = {}, enc_by_codec[4] = {};
  int level = 6;
  std::string codec_desc;  // "gdeflate", "auto", "gdeflate; *.wav=auto", ...
  unsigned encode_threads = 0;
  double load_s = 0, encode_s = 0;

  uint64_t raw_bytes() const { return raw.size(); }
  double ratio() const { return stored_bytes ? double(raw.size()) / double(stored_bytes) : 0.0; }
};

// Reads and codes the corpus on `threads` threads. Throws std::runtime_error on I/O errors or an
// empty corpus.
Corpus load_corpus(const Args& a, unsigned threads);

// Pages `ids[0, count)` (all pages when ids is null) in `out` (an out_bytes buffer) against the source.
// Returns how many differ; *first_bad gets the smallest such index into ids (count when none).
uint64_t check_pages(const Corpus& c, const uint8_t* out, const uint32_t* ids, size_t count, unsigned threads,
                     size_t* first_bad = nullptr);

struct CpuTiming {
  unsigned threads = 0;
  std::string path;         // the GDeflate decode path in use ("avx512", ...)
  std::vector<double> ms;   // one per timed pass
  uint64_t failed = 0;      // pages whose decoder reported an error (last pass)
  uint64_t mismatched = 0;  // pages decoded to the wrong bytes (last pass)
};
// Decodes every page into `out` (out_bytes) on `threads` threads, `reps` timed passes after a
// warm-up; `out` is cleared before the last pass and checked after it.
CpuTiming cpu_decode(const Corpus& c, uint8_t* out, unsigned threads, unsigned reps);

}  // namespace gdfs::gpubench
