// gdfs._gdfs: the Python binding of the Reader (gdfs/reader.h). python/gdfs/__init__.py re-exports it
// and adds Image.walk.
//
// Every call that reads file bytes releases the GIL around the C++ call, touching no Python object
// meanwhile, so Python threads read in parallel. Metadata calls (lookup, stat, listdir) work on
// metadata held in memory and keep it. Errors are OSError with the errno the Reader gives (ENOENT,
// ENOTDIR, EISDIR, EINVAL, EIO, ENOTSUP) and its one-line message, with `filename` set to the path
// asked for.
#include <pthread.h>
#include <pybind11/pybind11.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "buffers.h"
#include "gdfs/printable.h"
#include "gdfs/reader.h"

namespace py = pybind11;

namespace gdfs::python {
namespace {

// Bumped in every child of fork(): a Reader's threads do not survive a fork, so an image opened before
// it must be opened again in the child (a data loader's worker processes).
std::atomic<unsigned> g_fork_generation{0};

[[noreturn]] void raise_os_error(int code, const std::string& message, py::handle filename) {
  // OSError(errno, strerror, filename) becomes FileNotFoundError, IsADirectoryError, ... as os does.
  // Two statements, not ?:: pybind11 3 gives the two make_tuple calls different types.
  py::tuple args = py::make_tuple(code, message);
  if (filename) args = py::make_tuple(code, message, filename);
  // The instance is made here, so that the error is set as its subclass: pybind11 answers an error whose
  // type changes when Python normalizes it (OSError to FileNotFoundError, done at once while another
  // exception is being handled) with RuntimeError, "MISMATCH of original and normalized ... types".
  py::object error = py::reinterpret_steal<py::object>(PyObject_Call(PyExc_OSError, args.ptr(), nullptr));
  if (!error) throw py::error_already_set();
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
  throw py::error_already_set();
}

// Runs `fn`, turning the Reader's exceptions into OSError naming `filename`. A py::gil_scoped_release
// inside `fn` has taken the GIL back by the time a handler here runs.
template <typename Fn>
auto translate(py::handle filename, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const ImageError& e) {
    raise_os_error(e.code(), e.what(), filename);
  }
}

// A path as the image names it (bytes): str (encoded as os does, surrogateescape), bytes or PathLike.
bool g_utf8_filenames = false;  // the file system encoding is UTF-8 (as on Linux, unless a locale says else)

std::string fs_path(py::handle path) {
  if (g_utf8_filenames && PyUnicode_CheckExact(path.ptr())) {
    // The str's own UTF-8 form, cached in the object: no new object per call (read loops).
    Py_ssize_t n = 0;
    if (const char* u = PyUnicode_AsUTF8AndSize(path.ptr(), &n)) {
      std::string s(u, static_cast<size_t>(n));
      if (s.find('\0') != std::string::npos) throw py::value_error("embedded null byte");
      return s;
    }
    PyErr_Clear();  // lone surrogates (names that are not UTF-8): encoded below as os does
  }
  py::object p = py::reinterpret_steal<py::object>(PyOS_FSPath(path.ptr()));
  if (!p) throw py::error_already_set();
  if (PyUnicode_Check(p.ptr())) {
    p = py::reinterpret_steal<py::object>(PyUnicode_EncodeFSDefault(p.ptr()));
    if (!p) throw py::error_already_set();
  }
  std::string s(PyBytes_AS_STRING(p.ptr()), static_cast<size_t>(PyBytes_GET_SIZE(p.ptr())));
  if (s.find('\0') != std::string::npos) throw py::value_error("embedded null byte");
  return s;
}

bool is_bytes_path(py::handle path) {
  return PyBytes_Check(path.ptr());
}

// A name from the image as os.listdir gives it: bytes for a bytes path, else str (surrogateescape).
py::object fs_name(const std::string& name, bool as_bytes) {
  if (as_bytes) return py::bytes(name);
  py::object s = py::reinterpret_steal<py::object>(
      PyUnicode_DecodeFSDefaultAndSize(name.data(), static_cast<Py_ssize_t>(name.size())));
  if (!s) throw py::error_already_set();
  return s;
}

uint64_t checked_offset(int64_t offset, py::handle filename) {
  if (offset < 0) raise_os_error(EINVAL, "negative offset " + std::to_string(offset), filename);
  return static_cast<uint64_t>(offset);
}

// Bytes a read of `size` at `offset` (size < 0: to the end) gets from a file of `file_size` bytes.
size_t read_length(uint64_t file_size, uint64_t offset, int64_t size) {
  const uint64_t left = offset < file_size ? file_size - offset : 0;
  return static_cast<size_t>(size < 0 ? left : std::min<uint64_t>(left, static_cast<uint64_t>(size)));
}

// A fresh bytes object of `n` bytes to read into (filled by the caller before Python sees it).
py::bytes new_bytes(size_t n) {
  PyObject* b = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(n));
  if (!b) throw py::error_already_set();
  return py::reinterpret_steal<py::bytes>(b);
}

