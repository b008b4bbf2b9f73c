// The image a build reuses (--base OLD): pages and tails of OLD whose bytes the new tree still has are
// not compressed again. Their stored bytes are copied into the new image, or, with --layered, left in
// OLD and referred to (FORMAT.md 4.3), so that a reader who has OLD fetches only what is new.
//
// Reuse is decided by content, never by name or mtime: a page is a candidate when its checksum32 and
// length match an entry of OLD; a tail when OLD's file at the same path has a tail of its length, or,
// for a path OLD does not have (a new or renamed file), when its hash128 and length match a tail of
// OLD. Then the bytes decide (OLD's page is read, checked by its own checksums, decoded and compared).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "content_key.h"
#include "gdfs/format.h"
#include "gdfs/image.h"
#include "gdfs/page.h"
#include "options.h"

namespace gdfs::mkfs {

struct PageJob;

class Base {
 public:
  // Opens o.base (a path or URL; a layered OLD opens with its own bases) and indexes its pages. Throws
  // MkfsError when OLD does not open or its page size differs.
  explicit Base(const Options& o);

  const Image& image() const { return *image_; }

  // Whether every tail check of a base pack's job holds against `plain`, OLD's decoded pack (`read`:
  // whether OLD could be read and decoded at all), and the pack may be reused (`reusable`). If not (a
  // hash collision, OLD changed since it was indexed, or a pack the options forbid reusing), job.raw
  // becomes the pack to store instead: OLD's bytes (zeros where OLD could not be read) with every
  // check's bytes written at its offset, so each file pointing into the pack reads its own bytes;
  // job.base_entry is cleared.
  static bool tails_match(PageJob& job, bool read, bool reusable, const std::vector<uint8_t>& plain);

  // An entry of OLD whose decoded bytes may be these (not a tail pack); kNone if none.
  uint32_t page_candidate(const std::vector<uint8_t>& raw) const;
  // A tail of OLD whose bytes may be `tail`, the last partial page of the file at `path` (relative to
  // SOURCE), looked for at that path: when OLD has a regular file there (`has_file`), its tail if it has
  // one of that length (else the file changed). For a path OLD does not have, content_candidate() looks
  // by content. The packer has a worker confirm the bytes (PageJob::tail_checks), or same_tail().
  struct Tail {
    uint32_t entry, offset;
  };
  struct AtPath {
    bool has_file = false;
    std::optional<Tail> tail;
  };
  AtPath tail_at_path(const std::string& path, const std::vector<uint8_t>& tail) const;

  // The content index: every tail of OLD by its hash128 and length, for paths OLD does not have (new or
  // renamed files). Indexing a tail pack means decoding it. The workers decode nearly every tail pack of
  // OLD anyway, to confirm the tails of unchanged paths, so after want_index() they index each pack they
  // decode (reuse()), and complete_index() decodes only the packs none of them did. Among equal tails
  // the first in OLD (by entry, then offset) is kept, so the index is the same whoever made it.
  void want_index();
  void complete_index(unsigned threads);
  // After complete_index(): a tail of OLD with these bytes' hash128 and length.
  std::optional<Tail> content_candidate(const std::vector<uint8_t>& tail) const;
  // How many tails of OLD the content index holds (0 when no path needed it).
  size_t indexed_tails() const;
  // Whether OLD's tail at `t` is `tail`, byte for byte (the packer's thread only).
  bool same_tail(const Tail& t, const std::vector<uint8_t>& tail);

  // For a worker: makes `job` the reuse of job.base_entry if its bytes are job.raw (a page) or match every
  // tail check (a tail pack), filling in its codec, checks and (unless `layered` needs none) its stored
  // bytes. False: compress it; a tail pack that failed a check gets its raw bytes to compress first.
  // Without `x86_filter` (mkfs --no-x86-filter) an x86-filtered page of OLD is never reused, so that the
  // image needs no 2.3 reader: it is compressed again as if it had failed a check.
  bool reuse(PageJob& job, bool layered, bool x86_filter, PageDecoder& dec, std::vector<uint8_t>& buf) const;

  // A reused entry as the new image records it: copied (`layered` false: offset to be set by the writer)
  // or left where it is, in layer 1 (OLD) or 1 + j (OLD's own layer j).
  format::PageEntry entry_for(uint32_t entry, bool layered) const;
  // The layers a layered image built on OLD refers to: OLD, then OLD's own bases.
  struct NewLayer {
    format::LayerRef ref;
    std::string hint;
  };
  std::vector<NewLayer> layers_for(const std::string& new_image) const;

 private:
  void index_pages();
  // Hashes the tails of OLD's pack `entry`, decoded into `plain`, into the content index, once per pack.
  void index_pack(uint32_t entry, const std::vector<uint8_t>& plain) const;
  const std::vector<uint8_t>* decoded_pack(uint32_t entry);

  const Options& o_;
  std::unique_ptr<Image> image_;
  std::unordered_map<uint64_t, uint32_t> pages_;  // (ucheck << 17 | usize) -> first such entry

  // The content index. OLD's tails and where each pack's are, made by want_index() before the workers
  // may index (hashing_ publishes them); the rest is shared with the workers under index_mu_.
  struct OldTail {
    uint32_t entry, offset, len;
  };
  std::vector<OldTail> old_tails_;                                      // by (entry, offset)
  std::unordered_map<uint32_t, std::pair<size_t, size_t>> pack_tails_;  // entry -> its range of old_tails_
  std::atomic<bool> hashing_{false};
  mutable std::mutex index_mu_;
  mutable std::unordered_set<uint32_t> indexed_packs_;
  mutable std::unordered_map<ContentKey, Tail, ContentKeyHash> tails_;
  bool complete_ = false;

  static constexpr size_t kPackCache = 64;  // decoded tail packs of OLD kept for confirming tails
  struct CachedPack {
    uint32_t entry = format::kNone;
    uint64_t used = 0;
    std::vector<uint8_t> bytes;
  };
  std::vector<CachedPack> cache_;
  uint64_t clock_ = 0;
  PageDecoder dec_;
};

}  // namespace gdfs::mkfs

namespace gdfs::mkfs {

// The layer region of a layered image built on `base` (FORMAT.md 4.3): the LayerRefs its `entries`
// refer to, then their hints. Layers no entry uses are left out and `entries` renumbered to match.
struct LayerTable {
  uint32_t count = 0;
  std::vector<uint8_t> region;
};
LayerTable make_layer_table(const Base& base, std::vector<format::PageEntry>& entries,
                            const std::string& new_image);

}  // namespace gdfs::mkfs
