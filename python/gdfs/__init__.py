"""Read gdfs images (compressed read-only filesystem images) without mounting them.

    import gdfs
    with gdfs.Image("tree.gdfs") as img:
        img.listdir("/")                      # ['a', 'b', ...]
        st = img.stat("/a/x.bin")             # st_mode, st_size, st_mtime_ns, ...
        data = img.read("/a/x.bin", 0, 4096)  # bytes
        buf = numpy.empty(st.st_size, numpy.uint8)
        img.read_into("/a/x.bin", buf)        # any writable buffer, or CUDA memory (CuPy, torch)
        parts = img.read_batch([("/a/x.bin", 0, 100), ("/b", 5, -1)])
        with img.open("/a/table.npy") as f:   # a binary file object (seek, tell, readinto, ...)
            table = numpy.load(f)
        for dirpath, dirnames, filenames in img.walk():
            ...

Also: fsspec's "gdfs" protocol (gdfs.fs.GdfsFileSystem: pandas, pyarrow, xarray, zarr read files inside
images, local or remote), and gdfs.torch (a PyTorch Dataset that data loader workers can share).
An Image survives fork() and pickling: a child or another process opens it again on first use.

Errors are OSError with the errno a file system would give (FileNotFoundError, IsADirectoryError,
NotADirectoryError, EINVAL, EIO for a page that fails its checksums, ENOTSUP for device reads where no
CUDA device is usable), the message naming the image, path, inode and page.
"""

import json as _json
import os as _os
import posixpath as _posixpath
import stat as _stat

from ._file import ImageFile
from ._file import open_file as _open_file
from ._gdfs import Image, StatResult, __version__

__all__ = ["Image", "ImageFile", "StatResult", "__version__"]


def _walk(self, top="/", topdown=True, onerror=None):
    """Like os.walk over the image: yields (dirpath, dirnames, filenames) for every directory under
    `top` (default "/"), dirpath like "/" and "/a/b" (bytes when `top` is bytes). Top-down by default,
    so dirnames may be pruned in place; topdown=False yields children first. Symlinks are never
    followed: they are listed in filenames. Errors listing a directory go to `onerror` (an OSError) if
    given, else are ignored, as in os.walk."""
    top = _os.fspath(top)  # a path object too, as os.walk takes
    sep = b"/" if isinstance(top, bytes) else "/"
    top = _posixpath.normpath(sep + top.lstrip(sep))

    def entries(path):
        try:
            return self._scandir(path)
        except OSError as e:
            if onerror is not None:
                onerror(e)
            return None

    def join(parent, name):
        return parent + name if parent == sep else parent + sep + name

    def split(ents):
        dirs = [name for name, mode in ents if _stat.S_ISDIR(mode)]
        files = [name for name, mode in ents if not _stat.S_ISDIR(mode)]
        return dirs, files

    if topdown:
        stack = [top]  # explicit: a deep tree cannot exhaust the recursion limit
        while stack:
            path = stack.pop()
            ents = entries(path)
            if ents is None:
                continue
            dirs, files = split(ents)
            yield path, dirs, files
            stack.extend(join(path, d) for d in reversed(dirs))
        return
    # Bottom-up: each directory after everything below it.
    stack = [(top, None)]
    while stack:
        path, listed = stack.pop()
        if listed is None:
            ents = entries(path)
            if ents is None:
                continue
            dirs, files = split(ents)
            stack.append((path, (dirs, files)))
            stack.extend((join(path, d), None) for d in reversed(dirs))
        else:
            yield path, listed[0], listed[1]


def _stats(self):
    """The reader's counters (reads, bytes_served, cache_hits, cache_misses, pages_decoded_cpu, ...)
    as a dict."""
    return _json.loads(self.stats_json())


def _open(self, path, mode="rb", buffering=-1, encoding=None, errors=None, newline=None):
    """A file object over regular file `path` (symlinks followed), as the built-in open() gives:
    mode 'rb' (default) -> a buffered binary file (io.BufferedIOBase), 'r'/'rt' -> io.TextIOWrapper
    (encoding, errors and newline as open()'s), buffering=0 -> the raw gdfs.ImageFile. Read-only and
    seekable, so numpy.load, PIL.Image.open, tarfile, zipfile, json.load and pickle.load take it. A mode
    that writes raises OSError(EROFS). The file reads through this Image: close the file before the
    Image."""
    return _open_file(self, path, mode, buffering, encoding, errors, newline)


def _reopen(path, kwargs):
    return Image(path, **kwargs)


def _reduce(self):
    # Pickled as what opens it again: a spawned or forkserver data loader worker gets its own reader.
    if self.closed:
        raise ValueError("cannot pickle a closed gdfs.Image")
    return (_reopen, self._reopen_args())


Image.walk = _walk
Image.stats = _stats
Image.open = _open
Image.__reduce__ = _reduce
Image.__module__ = "gdfs"
StatResult.__module__ = "gdfs"
ImageFile.__module__ = "gdfs"
