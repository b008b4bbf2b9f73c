#include "pack.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "base.h"
#include "bytecode_hold.h"
#include "content_key.h"
#include "data_order.h"
#include "diag.h"
#include "gdfs/checksum.h"
#include "gdfs/unique_fd.h"
#include "image_writer.h"
#include "prefetch.h"
#include "progress.h"

namespace gdfs::mkfs {
namespace {

struct TailRef {
  uint32_t pack;    // tail pack ordinal
  uint32_t offset;  // inside the decoded pack
};

bool all_zero(const uint8_t* p, size_t n) {
  static const uint8_t kZeros[gdeflate::kMaxPageBytes] = {};
  return std::memcmp(p, kZeros, n) == 0;
}

// The next data extent at or after `off`: [start, end). start == size when only holes remain.
struct Extent {
  uint64_t start, end;
};
Extent next_extent(int fd, uint64_t off, uint64_t size, const std::string& rel) {
  const off_t d = ::lseek(fd, static_cast<off_t>(off), SEEK_DATA);
  if (d < 0) {
    if (errno == ENXIO) return {size, size};                         // no data past `off`
    if (errno == EINVAL || errno == EOPNOTSUPP) return {off, size};  // no hole support: all data
    throw_entry_io("seek in", rel, errno);
  }
  const auto start = static_cast<uint64_t>(d);
  if (start >= size) return {size, size};
  const off_t h = ::lseek(fd, d, SEEK_HOLE);
  const uint64_t end = h < 0 ? size : std::min(static_cast<uint64_t>(h), size);
  return {start, std::max(end, start + 1)};
}

// A file's data as packed: its size in the image, and whether that size changed since the scan.
struct Packed {
  uint64_t size = 0;
  bool changed = false;
};

// "'PATH' changed as we read it: ...", tar's words, with what was stored.
std::string changed_message(const ScanNode& n, uint64_t stored) {
  std::string s = quote_path(n.path);
  s += " changed as we read it: ";
  if (stored < n.size) {
    s += "it shrank from ";
    s += std::to_string(n.size);
    s += " to ";
    s += std::to_string(stored);
    s += " bytes, and the bytes read were stored";
  } else {
    s += "its ";
    s += std::to_string(stored);
    s += " bytes at the scan were stored";
  }
  return s;
}

bool is_small(const ScanNode& n, uint64_t page) {
  return S_ISREG(n.mode) && n.size > 0 && n.size <= page;
}

// The regular files of at most one page, in packing order: the ones the prefetcher reads.
std::vector<const ScanNode*> small_files(const ScanResult& scan, const std::vector<DataOrderEntry>& order,
                                         uint64_t page) {
  std::vector<const ScanNode*> files;
  for (const DataOrderEntry& e : order)
    if (is_small(scan.nodes[e.node], page)) files.push_back(&scan.nodes[e.node]);
  return files;
}

// Sorts SparseFile records by inode, as the format wants, with their runs copied in that order (runs no
// record names are dropped).
void sort_sparse(std::vector<format::SparseFile>& sparse, std::vector<format::HoleRun>& runs) {
  std::sort(sparse.begin(), sparse.end(), [](const auto& a, const auto& b) { return a.ino < b.ino; });
  std::vector<format::HoleRun> sorted;
  for (format::SparseFile& s : sparse) {
    const auto first = runs.begin() + s.first_run;
    s.first_run = static_cast<uint32_t>(sorted.size());
    sorted.insert(sorted.end(), first, first + s.run_count);
  }
  runs = std::move(sorted);
}

}  // namespace

// The page logic of the data pass, for both sources of bytes: a file of the tree read through its
// descriptor (pack_tree), or an archive member's data blocks (pack_stream).
class Packer {
 public:
  // `small`: the files the prefetcher reads ahead, in the order pack_tree() will take them (none for an
  // archive build). `base`: the image to reuse pages and tails from (--base), or null.
  Packer(const Options& o, ImageWriter& image, Diag& diag, Progress& progress,
         std::vector<const ScanNode*> small, Base* base)
      : o_(o),
        base_(base),
        image_(image),
        diag_(diag),
        progress_(progress),
        page_(o.page_size),
        prefetch_(o, std::move(small), o.threads),
        pipeline_(image, progress, o.level, o.x86_filter, o.threads, base, o.layered) {}

