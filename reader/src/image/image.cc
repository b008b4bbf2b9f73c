// Opening an image and reading from it. Validation of the metadata lives in validate.cc.
#include "gdfs/image.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <thread>

#include "gdfs/checksum.h"
#include "gdfs/gdeflate.h"
#include "gdfs/machine.h"
#include "gdfs/meta_codec.h"

namespace gdfs {

static_assert(std::endian::native == std::endian::little, "the image format is little-endian");

std::unique_ptr<Image> Image::open(const std::string& path_or_url, const SourceOptions& options) {
  return open(open_source(path_or_url, options), path_or_url, options);
}

std::unique_ptr<Image> Image::open(std::unique_ptr<Source> source) {
  const std::string location = source->name();
  return open(std::move(source), location, SourceOptions{});
}

std::unique_ptr<Image> Image::open(std::unique_ptr<Source> source, const std::string& location,
                                   const SourceOptions& options) {
  std::unique_ptr<Image> img(new Image());
  img->name_ = source->name();
  img->source_ = std::move(source);
  img->load(location, options);
  return img;
}

std::unique_ptr<Image> Image::from_memory(std::vector<uint8_t> bytes, std::string name) {
  return open(memory_source(std::move(bytes), std::move(name)));
}

Image::~Image() = default;

void Image::fail(const std::string& what) const {
  throw ImageError(name_ + ": " + what);
}

std::string Image::describe(uint32_t ino, uint64_t page, std::string_view what) const {
  std::string s = name_ + ": ";
  if (ino != 0) s += "inode " + std::to_string(ino) + " (page " + std::to_string(page) + "): ";
  s += what;
  return s;
}

bool Image::read_stored(const format::PageEntry& e, uint8_t* out) const {
  ReadRange r{e.offset, e.csize, out};
  source_->read({&r, 1});
  return r.ok;
}

void Image::bad_inode(uint32_t ino) const {
  fail("inode " + std::to_string(ino) + " out of range");
}

std::span<const format::Dirent> Image::dirents(uint32_t dir_ino) const {
  const format::Inode& in = inode(dir_ino);
  if (type(dir_ino) != format::kTypeDir) fail("inode " + std::to_string(dir_ino) + " is not a directory");
  return dirents_.subspan(in.first_dirent, in.dirent_count);
}

std::string_view Image::blob_string(uint32_t offset) const {
  return {reinterpret_cast<const char*>(blob_.data()) + offset + 1, blob_[offset]};
}

uint32_t Image::lookup(uint32_t dir_ino, std::string_view name) const {
  auto ents = dirents(dir_ino);
  auto it = std::lower_bound(ents.begin(), ents.end(), name,
                             [&](const format::Dirent& d, std::string_view n) { return this->name(d) < n; });
  return it != ents.end() && this->name(*it) == name ? it->ino : 0;
}

namespace {

// The components of `path` still to resolve, the next one last, so that a symlink's target can take its
// place.
void push_components(std::vector<std::string_view>& todo, std::string_view path) {
  const size_t at = todo.size();
  for (size_t pos = 0; pos <= path.size();) {
    const size_t slash = std::min(path.find('/', pos), path.size());
    if (slash > pos) todo.push_back(path.substr(pos, slash - pos));
    pos = slash + 1;
  }
  std::reverse(todo.begin() + static_cast<std::ptrdiff_t>(at), todo.end());
}

}  // namespace

const char* Image::resolve_error(int error) {
  return error == ENOTDIR ? "not a directory"
         : error == ELOOP ? "too many levels of symbolic links"
                          : "no such file or directory";
}

uint32_t Image::resolve(std::string_view path, int* error, Follow follow) const {
  const auto fail = [error](int e) {
    if (error) *error = e;
    return uint32_t{0};
  };
  if (path.empty()) return fail(ENOENT);  // as the kernel: "" names nothing, not the current directory
  // A trailing slash asks for a directory, as in the kernel: a symlink there is followed, a file is ENOTDIR.
  const bool must_be_dir = path.back() == '/';
  if (must_be_dir) follow = Follow::kYes;
  std::vector<std::string_view> todo;  // views into `path` and into symlink targets in the image
  push_components(todo, path);
  uint32_t dir = format::kRootIno, ino = format::kRootIno;
  for (int links = 0; !todo.empty();) {
    const std::string_view part = todo.back();
    todo.pop_back();
    if (part == ".") {
      ino = dir;
      continue;
    }
    ino = part == ".." ? inode(dir).parent : lookup(dir, part);
    if (ino == 0) return fail(ENOENT);
    const bool last = todo.empty();
    if (type(ino) == format::kTypeLnk && (!last || follow == Follow::kYes)) {
      if (++links > kMaxSymlinks) return fail(ELOOP);
      const std::string_view target = symlink_target(ino);
      if (target.empty()) return fail(ENOENT);
      if (target.front() == '/') dir = format::kRootIno;
      push_components(todo, target);
      ino = dir;  // a target of "/" or "." names the directory itself
      continue;
    }
    if (!last && type(ino) != format::kTypeDir) return fail(ENOTDIR);
    dir = ino;
  }
  if (must_be_dir && type(ino) != format::kTypeDir) return fail(ENOTDIR);
  return ino;
}

namespace {
const format::Dirent* find_in(const Image& image, uint32_t dir, uint32_t ino) {
  for (const format::Dirent& d : image.dirents(dir))
    if (d.ino == ino) return &d;
  return nullptr;
}
}  // namespace

std::string Image::path(uint32_t ino) const {
  if (ino == format::kRootIno) return "/";
  // A file's parent is not recorded: find it with one scan over the directories.
  uint32_t parent = 0;
  if (type(ino) == format::kTypeDir) {
    parent = inode(ino).parent;
  } else {
    for (uint32_t d = 1; d <= inode_count() && !parent; ++d)
      if (type(d) == format::kTypeDir && find_in(*this, d, ino)) parent = d;
  }
  std::vector<std::string_view> names;  // leaf first
  // Validation made the tree a tree: each step goes one level up, and the root is its own parent.
  for (uint32_t cur = ino; cur != format::kRootIno;) {
    const format::Dirent* d = parent ? find_in(*this, parent, cur) : nullptr;
    if (!d) return "";
    names.push_back(name(*d));
    cur = parent;
    parent = inode(parent).parent;
  }
  std::string out;
  for (auto it = names.rbegin(); it != names.rend(); ++it) out.append("/").append(*it);
  return out;
}

std::string_view Image::symlink_target(uint32_t ino) const {
  const format::Inode& in = inode(ino);
  if (type(ino) != format::kTypeLnk) fail("inode " + std::to_string(ino) + " is not a symlink");
  return {reinterpret_cast<const char*>(blob_.data()) + in.target, in.target_len};
}

std::span<const format::XattrPair> Image::xattrs(uint32_t ino) const {
  const uint32_t xattr = attr(ino).xattr;
  if (xattr == format::kNone) return {};
  const format::XattrSet& set = xattr_sets_[xattr];
  return xattr_pairs_.subspan(set.first_pair, set.count);
}

std::string_view Image::xattr_value(const format::XattrPair& p) const {
  return {reinterpret_cast<const char*>(blob_.data()) + p.value, p.value_len};
}

uint64_t Image::logical_pages(uint32_t ino) const {
  return format::page_count_of(inode(ino).size, sb_.page_log2);
}

std::span<const format::HoleRun> Image::hole_runs(uint32_t ino) const {
  const uint32_t m = mode(ino);
  if ((m & format::kTypeMask) != format::kTypeReg || !(m & format::kInodeSparse)) return {};
  auto rec = std::lower_bound(sparse_.begin(), sparse_.end(), ino,
                              [](const format::SparseFile& s, uint32_t i) { return s.ino < i; });
  return holes_.subspan(rec->first_run, rec->run_count);  // validated: the record exists
}

PageRef Image::page_ref(uint32_t ino, uint64_t index) const {
  const format::Inode& in = inode(ino);
  if (type(ino) != format::kTypeReg) fail("inode " + std::to_string(ino) + " is not a regular file");
  const uint64_t n = logical_pages(ino);
  if (index >= n) throw ImageError(describe(ino, index, "page index past the end of the file"));
  const uint64_t ps = page_size();
  PageRef ref;
  ref.length = static_cast<uint32_t>(std::min<uint64_t>(ps, in.size - index * ps));
  if (in.tail_entry != format::kNone && index == n - 1) {
    ref.kind = PageRef::kTail;
    ref.entry = in.tail_entry;
    ref.offset = in.tail_offset;
    return ref;
  }
  uint64_t before = 0;
  if (mode(ino) & format::kInodeSparse) {
    auto runs = hole_runs(ino);
    auto run = std::upper_bound(runs.begin(), runs.end(), index,
                                [](uint64_t i, const format::HoleRun& r) { return i < r.first_page; });
    if (run != runs.begin()) {
      --run;
      if (index < uint64_t{run->first_page} + run->count) return ref;  // kHole
      before = uint64_t{run->holes_before} + run->count;
    }
  }
  ref.kind = PageRef::kPage;
  ref.entry = in.first_page + index - before;
  return ref;
}

PageStatus Image::read_page(uint64_t entry, PageDecoder& dec, uint8_t* out) const {
  const format::PageEntry& e = pages_[entry];
  uint8_t* stored = dec.stored_buffer(e.csize);
  if (!read_stored(e, stored)) return PageStatus::kIoError;
  if (!stored_ok(entry, stored)) return PageStatus::kDigest;
  return dec.decode(e, stored, out, trusted_);
}

size_t Image::read(uint32_t ino, uint64_t offset, size_t len, uint8_t* out, PageDecoder& dec) const {
  const format::Inode& in = inode(ino);
  if (type(ino) != format::kTypeReg) fail("inode " + std::to_string(ino) + " is not a regular file");
  if (offset >= in.size) return 0;
  len = static_cast<size_t>(std::min<uint64_t>(len, in.size - offset));
  const uint64_t ps = page_size();
  // The stored pages of up to kBatch logical pages go to the source in one call: a remote source runs
  // them as concurrent requests (gdfs-inspect cat and extract over a URL), a local one reads them in turn.
  constexpr uint64_t kBatch = 64;
  std::vector<uint8_t> page(ps), stored;
  std::vector<PageRef> refs;
  std::vector<ReadRange> ranges;
  for (uint64_t first = offset / ps, last = (offset + len - 1) / ps; first <= last; first += kBatch) {
    const uint64_t end = std::min(last + 1, first + kBatch);
    refs.clear();
    ranges.clear();
    uint64_t staged = 0;
    for (uint64_t i = first; i < end; ++i) {
      refs.push_back(page_ref(ino, i));
      if (refs.back().kind != PageRef::kHole) staged += pages_[refs.back().entry].csize;
    }
    stored.resize(staged);
    staged = 0;
    for (const PageRef& ref : refs) {
      if (ref.kind == PageRef::kHole) continue;
      const format::PageEntry& e = pages_[ref.entry];
      ranges.push_back(ReadRange{e.offset, e.csize, stored.data() + staged, false});
      staged += e.csize;
    }
    if (!ranges.empty()) source_->read(ranges);
    size_t r = 0;
    for (uint64_t i = first; i < end; ++i) {
      const PageRef& ref = refs[i - first];
      const uint64_t lo = std::max(offset, i * ps), hi = std::min<uint64_t>(offset + len, (i + 1) * ps);
      uint8_t* dst = out + (lo - offset);
      if (ref.kind == PageRef::kHole) {
        std::memset(dst, 0, hi - lo);
        continue;
      }
      const ReadRange& got = ranges[r++];
      const PageStatus st = !got.ok ? PageStatus::kIoError
                            : !stored_ok(ref.entry, got.dst)
                                ? PageStatus::kDigest
                                : dec.decode(pages_[ref.entry], got.dst, page.data(), trusted_);
      if (st != PageStatus::kOk) throw ImageError(describe(ino, i, page_status_message(st)));
      std::memcpy(dst, page.data() + ref.offset + (lo - i * ps), hi - lo);
    }
  }
  return len;
}

uint64_t Image::meta_end() const {
  return sb_.incompat & format::kIncompatLayers ? sb_.meta_offset + sb_.meta_size : sb_.image_size;
}

void Image::load(const std::string& location, const SourceOptions& options) {
  const uint64_t file_size = source_->size();
  if (file_size < format::kSuperblockSize)
    fail("too small to be a gdfs image (" + std::to_string(file_size) + " bytes)");
  auto read_at = [&](void* buf, size_t n, uint64_t off) {  // callers checked off + n <= file_size
    ReadRange r{off, static_cast<uint32_t>(n), static_cast<uint8_t*>(buf)};
    if (n > UINT32_MAX) fail("metadata region too large (" + std::to_string(n) + " bytes)");
    source_->read({&r, 1});
    if (!r.ok) fail("read error");
  };
  // The superblock and the metadata region: two reads, so that a remote image opens in two requests.
  read_at(&sb_, sizeof sb_, 0);
  validate_superblock(file_size);
  std::vector<uint8_t> region(sb_.meta_size);
  read_at(region.data(), region.size(), sb_.meta_offset);
  if (checksum64(region.data(), region.size()) != sb_.meta_checksum) fail("metadata checksum mismatch");
  // Each region is read once: the bytes a signature is checked against are the bytes then used.
  std::vector<uint8_t> layers(sb_.layers_size);
  if (sb_.incompat & format::kIncompatLayers) read_at(layers.data(), layers.size(), sb_.layers_offset);
  if (!options.trusted_key.empty()) verify_signature(options.trusted_key, region, layers);
  inflate_metadata(region);
  map_sections();
  stored_pages_ = pages_;
  if (sb_.incompat & format::kIncompatLayers) load_layer_table(layers);
  validate();
  if (!layers_.empty()) open_layers(location, options);
}

void Image::inflate_metadata(std::span<const uint8_t> region) {
  // Decoding runs at about 1 GB/s per core: below a few MB one thread opens sooner than starting more.
  constexpr uint64_t kParallelFrom = uint64_t{4} << 20;
  const unsigned threads =
      sb_.meta_usize < kParallelFrom ? 1 : std::min(machine::usable_cpus(), 8u);
  const meta::Decoded d = meta::inflate(sb_, region, meta_, threads);
  if (!d.error.empty()) fail(d.error);
  // End to end, like a page's ucheck: a decoder fault cannot hand the validator other records.
  if (checksum64(meta_.data(), meta_.size()) != sb_.meta_ucheck) fail("inflated metadata checksum mismatch");
  std::copy(d.stored.begin(), d.stored.end(), stored_.begin());
  meta_table_bytes_ = d.table;
}

}  // namespace gdfs
