// Where read_into and read_batch_into put bytes: a Python object that is host memory (the buffer
// protocol, a host DLPack tensor) or CUDA memory (__cuda_array_interface__, a CUDA DLPack tensor), held
// for as long as the read runs.
#pragma once
#include <pybind11/pybind11.h>

#include <cstddef>
#include <memory>

namespace gdfs::python {

namespace py = pybind11;

class BufferTarget {
 public:
  // `stream`: None, an int (a cudaStream_t's value), or a torch/cupy Stream; used for device memory
  // only. Throws TypeError for an object that is not writable memory of a kind above, ValueError for one
  // that is not C-contiguous.
  BufferTarget(py::handle buffer, py::handle stream);
  ~BufferTarget();
  BufferTarget(const BufferTarget&) = delete;
  BufferTarget& operator=(const BufferTarget&) = delete;

  void* ptr() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  bool device() const { return device_; }
  void* stream() const { return stream_; }

 private:
  struct Dlpack;
  void from_cuda_array(py::handle obj, py::handle stream);
  void from_dlpack(py::handle obj, py::handle stream);
  void from_buffer(py::handle obj);

  void* ptr_ = nullptr;
  size_t bytes_ = 0;
  bool device_ = false;
  void* stream_ = nullptr;          // device memory: a cudaStream_t (null: the legacy default stream)
  Py_buffer view_{};                // the buffer protocol's view, released at the end (a member, not
  bool have_view_ = false;          // allocated: read loops make one per call)
  std::unique_ptr<Dlpack> dlpack_;  // a consumed DLPack capsule, its deleter called at the end
};

}  // namespace gdfs::python