// Shrinks `b` to `n` bytes (a read that came back short; the object is not shared yet).
void shrink_bytes(py::bytes& b, size_t n) {
  if (static_cast<Py_ssize_t>(n) == PyBytes_GET_SIZE(b.ptr())) return;
  PyObject* p = b.release().ptr();
  if (_PyBytes_Resize(&p, static_cast<Py_ssize_t>(n)) != 0) throw py::error_already_set();
  b = py::reinterpret_steal<py::bytes>(p);
}

DecoderChoice decoder_of(const std::string& name) {
  if (const std::optional<DecoderChoice> d = parse_decoder_choice(name)) return *d;
  throw py::value_error("decoder must be 'auto', 'cpu' or 'gpu', not '" + name + "'");
}

// An OSError(errno, message, filename) object, not raised: FileNotFoundError, IsADirectoryError, ... as
// os gives them (read_batch(return_exceptions=True) hands these back in place of bytes).
py::object os_error(int code, const std::string& message, py::handle filename) {
  py::tuple args = py::make_tuple(code, message, py::reinterpret_borrow<py::object>(filename));
  PyObject* e = PyObject_Call(PyExc_OSError, args.ptr(), nullptr);
  if (!e) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(e);
}

// What Image() was given, kept to open the image again: in a child of fork() (its Reader's threads are
// gone), and in another process (pickle; a data loader's spawned workers).
struct OpenArgs {
  py::object path;
  py::dict kwargs;  // as given, for pickling
  std::string name;
  ReaderOptions options;
};

Follow follow_of(bool follow_symlinks) {
  return follow_symlinks ? Follow::kYes : Follow::kNo;
}

// An int option that counts something (bytes, threads): TypeError for anything but an int, ValueError
// below 0 or above `max`, where pybind11's own conversion gives one TypeError listing every overload.
uint64_t count_of(py::handle value, const char* what, uint64_t max) {
  if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value))
    throw py::type_error(std::string(what) + " must be an int, not " + Py_TYPE(value.ptr())->tp_name);
  const auto n = py::reinterpret_borrow<py::int_>(value);
  if (n < py::int_(0))
    throw py::value_error(std::string(what) + " must be 0 or more, not " + py::repr(n).cast<std::string>());
  if (n > py::int_(max))
    throw py::value_error(std::string(what) + " must be at most " +
                          (max == UINT64_MAX ? std::string("2**64 - 1") : std::to_string(max)) + ", not " +
                          py::repr(n).cast<std::string>());
  return n.cast<uint64_t>();
}

// A path argument that may be None (not given) but never empty: trusted_key='' from an unset variable must
// not open the image unchecked.
std::string given_path(py::handle path, const char* what) {
  std::string s = fs_path(path);
  if (s.empty()) throw py::value_error(std::string(what) + " is empty (None: not given)");
  return s;
}

std::vector<std::string> string_list(py::handle items, const char* what) {
  std::vector<std::string> out;
  if (!items.is_none())
    for (py::handle b : items) out.push_back(given_path(b, what));
  return out;
}

OpenArgs open_args(py::object path, const py::dict& kw) {
  OpenArgs a;
  a.path = path;
  a.kwargs = kw;
  a.name = fs_path(path);
  ReaderOptions& opt = a.options;
  opt.cache_size = count_of(kw["cache_size"], "cache_size", UINT64_MAX);
  opt.threads = static_cast<unsigned>(count_of(kw["threads"], "threads", kMaxThreads));
  opt.decoder = decoder_of(kw["decoder"].cast<std::string>());
  opt.readahead = count_of(kw["readahead"], "readahead", UINT64_MAX);
  opt.source.bases = string_list(kw["bases"], "a base");
  if (!kw["trusted_key"].is_none()) opt.source.trusted_key = given_path(kw["trusted_key"], "trusted_key");
  if (!kw["cache_dir"].is_none()) opt.source.cache_dir = given_path(kw["cache_dir"], "cache_dir");
  opt.source.disk_cache_size = count_of(kw["disk_cache_size"], "disk_cache_size", UINT64_MAX);
  if (!kw["ca_file"].is_none()) opt.source.ca_file = given_path(kw["ca_file"], "ca_file");
  opt.source.remote_timeout_s = kw["remote_timeout"].cast<double>();
  if (!SourceOptions::remote_timeout_ok(opt.source.remote_timeout_s))
    throw py::value_error("remote_timeout must be more than 0 and at most " +
                          std::to_string(static_cast<int>(SourceOptions::kMaxRemoteTimeout)) +
                          " seconds, not " + py::repr(kw["remote_timeout"]).cast<std::string>());
  if (!kw["aws"].is_none())
    for (auto [k, v] : kw["aws"].cast<py::dict>())
      opt.source.aws[k.cast<std::string>()] = v.is_none() ? std::string() : v.cast<std::string>();
  return a;
}

// A local path made absolute against the current working directory; a URL or an absolute path as it is.
std::string anchored(const std::string& p) {
  if (p.empty() || p.front() == '/' || p.find("://") != std::string::npos) return p;
  std::error_code ec;
  const std::filesystem::path cwd = std::filesystem::current_path(ec);
  return ec ? p : (cwd / p).string();
}

