// Reads into device memory (Reader::read_batch_device).
//
// With a device that decodes: the stored bytes of every page the requests need are fetched in one
// coalesced batch and their stored-bytes checksums checked on the host; they go to the device in one
// copy; each page is decoded there, straight into the caller's buffer where the range covers the whole
// decoded page, else once into scratch from which each range copies its part; holes are zeroed on the
// device. A page the device fails is decoded on the CPU (with both checksums) and its bytes uploaded, so
// a reader sees EIO only when the CPU fails too. Decoded bytes never come back to the host, so their
// checksum is not recomputed: the device decoder is trusted for pages whose stored bytes checked out
// (docs/LIBRARY.md says so).
//
// With a device that only copies: the ranges are read on the host like any read, then uploaded.
#include <cerrno>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "device/device_memory.h"
#include "read/read_engine.h"

namespace gdfs::engine {
namespace {

constexpr size_t kNoScratch = SIZE_MAX;

// The file bytes one logical page gives one request.
struct Piece {
  size_t req;
  uint64_t dst_off;  // in the request's destination
  uint32_t n;
  bool hole;
  size_t page;     // index into Plan::entries (not for holes)
  uint32_t from;   // offset in the decoded page
  uint64_t index;  // logical page, for messages
};

struct Plan {
  std::vector<Piece> pieces;
  std::vector<uint64_t> entries;  // page entries needed, each once
};

void fail(ReadRequest& r, int err, std::string message) {
  if (r.error) return;
  r.error = err;
  r.message = std::move(message);
}

// The pieces of every request, and the page entries they need. Sets errors for bad requests.
Plan plan(const Image& img, std::span<ReadRequest> reqs) {
  Plan p;
  std::unordered_map<uint64_t, size_t> slot;  // entry -> index in p.entries
  const uint64_t ps = img.page_size();
  for (size_t k = 0; k < reqs.size(); ++k) {
    ReadRequest& r = reqs[k];
    r.bytes = 0;
    r.error = 0;
    r.message.clear();
    if (r.ino == 0 || r.ino > img.inode_count()) {
      fail(r, ENOENT, img.name() + ": no inode " + std::to_string(r.ino));
      continue;
    }
    if (img.type(r.ino) != format::kTypeReg) {
      fail(r, EISDIR, img.describe(r.ino, 0, "not a regular file"));
      continue;
    }
    const uint64_t size = img.inode(r.ino).size;
    if (r.offset >= size || r.length == 0) continue;
    const uint64_t end = std::min<uint64_t>(size, r.offset + r.length);
    for (uint64_t i = r.offset / ps; i <= (end - 1) / ps; ++i) {
      const PageRef ref = img.page_ref(r.ino, i);
      const uint64_t from = std::max(r.offset, i * ps), to = std::min(end, (i + 1) * ps);
      Piece piece{k,
                  from - r.offset,
                  static_cast<uint32_t>(to - from),
                  ref.kind == PageRef::kHole,
                  0,
                  static_cast<uint32_t>(ref.offset + (from - i * ps)),
                  i};
      if (!piece.hole) {
        auto [it, added] = slot.emplace(ref.entry, p.entries.size());
        if (added) p.entries.push_back(ref.entry);
        piece.page = it->second;
      }
      p.pieces.push_back(piece);
    }
    r.bytes = static_cast<size_t>(end - r.offset);
  }
  return p;
}

uint8_t* at(void* base, uint64_t off) {
  return static_cast<uint8_t*>(base) + off;
}

// Decoded on the CPU, then uploaded: the path of a device that cannot decode.
void via_host(ReadEngine& eng, DeviceMemory& mem, std::span<ReadRequest> reqs, void* stream) {
  std::vector<Extent> extents(reqs.size());
  for (size_t k = 0; k < reqs.size(); ++k)
    if (!reqs[k].error) extents[k] = Extent{reqs[k].ino, reqs[k].offset, reqs[k].length};
  std::vector<std::vector<Slice>> slices(reqs.size());
  std::vector<int> errors(reqs.size());
  std::vector<std::string> messages(reqs.size());
  eng.read_many(extents, slices, errors, messages);
  std::vector<std::vector<uint8_t>> host(reqs.size());  // alive until sync()
  std::string err;
  for (size_t k = 0; k < reqs.size(); ++k) {
    ReadRequest& r = reqs[k];
    if (r.error) continue;
    if (errors[k]) {
      fail(r, errors[k], messages[k]);
      continue;
    }
    host[k].resize(r.bytes);
    size_t n = 0;
    for (const Slice& s : slices[k]) {
      std::memcpy(host[k].data() + n, s.data, s.len);
      n += s.len;
    }
    if (n && !mem.upload(r.dst, host[k].data(), n, stream, err))
      fail(r, EIO, eng.image().name() + ": " + err);
  }
  if (!mem.sync(stream, err))
    for (ReadRequest& r : reqs) fail(r, EIO, eng.image().name() + ": " + err);
}

class DeviceRead {
 public:
  DeviceRead(ReadEngine& eng, DeviceMemory& mem, std::span<ReadRequest> reqs, void* stream)
      : eng_(eng), img_(eng.image()), mem_(mem), reqs_(reqs), stream_(stream), plan_(plan(img_, reqs)) {}

