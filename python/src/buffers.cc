#include "buffers.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gdfs::python {
namespace {

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

// Byte size of a C-contiguous array, or ValueError. `strides` in units of `unit` bytes (null: compact).
size_t contiguous_bytes(const std::vector<int64_t>& shape, const std::vector<int64_t>* strides,
                        size_t itemsize, int64_t unit, const char* what) {
  size_t n = itemsize;
  for (int64_t d : shape) {
    if (d < 0) throw py::value_error(std::string(what) + ": negative dimension");
    if (__builtin_mul_overflow(n, static_cast<size_t>(d), &n))
      throw py::value_error(std::string(what) + ": size overflows");
  }
  if (!strides || n == 0) return n;
  if (strides->size() != shape.size())
    throw py::value_error(std::string(what) + ": strides do not match shape");
  int64_t expect = static_cast<int64_t>(itemsize) / unit;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && (*strides)[i] != expect)
      throw py::value_error(std::string(what) + ": reads need a C-contiguous buffer");
    expect *= shape[i];
  }
  return n;
}

// The stream argument: None, an int (a cudaStream_t's value), or an object with `cuda_stream`
// (torch.cuda.Stream) or `ptr` (cupy.cuda.Stream).
void* stream_of(py::handle s) {
  if (s.is_none()) return nullptr;
  py::object v = py::reinterpret_borrow<py::object>(s);
  if (py::hasattr(v, "cuda_stream"))
    v = v.attr("cuda_stream");
  else if (py::hasattr(v, "ptr"))
    v = v.attr("ptr");
  return reinterpret_cast<void*>(v.cast<uintptr_t>());
}

// Whether `obj` has attribute `name` (an interned str), without making and dropping an AttributeError
// for the common "no" of a numpy array or a bytearray: a read loop asks once per call.
bool has_attr(py::handle obj, PyObject* name) {
  PyObject* value = nullptr;
#if PY_VERSION_HEX >= 0x030D0000
  const int found = PyObject_GetOptionalAttr(obj.ptr(), name, &value);
#else
  const int found = _PyObject_LookupAttr(obj.ptr(), name, &value);
#endif
  Py_XDECREF(value);
  if (found < 0) throw py::error_already_set();
  return found == 1;
}

PyObject* interned(const char* s) {
  PyObject* o = PyUnicode_InternFromString(s);  // kept for the life of the process
  if (!o) throw py::error_already_set();
  return o;
}

}  // namespace

// A consumed DLPack capsule: renamed "used_dltensor" as the protocol asks, and its deleter called once
// the read is done.
struct BufferTarget::Dlpack {
  explicit Dlpack(py::object c) : capsule(std::move(c)) {
    if (!PyCapsule_IsValid(capsule.ptr(), "dltensor"))
      throw py::type_error("__dlpack__() did not return a 'dltensor' capsule (already consumed?)");
    t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
    if (!t || PyCapsule_SetName(capsule.ptr(), "used_dltensor") != 0) throw py::error_already_set();
  }
  ~Dlpack() {
    if (t && t->deleter) t->deleter(t);  // with the GIL: producers' deleters may drop references
  }
  Dlpack(const Dlpack&) = delete;
  Dlpack& operator=(const Dlpack&) = delete;
  py::object capsule;
  DLManagedTensor* t = nullptr;
};

BufferTarget::BufferTarget(py::handle buffer, py::handle stream) {
  // __cuda_array_interface__ first: a CuPy array also offers the buffer protocol, which raises for
  // device memory.
  static PyObject* const cai = interned("__cuda_array_interface__");
  if (has_attr(buffer, cai))
    from_cuda_array(buffer, stream);
  else if (PyObject_CheckBuffer(buffer.ptr()))
    from_buffer(buffer);
  else if (py::hasattr(buffer, "__dlpack__"))
    from_dlpack(buffer, stream);
  else
    throw py::type_error(std::string("reads need a writable buffer (bytearray, numpy array, memoryview), ") +
                         "an object with __cuda_array_interface__ or one with __dlpack__, not " +
                         Py_TYPE(buffer.ptr())->tp_name);
}