// `a` with its local paths anchored: what a child of fork() or an unpickled copy opens, as the working
// directory may have changed since (the daemon does the same before it leaves its own).
OpenArgs anchored(const OpenArgs& a) {
  OpenArgs out = a;
  out.name = anchored(a.name);
  out.path = fs_name(out.name, is_bytes_path(a.path));
  SourceOptions& so = out.options.source;
  for (std::string& b : so.bases) b = anchored(b);
  so.trusted_key = anchored(so.trusted_key);
  so.cache_dir = anchored(so.cache_dir);
  so.ca_file = anchored(so.ca_file);
  py::dict kw;
  for (auto [k, v] : a.kwargs) kw[k] = v;
  py::list bases;
  for (const std::string& b : so.bases) bases.append(fs_name(b, false));
  if (!a.kwargs["bases"].is_none()) kw["bases"] = bases;
  for (const auto& [key, value] : {std::pair<const char*, const std::string*>{"trusted_key", &so.trusted_key},
                                   {"cache_dir", &so.cache_dir},
                                   {"ca_file", &so.ca_file}})
    if (!a.kwargs[key].is_none()) kw[key] = fs_name(*value, false);
  out.kwargs = kw;
  return out;
}

std::shared_ptr<Reader> open_reader(const OpenArgs& a, bool release_gil) {
  try {
    if (!release_gil) return Reader::open(a.name, a.options);
    py::gil_scoped_release nogil;  // validation reads the whole metadata region
    return Reader::open(a.name, a.options);
  } catch (const std::exception& e) {
    raise_os_error(error_code(e), e.what(), a.path);
  }
}

class Image {
 public:
  explicit Image(OpenArgs args) : args_(std::move(args)), reopen_(anchored(args_)) {
    reader_ = open_reader(args_, true);
    generation_ = g_fork_generation.load(std::memory_order_relaxed);
  }

  // The reader, held for the length of a call (close() from another thread cannot free it meanwhile).
  // In a child of fork() the image is opened again first, with the GIL held all along so that two
  // threads of the child cannot both do it.
  std::shared_ptr<Reader> get() const {
    if (!reader_) throw py::value_error("I/O operation on a closed gdfs.Image");
    const unsigned now = g_fork_generation.load(std::memory_order_relaxed);
    if (generation_ != now) {
      forget_if_forked();
      reader_ = open_reader(reopen_, false);
      generation_ = now;
    }
    return reader_;
  }

  ~Image() { forget_if_forked(); }
  Image(const Image&) = delete;
  Image& operator=(const Image&) = delete;

  void close() {
    forget_if_forked();
    std::shared_ptr<Reader> r = std::move(reader_);
    reader_.reset();
    if (r) {
      py::gil_scoped_release nogil;  // the destructor waits for readahead
      r.reset();
    }
  }
  bool closed() const { return !reader_; }
  py::object path() const { return args_.path; }
  py::dict kwargs() const { return args_.kwargs; }
  // What pickling hands the other process: the path and keywords, local paths anchored.
  py::tuple reopen_args() const { return py::make_tuple(reopen_.path, reopen_.kwargs); }

  uint32_t lookup(py::handle path, bool follow_symlinks) const {
    auto r = get();
    const std::string p = fs_path(path);
    return translate(path, [&] { return r->lookup(p, follow_of(follow_symlinks)); });
  }

  FileStat stat(py::handle path, bool follow_symlinks) const {
    auto r = get();
    const std::string p = fs_path(path);
    return translate(path, [&] { return r->stat(p, follow_of(follow_symlinks)); });
  }

  py::list listdir(py::handle path) const {
    py::list out;
    for (const DirEntry& e : list(path)) out.append(fs_name(e.name, is_bytes_path(path)));
    return out;
  }

  // (name, st_mode) of each entry: what walk() needs, in one call per directory.
  py::list scandir(py::handle path) const {
    py::list out;
    for (const DirEntry& e : list(path))
      out.append(py::make_tuple(fs_name(e.name, is_bytes_path(path)), e.mode));
    return out;
  }

  // As os.listxattr and os.getxattr: names as str (decoded as os decodes file names), values as bytes,
  // ENODATA for a name the file does not have.
  py::list listxattr(py::handle path, bool follow_symlinks) const {
    auto r = get();
    const std::string p = fs_path(path);
    py::list out;
    for (const auto& [name, value] :
         translate(path, [&] { return r->xattrs(r->lookup(p, follow_of(follow_symlinks))); }))
      out.append(fs_name(name, false));
    return out;
  }

  py::bytes getxattr(py::handle path, py::handle attribute, bool follow_symlinks) const {
    auto r = get();
    const std::string p = fs_path(path);
    const std::string want = fs_path(attribute);
    for (const auto& [name, value] :
         translate(path, [&] { return r->xattrs(r->lookup(p, follow_of(follow_symlinks))); }))
      if (name == want) return py::bytes(value);
    raise_os_error(ENODATA, r->name() + ": " + p + ": no xattr " + printable_name(want), path);
  }

  py::object readlink(py::handle path) const {
    auto r = get();
    const std::string p = fs_path(path);
    return fs_name(translate(path, [&] { return r->readlink(p); }), is_bytes_path(path));
  }

