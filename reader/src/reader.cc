// The public Reader: wires an image to the read engine (cache, fetcher, CPU/GPU decode, readahead) and
// answers metadata and data calls. The daemon is a FUSE front end over the same object.
#include "gdfs/reader.h"

#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

#include "cache/page_cache.h"
#include "decode/decode_device.h"
#include "decode/decode_scheduler.h"
#include "decode/thread_pool.h"
#include "device/device_memory.h"
#include "fetch/fetcher.h"
#include "gdfs/gpu_batch.h"
#include "gdfs/log.h"
#include "gdfs/machine.h"
#include "read/read_engine.h"
#include "read/stats.h"
#include "testing.h"

namespace gdfs {

namespace {
// Stored bytes decoded ahead of a walk through the image at a time (DecodeAhead): about 3 MiB of decoded
// pages, a few hundred small files.
constexpr uint64_t kDecodeAhead = 1 << 20;
constexpr uint64_t kRemoteReadahead = 16ull << 20;  // the least readahead for a remote image (when on)
}  // namespace

uint64_t default_cache_size() {
  return std::clamp<uint64_t>(machine::memory_limit() / 8, 64ull << 20, 4ull << 30);
}

struct Reader::Impl {
  std::unique_ptr<Image> image;
  ReaderOptions opt;
  engine::Stats stats;
  std::unique_ptr<engine::PageCache> cache;
  std::unique_ptr<engine::ThreadPool> pool;
  std::unique_ptr<engine::Fetcher> fetcher;
  std::unique_ptr<engine::DecodeScheduler> cpu_scheduler;
  std::unique_ptr<engine::DecodeScheduler> gpu_scheduler;  // null: everything decodes on the CPU
  std::unique_ptr<engine::ReadEngine> engine;
  engine::ReadStateTable read_states;
  // Device reads: made on first use (it initialises CUDA, which the daemon must not do before it forks,
  // and which readers that never read into device memory need not pay for).
  std::mutex device_mu;
  bool device_tried = false;
  std::unique_ptr<engine::DeviceMemory> device;  // null, with device_why, where there is none
  std::string device_why;
  engine::DeviceMemory* device_memory() {
    std::lock_guard lock(device_mu);
    if (!device_tried) device = engine::make_cuda_device_memory(gpu_scheduler != nullptr, device_why);
    device_tried = true;
    return device.get();
  }

  ~Impl() {
    // Background fetches give up rather than hold the close for their timeout (a stalled server).
    if (image) image->source().cancel();
    engine.reset();  // first: it waits for readahead tasks, which use everything below
    gpu_scheduler.reset();
    pool.reset();
    cpu_scheduler.reset();
    fetcher.reset();
    cache.reset();
  }

