"""The gdfs Python module without a GPU: the edge-case tree read through it and compared with its
source; read, read_into (bytearray, memoryview, numpy, DLPack and __cuda_array_interface__ objects),
read_batch; errors as OSError with the right errno and filename; a damaged page; 8 threads reading
random ranges; the GIL released during reads; close, fork and the counters."""

import ctypes
import errno
import os
import pathlib
import random
import signal
import stat
import subprocess
import sys
import threading
import time

import pytest

from conftest import damage_page, mkfs

gdfs = pytest.importorskip("gdfs")
np = pytest.importorskip("numpy")

BIG_LIMIT = 64 << 20  # files above this (the 5 GiB sparse one) are compared by ranges


def source_entries(src):
    """{"/rel/path": os.stat_result} of every entry under src (symlinks not followed)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(src):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            out["/" + os.path.relpath(full, src)] = os.lstat(full)
    return out


def pread(path, offset, size):
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read(size)


# ---- the edge-case tree ------------------------------------------------------------------------------


def test_metadata_matches_the_source(edge, img):
    src, _ = edge
    entries = source_entries(src)
    assert len(entries) > 2000
    for rel, st in entries.items():
        g = img.stat(rel, follow_symlinks=False)
        assert g.st_mode == st.st_mode, rel
        assert g.st_uid == st.st_uid and g.st_gid == st.st_gid, rel
        assert g.st_mtime_ns == st.st_mtime_ns, rel
        assert abs(g.st_mtime - st.st_mtime) < 1e-6, rel
        assert g.st_ino == img.lookup(rel, follow_symlinks=False)
        if not stat.S_ISDIR(st.st_mode):
            assert g.st_nlink == st.st_nlink, rel
        if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
            assert g.st_size == st.st_size, rel
        if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
            assert g.st_rdev == st.st_rdev, rel
        if stat.S_ISLNK(st.st_mode):
            assert img.readlink(rel) == os.readlink(os.path.join(src, rel[1:]))
        if stat.S_ISDIR(st.st_mode):
            want = sorted(os.listdir(os.path.join(src, rel[1:])), key=os.fsencode)
            assert img.listdir(rel) == want, rel
        if not stat.S_ISLNK(st.st_mode):  # xattrs, as os gives them
            host = os.path.join(src, rel[1:])
            names = img.listxattr(rel, follow_symlinks=False)
            assert sorted(names) == sorted(os.listxattr(host, follow_symlinks=False)), rel
            for name in names:
                assert img.getxattr(rel, name, follow_symlinks=False) == os.getxattr(host, name), (rel, name)
    xattrs = {rel: img.listxattr(rel) for rel in entries if not stat.S_ISLNK(entries[rel].st_mode)}
    with_xattrs = [rel for rel, names in xattrs.items() if names]
    if with_xattrs:  # where the test filesystem took user xattrs
        rel, name = with_xattrs[0], xattrs[with_xattrs[0]][0]
        assert img.getxattr(rel, name.encode()) == img.getxattr(rel, name)  # a bytes name, as os takes
    with pytest.raises(OSError) as e:
        img.getxattr("/page", "user.not-there")
    assert e.value.errno == errno.ENODATA and e.value.filename == "/page"
    assert img.listdir("/") == sorted(os.listdir(src), key=os.fsencode)
    assert img.listdir() == img.listdir("/")
    # Names that are not UTF-8 round-trip as os gives them (surrogateescape), or as bytes.
    odd = [n for n in img.listdir("/names") if "\udcff" in n]
    assert odd and img.read("/names/" + odd[0]) == b"3"
    assert b"\xff\xfe high bytes" in img.listdir(b"/names")
    assert img.readlink(b"/link-rel") == b"page"


def test_paths_resolve_as_the_kernel_resolves_them(tools, tmp_path):
    """Symlinks on the way are followed; one at the end by read, listdir, open and stat (not lstat-like
    calls); '..' is physical; a trailing '/' needs a directory. Checked against the OS on a tree whose
    links all stay inside it, so that the host and the image resolve each path the same way."""
    src = tmp_path / "src"
    (src / "real" / "deep").mkdir(parents=True)
    (src / "real" / "deep" / "f").write_bytes(b"data")
    (src / "real" / "g").write_bytes(b"gee")
    links = {"dlink": "real", "chain": "dlink", "rel": "real/deep/f", "up": "real/deep/../g",
             "real/deep/back": "../../dlink/g", "real/deep/dot": ".", "loop1": "loop2", "loop2": "loop1",
             "dangling": "nope", "through_file": "real/g/x"}
    for name, target in links.items():
        os.symlink(target, src / name)
    image = tmp_path / "links.gdfs"
    mkfs(tools, src, image)
    paths = ["/dlink/deep/f", "/chain/deep/f", "/rel", "/up", "/real/deep/back", "/real/deep/dot/dot/f",
             "/dlink/deep/../g", "/chain/", "/rel/", "/real/g/", "/loop1", "/loop1/x", "/dangling", "/through_file",
             "/real/deep/f/x", "/dlink", "/chain"]
    with gdfs.Image(image) as img:
        for p in paths:
            host = os.path.join(src, p[1:])  # a trailing "/" kept
            for follow in (True, False):
                try:
                    want = os.stat(host, follow_symlinks=follow)
                except OSError as e:
                    with pytest.raises(OSError) as got:
                        img.stat(p, follow_symlinks=follow)
                    assert got.value.errno == e.errno, (p, follow, got.value)
                    continue
                st = img.stat(p, follow_symlinks=follow)
                assert st.st_mode == want.st_mode, (p, follow)
                assert stat.S_ISDIR(st.st_mode) or st.st_size == want.st_size, (p, follow)
            if os.path.isfile(host):
                assert img.read(p) == open(host, "rb").read() and img.open(p).read() == img.read(p), p
            if os.path.isdir(host):
                assert img.listdir(p) == sorted(os.listdir(host)), p
        for call in (img.stat, img.lookup, img.listdir, img.read, img.open):  # as os.stat(""): not the root
            with pytest.raises(FileNotFoundError):
                call("")
        assert img.readlink("/chain") == "dlink" and img.lookup("/chain") == img.lookup("/real")
        assert img.lookup("/chain", follow_symlinks=False) != img.lookup("/real")
        with pytest.raises(OSError) as e:
            img.read("/loop1")
        assert e.value.errno == errno.ELOOP


def test_contents_match_the_source(edge, img):
    src, _ = edge
    files = 0
    for rel, st in source_entries(src).items():
        if not stat.S_ISREG(st.st_mode):
            continue
        path = os.path.join(src, rel[1:])
        if st.st_size <= BIG_LIMIT:
            with open(path, "rb") as f:
                assert img.read(rel) == f.read(), rel
            files += 1
        else:  # the 5 GiB sparse file: around its data (one run straddles 4 GiB) and in its holes
            for off in (0, 1 << 20, (4 << 30) - 5, (4 << 30) + 60000, (5 << 30) - 1000):
                assert img.read(rel, off, 200000) == pread(path, off, 200000), (rel, off)
    assert files > 2000


def test_walk_is_os_walk_of_the_source(edge, img):
    src, _ = edge
    want = {}
    for dirpath, dirnames, filenames in os.walk(src):
        rel = "/" + os.path.relpath(dirpath, src) if dirpath != str(src) else "/"
        want[rel] = (sorted(dirnames, key=os.fsencode), sorted(filenames, key=os.fsencode))
    got = {}
    order = []
    for dirpath, dirnames, filenames in img.walk():
        got[dirpath] = (dirnames, filenames)
        order.append(dirpath)
    assert got == want
    assert order[0] == "/"
    # Top-down: parents first; pruning dirnames in place skips those subtrees.
    assert all(order.index(os.path.dirname(p)) < order.index(p) for p in order if p != "/")
    pruned = []
    for dirpath, dirnames, _ in img.walk("/"):
        pruned.append(dirpath)
        if dirpath == "/":
            dirnames.remove("deep")
    assert not any(p.startswith("/deep") for p in pruned) and "/sub" in pruned
    # Bottom-up: children first.
    up = [d for d, _, _ in img.walk("/deep", topdown=False)]
    assert up[0].endswith("/d39") and up[-1] == "/deep" and len(up) == 41
    assert [d for d, _, _ in img.walk("sub/")] == ["/sub"]
    assert [d for d, _, _ in img.walk(b"/sub")] == [b"/sub"]
    assert [d for d, _, _ in img.walk(pathlib.PurePosixPath("/sub"))] == ["/sub"]  # a path object, as os.walk
    errors = []
    assert list(img.walk("/no-such-dir", onerror=errors.append)) == []
    assert len(errors) == 1 and errors[0].errno == errno.ENOENT


# ---- read and read_into ------------------------------------------------------------------------------


def test_read_offsets_and_sizes(edge, img):
    src, _ = edge
    whole = pread(os.path.join(src, "pages+tail"), 0, 1 << 30)
    size = len(whole)
    for off, n in [(0, -1), (0, 10), (65530, 20), (size - 5, 100), (size, 10), (size + 100, -1), (7, 0)]:
        want = whole[off:] if n < 0 else whole[off:off + n]
        assert img.read("/pages+tail", off, n) == want, (off, n)
    assert img.read("/pages+tail", size=3) == whole[:3]
    assert img.read("/empty") == b""
    with pytest.raises(OSError) as e:
        img.read("/pages+tail", -1)
    assert e.value.errno == errno.EINVAL


def test_read_into_buffers(edge, img):
    src, _ = edge
    whole = pread(os.path.join(src, "page+1"), 0, 1 << 30)  # 65537 bytes
    b = bytearray(1000)
    assert img.read_into("/page+1", b, 100) == 1000 and bytes(b) == whole[100:1100]
    m = memoryview(bytearray(5000))
    assert img.read_into("/page+1", m[1000:3000], 65000) == 537
    assert bytes(m[1000:1537]) == whole[65000:] and bytes(m[1537:3000]) == bytes(1463)
    u8 = np.zeros(70000, np.uint8)
    assert img.read_into("/page+1", u8) == 65537
    assert u8[:65537].tobytes() == whole and not u8[65537:].any()
    i16 = np.zeros((10, 50), np.int16)  # 2-D, C-contiguous: 1000 bytes
    assert img.read_into("/page+1", i16, offset=3) == 1000
    assert i16.tobytes() == whole[3:1003]
    assert img.read_into("/page+1", np.zeros(0, np.uint8)) == 0
    assert img.read_into("/page+1", bytearray(10), 1 << 20) == 0  # past the end


def test_read_into_refuses_what_it_cannot_fill(img):
    a = np.zeros(100, np.int16)
    with pytest.raises(ValueError, match="contiguous"):
        img.read_into("/page", a[::2])
    with pytest.raises(ValueError, match="contiguous"):
        img.read_into("/page", np.zeros((10, 10), np.uint8, order="F"))
    with pytest.raises(TypeError, match="writable"):
        img.read_into("/page", b"read-only bytes")
    ro = np.zeros(10, np.uint8)
    ro.flags.writeable = False
    with pytest.raises(TypeError, match="writable"):
        img.read_into("/page", ro)
    with pytest.raises(TypeError):
        img.read_into("/page", 12345)
    assert not a.any()


class OnlyDlpack:
    """Exposes another object's DLPack export and nothing else (no buffer protocol)."""

    def __init__(self, inner):
        self.inner = inner

    def __dlpack__(self, stream=None):
        return self.inner.__dlpack__() if stream is None else self.inner.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.inner.__dlpack_device__()