BufferTarget::~BufferTarget() {
  if (have_view_) PyBuffer_Release(&view_);
}

void BufferTarget::from_buffer(py::handle obj) {
  if (PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_STRIDES | PyBUF_WRITABLE) != 0) {
    PyErr_Clear();
    throw py::type_error("reads need a writable buffer (this one is read-only)");
  }
  if (!PyBuffer_IsContiguous(&view_, 'C')) {
    PyBuffer_Release(&view_);  // a constructor that throws runs no destructor
    throw py::value_error("reads need a C-contiguous buffer");
  }
  have_view_ = true;
  ptr_ = view_.buf;
  bytes_ = static_cast<size_t>(view_.len);
}

// __cuda_array_interface__ (version 2 or 3): data, shape, typestr, strides, stream, mask.
void BufferTarget::from_cuda_array(py::handle obj, py::handle stream) {
  py::dict cai = obj.attr("__cuda_array_interface__").cast<py::dict>();
  if (cai.contains("mask") && !cai["mask"].is_none())
    throw py::value_error("__cuda_array_interface__ with a mask is not supported");
  py::tuple data = cai["data"].cast<py::tuple>();
  if (data.size() != 2)
    throw py::value_error("__cuda_array_interface__: 'data' must be (pointer, read_only)");
  if (data[1].cast<bool>())
    throw py::type_error("reads need a writable buffer (this CUDA array is read-only)");
  const std::string typestr = cai["typestr"].cast<std::string>();
  if (typestr.size() < 3) throw py::value_error("__cuda_array_interface__: bad typestr '" + typestr + "'");
  const size_t itemsize = std::stoul(typestr.substr(2));
  std::vector<int64_t> shape;
  for (py::handle d : cai["shape"].cast<py::tuple>()) shape.push_back(d.cast<int64_t>());
  std::vector<int64_t> strides;
  const bool strided = cai.contains("strides") && !cai["strides"].is_none();
  if (strided)
    for (py::handle d : cai["strides"].cast<py::tuple>()) strides.push_back(d.cast<int64_t>());
  device_ = true;
  bytes_ = contiguous_bytes(shape, strided ? &strides : nullptr, itemsize, 1, "__cuda_array_interface__");
  ptr_ = reinterpret_cast<void*>(data[0].cast<uintptr_t>());
  if (!stream.is_none())
    stream_ = stream_of(stream);
  else if (cai.contains("stream") && !cai["stream"].is_none())
    stream_ = stream_of(cai["stream"]);  // the producer's stream: the read is queued on it
}

// __dlpack__: host memory (CPU or CUDA pinned) or CUDA device memory; anything else is refused.
void BufferTarget::from_dlpack(py::handle obj, py::handle stream) {
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
  dlpack_ = std::make_unique<Dlpack>(capsule);
  const DLTensor& t = dlpack_->t->dl_tensor;
  type = t.device.device_type;
  if (type != kDLCPU && type != kDLCUDAHost && type != kDLCUDA && type != kDLCUDAManaged)
    throw py::type_error("reads take host or CUDA memory; this DLPack tensor is on device type " +
                         std::to_string(type));
  if (t.ndim < 0 || (t.ndim > 0 && !t.shape)) throw py::value_error("DLPack tensor: bad shape");
  const size_t bits = size_t{t.dtype.bits} * t.dtype.lanes;
  if (bits == 0 || bits % 8) throw py::value_error("DLPack tensor: elements are not whole bytes");
  std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
  std::vector<int64_t> strides;
  if (t.strides) strides.assign(t.strides, t.strides + t.ndim);
  bytes_ = contiguous_bytes(shape, t.strides ? &strides : nullptr, bits / 8, static_cast<int64_t>(bits / 8),
                            "DLPack tensor");
  ptr_ = static_cast<uint8_t*>(t.data) + t.byte_offset;
  device_ = type == kDLCUDA || type == kDLCUDAManaged;
  if (device_) stream_ = stream_of(stream);
}

}  // namespace gdfs::python
