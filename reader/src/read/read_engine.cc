#include "read/read_engine.h"

#include <fcntl.h>

#include <algorithm>
#include <cstring>

#include "cache/page_memory.h"
#include "gdfs/checksum.h"
#include "gdfs/log.h"
#include "gdfs/printable.h"

namespace gdfs::engine {
namespace {

constexpr uint8_t kZeros[1u << format::kMaxPageLog2] = {};
constexpr size_t kMaxReported = 10000;  // distinct bad pages logged; after that, silence
// A small hit's bytes are asked of memory as soon as the page is found, so that they arrive while the
// rest of the read path runs: a 4 KiB read of a large cache is mostly waiting on its copy's loads.
constexpr size_t kPrefetchBytes = 4096;

}  // namespace

ReadEngine::ReadEngine(const Image& image, PageCache& cache, Fetcher& fetcher, DecodeScheduler& decoder,
                       ThreadPool& pool, Stats& stats, EngineOptions options)
    : image_(image),
      cache_(cache),
      fetcher_(fetcher),
      decoder_(decoder),
      pool_(pool),
      stats_(stats),
      opt_(options) {
  PageMemory::reserve();
  if (opt_.image_prefetch && image_.source().prefetch_window() > 0)
    prefetch_ = std::make_unique<ImagePrefetch>(image_.source().size());
  if (opt_.decode_ahead_bytes)
    decode_ahead_ =
        std::make_unique<DecodeAhead>(image_.pages(), image_.source().size(), opt_.decode_ahead_bytes);
}

ReadEngine::~ReadEngine() {
  wait_readahead();
}

void ReadEngine::wait_readahead() {
  std::unique_lock lock(ahead_mu_);
  ahead_cv_.wait(lock, [this] { return ahead_tasks_ == 0; });
}

int ReadEngine::read(uint32_t ino, uint64_t offset, size_t len, std::vector<Slice>& out, ReadState* state,
                     std::string* message, bool once) {
  int err = 0;
  const size_t first_slice = out.size();
  if (!read_cached(ino, offset, len, out)) {
    const Extent x{ino, offset, len};
    std::string why;
    read_many({&x, 1}, {&out, 1}, {&err, 1}, {&why, 1});
    if (message) *message = std::move(why);
  }
  if (err == 0 && once) release_whole(ino, offset, std::span(out).subspan(first_slice));
  if (err == 0 && state && len) {
    const uint64_t size = image_.inode(ino).size;
    if (offset < size) maybe_readahead(ino, offset, std::min<uint64_t>(size, offset + len), *state);
  }
  return err;
}

void ReadEngine::release_whole(uint32_t ino, uint64_t offset, std::span<const Slice> slices) {
  const uint64_t first = offset / image_.page_size();
  for (size_t k = 0; k < slices.size(); ++k) {
    const Slice& s = slices[k];
    // A tail pack's other bytes belong to other files, which may still want them from the cache.
    if (!s.page || s.data != s.page->data.get() || s.len != s.page->size) continue;
    const PageRef ref = image_.page_ref(ino, first + k);
    if (ref.kind == PageRef::kPage && cache_.release(ref.entry)) Stats::add(stats_.pages_released);
  }
}

// Small random reads mostly fall inside one page that the cache holds: answered here without
// read_wants' batch bookkeeping (plans, claims, per-extent spans). Anything else (a miss, a hole, a read
// across pages, a page too short, to be reported) returns false and takes the general path.
bool ReadEngine::read_cached(uint32_t ino, uint64_t offset, size_t len, std::vector<Slice>& out) {
  if (len == 0 || ino == 0 || ino > image_.inode_count() || image_.type(ino) != format::kTypeReg)
    return false;
  const uint64_t size = image_.inode(ino).size;
  if (offset >= size) return false;
  const uint64_t end = std::min<uint64_t>(size, offset + len);
  const uint64_t ps = image_.page_size();
  const uint64_t i = offset / ps;
  if ((end - 1) / ps != i) return false;
  const PageRef ref = image_.page_ref(ino, i);
  if (ref.kind == PageRef::kHole) return false;
  PageCache::Lookup l = cache_.acquire(ref.entry, false);
  const uint64_t at = ref.offset + (offset - i * ps);
  const size_t n = static_cast<size_t>(end - offset);
  // Validation ties each page's decoded size to the file bytes it holds; never trust it blindly.
  if (!l.hit || at + n > l.hit->size) return false;
  const uint8_t* data = l.hit->data.get() + at;
  for (size_t k = 0; k < std::min<size_t>(n, kPrefetchBytes); k += 64) __builtin_prefetch(data + k);
  Stats::add(stats_.cache_hits);
  Stats::add(stats_.reads);
  Stats::add(stats_.bytes_served, n);
  out.push_back(Slice{std::move(l.hit), data, n});
  return true;
}

int ReadEngine::plan_extent(const Extent& x, std::vector<PageRef>& refs, std::vector<Want>& wants) const {
  // No such inode: a batch with one bad request still reads the others (Image::type would throw).
  if (x.ino == 0 || x.ino > image_.inode_count()) return ENOENT;
  if (image_.type(x.ino) != format::kTypeReg) return EISDIR;
  const uint64_t size = image_.inode(x.ino).size;
  if (x.offset >= size || x.length == 0) return 0;
  const uint64_t end = std::min<uint64_t>(size, x.offset + x.length);
  const uint64_t ps = image_.page_size();
  for (uint64_t i = x.offset / ps; i <= (end - 1) / ps; ++i) {
    refs.push_back(image_.page_ref(x.ino, i));
    if (refs.back().kind != PageRef::kHole) wants.push_back(Want{refs.back().entry, i, {}});
  }
  return 0;
}

void ReadEngine::read_many(std::span<const Extent> extents, std::span<std::vector<Slice>> out,
                           std::span<int> errors, std::span<std::string> messages) {
  read_wants(extents, out, errors, messages, {});
}

void ReadEngine::read_many_into(std::span<const Extent> extents, std::span<uint8_t* const> dsts,
                                std::span<size_t> bytes, std::span<int> errors,
                                std::span<std::string> messages, bool once) {
  thread_local std::vector<std::vector<Slice>> slices;  // reused: see read_wants
  if (slices.size() < extents.size()) slices.resize(extents.size());
  const std::span out(slices.data(), extents.size());
  read_wants(extents, out, errors, messages, once ? dsts : std::span<uint8_t* const>{});
  for (size_t k = 0; k < extents.size(); ++k) {
    size_t n = 0;
    if (!errors[k]) {
      for (const Slice& s : out[k]) {
        if (s.data) std::memcpy(dsts[k] + n, s.data, s.len);  // null: decoded there already
        n += s.len;
      }
    }
    bytes[k] = n;
    out[k].clear();  // release the pages
  }
}

void ReadEngine::read_wants(std::span<const Extent> extents, std::span<std::vector<Slice>> out,
                            std::span<int> errors, std::span<std::string> messages,
                            std::span<uint8_t* const> direct) {
  // Scratch reused by this thread's next call, so a small read allocates nothing here. No call on this
  // thread can re-enter read_wants before this one returns: decoding runs only its own batch's jobs.
  thread_local std::vector<PageRef> refs;
  thread_local std::vector<Want> wants;
  thread_local std::vector<std::pair<size_t, size_t>> ref_at, want_at;  // per extent: begin, end
  refs.clear();
  wants.clear();
  ref_at.resize(extents.size());
  want_at.resize(extents.size());
  for (size_t k = 0; k < extents.size(); ++k) {
    ref_at[k].first = refs.size();
    want_at[k].first = wants.size();
    errors[k] = plan_extent(extents[k], refs, wants);
    ref_at[k].second = refs.size();
    want_at[k].second = wants.size();
    if (!direct.empty() && !errors[k])
      mark_direct(extents[k], std::span(refs).subspan(ref_at[k].first, refs.size() - ref_at[k].first),
                  std::span(wants).subspan(want_at[k].first, wants.size() - want_at[k].first), direct[k]);
  }
  resolve(wants, false);
  std::string message;
  for (size_t k = 0; k < extents.size(); ++k) {
    if (errors[k]) continue;
    const auto [rb, re] = ref_at[k];
    const auto [wb, we] = want_at[k];
    errors[k] = slices_of(extents[k], std::span(refs).subspan(rb, re - rb),
                          std::span(wants).subspan(wb, we - wb), out[k], message);
    if (errors[k] && !messages.empty()) messages[k] = message;
  }
  wants.clear();  // the slices hold what the caller needs; keep no page alive past the cache's bound
}

// A page goes straight to the caller's memory when its decoded bytes are exactly the extent's bytes of
// that logical page: a whole page of one file (never a tail pack, whose other bytes belong to others).
void ReadEngine::mark_direct(const Extent& x, std::span<const PageRef> refs, std::span<Want> wants,
                             uint8_t* dst) const {
  if (refs.empty()) return;
  const uint64_t end = std::min<uint64_t>(image_.inode(x.ino).size, x.offset + x.length);
  const uint64_t ps = image_.page_size();
  const uint64_t first = x.offset / ps;
  size_t wi = 0;
  for (size_t r = 0; r < refs.size(); ++r) {
    if (refs[r].kind == PageRef::kHole) continue;
    Want& w = wants[wi++];
    const uint64_t i = first + r;
    const uint64_t from = std::max(x.offset, i * ps), to = std::min(end, (i + 1) * ps);
    if (refs[r].kind == PageRef::kPage && refs[r].offset == 0 && from == i * ps &&
        image_.pages()[w.entry].usize == to - from)
      w.direct = dst + (from - x.offset);
  }
}

int ReadEngine::slices_of(const Extent& x, std::span<const PageRef> refs, std::span<const Want> wants,
                          std::vector<Slice>& out, std::string& message) {
  bool bad = false;
  for (const Want& w : wants) {
    if (w.result.status == PageStatus::kOk) continue;
    const std::string line = report(x.ino, w.index, w.entry, page_status_message(w.result.status));
    if (!bad) message = line;
    bad = true;
  }
  if (bad) {
    Stats::add(stats_.read_errors);
    return EIO;
  }
  if (refs.empty()) return 0;  // at or past the end of the file
  const uint64_t end = std::min<uint64_t>(image_.inode(x.ino).size, x.offset + x.length);
  const uint64_t ps = image_.page_size();
  const uint64_t first = x.offset / ps;
  size_t wi = 0;
  for (size_t r = 0; r < refs.size(); ++r) {
    const PageRef& ref = refs[r];
    const uint64_t i = first + r;
    const uint64_t from = std::max(x.offset, i * ps), to = std::min(end, (i + 1) * ps);
    const size_t n = static_cast<size_t>(to - from);
    const uint32_t in_page = static_cast<uint32_t>(from - i * ps);
    if (ref.kind == PageRef::kHole) {
      out.push_back(Slice{nullptr, kZeros, n});
      continue;
    }
    const Want& w = wants[wi++];
    if (w.direct) {  // decoded in place by load (mark_direct sized it)
      out.push_back(Slice{nullptr, nullptr, n});
      continue;
    }
    const PagePtr& page = w.result.page;
    // Validation ties each page's decoded size to the file bytes it holds; never trust it blindly.
    if (uint64_t{ref.offset} + in_page + n > page->size) {
      message = report(x.ino, i, ref.entry, "decoded page shorter than the file bytes it holds");
      Stats::add(stats_.read_errors);
      return EIO;
    }
    out.push_back(Slice{page, page->data.get() + ref.offset + in_page, n});
  }
  Stats::add(stats_.reads);
  Stats::add(stats_.bytes_served, end - x.offset);
  return 0;
}

size_t ReadEngine::resolve(std::span<Want> wants, bool ahead) {
  thread_local std::vector<Want*> claimed;  // reused: see read_many
  thread_local std::vector<std::pair<Want*, std::shared_future<LoadedPage>>> pending;
  claimed.clear();
  pending.clear();
  for (Want& w : wants) {
    PageCache::Lookup l = cache_.acquire(w.entry, !w.direct);
    if (w.direct && !l.hit && !l.pending.valid()) {
      claimed.push_back(&w);  // loaded into its destination; the cache never hears of it
      continue;
    }
    if (l.hit || l.pending.valid()) w.direct = nullptr;  // there already: copied out as usual
    if (l.hit) {
      w.result.page = std::move(l.hit);
      if (!ahead) Stats::add(stats_.cache_hits);
    } else if (l.claimed) {
      claimed.push_back(&w);
    } else if (!ahead) {
      pending.emplace_back(&w, std::move(l.pending));
    }
  }
  if (ahead) {
    Stats::add(stats_.readahead_pages, claimed.size());
  } else {
    Stats::add(stats_.cache_misses, claimed.size());
    Stats::add(stats_.inflight_joins, pending.size());
  }
  // Our own claims first: whoever we wait for below never waits for us.
  const size_t loaded = claimed.size();
  if (loaded) load(claimed, ahead);
  for (auto& [w, future] : pending) w->result = future.get();
  pending.clear();
  return loaded;
}

// Coalescing: claims sorted by stored offset; a run of pages close together on disk becomes one read
// into one staging area.
ReadEngine::FetchPlan ReadEngine::plan_fetch(std::span<const uint64_t> entries) const {
  FetchPlan plan;
  plan.where.resize(entries.size());
  uint64_t start = 0, end = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const format::PageEntry& e = image_.pages()[entries[i]];
    const uint64_t e_end = e.offset + e.csize;
    const bool join = !plan.ranges.empty() && e.offset >= start && e.offset <= end + opt_.max_gap &&
                      std::max(end, e_end) - start <= opt_.max_fetch;
    if (!join) {
      if (!plan.ranges.empty()) plan.staging_size += end - start;
      start = e.offset;
      end = e_end;
      plan.ranges.push_back(ReadRange{e.offset, 0, nullptr, false});
      plan.base.push_back(plan.staging_size);
      plan.pages.push_back(0);
    }
    end = std::max(end, e_end);
    plan.ranges.back().length = static_cast<uint32_t>(end - start);
    ++plan.pages.back();
    plan.where[i] = {plan.ranges.size() - 1, plan.base.back() + (e.offset - start)};
  }
  if (!plan.ranges.empty()) plan.staging_size += end - start;
  return plan;
}

