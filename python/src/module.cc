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
#include <initializer_list>
#include <memory>
#include <new>
#include <string>
#include <vector>

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
  PyErr_SetObject(PyExc_OSError, args.ptr());
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

// ---- DLPack (https://dmlc.github.io/dlpack/latest/): the ABI of the unversioned capsule ---------------

enum DLDeviceType : int32_t { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13 };
struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; null: compact row-major
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

// A memory region that read_into fills: host or device, its address and size in bytes.
struct Target {
  void* ptr = nullptr;
  size_t bytes = 0;
  bool device = false;
  void* stream = nullptr;  // device reads: a cudaStream_t (null: the legacy default stream)
};

// Byte size of a C-contiguous array, or ValueError. `strides` in units of `unit` bytes (null: compact).
size_t contiguous_bytes(const std::vector<int64_t>& shape, const std::vector<int64_t>* strides,
                        size_t itemsize, int64_t unit, const char* what) {
  size_t n = itemsize;
  for (int64_t d : shape) {
    if (d < 0) throw py::value_error(std::string(what) + ": negative dimension");
    n *= static_cast<size_t>(d);
  }
  if (!strides || n == 0) return n;
  if (strides->size() != shape.size())
    throw py::value_error(std::string(what) + ": strides do not match shape");
  int64_t expect = static_cast<int64_t>(itemsize) / unit;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && (*strides)[i] != expect)
      throw py::value_error(std::string(what) + ": read_into needs a C-contiguous buffer");
    expect *= shape[i];
  }
  return n;
}

// The stream argument of read_into: None, an int (a cudaStream_t's value), or an object with
// `cuda_stream` (torch.cuda.Stream) or `ptr` (cupy.cuda.Stream).
void* stream_of(py::handle s) {
  if (s.is_none()) return nullptr;
  py::object v = py::reinterpret_borrow<py::object>(s);
  if (py::hasattr(v, "cuda_stream"))
    v = v.attr("cuda_stream");
  else if (py::hasattr(v, "ptr"))
    v = v.attr("ptr");
  return reinterpret_cast<void*>(v.cast<uintptr_t>());
}

// __cuda_array_interface__ (version 2 or 3): data, shape, typestr, strides, stream, mask.
Target cuda_array_target(py::handle obj, py::handle stream) {
  py::dict cai = obj.attr("__cuda_array_interface__").cast<py::dict>();
  if (cai.contains("mask") && !cai["mask"].is_none())
    throw py::value_error("__cuda_array_interface__ with a mask is not supported");
  py::tuple data = cai["data"].cast<py::tuple>();
  if (data.size() != 2)
    throw py::value_error("__cuda_array_interface__: 'data' must be (pointer, read_only)");
  if (data[1].cast<bool>())
    throw py::type_error("read_into needs a writable buffer (this CUDA array is read-only)");
  const std::string typestr = cai["typestr"].cast<std::string>();
  if (typestr.size() < 3) throw py::value_error("__cuda_array_interface__: bad typestr '" + typestr + "'");
  const size_t itemsize = std::stoul(typestr.substr(2));
  std::vector<int64_t> shape;
  for (py::handle d : cai["shape"].cast<py::tuple>()) shape.push_back(d.cast<int64_t>());
  std::vector<int64_t> strides;
  const bool strided = cai.contains("strides") && !cai["strides"].is_none();
  if (strided)
    for (py::handle d : cai["strides"].cast<py::tuple>()) strides.push_back(d.cast<int64_t>());
  Target t;
  t.device = true;
  t.bytes = contiguous_bytes(shape, strided ? &strides : nullptr, itemsize, 1, "__cuda_array_interface__");
  t.ptr = reinterpret_cast<void*>(data[0].cast<uintptr_t>());
  if (!stream.is_none())
    t.stream = stream_of(stream);
  else if (cai.contains("stream") && !cai["stream"].is_none())
    t.stream = stream_of(cai["stream"]);  // the producer's stream: the read is queued on it
  return t;
}

