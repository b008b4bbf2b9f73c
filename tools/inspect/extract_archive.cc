// `extract --archive`: the tree (or the subtree or single entry at PATH) as one archive, written through
// libarchive to a file or to standard output. Entries come in walk order (each directory before its
// contents), with paths relative to PATH, owners, modes, nanosecond mtimes, xattrs, symlink targets,
// device numbers, and hardlinks as the format expresses them (libarchive's link resolver: later names
// as hardlink entries in tar, the data with the last name in newc cpio). In pax, sparse files keep their
// holes (a sparse map, GNU.sparse 1.0); other formats get the holes as zeros.
//
// File data is read a chunk at a time through the verifying reader, never a whole file at once. A page
// that fails its checks stops the archive: a file is written under a temporary name and removed, so a
// damaged image never leaves a complete-looking archive; a stream gets no trailer and a failing exit.
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <locale.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "archive_writer.h"
#include "commands.h"
#include "gdfs/unique_fd.h"
#include "restore.h"
#include "util.h"
#include "walk.h"

namespace gdfs::inspect {
namespace {

struct EntryFree {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};
using EntryPtr = std::unique_ptr<archive_entry, EntryFree>;

// Turns inodes into archive entries and writes them with their data.
class ArchiveBuilder {
 public:
  ArchiveBuilder(const Image& img, ArchiveWriter& w, std::ostream& err)
      : img_(img), w_(w), err_(err), links_(archive_entry_linkresolver_new()) {
    if (links_ == nullptr) throw std::runtime_error("out of memory");
    archive_entry_linkresolver_set_strategy(links_, w_.format());
  }
  ~ArchiveBuilder() {
    // libarchive 3.6's resolver frees an entry it still holds twice (once in linkresolver_free, once
    // as its "spare"): take them back first. Only a run that stopped early leaves any.
    for (;;) {
      archive_entry* e = nullptr;
      archive_entry* spare = nullptr;
      archive_entry_linkify(links_, &e, &spare);
      if (e == nullptr) break;
      archive_entry_free(e);
      archive_entry_free(spare);
    }
    archive_entry_linkresolver_free(links_);
  }
  ArchiveBuilder(const ArchiveBuilder&) = delete;
  ArchiveBuilder& operator=(const ArchiveBuilder&) = delete;

  // Adds inode `ino` under the archive path `rel`; `source` is its path in the image, for messages. The
  // link resolver may hold it back (newc cpio writes a hardlinked file's data with its last name) and
  // hand back an earlier one instead.
  void add(uint32_t ino, const std::string& rel, const std::string& source) {
    archive_entry* e = make_entry(ino, rel).release();
    // libarchive's field for where an entry came from: writers ignore it, the resolver keeps it.
    archive_entry_copy_sourcepath(e, source.c_str());
    archive_entry* spare = nullptr;
    archive_entry_linkify(links_, &e, &spare);
    EntryPtr first(e), second(spare);
    if (first) emit(first.get());
    if (second) emit(second.get());
  }

  // Writes what the link resolver still holds: hardlinked files whose other names are not in the archive.
  void finish() {
    for (;;) {
      archive_entry* e = nullptr;
      archive_entry* spare = nullptr;
      archive_entry_linkify(links_, &e, &spare);
      EntryPtr first(e), second(spare);
      if (!first) break;
      emit(first.get());
      if (second) emit(second.get());
    }
  }

  uint64_t entries() const { return entries_; }
  uint64_t skipped() const { return skipped_; }
  uint64_t file_bytes() const { return file_bytes_; }

 private:
  static constexpr size_t kChunk = size_t{1} << 20;

  EntryPtr make_entry(uint32_t ino, const std::string& rel) const;
  void add_sparse_map(archive_entry* e, uint32_t ino) const;
  void emit(archive_entry* e);
  void write_data(uint32_t ino, const std::string& source);
  void write_zeros(uint64_t n);
  void copy_range(uint32_t ino, uint64_t from, uint64_t to, const std::string& source);
  // Calls fn(first_byte, end_byte) for each run of data pages of regular file `ino`, in file order.
  template <class Fn>
  void for_each_data_run(uint32_t ino, Fn&& fn) const;