  // A directory build: every regular file of the tree, in `order` (data_order.h). A group that fits in
  // one tail pack but not in the rest of the current one starts a new pack, and compiled files' tails go
  // after the pack's other tails.
  PackResult pack_tree(const ScanResult& scan, const Tree& tree, const std::vector<DataOrderEntry>& order) {
    r_.files.resize(tree.inode_count());
    can_park_ = base_ != nullptr;  // r_.files does not move from here on
    for (const DataOrderEntry& e : order) {
      if (e.group_tails > 0 && e.group_tails <= page_ && pack_bytes() + e.group_tails > page_) flush_pack();
      file_late_ = e.compiled;
      pack_file(tree.ino_of[e.node], e.node, scan.nodes[e.node]);
    }
    file_late_ = false;
    finish_pages();
    sort_sparse(r_.sparse, r_.runs);
    return std::move(r_);
  }

  // An archive build: one member's data, as it is read. FileData goes to by_node_ and the SparseFile
  // record names the scan node, until finish_stream() knows the inode numbers. Python sources and
  // bytecode are paired as they come (bytecode_hold.h).
  uint64_t pack_stream(uint32_t node, const ScanNode& n, BlockSource& src, std::optional<uint64_t> size) {
    hold_.drop(node);
    // Data packed again for a node (a hard link that carries it again) replaces its FileData, where a
    // late tail's offset may still be due: settle those first.
    if (node < by_node_.size() && std::count(late_files_.begin(), late_files_.end(), &by_node_[node]) > 0)
      flush_pack();
    const Pairing pair = pairing_for(n.path);
    if (pair.step == Step::kLead) start_group(hold_.bytes_for(pair.source) + size.value_or(0) % page_);
    FileData f;
    f.first_page = pipeline_.submitted();
    begin_file(n);
    capture_tail_ = pair.step == Step::kHold || pair.step == Step::kClose;
    file_late_ = pair.step == Step::kJoin;
    uint64_t stored = 0;
    try {
      stored = stream_pages(n, src, size, f);
    } catch (const EntryError&) {
      capture_tail_ = file_late_ = false;
      captured_.clear();
      std::erase(late_files_, &f);
      forget_file(f);
      throw;
    }
    capture_tail_ = file_late_ = false;
    end_file(node, f);
    if (by_node_.size() <= node) by_node_.resize(size_t{node} + 1);
    by_node_[node] = f;
    // A tail shared with a late one was noted at &f.
    std::replace(late_files_.begin(), late_files_.end(), &f, &by_node_[node]);
    pair_member(pair, node, n.path);
    ++progress_.files_done;
    progress_.tick();
    return stored;
  }

  PackResult finish_stream(const ScanResult& scan, const Tree& tree) {
    for (const BytecodeHold::Held& h : hold_.take_all()) place_held(h, false);
    flush_pack();  // late tails' offsets are settled in by_node_, which is copied and freed below
    r_.files.resize(tree.inode_count());
    for (uint32_t ino = 1; ino <= tree.inode_count(); ++ino) {
      const uint32_t node = tree.order[ino - 1];
      if (!S_ISREG(scan.nodes[node].mode)) continue;
      if (node < by_node_.size()) r_.files[ino - 1] = by_node_[node];
      ++r_.stats.files;
      r_.stats.file_bytes += scan.nodes[node].size;
    }
    by_node_ = {};
    keep_live_sparse(tree);
    finish_pages();
    return std::move(r_);
  }

 private:
  void finish_pages() {
    if (base_) resolve_parked();
    flush_pack();
    if (base_) send_base_pack();
    r_.pages = pipeline_.finish();
    for (FileData& f : r_.files)  // tail pack ordinals become page table indices
      if (f.tail_entry != format::kNone)
        f.tail_entry = f.tail_entry & kBasePack ? base_pack_entries_[f.tail_entry & ~kBasePack]
                                                : pack_entries_[f.tail_entry];
  }

  void begin_file(const ScanNode& n) {
    file_path_ = n.path;
    file_codec_ = page::codec_for(o_.codec_rules, n.path, o_.codec);
    file_runs_ = r_.runs.size();
    file_holes_ = 0;
  }