@pytest.mark.skipif(not hasattr(np.ndarray, "__dlpack__"), reason="numpy without DLPack export")
def test_read_into_host_dlpack(edge, img):
    src, _ = edge
    a = np.zeros(3000, np.int16)
    refs = sys.getrefcount(a)
    assert img.read_into("/big", OnlyDlpack(a), 77) == 6000
    assert a.tobytes() == pread(os.path.join(src, "big"), 77, 6000)
    assert sys.getrefcount(a) == refs  # the capsule was consumed and its deleter called
    with pytest.raises(ValueError, match="contiguous"):
        img.read_into("/big", OnlyDlpack(np.zeros((4, 4), np.uint8)[:, ::2]))


# A DLPack capsule made by hand (ctypes), to test device-type, stride and ownership handling without a
# producer library. The struct layout is the DLPack ABI.
class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


class FakeDlpack:
    """A 1-D tensor over host memory `backing` that says it lives on `device_type` (2: CUDA)."""

    def __init__(self, backing, device_type=2, strides=None):
        self.backing = backing
        self.device_type = device_type
        self.deleted = 0
        self.streams = []
        n = len(backing) // 2
        self.shape = (ctypes.c_int64 * 1)(n)
        self.strides = (ctypes.c_int64 * 1)(*strides) if strides else None
        self.deleter = DELETER(self._delete)

    def _delete(self, _):
        self.deleted += 1

    def __dlpack_device__(self):
        return (self.device_type, 0)

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        self.managed = DLManagedTensor()
        t = self.managed.dl_tensor
        t.data = ctypes.addressof(ctypes.c_char.from_buffer(self.backing))
        t.device = DLDevice(self.device_type, 0)
        t.ndim = 1
        t.dtype = DLDataType(0, 16, 1)  # int16
        t.shape = self.shape
        t.strides = self.strides
        self.managed.deleter = self.deleter
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self.managed), b"dltensor", None)


