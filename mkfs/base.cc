#include "base.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <thread>

#include "diag.h"
#include "pipeline.h"

namespace gdfs::mkfs {
namespace {

uint64_t page_key(uint32_t ucheck, size_t usize) {
  return uint64_t{ucheck} << 17 | usize;  // usize <= 65536 < 2^17
}

// What a reader of the new image resolves a hint against: its directory.
std::string relative_hint(const std::string& target, const std::string& new_image) {
  namespace fs = std::filesystem;
  const fs::path from = fs::absolute(fs::path(new_image)).lexically_normal().parent_path();
  return fs::absolute(fs::path(target)).lexically_normal().lexically_relative(from).string();
}

}  // namespace

Base::Base(const Options& o) : o_(o) {
  try {
    image_ = Image::open(o.base);
  } catch (const ImageError& e) {
    throw MkfsError(std::string("--base: ") + e.what());
  }
  if (image_->page_size() != o.page_size)
    throw MkfsError("--base: " + quote_path(o.base) + " has pages of " + std::to_string(image_->page_size()) +
                    " bytes, not " + std::to_string(o.page_size) + " (give --page-size " +
                    std::to_string(image_->page_size()) + ")");
  index_pages();
}

void Base::index_pages() {
  const auto entries = image_->stored_pages();
  for (uint32_t i = 0; i < entries.size(); ++i)
    if (!(entries[i].flags & format::kPageTailPack))
      pages_.try_emplace(page_key(entries[i].ucheck, entries[i].usize), i);
}

void Base::want_index() {
  if (hashing_.load(std::memory_order_relaxed)) return;
  const Image& img = *image_;
  for (uint32_t ino = 1; ino <= img.inode_count(); ++ino) {
    const format::Inode& in = img.inode(ino);
    if (img.type(ino) != format::kTypeReg || in.tail_entry == format::kNone) continue;
    const PageRef last = img.page_ref(ino, img.logical_pages(ino) - 1);
    old_tails_.push_back({in.tail_entry, in.tail_offset, last.length});  // validated at open
  }
  std::sort(old_tails_.begin(), old_tails_.end(), [](const OldTail& a, const OldTail& b) {
    return std::pair(a.entry, a.offset) < std::pair(b.entry, b.offset);
  });
  for (size_t i = 0, j; i < old_tails_.size(); i = j) {
    for (j = i + 1; j < old_tails_.size() && old_tails_[j].entry == old_tails_[i].entry;) ++j;
    pack_tails_.emplace(old_tails_[i].entry, std::pair(i, j));
  }
  hashing_.store(true, std::memory_order_release);
}

void Base::index_pack(uint32_t entry, const std::vector<uint8_t>& plain) const {
  const auto range = pack_tails_.find(entry);
  if (range == pack_tails_.end()) return;  // no file of OLD has its tail there
  {
    const std::lock_guard lock(index_mu_);
    if (indexed_packs_.count(entry)) return;
  }
  std::vector<std::pair<ContentKey, Tail>> found;
  for (size_t i = range->second.first; i < range->second.second; ++i) {
    const OldTail& t = old_tails_[i];
    if (size_t{t.offset} + t.len > plain.size()) continue;  // the pack decoded shorter than OLD says
    found.emplace_back(content_key(plain.data() + t.offset, t.len), Tail{t.entry, t.offset});
  }
  const std::lock_guard lock(index_mu_);
  if (!indexed_packs_.insert(entry).second) return;
  for (const auto& [key, tail] : found) {
    const auto [it, fresh] = tails_.try_emplace(key, tail);
    if (!fresh && std::pair(tail.entry, tail.offset) < std::pair(it->second.entry, it->second.offset))
      it->second = tail;
  }
}

// The packs no worker indexed, decoded on `threads` threads; a pack that does not decode is left out
// (its tails are compressed again: OLD is only ever a source of candidates).
void Base::complete_index(unsigned threads) {
  if (complete_) return;
  want_index();
  std::vector<uint32_t> todo;
  {
    const std::lock_guard lock(index_mu_);
    for (const auto& [entry, range] : pack_tails_)
      if (!indexed_packs_.count(entry)) todo.push_back(entry);
  }
  std::sort(todo.begin(), todo.end());
  auto work = [&](size_t first) {
    PageDecoder dec;
    std::vector<uint8_t> page(image_->page_size());
    for (size_t p = first; p < todo.size(); p += threads) {
      page.resize(image_->page_size());
      if (image_->read_page(todo[p], dec, page.data()) != PageStatus::kOk) continue;
      page.resize(image_->stored_pages()[todo[p]].usize);
      index_pack(todo[p], page);
    }
  };
  threads = std::max(1u, threads);
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (std::thread& t : pool) t.join();
  complete_ = true;
}

std::optional<Base::Tail> Base::content_candidate(const std::vector<uint8_t>& tail) const {
  const std::lock_guard lock(index_mu_);
  const auto it = tails_.find(content_key(tail.data(), tail.size()));
  if (it == tails_.end()) return std::nullopt;
  return it->second;
}

size_t Base::indexed_tails() const {
  const std::lock_guard lock(index_mu_);
  return tails_.size();
}

uint32_t Base::page_candidate(const std::vector<uint8_t>& raw) const {
  const auto it = pages_.find(page_key(checksum32(raw.data(), raw.size()), raw.size()));
  return it == pages_.end() ? format::kNone : it->second;
}

// The path first: an update mostly keeps its files where they were, and OLD's file there needs no
// decoding to be named (only to be compared, which a worker does once per pack). Decoding every pack of
// OLD to index its tails by content took about a fifth of a rebuild's CPU time on the Linux tree
// (bench/results/2026-11-26-update-floor-vm.txt).
Base::AtPath Base::tail_at_path(const std::string& path, const std::vector<uint8_t>& tail) const {
  const Image& img = *image_;
  const uint32_t ino = img.resolve(path);
  if (!ino || img.type(ino) != format::kTypeReg) return {};
  const format::Inode& in = img.inode(ino);
  if (in.tail_entry == format::kNone || img.page_ref(ino, img.logical_pages(ino) - 1).length != tail.size())
    return {true, std::nullopt};
  return {true, Tail{in.tail_entry, in.tail_offset}};  // validated at open: inside its tail pack
}

bool Base::same_tail(const Tail& t, const std::vector<uint8_t>& tail) {
  const std::vector<uint8_t>* pack = decoded_pack(t.entry);
  return pack && std::memcmp(pack->data() + t.offset, tail.data(), tail.size()) == 0;
}

// OLD's tail packs, decoded, the least recently used dropped first: the new tree's files come in much
// the order of OLD's, so consecutive tails mostly hit the same few packs.
const std::vector<uint8_t>* Base::decoded_pack(uint32_t entry) {
  ++clock_;
  cache_.reserve(kPackCache);
  CachedPack* slot = nullptr;
  for (CachedPack& c : cache_) {
    if (c.entry == entry) {
      c.used = clock_;
      return &c.bytes;
    }
    if (!slot || c.used < slot->used) slot = &c;
  }
  if (cache_.size() < kPackCache) slot = &cache_.emplace_back();
  slot->entry = format::kNone;
  slot->bytes.resize(image_->page_size());
  if (image_->read_page(entry, dec_, slot->bytes.data()) != PageStatus::kOk) return nullptr;
  slot->bytes.resize(image_->stored_pages()[entry].usize);
  slot->entry = entry;
  slot->used = clock_;
  return &slot->bytes;
}

bool Base::reuse(PageJob& job, bool layered, bool x86_filter, PageDecoder& dec,
                 std::vector<uint8_t>& buf) const {
  const format::PageEntry& e = image_->pages()[job.base_entry];  // offset in image_->source()
  const bool reusable = x86_filter || e.codec != format::kCodecGDeflateX86;
  job.packed.resize(e.csize);
  buf.resize(e.usize);
  const bool read = image_->read_stored(e, job.packed.data()) &&
                    dec.decode(e, job.packed.data(), buf.data()) == PageStatus::kOk;
  if (read && !job.tail_checks.empty() && hashing_.load(std::memory_order_acquire))
    index_pack(job.base_entry, buf);
  if (job.tail_checks.empty()) {
    if (!reusable || !read || buf.size() != job.raw.size() ||
        std::memcmp(buf.data(), job.raw.data(), buf.size()) != 0)
      return false;
  } else if (!tails_match(job, read, reusable, buf)) {
    return false;
  }
  job.reused = true;
  job.codec = static_cast<format::Codec>(e.codec);
  job.param = e.param;
  job.ccheck = e.ccheck;
  job.ucheck = e.ucheck;
  if (layered) job.packed = {};  // the bytes stay in the base
  return true;
}

bool Base::tails_match(PageJob& job, bool read, bool reusable, const std::vector<uint8_t>& plain) {
  bool all = read && reusable;
  for (const PageJob::TailCheck& c : job.tail_checks)
    all = all && std::memcmp(plain.data() + c.offset, c.bytes.data(), c.bytes.size()) == 0;
  if (all) return true;
  job.raw = read ? plain : std::vector<uint8_t>(plain.size(), 0);
  for (const PageJob::TailCheck& c : job.tail_checks)
    std::memcpy(job.raw.data() + c.offset, c.bytes.data(), c.bytes.size());
  job.base_entry = format::kNone;
  return false;
}

format::PageEntry Base::entry_for(uint32_t entry, bool layered) const {
  format::PageEntry e = image_->stored_pages()[entry];
  e.flags = 0;
  if (layered)
    e.layer += 1;  // OLD is layer 1 of the new image, OLD's layer j its layer 1 + j
  else
    e.layer = 0, e.offset = 0;
  return e;
}

std::vector<Base::NewLayer> Base::layers_for(const std::string& new_image) const {
  std::vector<NewLayer> out;
  const format::Superblock& sb = image_->superblock();
  NewLayer old;
  std::memcpy(old.ref.uuid, sb.uuid, sizeof sb.uuid);
  old.ref.sb_checksum = sb.sb_checksum;
  old.ref.image_size = sb.image_size;
  old.ref.data_offset = sb.data_offset;
  old.ref.data_size = sb.data_size;
  const bool url = is_url(o_.base);
  old.hint = !o_.base_hint.empty() ? o_.base_hint
             : url                 ? o_.base.substr(o_.base.find_last_of('/') + 1)
                                   : relative_hint(o_.base, new_image);
  out.push_back(old);
  for (const Image::Layer& l : image_->layers()) {
    // OLD's hints are relative to OLD; a local chain is re-anchored at the new image, a remote one is
    // assumed to stay beside it.
    std::string hint = l.hint;
    if (!url)
      hint = relative_hint((std::filesystem::path(o_.base).parent_path() / l.hint).string(), new_image);
    out.push_back({l.ref, hint});
  }
  return out;
}

}  // namespace gdfs::mkfs