  void pack_file(uint32_t ino, uint32_t node, const ScanNode& n) {
    FileData& f = r_.files[ino - 1];
    f.first_page = pipeline_.submitted();
    Packed packed;
    if (n.size > 0) {
      begin_file(n);
      try {
        packed = is_small(n, page_) ? pack_small(f) : pack_pages(n, f);
      } catch (const EntryError& e) {
        forget_file(f);
        r_.skipped.push_back(node);
        diag_.skip_entry(e.what());  // throws without --ignore-errors
        return;
      }
      end_file(ino, f);
    }
    if (packed.changed) {
      diag_.warn(changed_message(n, packed.size));
      if (packed.size != n.size) r_.resized.emplace_back(node, packed.size);
    }
    ++r_.stats.files;
    r_.stats.file_bytes += packed.size;
    ++progress_.files_done;
    progress_.tick();
  }

  // Undoes what the current file added before its error: its hole runs. No tail was added (the tail is
  // its last read), and its submitted pages stay: the pipeline may have written them already.
  void forget_file(FileData& f) {
    r_.runs.resize(file_runs_);
    r_.stats.hole_pages -= file_holes_;
    file_holes_ = 0;
    f = FileData{};
  }

  // A file of one page, already read by the prefetcher. A hole needs no SEEK_DATA to be found here:
  // the page reads as zeros, and zeros become a hole all the same.
  Packed pack_small(FileData& f) {
    const bool changed = prefetch_.take(spare_->raw);
    progress_.bytes_in += spare_->raw.size();
    const uint64_t size = spare_->raw.size();
    if (size > 0) place_page(0, f);  // a file emptied since the scan has no page at all
    return {size, changed};
  }

  // A file of several pages, read here, page by page, skipping its holes. It is packed at its scanned
  // size, or at its size when opened if that is less (else SEEK_DATA past its new end would pass for a
  // hole); a read that meets its end earlier ends it there.
  Packed pack_pages(const ScanNode& n, FileData& f) {
    uint64_t size_now = 0;
    const UniqueFd fd(open_source(o_, n, size_now));
    const uint64_t size = std::min(n.size, size_now);
    const uint64_t npages = format::page_count_of(size, page_log2(o_));
    if (npages > UINT32_MAX) throw EntryError(too_large(n));
    ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
    uint64_t data_end = 0;  // end of the data extent the current page is in
    for (uint64_t page = 0; page < npages; ++page) {
      const uint64_t off = page * page_;
      if (off >= data_end) {
        const Extent x = next_extent(fd.get(), off, size, n.path);
        const uint64_t first = x.start >= size ? npages : x.start / page_;  // first page with data
        if (first > page) {
          add_holes(page, first - page);
          progress_.bytes_in += std::min(size, first * page_) - off;  // skipped holes count as done
        }
        if (first == npages) break;
        page = first;
        data_end = x.end;
      }
      const size_t len = static_cast<size_t>(std::min<uint64_t>(page_, size - page * page_));
      spare_->raw.resize(len);
      const size_t got = read_upto(fd.get(), page * page_, spare_->raw.data(), len, n);
      progress_.bytes_in += got;
      if (got < len) return end_early(page, got, f);
      place_page(page, f);
      progress_.tick();
    }
    // The scan, the open and the end of the read must agree on the size, or the file changed meanwhile.
    struct stat st {};
    const bool changed_during = ::fstat(fd.get(), &st) == 0 && static_cast<uint64_t>(st.st_size) != n.size;
    return {size, size_now != n.size || changed_during};
  }

  // The file ended `got` bytes into page `page`, which becomes its last page: the tail if any byte of
  // it was read.
  Packed end_early(uint64_t page, size_t got, FileData& f) {
    spare_->raw.resize(got);
    if (got > 0) place_page(page, f);
    return {page * page_ + got, true};
  }

  // The pages of an archive member. Blocks fill spare_->raw, the page at `pos` (the bytes placed so far,
  // data and holes); whole pages between blocks become holes without being filled.
  uint64_t stream_pages(const ScanNode& n, BlockSource& src, std::optional<uint64_t> size, FileData& f) {
    const uint64_t limit = std::min(size.value_or(UINT64_MAX), (uint64_t{UINT32_MAX} << page_log2(o_)));
    if (size && *size > limit) throw EntryError(too_large(n));
    spare_->raw.clear();
    uint64_t pos = 0;
    BlockSource::Block b;
    while (src.next(b)) {
      if (b.offset < pos) throw EntryError(quote_path(n.path) + ": data blocks out of order");
      if (b.offset > limit || b.size > limit - b.offset)
        throw EntryError(size ? quote_path(n.path) + ": more data than its size" : too_large(n));
      stream_zeros(b.offset, pos, f);
      stream_bytes(b.data, b.size, pos, f);
      progress_.tick();
    }
    const uint64_t end = size.value_or(pos);
    stream_zeros(end, pos, f);
    if (!spare_->raw.empty()) place_page((pos - 1) / page_, f);
    spare_->raw.clear();
    return end;
  }