class FakeCudaArray:
    """__cuda_array_interface__ over host memory (the call must fail before touching it without a device)."""

    def __init__(self, array, readonly=False, strides=None, mask=None, stream=None):
        self.array = array
        self.__cuda_array_interface__ = {
            "version": 3, "shape": array.shape, "typestr": array.dtype.str, "strides": strides,
            "data": (array.ctypes.data, readonly), "mask": mask, "stream": stream}


def no_device(img):
    ok, why = img.device_reads()
    if ok:
        pytest.skip(f"a CUDA device is usable here ({why}): test_gdfs_gpu.py covers device reads")
    return why


def test_device_buffers_without_a_device_are_enotsup(img):
    why = no_device(img)
    assert why
    a = np.zeros(1000, np.uint8)
    with pytest.raises(OSError) as e:
        img.read_into("/page", FakeCudaArray(a))
    assert e.value.errno == errno.ENOTSUP
    assert "not supported here" in str(e.value) and e.value.filename == "/page"
    with pytest.raises(OSError) as e:
        img.read_into("/page", FakeCudaArray(a, stream=1))
    assert e.value.errno == errno.ENOTSUP
    fake = FakeDlpack(bytearray(2000))
    with pytest.raises(OSError) as e:
        img.read_into("/page", fake)
    assert e.value.errno == errno.ENOTSUP
    assert fake.deleted == 1 and fake.streams == [1]  # consumed once, asked for the default stream
    assert not a.any() and not any(fake.backing)  # nothing was written to the host memory