// A consumed DLPack capsule: renamed "used_dltensor" as the protocol asks, and its deleter called once
// the read is done.
class DlpackTensor {
 public:
  explicit DlpackTensor(py::object capsule) : capsule_(std::move(capsule)) {
    if (!PyCapsule_IsValid(capsule_.ptr(), "dltensor"))
      throw py::type_error("__dlpack__() did not return a 'dltensor' capsule (already consumed?)");
    t_ = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule_.ptr(), "dltensor"));
    if (!t_ || PyCapsule_SetName(capsule_.ptr(), "used_dltensor") != 0) throw py::error_already_set();
  }
  ~DlpackTensor() {
    if (t_ && t_->deleter) t_->deleter(t_);  // with the GIL: producers' deleters may drop references
  }
  DlpackTensor(const DlpackTensor&) = delete;
  DlpackTensor& operator=(const DlpackTensor&) = delete;
  const DLTensor& tensor() const { return t_->dl_tensor; }

 private:
  py::object capsule_;
  DLManagedTensor* t_ = nullptr;
};

// __dlpack__: host memory (CPU or CUDA pinned) or CUDA device memory; anything else is refused.
Target dlpack_target(py::handle obj, py::handle stream, std::unique_ptr<DlpackTensor>& keep) {
  int32_t type = -1;
  if (py::hasattr(obj, "__dlpack_device__"))
    type = obj.attr("__dlpack_device__")().cast<py::tuple>()[0].cast<int32_t>();
  const bool cuda = type == kDLCUDA || type == kDLCUDAManaged;
  py::object capsule;
  if (cuda) {
    // The consumer's stream: the producer makes the data ready on it (1: the legacy default stream).
    capsule = obj.attr("__dlpack__")(
        py::arg("stream") =
            stream.is_none() ? py::int_(1) : py::int_(reinterpret_cast<uintptr_t>(stream_of(stream))));
  } else {
    capsule = obj.attr("__dlpack__")();
  }
  keep = std::make_unique<DlpackTensor>(capsule);
  const DLTensor& t = keep->tensor();
  type = t.device.device_type;
  if (type != kDLCPU && type != kDLCUDAHost && type != kDLCUDA && type != kDLCUDAManaged)
    throw py::type_error("read_into takes host or CUDA memory; this DLPack tensor is on device type " +
                         std::to_string(type));
  if (t.ndim < 0 || (t.ndim > 0 && !t.shape)) throw py::value_error("DLPack tensor: bad shape");
  const size_t bits = size_t{t.dtype.bits} * t.dtype.lanes;
  if (bits == 0 || bits % 8) throw py::value_error("DLPack tensor: elements are not whole bytes");
  std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
  std::vector<int64_t> strides;
  if (t.strides) strides.assign(t.strides, t.strides + t.ndim);
  Target out;
  out.bytes = contiguous_bytes(shape, t.strides ? &strides : nullptr, bits / 8,
                               static_cast<int64_t>(bits / 8), "DLPack tensor");
  out.ptr = static_cast<uint8_t*>(t.data) + t.byte_offset;
  out.device = type == kDLCUDA || type == kDLCUDAManaged;
  if (out.device) out.stream = stream_of(stream);
  return out;
}

DecoderChoice decoder_of(const std::string& name) {
  if (const std::optional<DecoderChoice> d = parse_decoder_choice(name)) return *d;
  throw py::value_error("decoder must be 'auto', 'cpu' or 'gpu', not '" + name + "'");
}

class Image {
 public:
  Image(py::object path, uint64_t cache_size, unsigned threads, const std::string& decoder,
        uint64_t readahead, py::object bases, py::object trusted_key)
      : path_(path) {
    name_ = fs_path(path);
    ReaderOptions opt;
    opt.cache_size = cache_size;
    opt.threads = threads;
    opt.decoder = decoder_of(decoder);
    opt.readahead = readahead;
    if (!bases.is_none())
      for (py::handle b : bases) opt.source.bases.push_back(fs_path(b));
    if (!trusted_key.is_none()) opt.source.trusted_key = fs_path(trusted_key);
    std::unique_ptr<Reader> r;
    try {
      py::gil_scoped_release nogil;  // validation reads the whole metadata region
      r = Reader::open(name_, opt);
    } catch (const std::exception& e) {
      raise_os_error(error_code(e), e.what(), path);
    }
    reader_ = std::move(r);
    generation_ = g_fork_generation.load(std::memory_order_relaxed);
  }

