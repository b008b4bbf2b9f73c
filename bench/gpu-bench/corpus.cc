#include "corpus.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "gdfs/bitpack.h"
#include "gdfs/format.h"
#include "gdfs/gdeflate.h"
#include "parallel.h"

namespace gdfs::gpubench {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

struct FileRef {
  std::string path;  // to open
  std::string rel;   // for --codec-for: relative to the directory given, or the file name
};

// Regular files only, never through a symbolic link inside a directory (a link to a file in the same
// tree would count its bytes twice); a PATH given by name is followed.
void collect(const std::string& root, std::vector<FileRef>& out) {
  std::error_code ec;
  const fs::file_status st = fs::status(root, ec);
  if (ec) throw std::runtime_error("cannot stat " + root + ": " + ec.message());
  if (fs::is_regular_file(st)) {
    out.push_back({root, fs::path(root).filename().string()});
    return;
  }
  if (!fs::is_directory(st)) throw std::runtime_error(root + " is neither a regular file nor a directory");
  std::vector<FileRef> found;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
  if (ec) throw std::runtime_error("cannot list " + root + ": " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) throw std::runtime_error("cannot list " + root + ": " + ec.message());
    if (it->symlink_status(ec).type() != fs::file_type::regular) continue;
    found.push_back({it->path().string(), it->path().lexically_relative(root).string()});
  }
  std::sort(found.begin(), found.end(), [](const FileRef& a, const FileRef& b) { return a.path < b.path; });
  out.insert(out.end(), found.begin(), found.end());
}