  py::bytes read(py::handle path, int64_t offset, int64_t size) const {
    auto r = get();
    const std::string p = fs_path(path);
    const uint64_t off = checked_offset(offset, path);
    const FileStat st = translate(path, [&] { return r->stat(p, Follow::kYes); });
    return read_ino(*r, path, st.ino, off, read_length(st.size, off, size));
  }

  size_t read_into(py::handle path, py::handle buffer, int64_t offset, py::handle stream) const {
    auto r = get();
    const std::string p = fs_path(path);
    const uint64_t off = checked_offset(offset, path);
    const uint32_t ino = translate(path, [&] { return r->lookup(p, Follow::kYes); });
    return read_ino_into(*r, path, ino, buffer, off, stream);
  }

  // The file objects' reads: by inode, which Image.open looked up once. `size` is clamped to the file
  // here too (the file object already does), so no caller can make it allocate past the file's end.
  py::bytes pread(uint32_t ino, int64_t offset, int64_t size, py::handle name) const {
    auto r = get();
    if (size < 0) throw py::value_error("_pread: negative size");
    const uint64_t off = checked_offset(offset, name);
    const FileStat st = translate(name, [&] { return r->stat(ino); });
    return read_ino(*r, name, ino, off, read_length(st.size, off, size));
  }

  size_t pread_into(uint32_t ino, py::handle buffer, int64_t offset, py::handle name) const {
    auto r = get();
    return read_ino_into(*r, name, ino, buffer, checked_offset(offset, name), py::none());
  }

  py::list read_batch(py::iterable requests, bool return_exceptions) const {
    auto r = get();
    Batch b;
    py::list results;
    for (py::handle item : requests) {
      py::tuple t = request_tuple(item, "read_batch takes (path, offset, size) tuples");
      py::object path = t[0];
      const size_t i = results.size();
      results.append(py::none());
      try {
        const std::string p = fs_path(path);
        const uint64_t off = checked_offset(t[1].cast<int64_t>(), path);
        const int64_t size = t[2].cast<int64_t>();
        const FileStat st = translate(path, [&] { return r->stat(p, Follow::kYes); });
        py::bytes bytes = new_bytes(read_length(st.size, off, size));
        b.add(st.ino, off, static_cast<size_t>(PyBytes_GET_SIZE(bytes.ptr())), PyBytes_AS_STRING(bytes.ptr()),
              i, path);
        results[i] = bytes;
      } catch (py::error_already_set& e) {
        if (!e.matches(PyExc_OSError)) throw;  // errors of the request itself (TypeError): at once
        results[i] = e.value();
      }
    }
    b.run_host(*r);
    for (size_t k = 0; k < b.reqs.size(); ++k) {
      const size_t i = b.index[k];
      if (b.reqs[k].error) {
        results[i] = b.error_object(k);
        continue;
      }
      py::bytes bytes = results[i];
      results[i] = py::none();  // the list's reference: shrink_bytes needs the only one
      shrink_bytes(bytes, b.reqs[k].bytes);
      results[i] = bytes;
    }
    if (!return_exceptions) raise_first_error(results);
    return results;
  }

  // [(path, offset, buffer), ...] -> [bytes read, ...]: one batch into host buffers and one into device
  // buffers (queued on `stream`, else on the first device buffer's own stream).
  py::list read_batch_into(py::iterable requests, py::handle stream, bool return_exceptions,
                           bool once) const {
    auto r = get();
    Batch host, dev;
    std::vector<std::unique_ptr<BufferTarget>> targets;  // alive until the reads are done
    py::list results;
    void* dev_stream = nullptr;  // `stream` where given, else the first device buffer's own
    for (py::handle item : requests) {
      py::tuple t = request_tuple(item, "read_batch_into takes (path, offset, buffer) tuples");
      py::object path = t[0];
      results.append(py::none());
      const size_t i = results.size() - 1;
      try {
        const std::string p = fs_path(path);
        const uint64_t off = checked_offset(t[1].cast<int64_t>(), path);
        const uint32_t ino = translate(path, [&] { return r->lookup(p, Follow::kYes); });
        auto target = std::make_unique<BufferTarget>(t[2], stream);
        Batch& b = target->device() ? dev : host;
        if (target->device() && dev.reqs.empty()) dev_stream = target->stream();
        b.add(ino, off, target->bytes(), target->ptr(), i, path);
        targets.push_back(std::move(target));
      } catch (py::error_already_set& e) {
        if (!e.matches(PyExc_OSError)) throw;  // errors of the request itself (TypeError): at once
        results[i] = e.value();
      }
    }
    host.run_host(*r, once ? gdfs::Access::kOnce : gdfs::Access::kNormal);
    dev.run_device(*r, dev_stream);
    for (Batch* b : {&host, &dev})
      for (size_t k = 0; k < b->reqs.size(); ++k) {
        if (b->reqs[k].error)
          results[b->index[k]] = b->error_object(k);
        else
          results[b->index[k]] = py::int_(b->reqs[k].bytes);
      }
    if (!return_exceptions) raise_first_error(results);
    return results;
  }