  const Image& img_;
  ArchiveWriter& w_;
  std::ostream& err_;
  archive_entry_linkresolver* links_;
  PageDecoder dec_;
  std::vector<uint8_t> buf_;    // file data on its way into the archive
  std::vector<uint8_t> zeros_;  // a chunk of holes, for formats that cannot keep them
  uint64_t entries_ = 0, skipped_ = 0, file_bytes_ = 0;
};

template <class Fn>
void ArchiveBuilder::for_each_data_run(uint32_t ino, Fn&& fn) const {
  const uint64_t size = img_.inode(ino).size, ps = img_.page_size();
  uint64_t first = 0, end = 0;  // the current run of data pages [first, end)
  auto flush = [&] {
    if (end > first) fn(first * ps, std::min(end * ps, size));
  };
  img_.for_each_data_page(ino, [&](uint64_t i, const PageRef&) {
    if (i != end) {
      flush();
      first = i;
    }
    end = i + 1;
  });
  flush();
}

EntryPtr ArchiveBuilder::make_entry(uint32_t ino, const std::string& rel) const {
  EntryPtr e(archive_entry_new());
  if (!e) throw std::runtime_error("out of memory");
  archive_entry* p = e.get();
  const format::Attr& at = img_.attr(ino);
  const uint32_t type = at.mode & format::kTypeMask;
  archive_entry_copy_pathname(p, rel.c_str());
  archive_entry_set_filetype(p, type);  // the image's type bits are st_mode's, as are AE_IF*
  archive_entry_set_perm(p, at.mode & 07777u);
  archive_entry_set_uid(p, at.uid);
  archive_entry_set_gid(p, at.gid);
  archive_entry_set_mtime(p, at.mtime_sec, at.mtime_nsec);
  // The link resolver recognises the names of one file by device, inode and link count.
  archive_entry_set_dev(p, 1);
  archive_entry_set_ino64(p, ino);
  archive_entry_set_nlink(p, at.nlink);
  const format::Inode& in = img_.inode(ino);
  archive_entry_set_size(p, 0);  // cpio and zip want a size on every entry; a symlink's is the writer's
  if (type == format::kTypeReg) {
    archive_entry_set_size(p, static_cast<la_int64_t>(in.size));  // before the sparse map: it is checked
    if (w_.keeps_holes() && !img_.hole_runs(ino).empty()) add_sparse_map(p, ino);
  } else if (type == format::kTypeLnk) {
    archive_entry_copy_symlink(p, std::string(img_.symlink_target(ino)).c_str());
  } else if (type == format::kTypeChr || type == format::kTypeBlk) {
    archive_entry_set_rdevmajor(p, in.rdev_major);
    archive_entry_set_rdevminor(p, in.rdev_minor);
  }
  for (const format::XattrPair& x : img_.xattrs(ino)) {
    const std::string key(img_.xattr_key(x));
    const std::string_view value = img_.xattr_value(x);
    archive_entry_xattr_add_entry(p, key.c_str(), value.data(), value.size());
  }
  return e;
}

// The data runs of a sparse file, and a last empty one at its end: that is how a sparse map says the
// file ends in a hole (and keeps a file that is all hole sparse).
void ArchiveBuilder::add_sparse_map(archive_entry* e, uint32_t ino) const {
  for_each_data_run(ino, [&](uint64_t from, uint64_t to) {
    archive_entry_sparse_add_entry(e, static_cast<la_int64_t>(from), static_cast<la_int64_t>(to - from));
  });
  const auto size = static_cast<la_int64_t>(img_.inode(ino).size);
  archive_entry_sparse_add_entry(e, size, 0);
}

void ArchiveBuilder::emit(archive_entry* e) {
  const std::string rel = archive_entry_pathname(e);
  std::string why;
  if (!w_.header(e, why)) {
    err_ << "gdfs-inspect: warning: " << printable_name(rel) << ": left out: " << printable_name(why) << "\n";
    ++skipped_;
    return;
  }
  if (!why.empty())
    err_ << "gdfs-inspect: warning: " << printable_name(rel) << ": " << printable_name(why) << "\n";
  ++entries_;
  // Hardlink entries carry no data (the resolver unset their size); only the file's one data entry does.
  if (archive_entry_filetype(e) == AE_IFREG && archive_entry_hardlink(e) == nullptr &&
      archive_entry_size(e) > 0)
    write_data(static_cast<uint32_t>(archive_entry_ino64(e)), archive_entry_sourcepath(e));
}

// The whole logical file, holes as zeros: the pax writer drops the zeros its sparse map marks as holes,
// other formats store them.
void ArchiveBuilder::write_data(uint32_t ino, const std::string& source) {
  uint64_t done = 0;
  for_each_data_run(ino, [&](uint64_t from, uint64_t to) {
    write_zeros(from - done);
    copy_range(ino, from, to, source);
    done = to;
  });
  const uint64_t size = img_.inode(ino).size;
  write_zeros(size - done);
  file_bytes_ += size;
}

void ArchiveBuilder::write_zeros(uint64_t n) {
  if (n > 0 && zeros_.empty()) zeros_.resize(kChunk);
  for (; n > 0;) {
    const size_t step = std::min<uint64_t>(n, kChunk);
    w_.data(zeros_.data(), step);
    n -= step;
  }
}

void ArchiveBuilder::copy_range(uint32_t ino, uint64_t from, uint64_t to, const std::string& source) {
  buf_.resize(kChunk);
  for (uint64_t off = from; off < to;) {
    size_t got = 0;
    try {
      got = img_.read(ino, off, std::min<uint64_t>(kChunk, to - off), buf_.data(), dec_);
    } catch (const ImageError& e) {
      // The image's message names the image, the inode and the page; the path says which file it is.
      throw std::runtime_error(std::string(e.what()) + " [path " + printable_name(source) + "]");
    }
    if (got == 0) throw std::runtime_error(img_.describe(ino, off / img_.page_size(), "short read"));
    w_.data(buf_.data(), got);
    off += got;
  }
}

// Names in images are UTF-8 almost always, but a tool's locale is often "C", where libarchive cannot
// convert them for pax's UTF-8 headers and warns per name (keeping the bytes). For the writing, this
// thread takes them as UTF-8; a name that is not UTF-8 still gets the warning and keeps its bytes.
class Utf8Names {
 public:
  Utf8Names() : utf8_(newlocale(LC_CTYPE_MASK, "C.UTF-8", nullptr)) {
    if (utf8_ != nullptr) old_ = uselocale(utf8_);
  }
  ~Utf8Names() {
    if (utf8_ == nullptr) return;
    uselocale(old_);
    freelocale(utf8_);
  }
  Utf8Names(const Utf8Names&) = delete;
  Utf8Names& operator=(const Utf8Names&) = delete;