// Tree walks (tar, cp -r) read many small files whose pages lie near each other in the image but not
// in the order they are read, and each cold fetch would wait for the disk on its own. Asking the kernel
// to start reading the stretch of image after each fetch turns most of those waits into page-cache hits.
void ReadEngine::hint_following(const FetchPlan& plan) const {
  const int fd = image_.source().fd();
  if (fd < 0) return;
  for (const ReadRange& r : plan.ranges)
    posix_fadvise(fd, static_cast<off_t>(r.offset + r.length), static_cast<off_t>(opt_.image_readahead),
                  POSIX_FADV_WILLNEED);
}

template <typename F>
bool ReadEngine::submit_ahead(F task) {
  if (pool_.backlog() > 2 * pool_.size()) return false;  // saturated: readers come first
  {
    std::lock_guard lock(ahead_mu_);
    ++ahead_tasks_;
  }
  auto done = [this] {
    std::lock_guard lock(ahead_mu_);
    if (--ahead_tasks_ == 0) ahead_cv_.notify_all();
  };
  try {
    pool_.submit([task = std::move(task), done]() mutable {
      try {
        task();
      } catch (...) {
        // Readahead is an optimisation: a failure here shows up, and is reported, when the page is read.
      }
      done();
    });
  } catch (...) {
    done();  // not queued (out of memory): nobody may wait for it
    return false;
  }
  return true;
}