namespace gdfs::mkfs {

LayerTable make_layer_table(const Base& base, std::vector<format::PageEntry>& entries,
                            const std::string& new_image) {
  const std::vector<Base::NewLayer> all = base.layers_for(new_image);
  std::vector<uint32_t> renumber(all.size() + 1, 0);  // old layer number -> new one, 0 = unused
  for (const format::PageEntry& e : entries)
    if (e.layer) renumber[e.layer] = 1;
  LayerTable t;
  std::vector<const Base::NewLayer*> used;
  for (size_t k = 1; k < renumber.size(); ++k)
    if (renumber[k]) renumber[k] = ++t.count, used.push_back(&all[k - 1]);
  if (t.count > format::kMaxLayers)
    throw MkfsError("--layered: the base chain would have " + std::to_string(t.count) +
                    " images, more than " + std::to_string(format::kMaxLayers) +
                    "; flatten the base first (gdfs-inspect flatten)");
  for (format::PageEntry& e : entries) e.layer = renumber[e.layer];
  uint64_t hint_at = t.count * sizeof(format::LayerRef);
  t.region.resize(hint_at);
  for (uint32_t k = 0; k < t.count; ++k) {
    const std::string& hint = used[k]->hint;
    if (hint.empty() || hint.size() > format::kMaxLayerHint || hint.front() == '/' ||
        hint.find("://") != std::string::npos)
      throw MkfsError("--base-hint: '" + hint + "' is not a relative path of 1.." +
                      std::to_string(format::kMaxLayerHint) + " bytes");
    format::LayerRef ref = used[k]->ref;
    ref.hint = static_cast<uint32_t>(hint_at);
    ref.hint_len = static_cast<uint32_t>(hint.size());
    ref.reserved = 0;
    std::memcpy(t.region.data() + k * sizeof ref, &ref, sizeof ref);
    t.region.insert(t.region.end(), hint.begin(), hint.end());
    hint_at += hint.size();
  }
  return t;
}

}  // namespace gdfs::mkfs