  std::string too_large(const ScanNode& n) const {
    return quote_path(n.path) + " is too large: more than 2^32 - 1 pages of " + std::to_string(page_) +
           " bytes";
  }

  // Appends bytes to the page being filled, placing each page as it fills up.
  void stream_bytes(const uint8_t* p, size_t n, uint64_t& pos, FileData& f) {
    progress_.bytes_in += n;
    while (n > 0) {
      const size_t take = std::min<size_t>(n, page_ - spare_->raw.size());
      spare_->raw.insert(spare_->raw.end(), p, p + take);
      p += take, n -= take, pos += take;
      if (spare_->raw.size() == page_) next_stream_page(pos, f);
    }
  }

  // Zeros up to `to`: the rest of the page being filled, whole hole pages, then the start of a page.
  void stream_zeros(uint64_t to, uint64_t& pos, FileData& f) {
    if (to <= pos) return;
    progress_.bytes_in += to - pos;
    if (!spare_->raw.empty()) {
      const size_t fill = static_cast<size_t>(std::min<uint64_t>(to - pos, page_ - spare_->raw.size()));
      spare_->raw.resize(spare_->raw.size() + fill, 0);
      pos += fill;
      if (spare_->raw.size() < page_) return;
      next_stream_page(pos, f);
    }
    if (const uint64_t whole = (to - pos) / page_; whole > 0) {
      add_holes(pos / page_, whole);
      pos += whole * page_;
    }
    spare_->raw.resize(static_cast<size_t>(to - pos), 0);
    pos = to;
  }

  // The full page ending at `pos` is in spare_->raw: place it and start the next one.
  void next_stream_page(uint64_t pos, FileData& f) {
    place_page(pos / page_ - 1, f);
    spare_->raw.clear();  // a submitted page left a fresh job here; a hole or a tail left the bytes
  }

  // An archive build's SparseFile records name scan nodes, and a node packed twice has two: keep each
  // image file's latest, renumbered to its inode, sorted by inode as the format wants, with its runs
  // copied in that order (runs of superseded or skipped data are dropped).
  void keep_live_sparse(const Tree& tree) {
    std::vector<format::SparseFile> kept;
    std::unordered_set<uint32_t> seen;
    r_.stats.hole_pages = 0;
    for (auto it = r_.sparse.rbegin(); it != r_.sparse.rend(); ++it) {
      const uint32_t node = it->ino;
      if (!seen.insert(node).second || tree.ino_of[node] == 0) continue;
      if (!r_.files[tree.ino_of[node] - 1].sparse) continue;  // its latest data has no holes
      kept.push_back(*it);
      kept.back().ino = tree.ino_of[node];
      r_.stats.hole_pages += it->hole_pages;
    }
    r_.sparse = std::move(kept);
    sort_sparse(r_.sparse, r_.runs);
  }

  // Page `page` of the current file, in spare_->raw: a hole, the tail (or, with capture_tail_, its bytes
  // in captured_), or a page job.
  void place_page(uint64_t page, FileData& f) {
    if (all_zero(spare_->raw.data(), spare_->raw.size()))
      add_holes(page, 1);
    else if (spare_->raw.size() < page_ && spare_->raw.size() <= o_.tail_pack_limit.value_or(page_))
      capture_tail_ ? void(captured_ = spare_->raw) : add_tail(f, spare_->raw);
    else
      submit_page();
  }

  // What an archive member does for Python's pairing. kPlain: nothing. kLead: a source whose bytecode
  // is held; the group starts a pack if it must, and the bytecode follows the source. kClose: bytecode
  // whose source is held; the group is packed after it. kJoin: bytecode whose source's tail is in the
  // open pack; it joins it, laid out last. kHold: a tail to hold.
  enum class Step { kPlain, kLead, kClose, kJoin, kHold };
  struct Pairing {
    Step step = Step::kPlain;
    std::string source;  // the group's source path
    bool compiled = false;
  };

  Pairing pairing_for(const std::string& path) {
    Pairing p;
    p.source = BytecodeHold::source_of(path);
    p.compiled = !p.source.empty();
    if (p.compiled) {
      seen_bytecode_ = true;
      p.step = hold_.has_source(p.source)         ? Step::kClose
               : open_sources_.contains(p.source) ? Step::kJoin
                                                  : Step::kHold;
    } else if (path.ends_with(".py")) {
      p.source = path;
      p.step = hold_.bytes_for(path) > 0 ? Step::kLead : seen_bytecode_ ? Step::kHold : Step::kPlain;
    }
    return p;
  }