  void run() {
    eng_.fetch_stored(plan_.entries, stored_);
    if (!place_scratch()) return;
    queue_device_work();
    decode_on_device();
    finish_pieces();
    if (!mem_.sync(stream_, err_)) fail_all(err_);
    for (ReadRequest& r : reqs_)
      if (r.error) r.bytes = 0;
  }

 private:
  const format::PageEntry& entry(size_t page) const { return img_.pages()[plan_.entries[page]]; }
  bool whole(const Piece& p) const { return !p.hole && p.from == 0 && p.n == entry(p.page).usize; }
  void fail_all(const std::string& why) {
    for (ReadRequest& r : reqs_) fail(r, EIO, img_.name() + ": " + why);
  }

  // Scratch: the stored bytes, then one decoded page for each entry some range needs only part of.
  bool place_scratch() {
    uint64_t size = (stored_.staging.size() + 15) & ~uint64_t{15};
    scratch_at_.assign(plan_.entries.size(), kNoScratch);
    for (const Piece& p : plan_.pieces) {
      if (p.hole || whole(p) || scratch_at_[p.page] != kNoScratch) continue;
      scratch_at_[p.page] = size;
      size += (entry(p.page).usize + 15) & ~uint64_t{15};
    }
    base_ = size ? mem_.scratch(size, err_) : nullptr;
    if (size && !base_) {
      fail_all(err_);
      return false;
    }
    if (!stored_.staging.empty() &&
        !mem_.upload(base_, stored_.staging.data(), stored_.staging.size(), stream_, err_)) {
      fail_all(err_);
      return false;
    }
    return true;
  }

  gpu::DevicePage device_page(size_t page, uint8_t* out) const {
    const format::PageEntry& e = entry(page);
    const auto codec = static_cast<format::Codec>(e.codec);  // Image::open checked it
    return gpu::DevicePage{base_ + stored_.at[page], out, e.csize, e.usize, codec, 0, e.param, 0};
  }

  // Holes zeroed, and the decode list: whole pieces into their destination, the rest into scratch.
  void queue_device_work() {
    for (const Piece& p : plan_.pieces) {
      ReadRequest& r = reqs_[p.req];
      if (r.error) continue;
      if (p.hole) {
        if (!mem_.zero(at(r.dst, p.dst_off), p.n, stream_, err_)) fail(r, EIO, img_.name() + ": " + err_);
      } else if (stored_.ok[p.page] && whole(p)) {
        pages_.push_back(device_page(p.page, at(r.dst, p.dst_off)));
        page_of_.push_back(p.page);
      }
    }
    for (size_t i = 0; i < plan_.entries.size(); ++i) {
      if (scratch_at_[i] == kNoScratch || !stored_.ok[i]) continue;
      pages_.push_back(device_page(i, base_ + scratch_at_[i]));
      page_of_.push_back(i);
    }
  }