void ReadEngine::prefetch_following(uint64_t start, uint64_t end) {
  const ImagePrefetch::Stretch s = prefetch_->on_fetch(start, end, image_.source().prefetch_window());
  if (s.length == 0) return;
  // Claimed here, in the reader's thread, so that its next read waits for this stretch rather than
  // send a request of its own; fetched on the pool.
  std::shared_ptr<Source::Prefetch> p = image_.source().start_prefetch(s.offset, s.length);
  if (!p) return;
  // Dropped when saturated: the stretch is given up (readers fetch for themselves) and rescheduled by
  // the next fetch.
  if (!submit_ahead([p] { p->run(); })) prefetch_->dropped(s);
}

void ReadEngine::decode_following(uint64_t start, uint64_t end) {
  const ImagePrefetch::Stretch s = decode_ahead_->walk().on_fetch(start, end, decode_ahead_->window());
  if (s.length == 0) return;
  if (!submit_ahead([this, s] { decode_stretch(s); })) decode_ahead_->walk().dropped(s);
}

void ReadEngine::decode_stretch(ImagePrefetch::Stretch s) {
  const std::vector<uint64_t> entries = decode_ahead_->entries_in(s.offset, s.length);
  // A few pages at a time: each batch's pages are held here until it returns, on top of the cache's
  // bound, and several pool threads may be doing this at once.
  constexpr size_t kBatch = 16;
  std::vector<Want> wants;
  for (size_t i = 0; i < entries.size(); i += kBatch) {
    wants.clear();
    for (size_t k = i; k < std::min(entries.size(), i + kBatch); ++k)
      if (!cache_.contains(entries[k])) wants.push_back(Want{entries[k], 0, {}});  // not loaded or loading
    if (wants.empty()) continue;
    // As readahead: a page cached or in flight meanwhile is skipped.
    Stats::add(stats_.decoded_ahead_pages, resolve(wants, true));
  }
}