  py::tuple device_reads() const {
    auto r = get();
    std::string how;
    const bool ok = r->device_reads(how);
    return py::make_tuple(ok, how);
  }

  std::string stats_json() const { return get()->stats_json(); }
  std::string decoder() const { return get()->decoder_name(); }
  std::string fetcher() const { return get()->fetcher_name(); }

  std::string repr() const {
    // A URL is shown as messages show it: no user, password or query (a presigned URL's signature).
    const bool url = args_.name.find("://") != std::string::npos;
    std::string s =
        "<gdfs.Image " + std::string(py::repr(url ? py::str(url_for_messages(args_.name)) : args_.path));
    if (!reader_) return s + " closed>";
    return s + " decoder=" + reader_->decoder_name() + " fetcher=" + reader_->fetcher_name() + ">";
  }

 private:
  // The requests of one batch call, each with the path it was asked by and where its result goes.
  struct Batch {
    std::vector<ReadRequest> reqs;
    std::vector<size_t> index;  // reqs[k] answers results[index[k]]
    std::vector<py::object> paths;

    void add(uint32_t ino, uint64_t off, size_t len, void* dst, size_t i, py::object path) {
      ReadRequest q;
      q.ino = ino;
      q.offset = off;
      q.length = len;
      q.dst = dst;
      reqs.push_back(std::move(q));
      index.push_back(i);
      paths.push_back(std::move(path));
    }
    py::object error_object(size_t k) const { return os_error(reqs[k].error, reqs[k].message, paths[k]); }
    void run_host(Reader& r, gdfs::Access access = gdfs::Access::kNormal) {
      if (reqs.empty()) return;
      py::gil_scoped_release nogil;
      r.read_batch(reqs, access);
    }
    void run_device(Reader& r, void* stream) {
      if (reqs.empty()) return;
      // A failure of the whole batch (no usable device) is every request's error.
      try {
        py::gil_scoped_release nogil;
        r.read_batch_device(reqs, stream);
      } catch (const ImageError& e) {
        for (ReadRequest& q : reqs) {
          q.error = e.code();
          q.message = e.what();
        }
      }
    }
  };

  // Raises the first exception in `results` (a batch without return_exceptions), if any.
  static void raise_first_error(const py::list& results) {
    for (py::handle x : results)
      if (PyExceptionInstance_Check(x.ptr())) {
        PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(x.ptr())), x.ptr());
        throw py::error_already_set();
      }
  }

  static py::tuple request_tuple(py::handle item, const char* what) {
    py::tuple t = py::reinterpret_borrow<py::object>(item).cast<py::tuple>();
    if (t.size() != 3) throw py::value_error(what);
    return t;
  }

  std::vector<DirEntry> list(py::handle path) const {
    auto r = get();
    const std::string p = fs_path(path);
    return translate(path, [&] { return r->list(p); });
  }

  static py::bytes read_ino(Reader& r, py::handle path, uint32_t ino, uint64_t off, size_t size) {
    py::bytes out = new_bytes(size);
    char* dst = PyBytes_AS_STRING(out.ptr());
    const size_t want = static_cast<size_t>(PyBytes_GET_SIZE(out.ptr()));
    const size_t got = translate(path, [&] {
      py::gil_scoped_release nogil;
      return r.read(ino, off, want, dst);  // a directory or a symlink: EISDIR
    });
    shrink_bytes(out, got);
    return out;
  }

  static size_t read_ino_into(Reader& r, py::handle path, uint32_t ino, py::handle buffer, uint64_t off,
                              py::handle stream) {
    const BufferTarget t(buffer, stream);  // alive until the read is done
    return translate(path, [&] {
      py::gil_scoped_release nogil;
      return t.device() ? r.read_device(ino, off, t.bytes(), t.ptr(), t.stream())
                        : r.read(ino, off, t.bytes(), t.ptr());
    });
  }

  // In a child of fork() the Reader's threads are gone: its destructor would wait for them forever. The
  // child drops it without destroying it (the memory is the parent's copy; the child's exit frees it).
  void forget_if_forked() const {
    if (reader_ && generation_ != g_fork_generation.load(std::memory_order_relaxed))
      new std::shared_ptr<Reader>(std::move(reader_));  // deliberately never deleted
  }

  OpenArgs args_;
  OpenArgs reopen_;  // args_ with local paths anchored to the working directory at open
  mutable std::shared_ptr<Reader> reader_;
  mutable unsigned generation_ = 0;
};

// ---- read and read_into as METH_FASTCALL methods --------------------------------------------------------
// The calls of read loops: pybind11's dispatcher costs a few hundred ns per call (more with keyword
// arguments), which is several percent of a 64 KiB read from the cache (bench/python-overhead). These take
// their arguments straight from the vectorcall array.