class CupyLike(bytearray):
    """Device memory that, like a CuPy array, also offers the buffer protocol: __cuda_array_interface__
    must win (CuPy's buffer export raises for device memory; this one would hand over host bytes)."""

    @property
    def __cuda_array_interface__(self):
        return {"version": 3, "shape": (len(self),), "typestr": "|u1", "strides": None,
                "data": (0x1000, False), "stream": None}


def test_cuda_array_interface_wins_over_the_buffer_protocol(img):
    no_device(img)
    buf = CupyLike(1000)
    with pytest.raises(OSError) as e:
        img.read_into("/page", buf)
    assert e.value.errno == errno.ENOTSUP
    assert not any(buf)


def test_device_buffers_are_checked_before_reading(img):
    a = np.zeros(100, np.int16)
    with pytest.raises(TypeError, match="writable"):
        img.read_into("/page", FakeCudaArray(a, readonly=True))
    with pytest.raises(ValueError, match="contiguous"):
        img.read_into("/page", FakeCudaArray(a, strides=(4,)))
    with pytest.raises(ValueError, match="mask"):
        img.read_into("/page", FakeCudaArray(a, mask=object()))
    strided = FakeDlpack(bytearray(200), strides=(2,))
    with pytest.raises(ValueError, match="contiguous"):
        img.read_into("/page", strided)
    assert strided.deleted == 1
    opencl = FakeDlpack(bytearray(200), device_type=4)
    with pytest.raises(TypeError, match="device type 4"):
        img.read_into("/page", opencl)
    assert opencl.deleted == 1
    assert not a.any()


