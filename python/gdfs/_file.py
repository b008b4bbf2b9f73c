"""File objects over files inside an image: what Image.open returns."""

import errno
import io
import os
import stat as _stat


class ImageFile(io.RawIOBase):
    """A regular file inside an image, read-only and seekable: io.RawIOBase over Image reads by inode.
    Image.open wraps it in BufferedImageFile (and io.TextIOWrapper for text) unless buffering=0."""

    def __init__(self, image, path, st):
        super().__init__()
        self._image = image
        self._ino = st.st_ino
        self._size = st.st_size
        self._pos = 0
        self.name = path
        self.mode = "rb"

    @property
    def size(self):
        """The file's size in bytes."""
        return self._size

    def readable(self):
        self._checkClosed()
        return True

    def seekable(self):
        self._checkClosed()
        return True

    def writable(self):
        self._checkClosed()
        return False

    def readinto(self, b):
        self._checkClosed()
        if self._pos >= self._size:
            return 0
        n = self._image._pread_into(self._ino, b, self._pos, self.name)
        self._pos += n
        return n

    def read(self, size=-1):
        self._checkClosed()
        left = max(self._size - self._pos, 0)
        if size is None or size < 0 or size > left:
            size = left
        if size == 0:
            return b""
        data = self._image._pread(self._ino, self._pos, size, self.name)  # one copy, into the bytes
        self._pos += len(data)
        return data

    def readall(self):
        return self.read(-1)

    def seek(self, offset, whence=io.SEEK_SET):
        self._checkClosed()
        if whence == io.SEEK_SET:
            pos = offset
        elif whence == io.SEEK_CUR:
            pos = self._pos + offset
        elif whence == io.SEEK_END:
            pos = self._size + offset
        else:
            raise ValueError(f"invalid whence ({whence}, should be 0, 1 or 2)")
        if pos < 0:
            raise OSError(errno.EINVAL, "negative seek position", self.name)
        self._pos = pos
        return pos

    def tell(self):
        self._checkClosed()
        return self._pos

    def fileno(self):
        raise io.UnsupportedOperation("a file inside a gdfs image has no file descriptor")

    def __repr__(self):
        state = " closed" if self.closed else ""
        return f"<gdfs.ImageFile name={self.name!r} size={self._size}{state}>"

    def __reduce__(self):
        raise TypeError("a gdfs file object cannot be pickled: pickle the Image and open the file again")


class BufferedImageFile(io.BufferedIOBase):
    """ImageFile behind an io.BufferedReader: what Image.open gives in binary mode. Not a subclass of
    io.BufferedReader on purpose: libraries that see one take it for an OS file and ask for its
    descriptor (numpy before 1.25 then reads with fromfile)."""

    def __init__(self, raw, buffer_size):
        super().__init__()
        self._f = io.BufferedReader(raw, buffer_size=buffer_size)
        self.raw = raw

    name = property(lambda self: self.raw.name)
    mode = property(lambda self: "rb")
    closed = property(lambda self: self._f.closed)

    def readable(self):
        return self._f.readable()

    def seekable(self):
        return self._f.seekable()

    def writable(self):
        return self._f.writable()

    def read(self, size=-1):
        return self._f.read(size)

    def read1(self, size=-1):
        return self._f.read1(size)

    def readinto(self, b):
        return self._f.readinto(b)

    def readinto1(self, b):
        return self._f.readinto1(b)

    def peek(self, size=0):
        return self._f.peek(size)

    def readline(self, size=-1):
        return self._f.readline(size)

    def seek(self, offset, whence=io.SEEK_SET):
        return self._f.seek(offset, whence)

    def tell(self):
        return self._f.tell()

    def fileno(self):
        return self.raw.fileno()

    def close(self):
        self._f.close()

    def detach(self):
        raise io.UnsupportedOperation("detach")

    def __repr__(self):
        return f"<gdfs.BufferedImageFile name={self.name!r}>"

    def __reduce__(self):
        return self.raw.__reduce__()


def open_file(image, path, mode="rb", buffering=-1, encoding=None, errors=None, newline=None):
    """Image.open: see its docstring."""
    if not isinstance(mode, str) or set(mode) - set("rbt") or mode.count("r") != 1 or (
        "b" in mode and "t" in mode
    ):
        if isinstance(mode, str) and set(mode) & set("wax+"):
            raise OSError(errno.EROFS, "a gdfs image is read-only", path)
        raise ValueError(f"invalid mode: {mode!r} (a gdfs image opens files with 'r', 'rb' or 'rt')")
    binary = "b" in mode
    if binary and (encoding is not None or errors is not None or newline is not None):
        raise ValueError("binary mode takes no encoding, errors or newline argument")
    if not binary and buffering == 0:
        raise ValueError("can't have unbuffered text I/O")
    st = image.stat(path)  # symlinks followed, as open(2) does
    if _stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if not _stat.S_ISREG(st.st_mode):
        raise OSError(errno.EINVAL, "not a regular file", path)
    raw = ImageFile(image, path, st)  # named as asked, as open() names its file objects
    if buffering == 0:
        return raw
    size = buffering if buffering > 1 else max(st.st_blksize, io.DEFAULT_BUFFER_SIZE)
    buffered = BufferedImageFile(raw, size)
    if binary:
        return buffered
    text = io.TextIOWrapper(buffered, encoding=encoding, errors=errors, newline=newline)
    text.mode = "r"
    return text
