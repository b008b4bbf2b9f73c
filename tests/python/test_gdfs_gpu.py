"""read_into CUDA memory (CuPy arrays, PyTorch CUDA tensors, their DLPack exports, and plain cudaMalloc
memory through ctypes and the CUDA runtime) and pinned host tensors, compared with the source bytes.
Skips without a usable CUDA device, and each provider without its library."""

import ctypes
import ctypes.util
import glob
import os

import pytest

from conftest import mkfs

gdfs = pytest.importorskip("gdfs")
np = pytest.importorskip("numpy")

try:
    import cupy
except ImportError:
    cupy = None
try:
    import torch
except ImportError:
    torch = None



def load_cudart():
    names = [ctypes.util.find_library("cudart")] + sorted(glob.glob("/usr/local/cuda/lib*/libcudart.so*"))
    for name in filter(None, names):
        try:
            rt = ctypes.CDLL(name)
        except OSError:
            continue
        count = ctypes.c_int(0)
        if rt.cudaGetDeviceCount(ctypes.byref(count)) == 0 and count.value > 0:
            return rt
    return None


cudart = load_cudart()
if cupy is None and torch is None and cudart is None:
    pytest.skip("no CUDA runtime with a device, and neither cupy nor torch", allow_module_level=True)


@pytest.fixture(scope="module")
def tree(tools, tmp_path_factory):
    """(source dir, image): a few files of several pages, tails and holes."""
    base = tmp_path_factory.mktemp("gpu")
    src = base / "src"
    src.mkdir()
    alphabet = np.frombuffer(b"gdfs pagewrt\n", np.uint8)
    rng = np.random.default_rng(7)
    alphabet[rng.integers(0, len(alphabet), 3 * 65536 + 1234)].tofile(src / "text")
    rng.integers(0, 256, 200000, dtype=np.uint8).tofile(src / "random")
    with open(src / "holes", "wb") as f:
        f.write(b"head" * 1000)
        f.seek(5 * 65536)
        f.write(b"tail" * 1000)
    image = base / "gpu.gdfs"
    mkfs(tools, src, image)
    return src, image


@pytest.fixture(scope="module")
def img(tree):
    with gdfs.Image(str(tree[1])) as image:
        ok, why = image.device_reads()
        if not ok:
            pytest.skip(f"no device reads here: {why}")
        yield image


def source(tree, name, offset=0, size=1 << 30):
    with open(os.path.join(tree[0], name), "rb") as f:
        f.seek(offset)
        return f.read(size)


CASES = [("text", 0, 3 * 65536 + 1234), ("text", 1000, 70000), ("random", 65536, 65536), ("holes", 10, 6 * 65536)]


