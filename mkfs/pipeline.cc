#include "pipeline.h"

#include <cstring>
#include <stdexcept>

#include "base.h"
#include "diag.h"
#include "gdfs/checksum.h"
#include "image_writer.h"
#include "progress.h"

namespace gdfs::mkfs {
namespace {

std::span<const uint8_t> stored_bytes(const PageJob& job) {
  return job.codec == format::kCodecStored && !job.reused ? std::span<const uint8_t>(job.raw)
                                                          : std::span<const uint8_t>(job.packed);
}

void count_codec(PipelineStats& st, uint8_t codec) {
  switch (codec) {
    case format::kCodecStored:
      ++st.pages_stored;
      break;
    case format::kCodecBitpack:
      ++st.pages_bitpack;
      break;
    case format::kCodecGDeflateX86:
      ++st.pages_x86;
      [[fallthrough]];
    default:
      ++st.pages_gdeflate;
  }
}

}  // namespace

void compress_job(PageJob& job, gdeflate::Compressor& comp, bool x86_filter) {
  page::Encoded e;
  e.bytes = std::move(job.packed);  // reuse its capacity
  page::encode_page(job.raw, job.choice, comp, e, x86_filter);
  job.codec = e.codec;
  job.param = e.param;
  job.packed = std::move(e.bytes);
  const auto s = stored_bytes(job);
  job.ccheck = checksum32(s.data(), s.size());
  job.ucheck = checksum32(job.raw.data(), job.raw.size());
}

void read_entry(const ImageWriter& image, const format::PageEntry& e, PageDecoder& dec,
                std::vector<uint8_t>& stored, std::vector<uint8_t>& out) {
  out.resize(e.usize);
  if (e.codec == format::kCodecStored) return image.read_at(e.offset, out.data(), out.size());
  stored.resize(e.csize);
  image.read_at(e.offset, stored.data(), stored.size());
  const PageStatus r =
      dec.decode_codec(e.codec, e.param, stored.data(), stored.size(), out.data(), out.size());
  if (r != PageStatus::kOk)
    throw std::logic_error("a page just written does not decode (" + codec_name(e.codec) + ")");
}

Pipeline::Pipeline(ImageWriter& image, Progress& progress, int level, bool x86_filter, unsigned threads,
                   const Base* base, bool layered)
    : image_(image),
      progress_(progress),
      level_(level),
      x86_filter_(x86_filter),
      base_(base),
      layered_(layered),
      max_in_flight_(4 * size_t{threads} + 8) {
  try {
    for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { worker(); });
    threads_.emplace_back([this] { writer(); });
  } catch (...) {
    stop_and_join();
    throw;
  }
}

Pipeline::~Pipeline() {
  stop_and_join();
}

void Pipeline::stop_and_join() {
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
  }
  work_cv_.notify_all();
  done_cv_.notify_all();
  space_cv_.notify_all();
  commit_cv_.notify_all();
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

void Pipeline::fail(std::exception_ptr e) {
  {
    std::lock_guard lock(mu_);
    if (!error_) error_ = e;
    stopped_ = true;
  }
  work_cv_.notify_all();
  done_cv_.notify_all();
  space_cv_.notify_all();
  commit_cv_.notify_all();
}

void Pipeline::throw_if_failed() {
  if (error_) std::rethrow_exception(error_);
  if (stopped_) throw std::logic_error("page pipeline used after it stopped");
}

void Pipeline::submit(std::unique_ptr<PageJob> job) {
  if (submitted_ >= format::kNone - 1)  // docs/FORMAT.md section 9
    throw MkfsError("too many pages: the page table is limited to 2^32 - 2 entries");
  // Candidates skip the workers. Decided before queueing: once the lock is released the writer may
  // commit and free the job at any moment.
  const bool candidate = job->dup_of != format::kNone;
  {
    std::unique_lock lock(mu_);
    space_cv_.wait(lock, [&] { return stopped_ || in_flight_.size() < max_in_flight_; });
    throw_if_failed();
    job->done = candidate;
    if (!candidate) work_.push_back(job.get());
    in_flight_.push_back(std::move(job));
  }
  ++submitted_;
  if (candidate)
    done_cv_.notify_one();
  else
    work_cv_.notify_one();
}

format::PageEntry Pipeline::committed(uint32_t index) {
  std::unique_lock lock(mu_);
  commit_cv_.wait(lock, [&] { return stopped_ || committed_ > index; });
  throw_if_failed();
  return result_.entries[index];
}

PipelineResult Pipeline::finish() {
  {
    std::lock_guard lock(mu_);
    closing_ = true;
  }
  work_cv_.notify_all();
  done_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  std::lock_guard lock(mu_);
  if (error_) std::rethrow_exception(error_);
  return std::move(result_);
}