def test_read_batch(edge, img):
    src, _ = edge
    reqs = [("/big", 0, 100), ("/page+1", 65530, -1), ("/tiny/f7", 0, -1), ("/big", (5 << 20) + 70, 1000),
            ("/random", 150000, 100000), ("/empty", 0, 10), ("/sparse-5g", (4 << 30) + 90, 300)]
    got = img.read_batch(reqs)
    assert len(got) == len(reqs)
    for (path, off, n), data in zip(reqs, got):
        assert data == pread(os.path.join(src, path[1:]), off, n if n >= 0 else 1 << 30), (path, off, n)
    assert img.read_batch([]) == []
    with pytest.raises(IsADirectoryError) as e:
        img.read_batch([("/big", 0, 10), ("/sub", 0, 10)])
    assert e.value.filename == "/sub"
    with pytest.raises(FileNotFoundError) as e:
        img.read_batch([("/big", 0, 10), ("/nope", 0, 10)])
    assert e.value.filename == "/nope"


@pytest.mark.parametrize("once", [False, True])
def test_read_batch_into_once_reads_the_same_bytes(edge, img, once):
    src, _ = edge
    reqs = [("/big", 0, 3 << 16), ("/big", 65536, 2 << 16), ("/page+1", 0, 65537), ("/random", 150000, 100000),
            ("/sparse-5g", (4 << 30) - 65536, 3 << 16), ("/tiny/f7", 0, 100)]
    bufs = [bytearray(b"\xee" * n) for _, _, n in reqs]
    counts = img.read_batch_into([(p, off, b) for (p, off, _), b in zip(reqs, bufs)], once=once)
    for (path, off, n), buf, count in zip(reqs, bufs, counts):
        want = pread(os.path.join(src, path[1:]), off, n)
        assert count == len(want)
        assert bytes(buf[:count]) == want, (path, off, once)


# ---- errors ------------------------------------------------------------------------------------------


def test_errors_carry_errno_filename_and_message(edge, img):
    image = str(edge[1])
    cases = [
        (lambda: img.stat("/nope"), errno.ENOENT, FileNotFoundError, "/nope"),
        (lambda: img.read("/sub/nope"), errno.ENOENT, FileNotFoundError, "/sub/nope"),
        (lambda: img.listdir("/page"), errno.ENOTDIR, NotADirectoryError, "/page"),
        (lambda: img.stat("/page/below"), errno.ENOTDIR, NotADirectoryError, "/page/below"),
        (lambda: img.read("/sub"), errno.EISDIR, IsADirectoryError, "/sub"),
        (lambda: img.read_into("/sub", bytearray(10)), errno.EISDIR, IsADirectoryError, "/sub"),
        (lambda: img.readlink("/page"), errno.EINVAL, OSError, "/page"),
    ]
    for call, code, kind, filename in cases:
        with pytest.raises(kind) as e:
            call()
        assert e.value.errno == code, filename
        assert e.value.filename == filename
        assert image in e.value.strerror, e.value.strerror
    with pytest.raises(ValueError, match="null"):
        img.stat("/pa\0ge")


def test_errors_raised_while_another_is_handled_keep_their_type(edge, img):
    # pybind11 turned them into RuntimeError ("MISMATCH of original and normalized active exception
    # types") in any `except` block that called the image again.
    try:
        img.stat("/nope")
    except FileNotFoundError:
        for call in (lambda: img.stat("/nope2"), lambda: img.read("/nope2"), lambda: img.listdir("/page"),
                     lambda: img.read_batch([("/nope3", 0, 1)]), lambda: gdfs.Image(str(edge[1]) + ".missing")):
            with pytest.raises(OSError) as e:
                call()
            assert type(e.value) in (FileNotFoundError, NotADirectoryError), repr(e.value)