@pytest.mark.skipif(cupy is None, reason="no cupy")
@pytest.mark.parametrize("name,offset,size", CASES)
def test_cupy(tree, img, name, offset, size):
    want = source(tree, name, offset, size)
    buf = cupy.full(size, 0xEE, dtype=cupy.uint8)
    assert img.read_into("/" + name, buf, offset) == len(want)
    assert cupy.asnumpy(buf[:len(want)]).tobytes() == want
    # int16 elements, on a stream of our own
    stream = cupy.cuda.Stream(non_blocking=True)
    i16 = cupy.zeros(len(want) // 2, dtype=cupy.int16)
    assert img.read_into("/" + name, i16, offset, stream=stream) == len(want) // 2 * 2
    assert cupy.asnumpy(i16).tobytes() == want[:len(want) // 2 * 2]
    with pytest.raises(ValueError, match="contiguous"):
        img.read_into("/" + name, i16[::2], offset)


@pytest.mark.skipif(torch is None, reason="no torch")
@pytest.mark.parametrize("name,offset,size", CASES)
def test_torch_cuda(tree, img, name, offset, size):
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    want = source(tree, name, offset, size)
    t = torch.zeros(size, dtype=torch.uint8, device="cuda")
    assert img.read_into("/" + name, t, offset) == len(want)  # __cuda_array_interface__
    assert t[:len(want)].cpu().numpy().tobytes() == want

    class OnlyDlpack:
        def __init__(self, inner):
            self.inner = inner

        def __dlpack__(self, stream=None):
            return self.inner.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.inner.__dlpack_device__()

    d = torch.zeros(size, dtype=torch.uint8, device="cuda")
    assert img.read_into("/" + name, OnlyDlpack(d), offset) == len(want)
    assert d[:len(want)].cpu().numpy().tobytes() == want
    pinned = torch.zeros(size, dtype=torch.uint8).pin_memory()  # host memory, through DLPack
    assert img.read_into("/" + name, pinned, offset) == len(want)
    assert pinned[:len(want)].numpy().tobytes() == want
    with pytest.raises(ValueError, match="contiguous"):
        img.read_into("/" + name, t.view(-1, 2)[:, 0], offset)


class DeviceBuffer:
    """cudaMalloc'ed memory exposed through __cuda_array_interface__ (no array library needed): `n` bytes
    shown, `guard` more allocated after them, which a read must leave alone."""

    def __init__(self, n, guard=0):
        self.ptr = ctypes.c_void_p()
        assert cudart.cudaMalloc(ctypes.byref(self.ptr), ctypes.c_size_t(n + guard)) == 0
        assert cudart.cudaMemset(self.ptr, 0xEE, ctypes.c_size_t(n + guard)) == 0
        self.n = n + guard
        self.__cuda_array_interface__ = {"version": 3, "shape": (n,), "typestr": "|u1", "strides": None,
                                         "data": (self.ptr.value, False), "stream": None}

    def host(self, n):
        out = ctypes.create_string_buffer(n)
        assert cudart.cudaMemcpy(out, self.ptr, ctypes.c_size_t(n), 2) == 0  # device to host
        return out.raw

    def __del__(self):
        cudart.cudaFree(self.ptr)


@pytest.mark.skipif(cudart is None, reason="no CUDA runtime with a device")
@pytest.mark.parametrize("name,offset,size", CASES)
def test_cuda_runtime_memory(tree, img, name, offset, size):
    want = source(tree, name, offset, size)
    buf = DeviceBuffer(size, guard=100)
    assert img.read_into("/" + name, buf, offset) == len(want)
    got = buf.host(size + 100)
    assert got[:len(want)] == want
    assert got[len(want):] == b"\xee" * (size + 100 - len(want))  # nothing written past the data


@pytest.mark.skipif(torch is None, reason="no torch")
def test_read_batch_into_cuda_and_host_buffers(tree, img):
    """One batch over every case, each into a different kind of buffer, on a torch stream; a missing
    path fails only its own entry."""
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    kinds = [lambda n: torch.full((n,), 0xEE, dtype=torch.uint8, device="cuda"),
             lambda n: np.full(n, 0xEE, np.uint8),
             lambda n: torch.full((n,), 0xEE, dtype=torch.uint8).pin_memory()]
    if cupy is not None:
        kinds.append(lambda n: cupy.full(n, 0xEE, dtype=cupy.uint8))
    cases = CASES * 2
    bufs = [kinds[i % len(kinds)](size) for i, (_, _, size) in enumerate(cases)]
    reqs = [("/" + name, offset, b) for (name, offset, _), b in zip(cases, bufs)]
    reqs.append(("/no-such-file", 0, torch.zeros(10, dtype=torch.uint8, device="cuda")))
    stream = torch.cuda.Stream()
    got = img.read_batch_into(reqs, stream=stream, return_exceptions=True)
    assert isinstance(got[-1], FileNotFoundError)
    for (name, offset, size), b, n in zip(cases, bufs, got):
        want = source(tree, name, offset, size)
        assert n == len(want)
        host = b.cpu().numpy() if torch.is_tensor(b) else cupy.asnumpy(b) if cupy is not None and \
            isinstance(b, cupy.ndarray) else b
        assert host[:n].tobytes() == want, (name, offset, type(b))
        assert (host[n:] == 0xEE).all()


@pytest.mark.skipif(torch is None, reason="no torch")
def test_image_dataset_on_the_device_and_pinned(tree):
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    from gdfs.torch import ImageDataset
    names = sorted(os.listdir(tree[0]))
    for kwargs in ({"device": "cuda"}, {"pin_memory": True}):
        ds = ImageDataset(str(tree[1]), **kwargs)
        assert sorted(f.lstrip("/") for f in ds.files) == names
        batch = ds.__getitems__(list(range(len(ds))))
        singles = [ds[i] for i in range(len(ds))]
        for f, t, s in zip(ds.files, batch, singles):
            want = source(tree, f.lstrip("/"))
            assert t.is_cuda == ("device" in kwargs) and s.is_cuda == t.is_cuda
            if "pin_memory" in kwargs:
                assert t.is_pinned() and s.is_pinned()
            assert t.cpu().numpy().tobytes() == want and s.cpu().numpy().tobytes() == want