 private:
  locale_t utf8_;
  locale_t old_ = nullptr;
};

// The archive file: written under a temporary name beside FILE, renamed to FILE only when complete, and
// removed on any failure (the destructor), so FILE is either the whole archive or untouched.
class TempArchive {
 public:
  explicit TempArchive(const std::string& path) : path_(path) {
    const std::filesystem::path p(path);
    name_ = p.filename().string();
    if (name_.empty() || name_ == "." || name_ == "..") throw std::runtime_error(path + ": not a file name");
    const std::string dir = p.parent_path().empty() ? "." : p.parent_path().string();
    dir_.reset(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir_.get() < 0) throw std::runtime_error("cannot open " + dir + ": " + std::strerror(errno));
    fd_.reset(create_temp(dir_.get(), name_, tmp_));
    if (fd_.get() < 0)
      throw std::runtime_error("cannot create a file beside " + path + ": " + std::strerror(errno));
  }
  ~TempArchive() {
    if (!committed_) unlinkat(dir_.get(), tmp_.c_str(), 0);
  }
  TempArchive(const TempArchive&) = delete;
  TempArchive& operator=(const TempArchive&) = delete;

  int fd() const { return fd_.get(); }

  // Gives the archive the mode a new file gets (create_temp made it 0600), closes it and renames it into
  // place.
  void commit() {
    const mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd_.get(), 0666 & ~mask) != 0) fail("cannot set the mode of");
    if (::close(fd_.release()) != 0) fail("cannot write");
    if (renameat(dir_.get(), tmp_.c_str(), dir_.get(), name_.c_str()) != 0) fail("cannot rename into place");
    committed_ = true;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(what + " " + path_ + ": " + std::strerror(errno));
  }

  std::string path_, name_, tmp_;
  UniqueFd dir_, fd_;
  bool committed_ = false;
};

// Adds PATH's entries: a directory as "./" (its mode, owner, mtime and xattrs, as `tar -C DIR .` writes
// it), then its contents depth first, each directory's entries in name order. Depth first, not the
// image's breadth-first inode order, because GNU tar restores a directory's mtime once it meets an entry
// outside it: in breadth-first order it would restore it too early, unless run with
// --delay-directory-restore.
void add_entries(const Image& img, const std::string& path, ArchiveBuilder& b) {
  const uint32_t ino = resolve_path(img, path);
  const std::string source = path.starts_with('/') ? path : "/" + path;
  if (img.type(ino) == format::kTypeDir) {
    b.add(ino, "./", source);
    walk(img, ino, "", [&](const Entry& e) {
      b.add(e.ino, e.path, join_path(source, e.path));
      return true;
    });
  } else {
    b.add(ino, last_name(path), source);
  }
  b.finish();
}

}  // namespace

int extract_archive(const Options& o, std::ostream& out, std::ostream& err) {
  auto img = open_image(o);  // with its bases, if it is layered
  const Utf8Names names;
  const ArchiveFormat f = choose_archive_format(o.archive, o.format, o.compress);
  if (o.archive == "-") {
    // As tar does: an archive on a terminal is never what was meant (a forgotten redirection).
    if (&out == &std::cout && isatty(STDOUT_FILENO))
      throw std::runtime_error(
          "refusing to write an archive to a terminal; redirect it, or give --archive FILE");
    ArchiveWriter w(f, out, "(standard output)");
    ArchiveBuilder b(*img, w, err);
    add_entries(*img, o.path, b);
    w.finish();
    return 0;
  }
  resolve_path(*img, o.path);  // a missing PATH creates nothing
  TempArchive file(o.archive);
  ArchiveWriter w(f, file.fd(), printable_name(o.archive));
  ArchiveBuilder b(*img, w, err);
  add_entries(*img, o.path, b);
  w.finish();
  file.commit();
  out << "wrote " << b.entries() << " entries (" << b.file_bytes() << " file bytes) to "
      << printable_name(o.archive) << " (" << w.describe() << ")\n";
  if (b.skipped() != 0)
    err << "gdfs-inspect: warning: " << b.skipped() << " entries left out: " << w.describe()
        << " cannot hold them\n";
  return 0;
}

}  // namespace gdfs::inspect