  // After the member's data: its tail held, or its group packed.
  void pair_member(const Pairing& p, uint32_t node, const std::string& path) {
    std::vector<uint8_t> tail = std::exchange(captured_, {});
    switch (p.step) {
      case Step::kPlain:
        if (!p.source.empty()) open_sources_.insert(p.source);
        return;
      case Step::kJoin:
        return;
      case Step::kLead:
        open_sources_.insert(p.source);
        for (const BytecodeHold::Held& h : hold_.take(p.source)) place_held(h, h.compiled);
        return;
      case Step::kHold:
        if (!tail.empty())
          for (const BytecodeHold::Held& h : hold_.hold(p.source, {node, path, std::move(tail), p.compiled}))
            place_held(h, false);
        return;
      case Step::kClose:
        close_group(p.source, {node, path, std::move(tail), true});
        return;
    }
  }

  // Bytecode whose source was held: the source's tail, then the bytecode's, the group in a pack of its
  // own if it fits in one but not in the rest of this one.
  void close_group(const std::string& source, BytecodeHold::Held last) {
    std::vector<BytecodeHold::Held> group = hold_.take(source);
    if (!last.tail.empty()) group.push_back(std::move(last));
    uint64_t bytes = 0;
    for (const BytecodeHold::Held& h : group) bytes += h.tail.size();
    start_group(bytes);
    for (const BytecodeHold::Held& h : group)
      if (!h.compiled) place_held(h, false);
    open_sources_.insert(source);
    for (const BytecodeHold::Held& h : group)
      if (h.compiled) place_held(h, true);
  }

  // A group of tails that fits in one pack but not in the rest of this one starts the next.
  void start_group(uint64_t bytes) {
    if (bytes > 0 && bytes <= page_ && pack_bytes() + bytes > page_) flush_pack();
  }

  // A held tail, packed now: bytecode after its source's (`late`, as DataOrderEntry::compiled), or where
  // it stands.
  void place_held(const BytecodeHold::Held& h, bool late) {
    file_path_ = h.path;
    file_late_ = late;
    add_tail(by_node_[h.node], h.tail);
    file_late_ = false;
  }

  // The current file's SparseFile record, when it has holes. `ino` is the scan node in an archive build.
  void end_file(uint32_t ino, FileData& f) {
    if (file_holes_ > 0) {
      if (r_.runs.size() > UINT32_MAX) throw MkfsError("too many hole runs in the tree");
      r_.sparse.push_back({ino, static_cast<uint32_t>(file_runs_),
                           static_cast<uint32_t>(r_.runs.size() - file_runs_), file_holes_});
      f.sparse = true;
    }
  }

  // Pages [first, first + count) of the current file read as zeros.
  void add_holes(uint64_t first, uint64_t count) {
    r_.stats.hole_pages += count;
    if (r_.runs.size() > file_runs_ && r_.runs.back().first_page + uint64_t{r_.runs.back().count} == first) {
      r_.runs.back().count += static_cast<uint32_t>(count);
    } else {
      r_.runs.push_back({static_cast<uint32_t>(first), static_cast<uint32_t>(count), file_holes_});
    }
    file_holes_ += static_cast<uint32_t>(count);
  }

  void submit_page() {
    spare_->choice = file_codec_;
    // A page of the base never enters the dedupe map: the writer confirms duplicates by reading back
    // this image, where a layered image does not hold it. Its copies find the base entry again.
    if (base_) spare_->base_entry = base_->page_candidate(spare_->raw);
    if (o_.dedupe && spare_->base_entry == format::kNone) {
      const auto [it, fresh] =
          pages_.try_emplace(content_key(spare_->raw.data(), spare_->raw.size()), pipeline_.submitted());
      if (!fresh) spare_->dup_of = it->second;
    }
    pipeline_.submit(std::exchange(spare_, std::make_unique<PageJob>()));
  }

  void add_tail(FileData& f, const std::vector<uint8_t>& tail) {
    if (base_ && reuse_tail(f, tail)) return;
    add_own_tail(f, tail);
  }