void ReadEngine::load(std::span<Want*> claimed, bool ahead) {
  std::vector<uint8_t> done(claimed.size(), 0);  // claims already completed, one byte per claim
  auto fail = [&](size_t i) {
    claimed[i]->result = LoadedPage{nullptr, PageStatus::kIoError};
    Stats::add(stats_.bad_pages);
    if (!claimed[i]->direct) cache_.complete(claimed[i]->entry, claimed[i]->result);
    done[i] = 1;
  };
  try {
    std::sort(claimed.begin(), claimed.end(), [&](const Want* a, const Want* b) {
      return image_.pages()[a->entry].offset < image_.pages()[b->entry].offset;
    });
    std::vector<uint64_t> entries(claimed.size());
    for (size_t i = 0; i < claimed.size(); ++i) entries[i] = claimed[i]->entry;
    FetchPlan plan = plan_fetch(entries);
    thread_local std::vector<uint8_t> staging;
    if (staging.size() < plan.staging_size) staging.resize(plan.staging_size);
    for (size_t r = 0; r < plan.ranges.size(); ++r) {
      plan.ranges[r].dst = staging.data() + plan.base[r];
      if (plan.pages[r] > 1) Stats::add(stats_.coalesced_reads);
    }
    if (!plan.ranges.empty()) fetcher_.fetch(plan.ranges);
    const format::PageEntry& first = image_.pages()[claimed.front()->entry];
    const format::PageEntry& last = image_.pages()[claimed.back()->entry];
    if (prefetch_)
      prefetch_following(first.offset, last.offset + last.csize);
    else if (opt_.image_readahead)
      hint_following(plan);
    if (decode_ahead_ && !ahead)
      decode_following(first.offset, last.offset + last.csize);  // readers' walks only

    std::vector<DecodeJob> jobs;
    std::vector<size_t> claim_of;  // job -> index into `claimed`
    std::vector<std::shared_ptr<Page>> pages;
    for (size_t i = 0; i < claimed.size(); ++i) {
      const auto [range, at] = plan.where[i];
      if (!plan.ranges[range].ok) {
        fail(i);
        continue;
      }
      const uint8_t* stored = staging.data() + at;
      const format::PageEntry& e = image_.pages()[claimed[i]->entry];
      std::shared_ptr<Page> page;
      uint8_t* dst = claimed[i]->direct;
      if (!dst) {
        page = std::make_shared<Page>();
        page->data = PageMemory::get(e.usize);
        page->size = e.usize;
        dst = page->data.get();
      }
      jobs.push_back(DecodeJob{&e, stored, dst, PageStatus::kOk, image_.page_digest(claimed[i]->entry)});
      claim_of.push_back(i);
      pages.push_back(std::move(page));
    }
    // Each page is published the moment it is decoded: readers waiting on it go on at once.
    auto publish = [&](size_t j) {
      Want& w = *claimed[claim_of[j]];
      w.result.status = jobs[j].status;
      if (w.result.status == PageStatus::kOk)
        w.result.page = std::move(pages[j]);  // null for a direct page
      else
        Stats::add(stats_.bad_pages);
      if (!w.direct) cache_.complete(w.entry, w.result);
      done[claim_of[j]] = 1;
    };
    if (!jobs.empty()) decoder_.decode(jobs, publish);
  } catch (...) {
    // Out of memory or a bug: fail every claim still open rather than leave anyone waiting on it.
    for (size_t i = 0; i < claimed.size(); ++i)
      if (!done[i]) fail(i);
  }
}