def test_open_errors(edge, tmp_path):
    src, image = edge
    with pytest.raises(FileNotFoundError) as e:
        gdfs.Image(str(tmp_path / "missing.gdfs"))
    assert e.value.filename == str(tmp_path / "missing.gdfs")
    with pytest.raises(IsADirectoryError):
        gdfs.Image(str(src))
    with pytest.raises(OSError) as e:
        gdfs.Image(os.path.join(src, "page"))  # a file, not an image
    assert e.value.errno == errno.EIO
    with pytest.raises(ValueError, match="decoder"):
        gdfs.Image(str(image), decoder="fpga")
    # An empty path (an unset variable) is a mistake, not "not given": never an image opened unchecked.
    for kw in ({"trusted_key": ""}, {"bases": [""]}, {"cache_dir": ""}, {"ca_file": ""}):
        with pytest.raises(ValueError, match="is empty"):
            gdfs.Image(str(image), **kw)
    for bad in (0, -1, float("nan"), float("inf"), 10**6):  # a timeout becomes a deadline: never UB
        with pytest.raises(ValueError, match="remote_timeout"):
            gdfs.Image(str(image), remote_timeout=bad)
    with pytest.raises(ValueError, match="threads must be at most 4096"):  # never an abort
        gdfs.Image(str(image), threads=10**6)
    for kw in ({"cache_size": -1}, {"threads": -1}, {"readahead": -5}, {"disk_cache_size": 2**64}):
        with pytest.raises(ValueError, match=next(iter(kw))):
            gdfs.Image(str(image), **kw)
    for kw in ({"cache_size": 1.5}, {"threads": True}):
        with pytest.raises(TypeError, match=next(iter(kw)) + " must be an int"):
            gdfs.Image(str(image), **kw)
    with gdfs.Image(image, decoder="cpu", threads=2, cache_size=8 << 20, readahead=0) as i:  # a PathLike
        s = i.stats()
        assert s["decoder"] == "cpu" and s["threads"] == 2 and s["cache_capacity"] == 8 << 20


def test_damaged_page_is_eio_and_other_files_still_read(edge, tools, tmp_path):
    src, image = edge
    bad = tmp_path / "bad.gdfs"
    damage_page(tools, image, bad, "/pages+tail", 1)
    whole = pread(os.path.join(src, "pages+tail"), 0, 1 << 30)
    with gdfs.Image(str(bad)) as img:
        for call in (lambda: img.read("/pages+tail"), lambda: img.read("/pages+tail", 65536 + 10, 5),
                     lambda: img.read_into("/pages+tail", np.zeros(70000, np.uint8), 30000),
                     lambda: img.read_batch([("/page", 0, -1), ("/pages+tail", 0, -1)])):
            with pytest.raises(OSError) as e:
                call()
            assert e.value.errno == errno.EIO
            assert e.value.filename == "/pages+tail"
            assert "page 1" in e.value.strerror and "bad.gdfs" in e.value.strerror, e.value.strerror
        assert img.read("/pages+tail", 0, 65536) == whole[:65536]
        assert img.read("/pages+tail", 2 * 65536) == whole[2 * 65536:]
        assert img.read("/big", 0, 100000) == pread(os.path.join(src, "big"), 0, 100000)
        assert img.stats()["bad_pages"] >= 1


def test_trusted_key_refuses_other_images_and_damaged_pages(edge, tools, tmp_path):
    src, _ = edge
    for name in ("a", "b"):
        subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(tmp_path / f"{name}.pem")],
                       check=True)
        subprocess.run(["openssl", "pkey", "-in", str(tmp_path / f"{name}.pem"), "-pubout", "-out",
                        str(tmp_path / f"{name}.pub")], check=True)
    signed = tmp_path / "signed.gdfs"
    mkfs(tools, src, signed, "--sign", str(tmp_path / "a.pem"))
    whole = pread(os.path.join(src, "pages+tail"), 0, 1 << 30)
    with gdfs.Image(signed, trusted_key=tmp_path / "a.pub") as img:
        assert img.read("/pages+tail") == whole
    with pytest.raises(PermissionError, match="not trusted"):
        gdfs.Image(signed, trusted_key=str(tmp_path / "b.pub"))
    with pytest.raises(PermissionError, match="not signed"):
        gdfs.Image(edge[1], trusted_key=str(tmp_path / "a.pub"))
    bad = tmp_path / "bad.gdfs"
    damage_page(tools, signed, bad, "/pages+tail", 1)
    with gdfs.Image(bad, trusted_key=str(tmp_path / "a.pub")) as img:
        with pytest.raises(OSError) as e:
            img.read("/pages+tail")
        assert e.value.errno == errno.EIO
        assert "signed digest" in e.value.strerror, e.value.strerror
        assert img.read("/pages+tail", 0, 65536) == whole[:65536]


# ---- threads -----------------------------------------------------------------------------------------