  // The reader, held for the length of a call (close() from another thread cannot free it meanwhile).
  std::shared_ptr<Reader> get() const {
    if (!reader_) throw py::value_error("I/O operation on a closed gdfs.Image");
    if (generation_ != g_fork_generation.load(std::memory_order_relaxed))
      throw py::value_error("this gdfs.Image was opened before fork(): open it again in this process");
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
  py::object path() const { return path_; }

  uint32_t lookup(py::handle path) const {
    auto r = get();
    const std::string p = fs_path(path);
    return translate(path, [&] { return r->lookup(p); });
  }

  FileStat stat(py::handle path) const {
    auto r = get();
    const std::string p = fs_path(path);
    return translate(path, [&] { return r->stat(p); });
  }

  py::list listdir(py::handle path) const {
    auto r = get();
    const std::string p = fs_path(path);
    const std::vector<DirEntry> ents = translate(path, [&] { return r->list(p); });
    py::list out;
    for (const DirEntry& e : ents) out.append(fs_name(e.name, is_bytes_path(path)));
    return out;
  }

  // (name, st_mode) of each entry: what walk() needs, in one call per directory.
  py::list scandir(py::handle path) const {
    auto r = get();
    const std::string p = fs_path(path);
    const std::vector<DirEntry> ents = translate(path, [&] { return r->list(p); });
    py::list out;
    for (const DirEntry& e : ents) out.append(py::make_tuple(fs_name(e.name, is_bytes_path(path)), e.mode));
    return out;
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
    const FileStat st = translate(path, [&] { return r->stat(p); });
    py::bytes out = new_bytes(read_length(st.size, off, size));
    char* dst = PyBytes_AS_STRING(out.ptr());
    const size_t want = static_cast<size_t>(PyBytes_GET_SIZE(out.ptr()));
    const size_t got = translate(path, [&] {
      py::gil_scoped_release nogil;
      return r->read(st.ino, off, want, dst);  // a directory or a symlink: EISDIR
    });
    shrink_bytes(out, got);
    return out;
  }

  size_t read_into(py::handle path, py::handle buffer, int64_t offset, py::handle stream) const {
    auto r = get();
    const std::string p = fs_path(path);
    const uint64_t off = checked_offset(offset, path);
    const uint32_t ino = translate(path, [&] { return r->lookup(p); });
    std::unique_ptr<DlpackTensor> capsule;  // alive until the read is done
    Target t;
    // __cuda_array_interface__ first: a CuPy array also offers the buffer protocol, which raises for
    // device memory.
    if (py::hasattr(buffer, "__cuda_array_interface__"))
      t = cuda_array_target(buffer, stream);
    else if (PyObject_CheckBuffer(buffer.ptr()))
      return read_into_host(*r, path, ino, off, buffer);
    else if (py::hasattr(buffer, "__dlpack__"))
      t = dlpack_target(buffer, stream, capsule);
    else
      throw py::type_error(
          std::string("read_into needs a writable buffer (bytearray, numpy array, memoryview), ") +
          "an object with __cuda_array_interface__ or one with __dlpack__, not " +
          Py_TYPE(buffer.ptr())->tp_name);
    return translate(path, [&] {
      py::gil_scoped_release nogil;
      return t.device ? r->read_device(ino, off, t.bytes, t.ptr, t.stream)
                      : r->read(ino, off, t.bytes, t.ptr);
    });
  }

  py::list read_batch(py::iterable requests) const {
    auto r = get();
    std::vector<ReadRequest> reqs;
    std::vector<py::object> paths;
    py::list out;
    for (py::handle item : requests) {
      py::tuple t = py::reinterpret_borrow<py::object>(item).cast<py::tuple>();
      if (t.size() != 3) throw py::value_error("read_batch takes (path, offset, size) tuples");
      py::object path = t[0];
      const std::string p = fs_path(path);
      const uint64_t off = checked_offset(t[1].cast<int64_t>(), path);
      const int64_t size = t[2].cast<int64_t>();
      const FileStat st = translate(path, [&] { return r->stat(p); });
      py::bytes b = new_bytes(read_length(st.size, off, size));
      ReadRequest q;
      q.ino = st.ino;
      q.offset = off;
      q.length = static_cast<size_t>(PyBytes_GET_SIZE(b.ptr()));
      q.dst = PyBytes_AS_STRING(b.ptr());
      reqs.push_back(std::move(q));
      paths.push_back(path);
      out.append(b);
    }
    {
      py::gil_scoped_release nogil;
      r->read_batch(reqs);
    }
    for (size_t i = 0; i < reqs.size(); ++i) {
      if (reqs[i].error) raise_os_error(reqs[i].error, reqs[i].message, paths[i]);
    }
    for (size_t i = 0; i < reqs.size(); ++i) {
      py::bytes b = out[i];
      out[i] = py::none();  // the list's reference: shrink_bytes needs the only one
      shrink_bytes(b, reqs[i].bytes);
      out[i] = b;
    }
    return out;
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
    std::string s = "<gdfs.Image " + std::string(py::repr(path_));
    if (!reader_) return s + " closed>";
    return s + " decoder=" + reader_->decoder_name() + " fetcher=" + reader_->fetcher_name() + ">";
  }

 private:
  size_t read_into_host(Reader& r, py::handle path, uint32_t ino, uint64_t off, py::handle buffer) const {
    Py_buffer view;
    if (PyObject_GetBuffer(buffer.ptr(), &view, PyBUF_STRIDES) != 0) throw py::error_already_set();
    struct Release {
      Py_buffer* v;
      ~Release() { PyBuffer_Release(v); }
    } release{&view};
    if (view.readonly) throw py::type_error("read_into needs a writable buffer (this one is read-only)");
    if (!PyBuffer_IsContiguous(&view, 'C')) throw py::value_error("read_into needs a C-contiguous buffer");
    void* dst = view.buf;
    const size_t len = static_cast<size_t>(view.len);
    return translate(path, [&] {
      py::gil_scoped_release nogil;
      return r.read(ino, off, len, dst);
    });
  }

  // In a child of fork() the Reader's threads are gone: its destructor would wait for them forever. The
  // child drops it without destroying it (the memory is the parent's copy; the child's exit frees it).
  void forget_if_forked() {
    if (reader_ && generation_ != g_fork_generation.load(std::memory_order_relaxed))
      new std::shared_ptr<Reader>(std::move(reader_));  // deliberately never deleted
  }

  py::object path_;
  std::string name_;
  std::shared_ptr<Reader> reader_;
  unsigned generation_ = 0;
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

  py::class_<Image>(m, "Image", R"(A gdfs image, opened and validated: Image(path_or_url, *, cache_size=0,
threads=0, decoder='auto', readahead=4 MiB, bases=None, trusted_key=None).

bases: where the base images of a layered image are, when not where the image says (each taken only
if it is exactly the recorded base).

trusted_key: a PEM file of Ed25519 public keys. The image is refused (PermissionError) unless it is
signed by one of them, and every page read is checked against its signed digest (EIO otherwise).

cache_size: bytes of decoded pages kept (0: an eighth of RAM, 64 MiB..4 GiB); threads: CPU decode
threads (0: one per core); decoder: 'auto' (the GPU when usable), 'cpu' or 'gpu'; readahead: bytes
decoded ahead of a sequential reader (0: off). Paths inside the image are like "/a/b"; symlinks are
not followed. One Image serves any number of threads; reads release the GIL. An Image opened before
fork() must be opened again in the child. Errors are OSError with the errno a file system would give.)")
      .def(py::init<py::object, uint64_t, unsigned, const std::string&, uint64_t, py::object, py::object>(),
           py::arg("path"), py::kw_only(), py::arg("cache_size") = 0, py::arg("threads") = 0,
           py::arg("decoder") = "auto", py::arg("readahead") = uint64_t{4} << 20,
           py::arg("bases") = py::none(), py::arg("trusted_key") = py::none())
      .def("lookup", &Image::lookup, py::arg("path"), "The inode number of `path`.")
      .def("stat", &Image::stat, py::arg("path"),
           "A StatResult (st_mode, st_size, st_mtime_ns, st_nlink, st_uid, st_gid, st_ino, st_mtime, "
           "st_rdev); "
           "symlinks are not followed.")
      .def("listdir", &Image::listdir, py::arg("path") = "/",
           "The names in directory `path`, in byte order (bytes for a bytes path, as os.listdir).")
      .def("_scandir", &Image::scandir, py::arg("path"), "[(name, st_mode)] of directory `path` (for walk).")
      .def("readlink", &Image::readlink, py::arg("path"), "The target of symlink `path` (EINVAL if not one).")
      .def("read_batch", &Image::read_batch, py::arg("requests"),
           "[(path, offset, size), ...] -> [bytes, ...] in one fetch and one decode batch (size -1: to the "
           "end). Raises OSError for the first request that failed.")
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
}