void ReadEngine::fetch_stored(std::span<const uint64_t> entries, StoredPages& out) {
  std::vector<size_t> order(entries.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return image_.pages()[entries[a]].offset < image_.pages()[entries[b]].offset;
  });
  std::vector<uint64_t> sorted(entries.size());
  for (size_t i = 0; i < order.size(); ++i) sorted[i] = entries[order[i]];
  FetchPlan plan = plan_fetch(sorted);
  out.staging.resize(plan.staging_size);
  for (size_t r = 0; r < plan.ranges.size(); ++r) plan.ranges[r].dst = out.staging.data() + plan.base[r];
  if (!plan.ranges.empty()) fetcher_.fetch(plan.ranges);
  out.at.assign(entries.size(), 0);
  out.ok.assign(entries.size(), 0);
  for (size_t i = 0; i < order.size(); ++i) {
    const format::PageEntry& e = image_.pages()[sorted[i]];
    const auto [range, at] = plan.where[i];
    out.at[order[i]] = at;
    // A trusted image's digest covers what the stored checksum would (PageDecoder::decode's
    // stored_verified): one hash of the stored bytes, not two.
    const uint8_t* stored = out.staging.data() + at;
    out.ok[order[i]] = plan.ranges[range].ok && (image_.trusted() ? image_.stored_ok(sorted[i], stored)
                                                                  : checksum32(stored, e.csize) == e.ccheck);
  }
}

