"""fsspec's "gdfs" protocol: the files inside a gdfs image as an fsspec filesystem.

    import fsspec, pandas
    fs = fsspec.filesystem("gdfs", fo="set.gdfs")             # or an http(s):// or s3:// URL
    fs.ls("data"); fs.info("data/x.csv"); fs.glob("**/*.parquet")
    df = pandas.read_csv("gdfs://data/x.csv::s3://bucket/set.gdfs")   # chained, as fsspec's zip
    df = pandas.read_csv("gdfs://data/x.csv", storage_options={"fo": "set.gdfs"})

The image is read by gdfs itself (io_uring locally; its own HTTP(S) and S3 client with retries and a
disk cache remotely), not through the chained filesystem: the chain only says where the image is. The
outer filesystem's options that gdfs understands are taken over (S3: key, secret, token, endpoint_url,
client_kwargs' region_name and endpoint_url, anon); other protocols than local files, HTTP(S) and S3
are refused. Paths are relative to the image's root ("data/x.csv"; a leading "/" is accepted).
The filesystem is read-only: writing raises."""

import datetime
import errno
import os
import posixpath
import stat as _stat

from fsspec.spec import AbstractFileSystem
from fsspec.utils import infer_storage_options, stringify_path

from . import Image

_LOCAL = {None, "", "file", "local"}
_HTTP = {"http", "https"}
_S3 = {"s3", "s3a"}


def _image_location(fo, target_protocol):
    """The path or URL Image() takes, from fsspec's (fo, target_protocol)."""
    if isinstance(fo, (bytes, os.PathLike)):
        fo = os.fsdecode(fo)  # pathlib.Path, as fsspec's local filesystem takes
    if not isinstance(fo, str):
        fo = getattr(fo, "path", None)
        if not isinstance(fo, str):
            raise TypeError("gdfs: fo must be the image's path or URL (a file object cannot be read by gdfs)")
    if target_protocol in _LOCAL:
        if fo.startswith(("file://", "local://")):
            return infer_storage_options(fo)["path"]
        return fo
    if target_protocol in _HTTP:
        return fo if "://" in fo else f"{target_protocol}://{fo}"
    if target_protocol in _S3:
        return fo if fo.startswith("s3://") else "s3://" + fo.split("://", 1)[-1]
    raise ValueError(
        f"gdfs reads images from local files, http(s):// and s3:// only, not from {target_protocol}://"
    )


def _aws_settings(options):
    """s3fs-style options as the S3 settings Image(aws=...) takes."""
    aws = {}
    client = options.get("client_kwargs") or {}
    names = {
        "key": "AWS_ACCESS_KEY_ID",
        "secret": "AWS_SECRET_ACCESS_KEY",
        "token": "AWS_SESSION_TOKEN",
        "endpoint_url": "AWS_ENDPOINT_URL",
        "profile": "AWS_PROFILE",
    }
    for name, env in names.items():
        if options.get(name) is not None:
            aws[env] = options[name]
    if client.get("endpoint_url"):
        aws["AWS_ENDPOINT_URL"] = client["endpoint_url"]
    if client.get("region_name"):
        aws["AWS_REGION"] = client["region_name"]
    if options.get("anon"):
        for env in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
            aws[env] = ""  # unsigned requests, whatever the environment holds
    return aws


def _type(mode):
    if _stat.S_ISDIR(mode):
        return "directory"
    if _stat.S_ISREG(mode):
        return "file"
    return "other"