def test_eight_threads_read_random_ranges(edge):
    src, image = edge
    truth = {p: pread(os.path.join(src, p[1:]), 0, 1 << 30) for p in ("/big", "/random", "/pages+tail")}
    failures = []
    with gdfs.Image(str(image), cache_size=1 << 20) as img:  # a small cache: misses and evictions
        def reader(seed):
            rng = random.Random(seed)
            try:
                for _ in range(150):
                    path = rng.choice(list(truth))
                    data = truth[path]
                    off = rng.randrange(len(data) + 10)
                    n = rng.choice([rng.randrange(5000), rng.randrange(300000)])
                    if rng.random() < 0.5:
                        got = img.read(path, off, n)
                    else:
                        buf = np.zeros(n, np.uint8)
                        got = buf[:img.read_into(path, buf, off)].tobytes()
                    if got != data[off:off + n]:
                        failures.append((path, off, n))
            except Exception as e:  # noqa: BLE001 -- reported below
                failures.append(repr(e))

        threads = [threading.Thread(target=reader, args=(t,)) for t in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert failures == []
        assert img.stats()["reads"] >= 8 * 150


def test_reads_release_the_gil(tools, tmp_path):
    # One large cold read decoded by one thread. Another Python thread, woken just before the call,
    # runs at once if the call released the GIL; were it held, that thread could only run after the
    # call returned.
    alphabet = np.frombuffer(b"gdfs pagewrt\n", np.uint8)
    text = alphabet[np.random.default_rng(3).integers(0, len(alphabet), 64 << 20)]  # compressible
    (tmp_path / "src").mkdir()
    text.tofile(tmp_path / "src" / "large")
    mkfs(tools, tmp_path / "src", tmp_path / "large.gdfs")
    with gdfs.Image(str(tmp_path / "large.gdfs"), threads=1, cache_size=1 << 20, readahead=0) as img:
        runs = []
        for _ in range(5):
            go = threading.Event()
            woke = []
            t = threading.Thread(target=lambda: (go.wait(), woke.append(time.perf_counter())))
            t.start()
            start = time.perf_counter()
            go.set()
            data = img.read("/large")
            end = time.perf_counter()
            t.join()
            assert len(data) == 64 << 20
            runs.append((woke[0] - start, end - start))
            if woke[0] - start < (end - start) / 2:
                break
        assert any(w < d / 2 for w, d in runs), runs


# ---- the object --------------------------------------------------------------------------------------


def test_close_context_manager_repr_and_counters(edge):
    image = str(edge[1])
    with gdfs.Image(image) as img:
        assert "gdfs.Image" in repr(img) and "decoder=" in repr(img)
        assert img.decoder in ("cpu", "gpu") and img.fetcher and not img.closed
        img.read("/big", 0, 1000)
        s = img.stats()
        assert s["reads"] >= 1 and s["bytes_served"] >= 1000
        assert {"cache_hits", "cache_misses", "pages_decoded_cpu", "fetch_ops"} <= set(s)
        assert "st_mode=0o100644" in repr(img.stat("/big"))
    assert img.closed and "closed" in repr(img)
    with pytest.raises(ValueError, match="closed"):
        img.read("/big")
    img.close()  # twice is fine


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_an_image_opened_before_fork_is_opened_again_in_the_child(edge):
    image = str(edge[1])
    head = pread(os.path.join(edge[0], "big"), 0, 10)
    img = gdfs.Image(image, cache_size=1 << 20)
    assert img.read("/one") == b"x"  # the parent's reader has threads and a warm cache
    pid = os.fork()
    if pid == 0:  # the child: the parent's reader has no threads here
        status = 1
        try:
            signal.alarm(60)  # a hang (waiting for the parent's threads) fails instead of blocking the test
            ok = img.read("/one") == b"x" and img.stats()["reads"] == 1  # a fresh reader: its own counters
            ok = ok and img.read_batch([("/big", 0, 10)])[0] == head
            img.close()  # closes the child's reader; the parent's is dropped without waiting
            status = 0 if ok and img.closed else 3
        finally:
            os._exit(status)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert img.read("/one") == b"x"  # the parent's image is untouched
    assert img.stats()["reads"] == 2
    img.close()
