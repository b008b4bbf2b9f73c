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

#include "engine/decode_device.h"
#include "engine/decode_scheduler.h"
#include "engine/device_memory.h"
#include "engine/fetcher.h"
#include "engine/log.h"
#include "engine/page_cache.h"
#include "engine/read_engine.h"
#include "engine/stats.h"
#include "engine/thread_pool.h"

namespace gdfs {

using engine::LogLevel;

namespace {
constexpr uint64_t kRemoteReadahead = 16ull << 20;  // the least readahead for a remote image (when on)
}  // namespace

uint64_t default_cache_size() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const uint64_t mem = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 1ull << 30;
  return std::clamp<uint64_t>(mem / 8, 64ull << 20, 4ull << 30);
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
      const std::string path = engine::path_of(*image, ino);
      line += path.empty() ? "inode " + std::to_string(ino) : path + " (inode " + std::to_string(ino) + ")";
      line += ": ";
    }
    line += what;
    throw ReadError(code, line);
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
    engine::log_line(LogLevel::kInfo, "no usable GPU (" + why + "); decoding on the CPU");
    return nullptr;
  }
  engine::log_line(LogLevel::kInfo, "decoding on the GPU (" + dev->name() + ")");
  engine::GpuDecodeOptions go;
  go.min_bytes = opt.gpu_min_bytes;
  return engine::make_gpu_scheduler(std::move(dev), *cpu_scheduler, stats, go);
}

void Reader::Impl::start() {
  const unsigned threads = opt.threads ? opt.threads : std::max(1u, std::thread::hardware_concurrency());
  cache = std::make_unique<engine::PageCache>(opt.cache_size ? opt.cache_size : default_cache_size());
  pool = std::make_unique<engine::ThreadPool>(threads);
  if (opt.uring && image->source().fd() >= 0) {
    std::string why;
    fetcher = engine::make_uring_fetcher(image->source(), opt.queue_depth, stats, why);
    if (!fetcher)
      engine::log_line(LogLevel::kWarning,
                       "io_uring unavailable (" + why + "); reading the image with pread");
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
  engine::DecodeScheduler& sched = gpu_scheduler ? *gpu_scheduler : *cpu_scheduler;
  engine = std::make_unique<engine::ReadEngine>(*image, *cache, *fetcher, sched, *pool, stats, eo);
}

std::unique_ptr<Reader> Reader::open(const std::string& path_or_url, const ReaderOptions& options) {
  return open(Image::open(path_or_url, options.source), options);
}

std::unique_ptr<Reader> Reader::open(std::unique_ptr<Image> image, const ReaderOptions& options) {
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

uint32_t Reader::lookup(std::string_view path) const {
  const Image& img = *impl_->image;
  uint32_t ino = format::kRootIno;
  std::string_view rest = path;
  while (!rest.empty()) {
    const size_t slash = rest.find('/');
    const std::string_view part = rest.substr(0, slash);
    rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
    if (part.empty() || part == ".") continue;
    if (img.type(ino) != format::kTypeDir)
      throw ReadError(ENOTDIR, img.name() + ": " + std::string(path) + ": not a directory on the way");
    ino = part == ".." ? img.inode(ino).parent : img.lookup(ino, part);
    if (ino == 0)
      throw ReadError(ENOENT, img.name() + ": " + std::string(path) + ": no such file or directory");
  }
  return ino;
}

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
  return st;
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
  if (err) throw ReadError(err, message);  // names the image, inode, page and path
  const size_t n = gather(slices, static_cast<uint8_t*>(dst));
  slices.clear();  // release the pages
  return n;
}

void Reader::read_batch(std::span<ReadRequest> requests) {
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
  std::vector<std::vector<engine::Slice>> slices(requests.size());
  std::vector<int> errors(requests.size());
  std::vector<std::string> messages(requests.size());
  impl_->engine->read_many(extents, slices, errors, messages);
  for (size_t i = 0; i < requests.size(); ++i) {
    ReadRequest& r = requests[i];
    if (r.error) continue;
    r.error = errors[i];
    if (r.error == EISDIR)
      r.message = impl_->image->name() + ": inode " + std::to_string(r.ino) + ": not a regular file";
    if (r.error == EIO) r.message = messages[i];
    if (!r.error) r.bytes = gather(slices[i], static_cast<uint8_t*>(r.dst));
  }
}

size_t Reader::read_device(uint32_t ino, uint64_t offset, size_t length, void* dst, void* stream) {
  ReadRequest r;
  r.ino = ino;
  r.offset = offset;
  r.length = length;
  r.dst = dst;
  read_batch_device({&r, 1}, stream);
  if (r.error) throw ReadError(r.error, r.message);
  return r.bytes;
}

void Reader::read_batch_device(std::span<ReadRequest> requests, void* stream) {
  engine::DeviceMemory* mem = impl_->device_memory();
  if (!mem)
    throw ReadError(ENOTSUP, impl_->image->name() + ": reads into device memory are not supported here (" +
                                 impl_->device_why + ")");
  engine::read_to_device(*impl_->engine, *mem, requests, stream);
}

bool Reader::device_reads(std::string& how) const {
  engine::DeviceMemory* mem = impl_->device_memory();
  how = mem ? mem->describe() : impl_->device_why;
  return mem != nullptr;
}

namespace engine {
void set_device_memory(Reader& reader, std::unique_ptr<DeviceMemory> mem) {
  Reader::Impl& impl = *reader.impl_;
  std::lock_guard lock(impl.device_mu);
  impl.device = std::move(mem);
  impl.device_why = impl.device ? "" : "none set";
  impl.device_tried = true;
}
}  // namespace engine

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

engine::Stats& Reader::stats() {
  return impl_->stats;
}

engine::ReadEngine& Reader::engine() {
  return *impl_->engine;
}

engine::ReadStateTable& Reader::read_states() {
  return impl_->read_states;
}

}  // namespace gdfs