  // A page the device failed (or that a whole batch failure left undone) is decoded on the CPU.
  void decode_on_device() {
    cpu_.assign(plan_.entries.size(), {});
    cpu_failed_.assign(plan_.entries.size(), 0);
    std::vector<PageStatus> results(pages_.size(), PageStatus::kNotRun);
    if (!pages_.empty() && !mem_.decode(pages_, results, stream_, err_))
      std::fill(results.begin(), results.end(), PageStatus::kNotRun);
    size_t on_device = 0;
    for (size_t j = 0; j < pages_.size(); ++j) {
      if (results[j] == PageStatus::kOk) {
        ++on_device;
        continue;
      }
      const size_t page = page_of_[j];
      if (!cpu_[page].empty() || cpu_failed_[page]) continue;
      const format::PageEntry& e = entry(page);
      cpu_[page].resize(e.usize);
      if (dec_.decode(e, stored_.staging.data() + stored_.at[page], cpu_[page].data()) != PageStatus::kOk) {
        cpu_[page].clear();
        cpu_failed_[page] = 1;
      }
    }
    Stats::add(eng_.stats().pages_decoded_gpu, on_device);
  }

  void finish_pieces() {
    for (const Piece& p : plan_.pieces) {
      ReadRequest& r = reqs_[p.req];
      if (r.error || p.hole) continue;
      if (!stored_.ok[p.page] || cpu_failed_[p.page]) {
        const char* what =
            !stored_.ok[p.page] ? "stored bytes unreadable or damaged" : "page does not decode";
        fail(r, EIO, eng_.report(r.ino, p.index, plan_.entries[p.page], what));
        continue;
      }
      bool ok = true;
      if (!cpu_[p.page].empty())
        ok = mem_.upload(at(r.dst, p.dst_off), cpu_[p.page].data() + p.from, p.n, stream_, err_);
      else if (!whole(p))
        ok = mem_.copy(at(r.dst, p.dst_off), base_ + scratch_at_[p.page] + p.from, p.n, stream_, err_);
      if (!ok) fail(r, EIO, img_.name() + ": " + err_);
    }
  }

  ReadEngine& eng_;
  const Image& img_;
  DeviceMemory& mem_;
  std::span<ReadRequest> reqs_;
  void* stream_;
  Plan plan_;
  StoredPages stored_;
  std::vector<uint64_t> scratch_at_;
  uint8_t* base_ = nullptr;
  std::vector<gpu::DevicePage> pages_;
  std::vector<size_t> page_of_;            // pages_[j] decodes plan_.entries[page_of_[j]]
  std::vector<std::vector<uint8_t>> cpu_;  // pages decoded on the CPU instead (alive until sync)
  std::vector<uint8_t> cpu_failed_;
  PageDecoder dec_;
  std::string err_;
};

}  // namespace

void read_to_device(ReadEngine& eng, DeviceMemory& mem, std::span<ReadRequest> reqs, void* stream) {
  std::lock_guard lock(mem.mu);  // one device read at a time: the scratch area is the device memory's
  if (!mem.can_decode()) {
    (void)plan(eng.image(), reqs);     // validates the requests and sets their sizes
    via_host(eng, mem, reqs, stream);  // read_many counts these reads
    for (ReadRequest& r : reqs)
      if (r.error) r.bytes = 0;
    return;
  }
  DeviceRead(eng, mem, reqs, stream).run();
  for (const ReadRequest& r : reqs) {
    if (r.error) {
      Stats::add(eng.stats().read_errors);
      continue;
    }
    Stats::add(eng.stats().reads);
    Stats::add(eng.stats().bytes_served, r.bytes);
  }
}

}  // namespace gdfs::engine
