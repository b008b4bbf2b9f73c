// `verify`: open (which checks the superblock and all metadata), then decode every stored page with both
// checksums on T threads, and resolve every page of every regular file. Reports each broken page with
// the files that use it.
#include <algorithm>
#include <atomic>
#include <map>
#include <ostream>
#include <set>
#include <thread>

#include "commands.h"
#include "gdfs/machine.h"
#include "gdfs/trust.h"
#include "stored_pages.h"
#include "util.h"
#include "walk.h"

namespace gdfs::inspect {
namespace {

// Decodes the stored pages first[i], taken kBatch at a time from a shared counter so that threads
// balance themselves. Each batch goes to the source in one call: a remote image serves it with
// concurrent requests rather than one round trip per page.
void decode_worker(const Image& img, const std::vector<uint64_t>& first, std::atomic<size_t>& next,
                   std::vector<PageStatus>& status) {
  constexpr size_t kBatch = 32;
  PageDecoder dec;
  std::vector<uint8_t> stored, out(img.page_size());
  std::vector<ReadRange> ranges;
  for (size_t i; (i = next.fetch_add(kBatch, std::memory_order_relaxed)) < first.size();) {
    const size_t end = std::min(first.size(), i + kBatch);
    uint64_t bytes = 0;
    for (size_t k = i; k < end; ++k) bytes += img.pages()[first[k]].csize;
    stored.resize(bytes);
    ranges.clear();
    bytes = 0;
    for (size_t k = i; k < end; ++k) {
      const format::PageEntry& e = img.pages()[first[k]];
      ranges.push_back(ReadRange{e.offset, e.csize, stored.data() + bytes, false});
      bytes += e.csize;
    }
    img.source().read(ranges);
    for (size_t k = i; k < end; ++k) {
      const ReadRange& r = ranges[k - i];
      status[k] = !r.ok                             ? PageStatus::kIoError
                  : !img.stored_ok(first[k], r.dst) ? PageStatus::kDigest
                                                    : dec.decode(img.pages()[first[k]], r.dst, out.data());
    }
  }
}

std::vector<PageStatus> decode_all(const Image& img, const std::vector<uint64_t>& first, unsigned threads) {
  std::vector<PageStatus> status(first.size(), PageStatus::kOk);
  if (threads == 0) threads = machine::usable_cpus();
  threads = static_cast<unsigned>(std::clamp<size_t>(first.size(), 1, threads));
  std::atomic<size_t> next{0};
  std::vector<std::jthread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back([&] { decode_worker(img, first, next, status); });
  decode_worker(img, first, next, status);  // the calling thread works too
  return status;
}

struct FileCheck {
  std::map<size_t, std::set<uint32_t>> users;  // broken stored page -> inodes that use it
  std::vector<std::string> errors;             // files whose page map does not resolve
  uint64_t files = 0, file_bytes = 0;
};

// Every logical page of every regular file must resolve; note which files use a broken stored page.
FileCheck check_files(const Image& img, const StoredPages& sp, const std::vector<PageStatus>& status) {
  FileCheck fc;
  for (uint32_t ino = 1; ino <= img.inode_count(); ++ino) {
    if (img.type(ino) != format::kTypeReg) continue;
    ++fc.files;
    fc.file_bytes += img.inode(ino).size;
    try {
      img.for_each_data_page(ino, [&](uint64_t, const PageRef& ref) {
        const size_t g = sp.group_of.at(ref.entry);
        if (status[g] != PageStatus::kOk) fc.users[g].insert(ino);
      });
    } catch (const std::exception& e) {
      fc.errors.push_back(e.what());
    }
  }
  return fc;
}

// "page entry 7 (offset 4096, 1234 bytes, gdeflate): page checksum mismatch; used by inode 5 /a, ..."
void report_page(std::ostream& out, const Image& img, const PathIndex& paths,
                 const std::vector<uint64_t>& entries, PageStatus st, const std::set<uint32_t>& users) {
  const format::PageEntry& e = img.pages()[entries.front()];
  out << printable_name(img.name()) << ": page entr" << (entries.size() == 1 ? "y " : "ies ");
  for (size_t i = 0; i < entries.size(); ++i) out << (i ? "," : "") << entries[i];
  out << " (offset " << e.offset << ", " << e.csize << " bytes, " << codec_name(e.codec)
      << "): " << page_status_message(st) << "; used by ";
  if (users.empty()) out << "no file";
  constexpr size_t kMaxNamed = 8;  // a shared page (zeros, a common header) may be used by thousands
  size_t shown = 0;
  for (uint32_t ino : users) {
    if (shown == kMaxNamed) {
      out << ", and " << users.size() - shown << " more";
      break;
    }
    out << (shown++ ? ", " : "") << "inode " << ino << " " << printable_name(paths.path(ino));
  }
  out << "\n";
}

}  // namespace

int verify(const Options& o, std::ostream& out, std::ostream& err) {
  auto img = open_image(o);
  const StoredPages sp = distinct_stored_pages(*img);
  const std::vector<PageStatus> status = decode_all(*img, sp.first, o.threads);
  const FileCheck fc = check_files(*img, sp, status);
  uint64_t bytes = 0, broken = 0;
  for (size_t g = 0; g < sp.first.size(); ++g) {
    bytes += img->pages()[sp.first[g]].usize;
    broken += status[g] != PageStatus::kOk;
  }
  if (broken == 0 && fc.errors.empty()) {
    out << "ok: " << sp.first.size() << " pages, " << bytes << " bytes verified (" << img->pages().size()
        << " page entries, " << fc.files << " files, " << fc.file_bytes << " file bytes)";
    if (img->trusted()) out << "; signature by key " << trust::hex(img->signer()) << " verified";
    out << "\n";
    return 0;
  }
  std::vector<std::vector<uint64_t>> entries_of(sp.first.size());
  for (uint64_t i = 0; i < sp.group_of.size(); ++i)
    if (status[sp.group_of[i]] != PageStatus::kOk) entries_of[sp.group_of[i]].push_back(i);
  const PathIndex paths(*img);
  static const std::set<uint32_t> kNoUsers;
  std::set<uint32_t> affected;
  for (size_t g = 0; g < sp.first.size(); ++g) {
    if (status[g] == PageStatus::kOk) continue;
    auto it = fc.users.find(g);
    const std::set<uint32_t>& users = it == fc.users.end() ? kNoUsers : it->second;
    affected.insert(users.begin(), users.end());
    report_page(out, *img, paths, entries_of[g], status[g], users);
  }
  for (const std::string& e : fc.errors) out << printable_name(e) << "\n";
  err << "gdfs-inspect: error: " << printable_name(img->name()) << ": " << broken << " of " << sp.first.size()
      << " stored pages are broken (" << affected.size() << " files affected); " << fc.errors.size()
      << " files do not resolve\n";
  return 1;
}

}  // namespace gdfs::inspect