// Fills out[i] with the argument named names[i] (positional or keyword; null where not given). TypeError
// for too many, unknown, repeated or missing (the first `required`) arguments.
void parse_args(const char* fn, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                std::initializer_list<const char*> names, size_t required, PyObject** out) {
  const size_t n = names.size();
  if (static_cast<size_t>(nargs) > n)
    throw py::type_error(std::string(fn) + "() takes at most " + std::to_string(n) + " arguments");
  for (size_t i = 0; i < n; ++i) out[i] = i < static_cast<size_t>(nargs) ? args[i] : nullptr;
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, k);
    size_t i = 0;
    for (const char* name : names) {
      if (PyUnicode_CompareWithASCIIString(key, name) == 0) break;
      ++i;
    }
    if (i == n)
      throw py::type_error(std::string(fn) + "() got an unexpected keyword argument '" +
                           py::str(key).cast<std::string>() + "'");
    if (out[i])
      throw py::type_error(std::string(fn) + "() got multiple values for argument '" + *(names.begin() + i) +
                           "'");
    out[i] = args[nargs + k];
  }
  for (size_t i = 0; i < required; ++i) {
    if (!out[i])
      throw py::type_error(std::string(fn) + "() missing required argument '" + *(names.begin() + i) + "'");
  }
}

int64_t int_arg(PyObject* o, int64_t absent) {
  if (!o) return absent;
  const long long v = PyLong_AsLongLong(o);  // __index__: numpy integers too
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  return v;
}

// Runs `fn` for a METH_FASTCALL method: its result, or null with the Python error set.
template <typename Fn>
PyObject* fastcall(Fn&& fn) noexcept {
  try {
    return fn().release().ptr();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

PyObject* read_fast(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return fastcall([&] {
    PyObject* a[3];
    parse_args("read", args, nargs, kwnames, {"path", "offset", "size"}, 1, a);
    const Image& img = py::handle(self).cast<const Image&>();
    return py::object(img.read(a[0], int_arg(a[1], 0), int_arg(a[2], -1)));
  });
}

PyObject* read_into_fast(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return fastcall([&] {
    PyObject* a[4];
    parse_args("read_into", args, nargs, kwnames, {"path", "buffer", "offset", "stream"}, 2, a);
    const Image& img = py::handle(self).cast<const Image&>();
    const size_t n =
        img.read_into(a[0], a[1], int_arg(a[2], 0), a[3] ? py::handle(a[3]) : py::handle(Py_None));
    return py::reinterpret_steal<py::object>(PyLong_FromSize_t(n));
  });
}

// An inode number from Python: 1 .. 2^32-1.
uint32_t inode_arg(PyObject* o, const char* fn) {
  const int64_t ino = int_arg(o, 0);
  if (ino <= 0 || ino > UINT32_MAX) throw py::value_error(std::string(fn) + ": bad inode number");
  return static_cast<uint32_t>(ino);
}

// The file objects' read: (ino, buffer, offset, name); `name` only names the file in errors.
PyObject* pread_into_fast(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return fastcall([&] {
    PyObject* a[4];
    parse_args("_pread_into", args, nargs, kwnames, {"ino", "buffer", "offset", "name"}, 4, a);
    const Image& img = py::handle(self).cast<const Image&>();
    const size_t n = img.pread_into(inode_arg(a[0], "_pread_into"), a[1], int_arg(a[2], 0), a[3]);
    return py::reinterpret_steal<py::object>(PyLong_FromSize_t(n));
  });
}

// The file objects' read: (ino, offset, size, name) -> bytes.
PyObject* pread_fast(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return fastcall([&] {
    PyObject* a[4];
    parse_args("_pread", args, nargs, kwnames, {"ino", "offset", "size", "name"}, 4, a);
    const Image& img = py::handle(self).cast<const Image&>();
    return py::object(img.pread(inode_arg(a[0], "_pread"), int_arg(a[1], 0), int_arg(a[2], 0), a[3]));
  });
}

PyMethodDef g_pread_def = {"_pread", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(pread_fast)),
                           METH_FASTCALL | METH_KEYWORDS,
                           "_pread($self, /, ino, offset, size, name)\n--\n\n"
                           "read by inode number, `size` bytes at most, clamped to the file (what "
                           "Image.open's file objects call); `name` is for errors only."};

PyMethodDef g_pread_into_def = {
    "_pread_into", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(pread_into_fast)),
    METH_FASTCALL | METH_KEYWORDS,
    "_pread_into($self, /, ino, buffer, offset, name)\n--\n\n"
    "read_into by inode number (what Image.open's file objects call); `name` is for errors only."};

PyMethodDef g_read_def = {
    "read", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(read_fast)),
    METH_FASTCALL | METH_KEYWORDS,
    "read($self, /, path, offset=0, size=-1)\n--\n\n"
    "Up to `size` bytes of regular file `path` at `offset` (size -1: to the end), as bytes."};

PyMethodDef g_read_into_def = {
    "read_into", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(read_into_fast)),
    METH_FASTCALL | METH_KEYWORDS,
    "read_into($self, /, path, buffer, offset=0, stream=None)\n--\n\n"
    "Reads min(len(buffer), size - offset) bytes of file `path` at `offset` into `buffer`; returns\n"
    "the count. `buffer`: a writable C-contiguous buffer (bytearray, numpy array, memoryview), or\n"
    "device memory through __cuda_array_interface__ or __dlpack__ (CuPy, PyTorch CUDA tensors;\n"
    "host DLPack tensors, pinned ones included, are read like buffers). Device reads are queued\n"
    "on `stream` (a cudaStream_t value, or a torch/cupy Stream; default: the array's own stream\n"
    "where it names one, else the legacy default stream) and done when the call returns; where no\n"
    "CUDA device is usable they raise OSError(ENOTSUP)."};