const char* path_name(gdeflate::DecodePath p) {
  switch (p) {
    case gdeflate::DecodePath::kAvx512:
      return "avx512";
    case gdeflate::DecodePath::kAvx2:
      return "avx2";
    case gdeflate::DecodePath::kScalar:
      return "scalar";
    case gdeflate::DecodePath::kAuto:
      break;
  }
  return "auto";
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

Corpus load_corpus(const Args& a, unsigned threads) {
  Corpus c;
  c.name = a.name;
  c.roots = a.paths;
  c.level = a.level;
  c.codec_desc = page::codec_choice_name(a.codec);
  for (const page::CodecRule& r : a.codec_rules)
    c.codec_desc += "; " + r.glob + "=" + page::codec_choice_name(r.codec);
  c.encode_threads = threads;

  const auto t0 = Clock::now();
  std::vector<FileRef> files;
  for (const std::string& p : a.paths) collect(p, files);

  // Read the files (until --max-bytes), cutting pages as mkfs does: from each file's start, the last
  // page short. Each page remembers its file for --codec-for.
  std::vector<uint32_t> page_file;
  std::vector<FileRef> used;
  for (const FileRef& f : files) {
    if (a.max_bytes && c.raw.size() >= a.max_bytes) break;
    std::ifstream in(f.path, std::ios::binary | std::ios::ate);
    if (!in) {
      std::cerr << "gdfs-gpu-bench: skipping unreadable " << f.path << "\n";
      continue;
    }
    const std::streamoff size = in.tellg();
    in.seekg(0);
    const uint64_t at = c.raw.size();
    c.raw.resize(at + static_cast<uint64_t>(size));
    if (size > 0 && !in.read(reinterpret_cast<char*>(c.raw.data() + at), size)) {
      std::cerr << "gdfs-gpu-bench: skipping unreadable " << f.path << "\n";
      c.raw.resize(at);
      continue;
    }
    for (uint64_t off = 0; off < static_cast<uint64_t>(size); off += kPageBytes) {
      Page p;
      p.raw_off = at + off;
      p.raw_size = static_cast<uint32_t>(std::min<uint64_t>(kPageBytes, static_cast<uint64_t>(size) - off));
      c.pages.push_back(p);
      page_file.push_back(static_cast<uint32_t>(used.size()));
    }
    used.push_back(f);
  }
  c.files = used.size();
  c.load_s = ms_since(t0) / 1e3;
  if (c.pages.empty()) throw std::runtime_error("the corpus has no data (no non-empty regular file found)");

  // Code every page, one compressor per thread.
  const auto t1 = Clock::now();
  std::vector<page::Encoded> coded(c.pages.size());
  std::vector<page::CodecChoice> file_codec(used.size());
  for (size_t i = 0; i < used.size(); ++i)
    file_codec[i] = page::codec_for(a.codec_rules, used[i].rel, a.codec);
  std::vector<gdeflate::Compressor> comps;
  std::vector<std::vector<uint8_t>> scratch(threads);
  for (unsigned t = 0; t < threads; ++t) comps.emplace_back(a.level);
  parallel_for(
      c.pages.size(), threads,
      [&](size_t i, unsigned t) {
        const Page& p = c.pages[i];
        scratch[t].assign(c.raw.begin() + static_cast<ptrdiff_t>(p.raw_off),
                          c.raw.begin() + static_cast<ptrdiff_t>(p.raw_off + p.raw_size));
        page::encode_page(scratch[t], file_codec[page_file[i]], comps[t], coded[i]);
      },
      1);
  c.encode_s = ms_since(t1) / 1e3;

  // Pack the stored bytes (stored pages: the raw bytes) and lay out the outputs.
  uint64_t enc_total = 0, out_total = 0;
  for (size_t i = 0; i < c.pages.size(); ++i) {
    Page& p = c.pages[i];
    p.codec = coded[i].codec;
    p.param = coded[i].param;
    p.enc_size = p.codec == format::kCodecStored ? p.raw_size : static_cast<uint32_t>(coded[i].bytes.size());
    p.enc_off = enc_total;
    p.out_off = out_total;
    enc_total += align_up(p.enc_size);
    out_total += align_up(p.raw_size);
    c.stored_bytes += p.enc_size;
    if (p.codec < 4) {
      ++c.count[p.codec];
      c.raw_by_codec[p.codec] += p.raw_size;
      c.enc_by_codec[p.codec] += p.enc_size;
    }
  }
  c.out_bytes = out_total;
  c.enc.assign(enc_total, 0);
  for (size_t i = 0; i < c.pages.size(); ++i) {
    const Page& p = c.pages[i];
    const uint8_t* src = p.codec == format::kCodecStored ? c.raw.data() + p.raw_off : coded[i].bytes.data();
    std::memcpy(c.enc.data() + p.enc_off, src, p.enc_size);
  }
  return c;
}

uint64_t check_pages(const Corpus& c, const uint8_t* out, const uint32_t* ids, size_t count, unsigned threads,
                     size_t* first_bad) {
  std::atomic<uint64_t> bad{0};
  std::atomic<size_t> first{count};
  parallel_for(
      count, threads,
      [&](size_t k, unsigned) {
        const Page& p = c.pages[ids ? ids[k] : k];
        if (std::memcmp(out + p.out_off, c.raw.data() + p.raw_off, p.raw_size) != 0) {
          ++bad;
          size_t f = first.load();
          while (k < f && !first.compare_exchange_weak(f, k)) {
          }
        }
      },
      64);
  if (first_bad) *first_bad = first.load();
  return bad.load();
}

CpuTiming cpu_decode(const Corpus& c, uint8_t* out, unsigned threads, unsigned reps) {
  CpuTiming r;
  r.threads = threads;
  std::vector<PageDecoder> decs(threads);
  r.path = path_name(gdeflate::Decompressor().path());
  std::atomic<uint64_t> failed{0};
  auto pass = [&] {
    parallel_for(
        c.pages.size(), threads,
        [&](size_t i, unsigned t) {
          const Page& p = c.pages[i];
          const uint8_t* in = c.enc.data() + p.enc_off;
          uint8_t* dst = out + p.out_off;
          if (decs[t].decode_codec(p.codec, p.param, in, p.enc_size, dst, p.raw_size) != PageStatus::kOk)
            ++failed;
        },
        8);
  };
  pass();  // warm-up: page faults of `out`, decoder tables
  for (unsigned k = 0; k < reps; ++k) {
    if (k + 1 == reps) {
      std::memset(out, 0, c.out_bytes);
      failed = 0;
    }
    const auto t0 = Clock::now();
    pass();
    r.ms.push_back(ms_since(t0));
  }
  r.failed = failed.load();
  r.mismatched = check_pages(c, out, nullptr, c.pages.size(), threads);
  return r;
}

}  // namespace gdfs::gpubench