  // A tail this image stores itself: shared with an equal tail already packed, or added to the pack.
  void add_own_tail(FileData& f, const std::vector<uint8_t>& tail) {
    ContentKey key{};
    if (o_.dedupe) {
      key = content_key(tail.data(), tail.size());
      if (const auto it = tails_.find(key); it != tails_.end() && tail_matches(it->second, tail)) {
        f.tail_entry = it->second.pack;
        f.tail_offset = it->second.offset;
        if (f.tail_offset & kLate) late_files_.push_back(&f);
        ++r_.stats.tail_dedupe_hits;
        return;
      }
    }
    if (pack_bytes() + tail.size() > page_) flush_pack();
    std::vector<uint8_t>& part = file_late_ ? late_ : pack_;
    const TailRef ref{static_cast<uint32_t>(pack_entries_.size()),
                      static_cast<uint32_t>(part.size()) | (file_late_ ? kLate : 0)};
    part.insert(part.end(), tail.begin(), tail.end());
    f.tail_entry = ref.pack;
    f.tail_offset = ref.offset;
    if (file_late_) late_files_.push_back(&f);
    ++r_.stats.tails;
    r_.stats.tail_bytes += tail.size();
    if (o_.dedupe) {
      const auto [it, fresh] = tails_.try_emplace(key, ref);
      if (fresh && file_late_) late_refs_.push_back(&it->second);
    }
  }

  size_t pack_bytes() const { return pack_.size() + late_.size(); }

  // Byte-for-byte check of a tail dedupe candidate. An earlier pack is read back from the image and
  // decoded; the last kPackCache packs read are kept (least recently used goes first), since a tree of
  // tiny files matches tails all over its packs and decoding a pack for each match was a tenth of its
  // build time.
  bool tail_matches(const TailRef& ref, const std::vector<uint8_t>& tail) {
    const bool open = ref.pack == pack_entries_.size();
    const std::vector<uint8_t>* pack = !open ? &packed(ref.pack) : ref.offset & kLate ? &late_ : &pack_;
    const uint32_t offset = ref.offset & ~kLate;
    return offset + tail.size() <= pack->size() &&
           std::memcmp(pack->data() + offset, tail.data(), tail.size()) == 0;
  }

  static constexpr size_t kPackCache = 64;  // decoded packs kept: 4 MiB at 64 KiB pages
  struct CachedPack {
    uint32_t pack = format::kNone;
    uint64_t used = 0;
    std::vector<uint8_t> bytes;
  };
  const std::vector<uint8_t>& packed(uint32_t pack) {
    ++pack_clock_;
    pack_cache_.reserve(kPackCache);  // never moves afterwards: references handed out stay valid
    CachedPack* slot = nullptr;
    for (CachedPack& c : pack_cache_) {
      if (c.pack == pack) {
        c.used = pack_clock_;
        return c.bytes;
      }
      if (!slot || c.used < slot->used) slot = &c;
    }
    if (pack_cache_.size() < kPackCache) slot = &pack_cache_.emplace_back();
    slot->pack = format::kNone;  // until the read succeeds
    read_entry(image_, pipeline_.committed(pack_entries_[pack]), dec_, stored_, slot->bytes);
    slot->pack = pack;
    slot->used = pack_clock_;
    return slot->bytes;
  }

  // A tail the base holds: the file points into the base's tail pack, which this image takes over
  // (copied, or referred to) once, however many tails it serves. The bytes are compared by a worker,
  // one decode per pack: the tails found in a pack are gathered while the new tree's files come in the
  // old order, and sent with the pack's job when a tail of another pack comes. A tail that does not
  // match makes the worker store the pack again, patched with the new bytes (pipeline.h). A pack whose
  // job already left is checked here, on its own.
  bool reuse_tail(FileData& f, const std::vector<uint8_t>& tail) {
    const Base::AtPath at = base_->tail_at_path(file_path_, tail);
    if (at.has_file) return at.tail && take_base_tail(f, *at.tail, tail);
    if (can_park_) {
      if (parked_bytes_ + tail.size() <= kParkBytes) {
        if (parked_.empty()) base_->want_index();
        parked_.push_back({static_cast<size_t>(&f - r_.files.data()), tail});
        parked_bytes_ += tail.size();
        return true;  // decided by resolve_parked()
      }
      resolve_parked();  // the earlier ones first, then this one and every later one at once
    }
    base_->complete_index(o_.threads);
    const std::optional<Base::Tail> hit = base_->content_candidate(tail);
    return hit && take_base_tail(f, *hit, tail);
  }

