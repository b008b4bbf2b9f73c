// The parallel page pipeline. One producer (the packer) submits page jobs in order; T workers compress
// them; one writer thread commits them strictly in submission order, so the page table and the data
// region are the same for any T. At most `max_in_flight` jobs exist at once, which bounds memory.
//
// Deduplication: the producer may mark a job as a candidate duplicate of an earlier entry (same hash
// and length). Candidates are not compressed; the writer confirms them byte for byte against the
// earlier entry's stored bytes, read back from the image, and only then shares that entry's data. A
// hash collision is compressed by the writer itself, so duplicate bytes are never stored twice and a
// collision can never corrupt a file.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "gdfs/format.h"
#include "gdfs/gdeflate.h"
#include "gdfs/page.h"
#include "gdfs/page_encode.h"

namespace gdfs::mkfs {

class Base;
class ImageWriter;
class Progress;

struct PageJob {
  std::vector<uint8_t> raw;         // the page's bytes, 1..page size
  bool tail_pack = false;           // a tail pack rather than a file page
  uint32_t dup_of = format::kNone;  // candidate duplicate of this earlier entry
  page::CodecChoice choice = page::CodecChoice::kGDeflate;
  // --base: an entry of the base image whose decoded bytes may be `raw` (a page), or, for a tail pack of
  // the base (`raw` empty), whose bytes at each check's offset may be its bytes. A worker decodes the
  // entry and compares. A page that differs is compressed from `raw`; a pack that differs anywhere is
  // stored again as a new pack: the base's bytes with every check's bytes written over them.
  uint32_t base_entry = format::kNone;
  struct TailCheck {
    uint32_t offset;
    std::vector<uint8_t> bytes;
  };
  std::vector<TailCheck> tail_checks;
  // Filled in by a worker:
  bool reused = false;          // the base entry's bytes are this page's: not compressed
  std::vector<uint8_t> packed;  // GDeflate or bitpack bytes (unused when stored), or the reused bytes
  format::Codec codec = format::kCodecStored;
  uint16_t param = 0;
  uint32_t ccheck = 0, ucheck = 0;
  bool done = false;
};

struct PipelineStats {
  uint64_t pages_gdeflate = 0, pages_stored = 0;  // entries with their own data (tail packs included)
  uint64_t pages_bitpack = 0;
  uint64_t pages_x86 = 0;                            // of pages_gdeflate, those with the x86 branch filter
  uint64_t deduped = 0;                              // entries sharing an earlier entry's data
  uint64_t dedup_bytes = 0, dedup_stored_bytes = 0;  // uncompressed / stored bytes not written again
  uint64_t collisions = 0;                           // candidates that turned out different
  uint64_t reused = 0, reused_bytes = 0;             // entries of the base image reused, their decoded bytes
  uint64_t reused_stored_bytes = 0;                  // and their stored bytes
};

struct PipelineResult {
  std::vector<format::PageEntry> entries;   // the page table
  uint64_t data_end = format::kDataOffset;  // end of the last page's bytes
  PipelineStats stats;
};

class Pipeline {
 public:
  // `x86_filter`: pages that look like x86 code get the branch filter (page::encode_page).
  // `base`: the image reused pages come from (--base), or null; `layered`: reused pages stay there.
  Pipeline(ImageWriter& image, Progress& progress, int level, bool x86_filter, unsigned threads,
           const Base* base = nullptr, bool layered = false);
  ~Pipeline();  // stops and joins the threads if finish() was not reached (an error unwinding)
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // Queues the next job; its entry index is the number of jobs submitted before it. Blocks while the
  // pipeline is full. Rethrows a worker's or the writer's error.
  void submit(std::unique_ptr<PageJob> job);
  uint32_t submitted() const { return submitted_; }
  // Waits until entry `index` (already submitted) is written, and returns it.
  format::PageEntry committed(uint32_t index);
  // Waits for every job, stops the threads and hands over the page table. Rethrows any error.
  PipelineResult finish();

 private:
  void worker();
  void writer();
  void commit(PageJob& job, gdeflate::Compressor& comp, PageDecoder& dec, std::vector<uint8_t>& buf);
  void commit_reused(const PageJob& job, format::PageEntry& e);
  void fail(std::exception_ptr e);
  void stop_and_join();
  void throw_if_failed();  // caller holds mu_

  ImageWriter& image_;
  Progress& progress_;
  int level_;
  bool x86_filter_;
  const Base* base_;
  bool layered_;
  size_t max_in_flight_;
  uint32_t submitted_ = 0;

  std::mutex mu_;
  std::condition_variable work_cv_;                 // workers: work_ not empty, or closing
  std::condition_variable done_cv_;                 // writer: the oldest job is done, or closing
  std::condition_variable space_cv_;                // producer: room in in_flight_
  std::condition_variable commit_cv_;               // producer: committed_ grew
  std::deque<PageJob*> work_;                       // jobs waiting for a worker
  std::deque<std::unique_ptr<PageJob>> in_flight_;  // every uncommitted job, in order
  bool closing_ = false;                            // no more submissions
  bool stopped_ = false;                            // an error: everyone leaves
  std::exception_ptr error_;
  uint32_t committed_ = 0;

  // Owned by the writer thread until finish() joins it (entries_ is also read under mu_ by committed()).
  PipelineResult result_;
  std::unordered_map<uint32_t, uint32_t> reused_;  // base entry -> the first entry that reused it

  std::vector<std::thread> threads_;
};

// Encodes `raw` into `job` as its `choice` says (gdfs/page_encode.h), with `comp` for GDeflate.
void compress_job(PageJob& job, gdeflate::Compressor& comp, bool x86_filter);
// Reads an entry's stored bytes back from the image and decodes them into `out` (entry.usize bytes).
void read_entry(const ImageWriter& image, const format::PageEntry& e, PageDecoder& dec,
                std::vector<uint8_t>& stored, std::vector<uint8_t>& out);

}  // namespace gdfs::mkfs