  void start();
  std::unique_ptr<engine::DecodeScheduler> open_gpu_scheduler();
  const engine::DecodeScheduler& scheduler() const { return gpu_scheduler ? *gpu_scheduler : *cpu_scheduler; }
  [[noreturn]] void fail(int code, uint32_t ino, std::string_view what) const {
    std::string line = image->name() + ": ";
    if (ino) {
      const std::string path = image->path(ino);
      line += path.empty() ? "inode " + std::to_string(ino) : path + " (inode " + std::to_string(ino) + ")";
      line += ": ";
    }
    line += what;
    throw ImageError(line, code);
  }
  uint32_t checked(uint32_t ino) const {
    if (ino == 0 || ino > image->inode_count()) fail(ENOENT, 0, "no inode " + std::to_string(ino));
    return ino;
  }
};

// decoder=auto or gpu: the GPU scheduler when the device opens, else null (the CPU decodes).
std::unique_ptr<engine::DecodeScheduler> Reader::Impl::open_gpu_scheduler() {
  if (opt.decoder == DecoderChoice::kCpu) return nullptr;
  std::string why;
  std::unique_ptr<engine::DecodeDevice> dev = engine::make_cuda_decode_device(why);
  if (!dev) {
    if (opt.decoder == DecoderChoice::kGpu) fail(EINVAL, 0, "decoder=gpu, but no usable GPU: " + why);
    log_line(LogLevel::kInfo, "no usable GPU (" + why + "); decoding on the CPU");
    return nullptr;
  }
  log_line(LogLevel::kInfo, "decoding on the GPU (" + dev->name() + ")");
  engine::GpuDecodeOptions go;
  go.min_bytes = opt.gpu_min_bytes;
  return engine::make_gpu_scheduler(std::move(dev), *cpu_scheduler, stats, go);
}

void Reader::Impl::start() {
  const unsigned threads = opt.threads ? opt.threads : machine::usable_cpus();
  cache = std::make_unique<engine::PageCache>(opt.cache_size ? opt.cache_size : default_cache_size());
  pool = std::make_unique<engine::ThreadPool>(threads);
  if (opt.uring && image->source().fd() >= 0) {
    std::string why;
    fetcher = engine::make_uring_fetcher(image->source(), opt.queue_depth, stats, why);
    if (!fetcher)
      log_line(LogLevel::kWarning, "io_uring unavailable (" + why + "); reading the image with pread");
  }
  if (!fetcher) fetcher = engine::make_source_fetcher(image->source(), stats);
  cpu_scheduler = engine::make_cpu_scheduler(*pool, stats);
  gpu_scheduler = open_gpu_scheduler();
  engine::EngineOptions eo;
  eo.readahead_bytes = opt.readahead;
  const std::string kind = image->source().kind();
  if (kind == "http" || kind == "s3") {
    // A remote request costs mostly its latency: read further ahead, and bridge wider gaps between
    // stored pages rather than send another request.
    if (eo.readahead_bytes) eo.readahead_bytes = std::max<uint64_t>(eo.readahead_bytes, kRemoteReadahead);
    eo.max_gap = 64 << 10;
    eo.image_prefetch = eo.readahead_bytes != 0;  // readahead off means no reading ahead of any kind
  }
  if (eo.readahead_bytes) eo.decode_ahead_bytes = kDecodeAhead;
  engine::DecodeScheduler& sched = gpu_scheduler ? *gpu_scheduler : *cpu_scheduler;
  engine = std::make_unique<engine::ReadEngine>(*image, *cache, *fetcher, sched, *pool, stats, eo);
}

std::unique_ptr<Reader> Reader::open(const std::string& path_or_url, const ReaderOptions& options) {
  return open(Image::open(path_or_url, options.source), options);
}

std::unique_ptr<Reader> Reader::open(std::unique_ptr<Image> image, const ReaderOptions& options) {
  if (options.threads > kMaxThreads)
    throw ImageError(image->name() + ": threads is " + std::to_string(options.threads) + ", at most " +
                         std::to_string(kMaxThreads),
                     EINVAL);
  auto impl = std::make_unique<Impl>();
  impl->image = std::move(image);
  impl->opt = options;
  impl->start();
  return std::unique_ptr<Reader>(new Reader(std::move(impl)));
}

Reader::Reader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Reader::~Reader() = default;

const Image& Reader::image() const {
  return *impl_->image;
}

// ---- metadata ---------------------------------------------------------------------------------------

uint32_t Reader::lookup(std::string_view path, Follow follow) const {
  const Image& img = *impl_->image;
  int err = 0;
  const uint32_t ino = img.resolve(path, &err, follow);
  if (ino) return ino;
  throw ImageError(img.name() + ": " + std::string(path) + ": " + Image::resolve_error(err), err);
}

uint32_t Reader::lookup(uint32_t dir, std::string_view name) const {
  const Image& img = *impl_->image;
  if (img.type(impl_->checked(dir)) != format::kTypeDir) impl_->fail(ENOTDIR, dir, "not a directory");
  return img.lookup(dir, name);
}

std::string Reader::path(uint32_t ino) const {
  std::string p = impl_->image->path(impl_->checked(ino));
  if (p.empty()) impl_->fail(ENOENT, 0, "inode " + std::to_string(ino) + " is in no directory");
  return p;
}

namespace {

// Bytes a file's data occupies, as st_blocks counts them: a sparse file's holes and a device's or
// symlink's payload take none.
uint64_t allocated_bytes(const Image& img, uint32_t ino) {
  const uint64_t size = img.inode(ino).size;
  const uint32_t mode = img.mode(ino);
  const uint32_t type = mode & format::kTypeMask;
  if (type != format::kTypeReg && type != format::kTypeDir) return 0;
  if (type == format::kTypeDir || !(mode & format::kInodeSparse)) return size;
  uint64_t hole_pages = 0;
  for (const format::HoleRun& r : img.hole_runs(ino)) hole_pages += r.count;
  return std::min<uint64_t>(size, (img.logical_pages(ino) - hole_pages) * img.page_size());
}

}  // namespace

FileStat Reader::stat(uint32_t ino) const {
  const Image& img = *impl_->image;
  const format::Inode& in = img.inode(impl_->checked(ino));
  const format::Attr& a = img.attr(ino);
  FileStat st;
  st.ino = ino;
  st.mode = a.mode & 0xFFFFu;
  st.nlink = a.nlink;
  st.uid = a.uid;
  st.gid = a.gid;
  st.size = in.size;
  st.mtime_ns = int64_t{a.mtime_sec} * 1000000000 + a.mtime_nsec;
  const uint32_t type = a.mode & format::kTypeMask;
  if (type == format::kTypeChr || type == format::kTypeBlk) st.rdev = makedev(in.rdev_major, in.rdev_minor);
  st.blocks = (allocated_bytes(img, ino) + 511) / 512;
  st.blksize = img.page_size();
  return st;
}

uint64_t Reader::seek(uint32_t ino, uint64_t offset, Seek whence) const {
  const Image& img = *impl_->image;
  if (img.type(impl_->checked(ino)) != format::kTypeReg) impl_->fail(EINVAL, ino, "not a regular file");
  const uint64_t size = img.inode(ino).size, ps = img.page_size();
  if (offset >= size) impl_->fail(ENXIO, ino, "seek past the end of the file");
  uint64_t result = whence == Seek::kData ? offset : size;
  for (const format::HoleRun& r : img.hole_runs(ino)) {  // sorted; two runs may touch
    const uint64_t from = uint64_t{r.first_page} * ps, to = (uint64_t{r.first_page} + r.count) * ps;
    if (whence == Seek::kData) {
      if (result < from) break;      // `result` is in data
      if (result < to) result = to;  // in this hole: data starts after it (or another hole)
    } else if (to > offset) {
      result = std::max(from, offset);
      break;
    }
  }
  result = std::min(result, size);
  if (whence == Seek::kData && result >= size) impl_->fail(ENXIO, ino, "no data after the offset");
  return result;
}

std::vector<DirEntry> Reader::list(uint32_t dir) const {
  const Image& img = *impl_->image;
  if (img.type(impl_->checked(dir)) != format::kTypeDir) impl_->fail(ENOTDIR, dir, "not a directory");
  std::vector<DirEntry> out;
  for (const format::Dirent& d : img.dirents(dir))
    out.push_back(DirEntry{std::string(img.name(d)), d.ino, img.mode(d.ino) & 0xFFFFu});
  return out;
}

std::string Reader::readlink(uint32_t ino) const {
  const Image& img = *impl_->image;
  if (img.type(impl_->checked(ino)) != format::kTypeLnk) impl_->fail(EINVAL, ino, "not a symbolic link");
  return std::string(img.symlink_target(ino));
}

std::vector<std::pair<std::string, std::string>> Reader::xattrs(uint32_t ino) const {
  const Image& img = *impl_->image;
  std::vector<std::pair<std::string, std::string>> out;
  for (const format::XattrPair& p : img.xattrs(impl_->checked(ino)))
    out.emplace_back(std::string(img.xattr_key(p)), std::string(img.xattr_value(p)));
  return out;
}

void Reader::walk(const std::function<void(const std::string&, const FileStat&)>& fn, uint32_t dir) const {
  const Image& img = *impl_->image;
  // Depth first with an explicit stack: a deep tree cannot overflow the call stack.
  std::vector<std::pair<uint32_t, std::string>> stack{{impl_->checked(dir), ""}};
  while (!stack.empty()) {
    auto [d, prefix] = std::move(stack.back());
    stack.pop_back();
    if (img.type(d) != format::kTypeDir) impl_->fail(ENOTDIR, d, "not a directory");
    const auto ents = img.dirents(d);
    for (const format::Dirent& e : ents) {
      const std::string path = prefix + "/" + std::string(img.name(e));
      fn(path, stat(e.ino));
    }
    for (auto it = ents.rbegin(); it != ents.rend(); ++it)  // reversed: popped in name order
      if (img.type(it->ino) == format::kTypeDir)
        stack.emplace_back(it->ino, prefix + "/" + std::string(img.name(*it)));
  }
}

// ---- data -------------------------------------------------------------------------------------------

namespace {

size_t gather(const std::vector<engine::Slice>& slices, uint8_t* dst) {
  size_t n = 0;
  for (const engine::Slice& s : slices) {
    std::memcpy(dst + n, s.data, s.len);
    n += s.len;
  }
  return n;
}

}  // namespace

size_t Reader::read(uint32_t ino, uint64_t offset, size_t length, void* dst) {
  impl_->checked(ino);
  thread_local std::vector<engine::Slice> slices;  // reused: a small read allocates nothing here
  slices.clear();
  std::string message;
  const int err = impl_->engine->read(ino, offset, length, slices, &impl_->read_states.get(ino), &message);
  if (err == EISDIR) impl_->fail(EISDIR, ino, "not a regular file");
  if (err) throw ImageError(message, err);  // names the image, inode, page and path
  const size_t n = gather(slices, static_cast<uint8_t*>(dst));
  slices.clear();  // release the pages
  return n;
}

size_t Reader::read(uint32_t ino, uint64_t offset, size_t length, ReadView& view) {
  return read(ino, offset, length, view, nullptr);
}

namespace {

// The pieces of the first and last pages outside [offset, end). Slices come one per logical page, and a
// page's slice points into its decoded bytes at the file offset where it starts, so the bytes around it
// are found from the slice alone; anything that would leave the decoded page is not offered. A hole's
// slice is the engine's static zeros (a whole page of them), so its rest is zeros from the same start.
void fill_rest(const Image& img, uint32_t ino, uint64_t offset, std::span<const engine::Slice> slices,
               PageRest& rest) {
  if (slices.empty()) return;
  const uint64_t ps = img.page_size(), size = img.inode(ino).size;
  uint64_t end = offset;
  for (const engine::Slice& s : slices) end += s.len;
  const engine::Slice& first = slices.front();
  const size_t head = static_cast<size_t>(offset % ps);
  rest.before_offset = offset - head;
  if (!first.page)
    Reader::add_piece(rest.before, first.data, head, nullptr);
  else if (size_t(first.data - first.page->data.get()) >= head)
    Reader::add_piece(rest.before, first.data - head, head, first.page);
  const engine::Slice& last = slices.back();
  const uint64_t page_end = std::min(size, (end + ps - 1) / ps * ps);
  const size_t tail = static_cast<size_t>(page_end - end);
  rest.after_offset = end;
  if (!last.page)
    Reader::add_piece(rest.after, last.data + last.len, tail, nullptr);
  else if (size_t(last.data + last.len - last.page->data.get()) + tail <= last.page->size)
    Reader::add_piece(rest.after, last.data + last.len, tail, last.page);
}

}  // namespace

void Reader::add_piece(ReadView& v, const void* data, size_t len, std::shared_ptr<const void> keep) {
  if (!len) return;
  v.pieces_.push_back(iovec{const_cast<void*>(data), len});
  if (keep) v.pages_.push_back(std::move(keep));
  v.size_ += len;
}

size_t Reader::read(uint32_t ino, uint64_t offset, size_t length, ReadView& view, PageRest* rest,
                    Access access) {
  impl_->checked(ino);
  view.clear();
  if (rest) rest->clear();
  thread_local std::vector<engine::Slice> slices;
  slices.clear();
  std::string message;
  const int err = impl_->engine->read(ino, offset, length, slices, &impl_->read_states.get(ino), &message,
                                      access == Access::kOnce);
  if (err == EISDIR) impl_->fail(EISDIR, ino, "not a regular file");
  if (err) throw ImageError(message, err);
  if (rest) fill_rest(*impl_->image, ino, offset, slices, *rest);
  for (engine::Slice& s : slices) {
    view.pieces_.push_back(iovec{const_cast<uint8_t*>(s.data), s.len});
    if (s.page) view.pages_.push_back(std::move(s.page));
    view.size_ += s.len;
  }
  slices.clear();
  return view.size_;
}

size_t ReadView::copy_to(void* dst) const {
  size_t n = 0;
  for (const iovec& p : pieces_) {
    std::memcpy(static_cast<uint8_t*>(dst) + n, p.iov_base, p.iov_len);
    n += p.iov_len;
  }
  return n;
}

void ReadView::clear() {
  pieces_.clear();
  pages_.clear();
  size_ = 0;
}

void Reader::read_batch(std::span<ReadRequest> requests, Access access) {
  std::vector<engine::Extent> extents(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    ReadRequest& r = requests[i];
    r.bytes = 0;
    r.error = 0;
    r.message.clear();
    if (r.ino == 0 || r.ino > impl_->image->inode_count()) {
      r.error = ENOENT;
      r.message = impl_->image->name() + ": no inode " + std::to_string(r.ino);
      continue;  // an empty extent: nothing to read for it
    }
    extents[i] = engine::Extent{r.ino, r.offset, r.length};
  }
  std::vector<uint8_t*> dsts(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) dsts[i] = static_cast<uint8_t*>(requests[i].dst);
  std::vector<size_t> bytes(requests.size());
  std::vector<int> errors(requests.size());
  std::vector<std::string> messages(requests.size());
  impl_->engine->read_many_into(extents, dsts, bytes, errors, messages, access == Access::kOnce);
  for (size_t i = 0; i < requests.size(); ++i) {
    ReadRequest& r = requests[i];
    if (r.error) continue;
    r.error = errors[i];
    if (r.error == EISDIR)
      r.message = impl_->image->name() + ": inode " + std::to_string(r.ino) + ": not a regular file";
    if (r.error == EIO) r.message = messages[i];
    if (!r.error) r.bytes = bytes[i];
  }
}

size_t Reader::read_device(uint32_t ino, uint64_t offset, size_t length, void* dst, void* stream) {
  ReadRequest r;
  r.ino = ino;
  r.offset = offset;
  r.length = length;
  r.dst = dst;
  read_batch_device({&r, 1}, stream);
  if (r.error) throw ImageError(r.message, r.error);
  return r.bytes;
}

void Reader::read_batch_device(std::span<ReadRequest> requests, void* stream) {
  engine::DeviceMemory* mem = impl_->device_memory();
  if (!mem)
    throw ImageError(impl_->image->name() + ": reads into device memory are not supported here (" +
                         impl_->device_why + ")",
                     ENOTSUP);
  engine::read_to_device(*impl_->engine, *mem, requests, stream);
}

bool Reader::device_reads(std::string& how) const {
  engine::DeviceMemory* mem = impl_->device_memory();
  how = mem ? mem->describe() : impl_->device_why;
  return mem != nullptr;
}

struct ReaderAccess {
  static Reader::Impl& impl(Reader& r) { return *r.impl_; }
};

void testing::set_device_memory(Reader& reader, std::unique_ptr<engine::DeviceMemory> mem) {
  Reader::Impl& impl = ReaderAccess::impl(reader);
  std::lock_guard lock(impl.device_mu);
  impl.device = std::move(mem);
  impl.device_why = impl.device ? "" : "none set";
  impl.device_tried = true;
}

void testing::wait_readahead(Reader& reader) {
  ReaderAccess::impl(reader).engine->wait_readahead();
}

// ---- state ------------------------------------------------------------------------------------------

const char* Reader::decoder_name() const {
  return impl_->scheduler().name();
}

const char* Reader::fetcher_name() const {
  return impl_->fetcher->name();
}

std::string Reader::stats_json() const {
  engine::StatsContext ctx;
  ctx.cache_bytes = impl_->cache->bytes();
  ctx.cache_capacity = impl_->cache->capacity();
  ctx.cache_pages = impl_->cache->pages();
  ctx.decoder = decoder_name();
  ctx.fetcher = fetcher_name();
  ctx.threads = impl_->pool->size();
  ctx.source = impl_->image->source().counters();
  return engine::stats_json(impl_->stats, ctx);
}

std::map<std::string, uint64_t> Reader::counters() const {
  std::map<std::string, uint64_t> out;
  impl_->stats.for_each([&](const char* name, uint64_t value) { out.emplace(name, value); });
  out["cache_bytes"] = impl_->cache->bytes();
  out["cache_capacity"] = impl_->cache->capacity();
  out["cache_pages"] = impl_->cache->pages();
  for (const auto& [name, value] : impl_->image->source().counters()) out[name] = value;
  return out;
}

// ---- the decoder choice -----------------------------------------------------------------------------

namespace {
// By DecoderChoice value: the one spelling of each choice.
constexpr const char* kDecoderNames[] = {"auto", "cpu", "gpu"};
}  // namespace

std::optional<DecoderChoice> parse_decoder_choice(std::string_view name) {
  for (size_t i = 0; i < std::size(kDecoderNames); ++i)
    if (name == kDecoderNames[i]) return static_cast<DecoderChoice>(i);
  return std::nullopt;
}

const char* decoder_choice_name(DecoderChoice choice) {
  const auto i = static_cast<size_t>(choice);
  return i < std::size(kDecoderNames) ? kDecoderNames[i] : "auto";
}

bool probe_gpu_decoder(std::string& why) {
  return engine::probe_cuda_decode_device(why);
}

const char* gpu_architectures() {
  return gpu::built_architectures();
}

}  // namespace gdfs