// Adds `def` to class `cls` as a method.
void add_fast_method(py::object& cls, PyMethodDef* def) {
  py::object m =
      py::reinterpret_steal<py::object>(PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), def));
  if (!m) throw py::error_already_set();
  cls.attr(def->ml_name) = m;
}

}  // namespace
}  // namespace gdfs::python

PYBIND11_MODULE(_gdfs, m) {
  using gdfs::FileStat;
  using gdfs::python::Image;
  namespace gp = gdfs::python;
  m.doc() = "gdfs: read gdfs images (compressed read-only filesystem images) into host or GPU memory";
  m.attr("__version__") = GDFS_VERSION;
  gp::g_utf8_filenames =
      py::module_::import("sys").attr("getfilesystemencoding")().cast<std::string>() == "utf-8";
  pthread_atfork(nullptr, nullptr, [] { gp::g_fork_generation.fetch_add(1, std::memory_order_relaxed); });

  py::class_<FileStat>(m, "StatResult",
                       "What Image.stat says about one entry (the fields of os.stat_result).")
      .def_property_readonly("st_mode", [](const FileStat& s) { return s.mode; })
      .def_property_readonly("st_ino", [](const FileStat& s) { return s.ino; })
      .def_property_readonly("st_nlink", [](const FileStat& s) { return s.nlink; })
      .def_property_readonly("st_uid", [](const FileStat& s) { return s.uid; })
      .def_property_readonly("st_gid", [](const FileStat& s) { return s.gid; })
      .def_property_readonly("st_size", [](const FileStat& s) { return s.size; })
      .def_property_readonly("st_rdev", [](const FileStat& s) { return s.rdev; })
      .def_property_readonly("st_mtime_ns", [](const FileStat& s) { return s.mtime_ns; })
      .def_property_readonly("st_mtime", [](const FileStat& s) { return double(s.mtime_ns) / 1e9; })
      .def_property_readonly("st_blocks", [](const FileStat& s) { return s.blocks; })
      .def_property_readonly("st_blksize", [](const FileStat& s) { return s.blksize; })
      .def("__repr__", [](const FileStat& s) {
        char line[320];
        std::snprintf(
            line, sizeof line,
            "gdfs.StatResult(st_mode=0o%o, st_ino=%u, st_nlink=%u, st_uid=%u, st_gid=%u, st_size=%llu, "
            "st_mtime_ns=%lld, st_rdev=%llu)",
            s.mode, s.ino, s.nlink, s.uid, s.gid, static_cast<unsigned long long>(s.size),
            static_cast<long long>(s.mtime_ns), static_cast<unsigned long long>(s.rdev));
        return std::string(line);
      });

  py::class_<Image>(m, "Image", R"(A gdfs image, opened and validated: a local path, or an http(s):// or
s3:// URL.

Image(path_or_url, *, cache_size=0, threads=0, decoder='auto', readahead=4 MiB, bases=None,
      trusted_key=None, cache_dir=None, disk_cache_size=1 GiB, ca_file=None, remote_timeout=60,
      aws=None)

cache_size: bytes of decoded pages kept (0: an eighth of RAM, or of a memory cgroup's lower limit, 64 MiB..4 GiB); threads: CPU decode
threads (0: one per core); decoder: 'auto' (the GPU when usable), 'cpu' or 'gpu'; readahead: bytes
decoded ahead of a sequential reader (0: off).

bases: where the base images of a layered image are, when not where the image says (each taken only
if it is exactly the recorded base).

trusted_key: a PEM file of Ed25519 public keys. The image is refused (PermissionError) unless it is
signed by one of them, and every page read is checked against its signed digest (EIO otherwise).

Remote images: cache_dir keeps fetched page bytes on disk (bounded by disk_cache_size) across
processes; ca_file is a PEM bundle to trust instead of the system's; remote_timeout bounds one read,
retries included; aws is a dict of S3 settings named like the environment variables it stands in for
(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_ENDPOINT_URL, AWS_REGION,
AWS_PROFILE; a value of None or '' unsets one).

Paths inside the image are like "/a/b", resolved as the kernel would: symlinks on the way are followed
(an absolute target from the image's root), and one at the end by read, listdir and open, as by the
OS's calls, and by stat and lookup unless follow_symlinks=False; readlink and walk never follow. One
Image serves any number of threads; reads release the GIL. It survives fork() (the child opens it
again on first use) and pickling (the other process opens it again), so data loader workers can take
it. Errors are OSError with the errno a file system would give.)")
      .def(
          py::init([](py::object path, py::object cache_size, py::object threads, const std::string& decoder,
                      py::object readahead, py::object bases, py::object trusted_key, py::object cache_dir,
                      py::object disk_cache_size, py::object ca_file, double remote_timeout, py::object aws) {
            py::dict kw;
            kw["cache_size"] = cache_size;
            kw["threads"] = threads;
            kw["decoder"] = decoder;
            kw["readahead"] = readahead;
            kw["bases"] = bases.is_none() ? bases : py::object(py::list(bases));
            kw["trusted_key"] = trusted_key;
            kw["cache_dir"] = cache_dir;
            kw["disk_cache_size"] = disk_cache_size;
            kw["ca_file"] = ca_file;
            kw["remote_timeout"] = remote_timeout;
            kw["aws"] = aws.is_none() ? aws : py::object(py::dict(aws));
            return std::make_unique<Image>(gp::open_args(std::move(path), kw));
          }),
          py::arg("path"), py::kw_only(), py::arg("cache_size") = 0, py::arg("threads") = 0,
          py::arg("decoder") = "auto", py::arg("readahead") = uint64_t{4} << 20,
          py::arg("bases") = py::none(), py::arg("trusted_key") = py::none(),
          py::arg("cache_dir") = py::none(), py::arg("disk_cache_size") = uint64_t{1} << 30,
          py::arg("ca_file") = py::none(), py::arg("remote_timeout") = 60.0, py::arg("aws") = py::none())
      .def("lookup", &Image::lookup, py::arg("path"), py::kw_only(), py::arg("follow_symlinks") = true,
           "The inode number of `path` (of a symlink itself with follow_symlinks=False).")
      .def("stat", &Image::stat, py::arg("path"), py::kw_only(), py::arg("follow_symlinks") = true,
           "A StatResult (st_mode, st_size, st_mtime_ns, st_nlink, st_uid, st_gid, st_ino, st_mtime, "
           "st_rdev), as os.stat: of the symlink itself with follow_symlinks=False (os.lstat).")
      .def("listdir", &Image::listdir, py::arg("path") = "/",
           "The names in directory `path`, in byte order (bytes for a bytes path, as os.listdir).")
      .def("_scandir", &Image::scandir, py::arg("path"), "[(name, st_mode)] of directory `path` (for walk).")
      .def("readlink", &Image::readlink, py::arg("path"), "The target of symlink `path` (EINVAL if not one).")
      .def("listxattr", &Image::listxattr, py::arg("path"), py::kw_only(), py::arg("follow_symlinks") = true,
           "The names of the extended attributes of `path`, as os.listxattr.")
      .def("getxattr", &Image::getxattr, py::arg("path"), py::arg("attribute"), py::kw_only(),
           py::arg("follow_symlinks") = true,
           "The value (bytes) of extended attribute `attribute` of `path`, as os.getxattr; ENODATA when\n"
           "it has none of that name.")
      .def("read_batch", &Image::read_batch, py::arg("requests"), py::kw_only(),
           py::arg("return_exceptions") = false,
           "[(path, offset, size), ...] -> [bytes, ...] in one fetch and one decode batch (size -1: to the\n"
           "end). Raises the OSError of the first request (in order) that failed; with "
           "return_exceptions=True, a failed\n"
           "request's place holds its OSError instead (errno, message naming image, path, inode and page,\n"
           "filename) and the other requests are still read.")
      .def("read_batch_into", &Image::read_batch_into, py::arg("requests"), py::kw_only(),
           py::arg("stream") = py::none(), py::arg("return_exceptions") = false, py::arg("once") = false,
           "[(path, offset, buffer), ...] -> [bytes read, ...]: each buffer filled as read_into would, in\n"
           "one batch for the host buffers and one for the CUDA ones (queued on `stream`, else on the\n"
           "first CUDA buffer's own stream, and done when the call returns). Errors as read_batch (a\n"
           "failed request's buffer then holds unspecified bytes). once=True: these bytes are read once\n"
           "(a data loader's epoch): a whole page of a file that is not cached is decoded straight into\n"
           "the buffer and not cached, one copy fewer.")
      .def("_kwargs", &Image::kwargs, "The keyword arguments the image was opened with.")
      .def("_reopen_args", &Image::reopen_args,
           "(path, keyword arguments) that open the image again from any working directory (pickling).")
      .def("device_reads", &Image::device_reads,
           "(True, how) where read_into can fill CUDA memory here, else (False, why not).")
      .def("stats_json", &Image::stats_json, "The reader's counters as one JSON object (README, Counters).")
      .def("close", &Image::close, "Closes the image (also on leaving a `with` block); further calls raise.")
      .def_property_readonly("closed", &Image::closed)
      .def_property_readonly("path", &Image::path)
      .def_property_readonly("decoder", &Image::decoder, "The decode backend in use: 'cpu' or 'gpu'.")
      .def_property_readonly("fetcher", &Image::fetcher, "How the image is read: 'io_uring', 'pread', ...")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](Image& self, py::args) { self.close(); })
      .def("__repr__", &Image::repr);
  py::object image_class = m.attr("Image");
  gp::add_fast_method(image_class, &gp::g_read_def);
  gp::add_fast_method(image_class, &gp::g_read_into_def);
  gp::add_fast_method(image_class, &gp::g_pread_into_def);
  gp::add_fast_method(image_class, &gp::g_pread_def);
}