class GdfsFileSystem(AbstractFileSystem):
    """The files of one gdfs image. `fo`: the image's path or URL (with `target_protocol` and
    `target_options` as fsspec's chaining passes them); `image_options`: keyword arguments of
    gdfs.Image (cache_size, threads, decoder, cache_dir, trusted_key, ...)."""

    protocol = "gdfs"
    root_marker = ""
    sep = "/"

    def __init__(self, fo="", target_protocol=None, target_options=None, image_options=None, **kwargs):
        super().__init__(**kwargs)
        if not fo:
            raise ValueError("gdfs: say which image: fo='set.gdfs' (or chain: gdfs://x::s3://bucket/set.gdfs)")
        target_options = dict(target_options or {})
        options = dict(image_options or {})
        location = _image_location(fo, target_protocol)
        if target_protocol in _S3 or location.startswith("s3://"):
            options.setdefault("aws", _aws_settings(target_options))
        self.image = fo if isinstance(fo, Image) else Image(location, **options)
        self.location = location

    @classmethod
    def _strip_protocol(cls, path):
        if isinstance(path, (list, tuple)):
            return [cls._strip_protocol(p) for p in path]
        path = stringify_path(path)  # a path object too, as fsspec's local filesystem takes
        path = path.split("::", 1)[0]
        if path.startswith("gdfs://"):
            path = path[len("gdfs://") :]
        return path.strip("/")

    @staticmethod
    def _get_kwargs_from_urls(path):
        return {}

    def _image_path(self, path):
        return "/" + self._strip_protocol(path)

    def _entry(self, path, st, link=None):
        info = {
            "name": path,
            "size": st.st_size,
            "type": _type(st.st_mode),
            "mode": st.st_mode,
            "ino": st.st_ino,
            "nlink": st.st_nlink,
            "uid": st.st_uid,
            "gid": st.st_gid,
            "mtime": st.st_mtime,
            "islink": link is not None,
        }
        if link is not None:
            info["destination"] = link
        return info

    def info(self, path, **kwargs):
        """As fsspec's local filesystem: a symlink's type, size and times are its target's (the link's
        own when it dangles), with islink and destination saying it is one."""
        path = self._strip_protocol(path)
        ipath = self._image_path(path)
        st = self.image.stat(ipath, follow_symlinks=False)
        if not _stat.S_ISLNK(st.st_mode):
            return self._entry(path, st)
        link = self.image.readlink(ipath)
        try:
            st = self.image.stat(ipath)
        except OSError:
            pass  # dangling, or a loop
        return self._entry(path, st, link)

    def exists(self, path, **kwargs):
        """As os.path.exists and fsspec's local filesystem: a symlink counts by its target (a dangling one
        does not exist); info still describes it."""
        try:
            self.image.stat(self._image_path(path))
            return True
        except (OSError, ValueError):
            return False

    def ls(self, path, detail=True, **kwargs):
        path = self._strip_protocol(path)
        st = self.image.stat(self._image_path(path))  # a symlink to a directory lists the directory
        if not _stat.S_ISDIR(st.st_mode):
            return [self.info(path)] if detail else [path]
        names = [posixpath.join(path, n) if path else n for n in self.image.listdir(self._image_path(path))]
        if not detail:
            return names
        return [self.info(n) for n in names]

    def find(self, path, maxdepth=None, withdirs=False, detail=False, **kwargs):
        path = self._strip_protocol(path)
        top = self._image_path(path)
        st = self.image.stat(top)
        if not _stat.S_ISDIR(st.st_mode):
            found = [path]
        else:
            found = [path] if withdirs and path else []
            base = path.count("/") + 1 if path else 0
            for dirpath, dirnames, filenames in self.image.walk(top):
                rel = dirpath.strip("/")
                depth = (rel.count("/") + 1 if rel else 0) - base + 1  # of the entries listed here
                names = filenames + (dirnames if withdirs else [])
                found.extend(posixpath.join(rel, n) if rel else n for n in names)
                if maxdepth is not None and depth >= maxdepth:
                    dirnames[:] = []
            found.sort()
        if detail:
            return {p: self.info(p) for p in found}
        return found

    def walk(self, path, maxdepth=None, topdown=True, on_error="omit", **kwargs):
        """fsspec's walk over the image's own (Image.walk), as find: a symlink is listed with the files and
        never descended, as fsspec's local filesystem walks; `detail` gives {name: info} for the names."""
        if maxdepth is not None and maxdepth < 1:
            raise ValueError("maxdepth must be at least 1")
        detail = kwargs.pop("detail", False)
        path = self._strip_protocol(path)

        def failed(e):
            if on_error == "raise":
                raise e
            if callable(on_error):
                on_error(e)

        try:
            st = self.image.stat(self._image_path(path))
        except OSError as e:
            return failed(e)
        if not _stat.S_ISDIR(st.st_mode):  # a file walks as itself, named ""
            yield path, {} if detail else [], {"": self.info(path)} if detail else [""]
            return
        base = path.count("/") + 1 if path else 0
        for dirpath, dirnames, filenames in self.image.walk(self._image_path(path), topdown, failed):
            rel = dirpath.strip("/")
            depth = (rel.count("/") + 1 if rel else 0) - base  # 0 for `path` itself
            if maxdepth is not None and depth >= maxdepth:
                continue  # bottom-up only: top-down never goes this deep
            if detail:
                dirs = {n: self.info(posixpath.join(rel, n) if rel else n) for n in dirnames}
                files = {n: self.info(posixpath.join(rel, n) if rel else n) for n in filenames}
            else:
                dirs, files = list(dirnames), list(filenames)
            yield rel, dirs, files
            # Top-down, the caller may prune the dirs it was given, as with os.walk.
            if maxdepth is not None and depth >= maxdepth - 1:
                dirnames[:] = []
            else:
                dirnames[:] = [n for n in dirnames if n in dirs]

    def modified(self, path):
        return datetime.datetime.fromtimestamp(self.info(path)["mtime"], tz=datetime.timezone.utc)

    def _open(self, path, mode="rb", block_size=None, autocommit=True, cache_options=None, **kwargs):
        if "r" not in mode or set(mode) & set("wax+"):
            raise OSError(errno.EROFS, "a gdfs image is read-only", path)
        buffering = block_size if block_size and block_size > 1 else -1
        return self.image.open(self._image_path(path), "rb", buffering=buffering)

    # Everything that would change the tree raises EROFS, as open(mode="wb") does, where fsspec's defaults
    # raise a bare NotImplementedError; makedirs(exist_ok=True) of a directory that exists does nothing.
    def _read_only(self, path, *args, **kwargs):
        raise OSError(errno.EROFS, "a gdfs image is read-only", path)

    mkdir = rmdir = rm_file = _rm = rm = cp_file = mv = _read_only

    def makedirs(self, path, exist_ok=False):
        if exist_ok and self.isdir(path):
            return
        self._read_only(path)

    def _range(self, path, start, end):
        """(image path, offset, size) of bytes [start, end) of `path`, negative ends counted from EOF."""
        ipath = self._image_path(path)
        if start is None:
            start = 0
        if start < 0 or (end is not None and end < 0):
            size = self.image.stat(ipath).st_size
            start = max(size + start, 0) if start < 0 else start
            end = max(size + end, 0) if end is not None and end < 0 else end
        return ipath, start, -1 if end is None else max(end - start, 0)

    def cat_file(self, path, start=None, end=None, **kwargs):
        ipath, offset, size = self._range(path, start, end)
        return self.image.read(ipath, offset, size)

    def cat_ranges(self, paths, starts, ends, max_gap=None, on_error="return", **kwargs):
        """Byte ranges of many files in one batch read (one fetch and one decode batch)."""
        if not isinstance(starts, list):
            starts = [starts] * len(paths)
        if not isinstance(ends, list):
            ends = [ends] * len(paths)
        if len(starts) != len(paths) or len(ends) != len(paths):
            raise ValueError("cat_ranges: paths, starts and ends differ in length")
        requests = [self._range(p, s, e) for p, s, e in zip(paths, starts, ends)]
        out = self.image.read_batch(requests, return_exceptions=True)
        if on_error == "raise":
            for r in out:
                if isinstance(r, BaseException):
                    raise r
        return out

    def cat(self, path, recursive=False, on_error="raise", **kwargs):
        """One file's bytes, or {path: bytes} of many (globs, lists, recursive) in one batch read."""
        paths = self.expand_path(path, recursive=recursive)
        if len(paths) == 1 and paths[0] == self._strip_protocol(path) and not isinstance(path, list):
            return self.cat_file(paths[0])
        files = [p for p in paths if on_error == "raise" or self.isfile(p)]
        data = self.image.read_batch([(self._image_path(p), 0, -1) for p in files], return_exceptions=True)
        out = {}
        for p, d in zip(files, data):
            if isinstance(d, BaseException):
                if on_error == "raise":
                    raise d
                if on_error == "omit":
                    continue
            out[p] = d
        return out

    def ukey(self, path):
        st = self.image.stat(self._image_path(path))
        return f"{self.location}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"