void Pipeline::worker() {
  try {
    gdeflate::Compressor comp(level_);
    PageDecoder dec;
    std::vector<uint8_t> buf;
    for (;;) {
      PageJob* job = nullptr;
      {
        std::unique_lock lock(mu_);
        work_cv_.wait(lock, [&] { return stopped_ || closing_ || !work_.empty(); });
        if (stopped_ || work_.empty()) return;  // closing with nothing left: done
        job = work_.front();
        work_.pop_front();
      }
      if (job->base_entry == format::kNone || !base_->reuse(*job, layered_, x86_filter_, dec, buf))
        compress_job(*job, comp, x86_filter_);
      bool oldest = false;
      {
        std::lock_guard lock(mu_);
        job->done = true;
        oldest = in_flight_.front().get() == job;
      }
      if (oldest) done_cv_.notify_one();  // the writer waits for the oldest job only
    }
  } catch (...) {
    fail(std::current_exception());
  }
}

void Pipeline::writer() {
  try {
    gdeflate::Compressor comp(level_);  // only for hash collisions, which are astronomically rare
    PageDecoder dec;
    std::vector<uint8_t> buf;
    for (;;) {
      std::unique_ptr<PageJob> job;
      bool wake_producer = false;
      {
        std::unique_lock lock(mu_);
        done_cv_.wait(lock, [&] {
          return stopped_ || (!in_flight_.empty() && in_flight_.front()->done) ||
                 (closing_ && in_flight_.empty());
        });
        if (stopped_ || in_flight_.empty()) return;
        job = std::move(in_flight_.front());
        in_flight_.pop_front();
        // The producer waits for room only when the pipeline is full, and is woken when half of it
        // has drained: it then submits several jobs per wake-up, not one.
        wake_producer = in_flight_.size() == max_in_flight_ / 2;
      }
      if (wake_producer) space_cv_.notify_one();
      commit(*job, comp, dec, buf);
      commit_cv_.notify_all();
    }
  } catch (...) {
    fail(std::current_exception());
  }
}

// Writes one job's page (or shares an earlier entry's) and appends its PageEntry.
void Pipeline::commit(PageJob& job, gdeflate::Compressor& comp, PageDecoder& dec, std::vector<uint8_t>& buf) {
  PipelineStats& st = result_.stats;
  format::PageEntry e{};
  bool shared = false;
  if (job.dup_of != format::kNone) {
    const format::PageEntry& prev = result_.entries[job.dup_of];  // written: only this thread appends
    std::vector<uint8_t> plain;
    read_entry(image_, prev, dec, buf, plain);
    if (plain.size() == job.raw.size() && std::memcmp(plain.data(), job.raw.data(), plain.size()) == 0) {
      e = prev;
      e.flags = format::kPageDeduped;
      shared = true;
      ++st.deduped;
      st.dedup_bytes += e.usize;
      st.dedup_stored_bytes += e.csize;
    } else {
      ++st.collisions;
      compress_job(job, comp, x86_filter_);
    }
  }
  if (job.reused) {
    commit_reused(job, e);
  } else if (!shared) {
    const auto bytes = stored_bytes(job);
    // A page without bytes is a packer bug, and readers would refuse the image: fail the build instead.
    if (job.raw.empty() || bytes.empty()) throw std::logic_error("internal error: a page without bytes");
    e.offset = format::align_up(result_.data_end, format::kPageAlign);
    e.csize = static_cast<uint32_t>(bytes.size());
    e.usize = static_cast<uint32_t>(job.raw.size());
    e.ccheck = job.ccheck;
    e.ucheck = job.ucheck;
    e.codec = job.codec;
    e.param = job.param;
    e.flags = job.tail_pack ? format::kPageTailPack : 0;
    image_.write_at(e.offset, bytes.data(), bytes.size());
    result_.data_end = e.offset + bytes.size();
    count_codec(st, job.codec);
    progress_.bytes_out = result_.data_end - format::kDataOffset;
  }
  std::lock_guard lock(mu_);
  result_.entries.push_back(e);
  ++committed_;
}

// A page of the base image: its stored bytes copied, or (layered) left in the base.
void Pipeline::commit_reused(const PageJob& job, format::PageEntry& e) {
  PipelineStats& st = result_.stats;
  // The same base entry reused again (the tree has the page twice): shared, as dedupe would.
  const auto [it, fresh] = reused_.try_emplace(job.base_entry, static_cast<uint32_t>(result_.entries.size()));
  if (!fresh) {
    e = result_.entries[it->second];
    if (!layered_) e.flags |= format::kPageDeduped;
    ++st.deduped;
    st.dedup_bytes += e.usize;
    st.dedup_stored_bytes += e.csize;
    return;
  }
  e = base_->entry_for(job.base_entry, layered_);
  if (job.tail_pack) e.flags = format::kPageTailPack;
  ++st.reused;
  st.reused_bytes += e.usize;
  st.reused_stored_bytes += e.csize;
  count_codec(st, e.codec);
  if (layered_) return;
  e.offset = format::align_up(result_.data_end, format::kPageAlign);
  image_.write_at(e.offset, job.packed.data(), job.packed.size());
  result_.data_end = e.offset + job.packed.size();
  progress_.bytes_out = result_.data_end - format::kDataOffset;
}

}  // namespace gdfs::mkfs