void ReadEngine::maybe_readahead(uint32_t ino, uint64_t offset, uint64_t end, ReadState& state) {
  const uint64_t prev = state.next_offset.exchange(end);
  // The kernel delivers a sequential stream's requests out of order: its readahead sends two or more at
  // once (up to 1 MiB each), and the request threads take them in any order. So a read counts as
  // sequential within two of its own lengths of where the last one ended; not more, as random reads of
  // that size that land so close would each start a window of readahead for nothing.
  const uint64_t slack = std::max<uint64_t>(256 << 10, 2 * (end - offset));
  if (offset + slack < prev || offset > prev + slack) return;
  const uint64_t ps = image_.page_size();
  const uint64_t window = opt_.readahead_bytes / ps;
  if (window == 0) return;
  const uint64_t pages = image_.logical_pages(ino);
  const uint64_t end_page = (end + ps - 1) / ps;
  const uint64_t limit = std::min(pages, end_page + window);
  uint64_t seen = state.ahead_until.load(), from;
  do {
    // Behind the reader, or far ahead of it after a seek back: start again at the reader.
    from = (seen < end_page || seen > limit) ? end_page : seen;
    // Schedule in half-window steps so each readahead batch is big enough to decode in parallel.
    if (from >= limit || (limit - from < window / 2 && limit < pages)) return;
    // The next page already there: a reader moving about in a file it has read (random reads a few
    // pages apart look sequential here), where a task would find every page cached and cost a thread
    // wake-up for nothing.
    if (const PageRef next = image_.page_ref(ino, from);
        next.kind != PageRef::kHole && cache_.contains(next.entry))
      return;
  } while (!state.ahead_until.compare_exchange_weak(seen, limit));
  submit_ahead([this, ino, from, limit] {
    std::vector<Want> wants;
    for (uint64_t i = from; i < limit; ++i) {
      PageRef ref = image_.page_ref(ino, i);
      if (ref.kind != PageRef::kHole) wants.push_back(Want{ref.entry, i, {}});
    }
    resolve(wants, true);
  });
}

std::string ReadEngine::report(uint32_t ino, uint64_t index, uint64_t entry, std::string_view what) {
  {
    std::lock_guard lock(report_mu_);
    if (auto it = lines_.find({entry, ino, std::string(what)}); it != lines_.end()) return it->second;
    if (lines_.size() >= kMaxReported) return image_.describe(ino, index, what);  // past the bound: no path
  }
  std::string line = image_.describe(ino, index, what);
  const std::string path = image_.path(ino);  // a scan of the directories: once per (page, file)
  if (!path.empty()) line += " [path " + printable_name(path) + "]";
  bool first;
  {
    std::lock_guard lock(report_mu_);
    lines_.emplace(std::tuple{entry, ino, std::string(what)}, line);
    first = reported_.insert(entry).second;
  }
  if (first) log_line(LogLevel::kError, line);
  return line;
}

}  // namespace gdfs::engine