  // The tails of paths the base does not have, found by content. Their decision waits, so that the
  // content index can be made by the workers as they confirm the other tails (base.h); it does not
  // depend on when they did, nor on the thread count. At most kParkBytes wait: past that, they are
  // decided on the spot, after the index is completed, as are all that come later.
  void resolve_parked() {
    if (!can_park_) return;
    can_park_ = false;
    if (parked_.empty()) return;
    if (pipeline_.submitted() > 0)
      pipeline_.committed(pipeline_.submitted() - 1);  // all indexed that will be
    base_->complete_index(o_.threads);
    for (Parked& p : parked_) {
      FileData& f = r_.files[p.file];
      const std::optional<Base::Tail> hit = base_->content_candidate(p.tail);
      if (!hit || !take_base_tail(f, *hit, p.tail)) add_own_tail(f, p.tail);
    }
    parked_ = {};
    parked_bytes_ = 0;
  }

  // Makes `tail` the base's tail at `hit`, if its bytes are: gathered as a check on the pack's job, or
  // compared here when that job already left.
  bool take_base_tail(FileData& f, const Base::Tail& hit, const std::vector<uint8_t>& tail) {
    const auto [it, fresh] =
        base_packs_.try_emplace(hit.entry, static_cast<uint32_t>(base_pack_entries_.size()));
    if (fresh) {
      send_base_pack();
      base_pack_entries_.push_back(format::kNone);  // its page table index, once its job is sent
      open_pack_ = std::make_unique<PageJob>();
      open_pack_->tail_pack = true;
      open_pack_->base_entry = hit.entry;
      open_pack_->choice = o_.codec;
      open_ordinal_ = it->second;
      open_offsets_.clear();
    }
    if (open_pack_ && open_ordinal_ == it->second) {
      if (!gather_check(hit.offset, tail)) return false;
    } else if (!base_->same_tail(hit, tail)) {
      return false;
    }
    f.tail_entry = kBasePack | it->second;
    f.tail_offset = hit.offset;
    ++r_.stats.base_tails;
    return true;
  }

  // Adds a check to the open pack's job, once per offset: many equal files check one tail once. False
  // when another check at that offset has other bytes (two tails of one hash): this one is not reused.
  bool gather_check(uint32_t offset, const std::vector<uint8_t>& tail) {
    const auto [at, fresh] = open_offsets_.try_emplace(offset, open_pack_->tail_checks.size());
    if (fresh) {
      open_pack_->tail_checks.push_back({offset, tail});
      return true;
    }
    return open_pack_->tail_checks[at->second].bytes == tail;
  }

  void send_base_pack() {
    if (!open_pack_) return;
    base_pack_entries_[open_ordinal_] = pipeline_.submitted();
    pipeline_.submit(std::move(open_pack_));
  }

  // The pack's compiled tails go after its others, where the offsets handed out for them now point.
  void flush_pack() {
    open_sources_.clear();
    if (pack_bytes() == 0) return;
    const auto early = static_cast<uint32_t>(pack_.size());
    for (FileData* f : late_files_) f->tail_offset = early + (f->tail_offset & ~kLate);
    for (TailRef* t : late_refs_) t->offset = early + (t->offset & ~kLate);
    late_files_.clear();
    late_refs_.clear();
    pack_.insert(pack_.end(), late_.begin(), late_.end());
    late_.clear();
    auto job = std::make_unique<PageJob>();
    job->raw = std::exchange(pack_, {});
    job->tail_pack = true;
    job->choice = o_.codec;  // tails of many files: the image-wide choice, not one file's
    pack_entries_.push_back(pipeline_.submitted());
    ++r_.stats.tail_packs;
    pipeline_.submit(std::move(job));
  }

  const Options& o_;
  Base* base_;  // --base, or null
  ImageWriter& image_;
  Diag& diag_;
  Progress& progress_;
  const uint64_t page_;
  PackResult r_;
  // An archive build's FileData, by scan node. A deque: late_files_ points into it while it grows.
  std::deque<FileData> by_node_;
  BytecodeHold hold_;           // an archive build's Python tails waiting for their partners
  bool seen_bytecode_ = false;  // the archive has shown bytecode: sources are held too
  bool capture_tail_ = false;   // the current member's tail goes to captured_, not to a pack
  std::vector<uint8_t> captured_;
  std::unordered_set<std::string> open_sources_;  // sources whose tails are in the open pack

  std::unique_ptr<PageJob> spare_ = std::make_unique<PageJob>();  // the page being read
  page::CodecChoice file_codec_ = page::CodecChoice::kGDeflate;   // the current file's codec
  std::string file_path_;    // the current file's path relative to SOURCE (--base)
  size_t file_runs_ = 0;     // the current file's first HoleRun
  uint32_t file_holes_ = 0;  // the current file's hole pages so far
  std::unordered_map<ContentKey, uint32_t, ContentKeyHash> pages_;  // first entry with these contents

  // The current tail pack: its tails in packing order, but those of compiled files (late_) go after the
  // others (pack_) when it is flushed. Until then a tail in late_ has an offset of kLate | its offset
  // there, and late_files_ and late_refs_ say where such offsets were handed out.
  std::vector<uint8_t> pack_;
  std::vector<uint8_t> late_;
  static constexpr uint32_t kLate = 1u << 31;
  std::vector<FileData*> late_files_;
  std::vector<TailRef*> late_refs_;
  bool file_late_ = false;              // the current file is a compiled file (DataOrderEntry::compiled)
  std::vector<uint32_t> pack_entries_;  // tail pack ordinal -> page table index
  // Tail packs of the base: a FileData::tail_entry of kBasePack | i names base_pack_entries_[i] until
  // finish_pages() ends (ordinals of this image's own packs are handed out while a pack fills, so the two
  // cannot share).
  static constexpr uint32_t kBasePack = 1u << 31;
  std::vector<uint32_t> base_pack_entries_;
  std::unordered_map<uint32_t, uint32_t> base_packs_;  // base entry -> index in base_pack_entries_
  std::unique_ptr<PageJob> open_pack_;  // the base pack whose tails are being gathered, or null
  uint32_t open_ordinal_ = 0;           // its index in base_pack_entries_
  std::unordered_map<uint32_t, size_t> open_offsets_;  // its checks by offset
  // Tails at paths the base lacks, waiting for resolve_parked().
  struct Parked {
    size_t file;  // index in r_.files
    std::vector<uint8_t> tail;
  };
  static constexpr size_t kParkBytes = size_t{64} << 20;
  bool can_park_ = false;  // a directory build with --base, until resolve_parked()
  std::vector<Parked> parked_;
  size_t parked_bytes_ = 0;
  std::unordered_map<ContentKey, TailRef, ContentKeyHash> tails_;
  PageDecoder dec_;
  std::vector<uint8_t> stored_;
  std::vector<CachedPack> pack_cache_;  // at most kPackCache
  uint64_t pack_clock_ = 0;

  Prefetcher prefetch_;  // after everything small_files() reads
  // Last: its destructor stops the threads before anything they use goes away.
  Pipeline pipeline_;
};

PackResult pack_data(const Options& o, const ScanResult& scan, const Tree& tree, ImageWriter& image,
                     Diag& diag, Progress& progress, Base* base) {
  const std::vector<DataOrderEntry> order = data_order(scan, tree, o.page_size);
  return Packer(o, image, diag, progress, small_files(scan, order, o.page_size), base)
      .pack_tree(scan, tree, order);
}

StreamPacker::StreamPacker(const Options& o, ImageWriter& image, Diag& diag, Progress& progress, Base* base)
    : p_(std::make_unique<Packer>(o, image, diag, progress, std::vector<const ScanNode*>{}, base)) {}

StreamPacker::~StreamPacker() = default;

uint64_t StreamPacker::pack(uint32_t node, const ScanNode& n, BlockSource& src,
                            std::optional<uint64_t> size) {
  return p_->pack_stream(node, n, src, size);
}

PackResult StreamPacker::finish(const ScanResult& scan, const Tree& tree) {
  return p_->finish_stream(scan, tree);
}

void apply_pack_changes(ScanResult& scan, Tree& tree, PackResult& pack) {
  for (const auto& [node, size] : pack.resized) scan.nodes[node].size = size;
  if (pack.skipped.empty()) return;
  for (const uint32_t node : pack.skipped) scan.nodes[node].skipped = true;
  Tree kept = number_inodes(scan);
  std::vector<FileData> files(kept.inode_count());
  for (uint32_t ino = 1; ino <= kept.inode_count(); ++ino)
    files[ino - 1] = pack.files[tree.ino_of[kept.order[ino - 1]] - 1];
  for (format::SparseFile& s : pack.sparse) s.ino = kept.ino_of[tree.order[s.ino - 1]];
  pack.files = std::move(files);
  tree = std::move(kept);
}

}  // namespace gdfs::mkfs
