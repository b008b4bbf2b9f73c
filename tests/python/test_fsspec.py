"""fsspec's "gdfs" protocol (gdfs.fs.GdfsFileSystem) against the source tree: registration by entry
point, ls/info/find/glob/walk, open and cat with ranges, cat_ranges as one batch, chained URLs over a
local file, HTTP (a ranged server on loopback) and S3 (moto, tests/remote/s3_server.py); then pandas,
pyarrow, zarr and xarray reading files inside an image."""

import errno
import http.server
import json
import os
import pickle
import subprocess
import sys
import threading

import pytest

from conftest import mkfs

gdfs = pytest.importorskip("gdfs")
fsspec = pytest.importorskip("fsspec", reason="fsspec is not installed (tests/python/requirements.txt)")
np = pytest.importorskip("numpy")

from gdfs.fs import GdfsFileSystem  # noqa: E402


@pytest.fixture(scope="module")
def tree(tools, tmp_path_factory):
    base = tmp_path_factory.mktemp("fsspec")
    src = base / "src"
    (src / "data" / "sub").mkdir(parents=True)
    (src / "empty").mkdir()
    rows = "\n".join(f"{i},{i * i},name{i}" for i in range(5000))
    (src / "data" / "x.csv").write_text("a,b,c\n" + rows + "\n")
    (src / "data" / "sub" / "y.txt").write_bytes(bytes(range(256)) * 600)
    (src / "data" / "sub" / "z.txt").write_text("zed")
    (src / "top.bin").write_bytes(os.urandom(70000))
    os.symlink("data/x.csv", src / "link.csv")
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"k": list(range(10000)), "v": [f"v{i}" for i in range(10000)]}),
                       src / "data" / "t.parquet")
    except ImportError:
        pass
    try:
        import zarr

        z = zarr.open(str(src / "arr.zarr"), mode="w", shape=(300, 200), chunks=(100, 100), dtype="i4")
        z[:] = np.arange(60000, dtype="i4").reshape(300, 200)
    except ImportError:
        pass
    try:
        import xarray as xr

        cube = xr.Dataset({"t": (("x", "y"), np.arange(600, dtype="f4").reshape(20, 30))},
                          coords={"x": np.arange(20)})
        cube.to_zarr(str(src / "cube.zarr"), mode="w")
    except ImportError:
        pass
    image = base / "set.gdfs"
    mkfs(tools, src, image)
    return src, image


@pytest.fixture
def fs(tree):
    fs = fsspec.filesystem("gdfs", fo=str(tree[1]), skip_instance_cache=True)
    yield fs
    fs.image.close()


def source_files(src):
    out = []
    for dirpath, _, filenames in os.walk(src):
        out += [os.path.relpath(os.path.join(dirpath, n), src) for n in filenames]
    return sorted(out)


def test_the_protocol_is_registered_by_entry_point():
    assert fsspec.get_filesystem_class("gdfs") is GdfsFileSystem
    from importlib.metadata import entry_points

    eps = entry_points()
    specs = eps.select(group="fsspec.specs") if hasattr(eps, "select") else eps.get("fsspec.specs", [])
    assert any(ep.name == "gdfs" and ep.value == "gdfs.fs:GdfsFileSystem" for ep in specs)


def test_listing_matches_the_source(tree, fs):
    src = tree[0]
    assert sorted(fs.ls("", detail=False)) == sorted(os.listdir(src))
    assert sorted(fs.ls("/data", detail=False)) == sorted("data/" + n for n in os.listdir(src / "data"))
    info = fs.info("gdfs://data/x.csv")
    assert info["name"] == "data/x.csv" and info["type"] == "file"
    assert info["size"] == (src / "data" / "x.csv").stat().st_size
    assert fs.info("data/sub")["type"] == "directory" and fs.isdir("empty") and fs.ls("empty") == []
    link = fs.info("link.csv")
    assert link["islink"] and link["destination"] == "data/x.csv"
    assert fs.find("") == source_files(src)
    assert fs.find("data", maxdepth=1) == sorted("data/" + n for n in os.listdir(src / "data")
                                                 if (src / "data" / n).is_file())
    assert "data/sub" in fs.find("data", withdirs=True) and "data" in fs.find("data", withdirs=True)
    assert fs.glob("**/*.txt") == ["data/sub/y.txt", "data/sub/z.txt"]
    assert fs.glob("data/*.csv") == ["data/x.csv"]
    assert fs.exists("top.bin") and not fs.exists("nope") and fs.isfile("top.bin")
    assert fs.find("top.bin") == ["top.bin"]
    walked = {d: sorted(f) for d, _, f in fs.walk("data")}
    assert walked["data/sub"] == ["y.txt", "z.txt"]
    with pytest.raises(FileNotFoundError):
        fs.info("data/nope")
    assert fs.modified("top.bin").timestamp() == pytest.approx((src / "top.bin").stat().st_mtime, abs=1e-6)


def test_walk_and_exists_treat_symlinks_as_the_local_filesystem_does(tools, tmp_path):
    """walk lists a symlink with the files and never descends it (as fsspec's local filesystem and find);
    maxdepth, bottom-up, detail and pruning as there; exists follows (a dangling link does not exist)."""
    from fsspec.implementations.local import LocalFileSystem

    src = tmp_path / "src"
    (src / "data" / "sub").mkdir(parents=True)
    (src / "empty").mkdir()
    (src / "data" / "x.csv").write_text("a,b\n")
    (src / "data" / "sub" / "z.txt").write_text("zed")
    for name, target in {"dlink": "data", "flink": "data/x.csv", "dangling": "nope"}.items():
        os.symlink(target, src / name)
    mkfs(tools, src, tmp_path / "l.gdfs")
    fs = fsspec.filesystem("gdfs", fo=str(tmp_path / "l.gdfs"), skip_instance_cache=True)
    local, root = LocalFileSystem(), str(src)

    def relative(walked):
        return sorted((os.path.relpath(d, root) if d.startswith(root) else d, sorted(ds), sorted(fs_))
                      for d, ds, fs_ in walked)

    def ours(walked):
        return sorted((d or ".", sorted(ds), sorted(fs_)) for d, ds, fs_ in walked)

    for maxdepth in (None, 1, 2):
        for topdown in (True, False):
            got = list(fs.walk("", maxdepth=maxdepth, topdown=topdown))
            assert ours(got) == relative(local.walk(root, maxdepth=maxdepth, topdown=topdown)), (maxdepth, topdown)
            if not topdown and maxdepth is None:  # children before their parent
                order = [d for d, _, _ in got]
                assert order.index("data/sub") < order.index("data") < order.index("")
    assert ("", ["data", "empty"], ["dangling", "dlink", "flink"]) in [
        (d, sorted(ds), sorted(f)) for d, ds, f in fs.walk("")]
    detail = next(fs.walk("", detail=True))
    assert detail[2]["dlink"]["islink"] and detail[2]["dlink"]["type"] == "directory"
    assert detail[1]["data"]["name"] == "data"
    walker = fs.walk("")
    next(walker)[1].remove("data")  # pruned top-down, as os.walk
    assert [d for d, _, _ in walker] == ["empty"]
    assert list(fs.walk("data/x.csv")) == [("data/x.csv", [], [""])]
    assert list(fs.walk("nope")) == []
    with pytest.raises(FileNotFoundError):
        list(fs.walk("nope", on_error="raise"))
    for path in ("dangling", "flink", "dlink", "nope", "data/x.csv/"):
        assert fs.exists(path) == local.exists(os.path.join(root, path)), path
    assert fs.info("dangling")["islink"]  # the link itself is still described
    fs.image.close()


def test_reads_and_ranges(tree, fs, monkeypatch):
    src = tree[0]
    top = (src / "top.bin").read_bytes()
    y = (src / "data" / "sub" / "y.txt").read_bytes()
    assert fs.cat_file("top.bin") == top
    assert fs.cat_file("top.bin", 65530, 65540) == top[65530:65540]
    assert fs.cat_file("top.bin", -10) == top[-10:] and fs.cat_file("top.bin", 5, -5) == top[5:-5]
    assert fs.cat("data/sub/z.txt") == b"zed"
    assert fs.cat("data/sub/*.txt") == {"data/sub/y.txt": y, "data/sub/z.txt": b"zed"}
    batches = []
    read_batch = gdfs.Image.read_batch
    monkeypatch.setattr(gdfs.Image, "read_batch", lambda img, *a, **k: batches.append(a) or read_batch(img, *a, **k))
    out = fs.cat_ranges(["top.bin", "data/sub/y.txt", "nope", "top.bin"], [0, 100, 0, 69990], [10, 200, 5, None])
    assert out[0] == top[:10] and out[1] == y[100:200] and out[3] == top[69990:]
    assert isinstance(out[2], FileNotFoundError)
    assert len(batches) == 1 and len(batches[0][0]) == 4  # one batch read
    monkeypatch.undo()
    with pytest.raises(FileNotFoundError):
        fs.cat_ranges(["nope"], [0], [1], on_error="raise")
    with fs.open("data/x.csv", "rt") as f:
        assert f.readline() == "a,b,c\n"
    with fs.open("top.bin", "rb") as f:
        f.seek(65000)
        assert f.read(2000) == top[65000:67000]
    with fsspec.open(f"gdfs://link.csv::{tree[1]}", "rt") as f:  # chained, and a symlink followed
        assert f.readline() == "a,b,c\n"
    # A symlink reads as its target everywhere, as in fsspec's local filesystem.
    csv = (src / "data" / "x.csv").read_bytes()
    assert fs.cat_file("link.csv") == csv and fs.cat("link.csv") == csv
    link = fs.info("link.csv")
    assert link["type"] == "file" and link["size"] == len(csv) and link["islink"], link
    for mode in ("wb", "ab"):
        with pytest.raises(OSError) as e:
            fs.open("new.bin", mode)
        assert e.value.errno == errno.EROFS
    # Every change to the tree is EROFS too (fsspec's defaults raise a bare NotImplementedError).
    for change in (lambda: fs.rm("top.bin"), lambda: fs.rm_file("top.bin"), lambda: fs.rm("data", recursive=True),
                   lambda: fs.mkdir("new"), lambda: fs.makedirs("new"), lambda: fs.makedirs("data/new", exist_ok=True),
                   lambda: fs.rmdir("data/sub"), lambda: fs.mv("top.bin", "moved.bin"),
                   lambda: fs.copy("top.bin", "copy.bin"), lambda: fs.touch("new.bin"),
                   lambda: fs.pipe_file("new.bin", b"x")):
        with pytest.raises(OSError) as e:
            change()
        assert e.value.errno == errno.EROFS
    fs.makedirs("data/sub", exist_ok=True)  # there already: nothing to change
    assert fs.cat_file("top.bin") == top
    again = pickle.loads(pickle.dumps(fs))
    assert again.cat_file("data/sub/z.txt") == b"zed"


def test_pandas_pyarrow_and_zarr_read_inside_an_image(tree):
    pd = pytest.importorskip("pandas", reason="pandas is not installed (tests/python/requirements.txt)")
    image = str(tree[1])
    want = pd.read_csv(tree[0] / "data" / "x.csv")
    got = pd.read_csv(f"gdfs://data/x.csv::{image}")
    assert got.equals(want)
    got = pd.read_csv("gdfs://data/x.csv", storage_options={"fo": image})
    assert got.equals(want)
    pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow is not installed")
    fs = fsspec.filesystem("gdfs", fo=image)
    table = pq.read_table("data/t.parquet", filesystem=fs)
    assert table.equals(pq.read_table(tree[0] / "data" / "t.parquet"))
    assert pd.read_parquet(f"gdfs://data/t.parquet::{image}").equals(pd.read_parquet(tree[0] / "data" / "t.parquet"))
    zarr = pytest.importorskip("zarr", reason="zarr is not installed")
    z = zarr.open(fsspec.get_mapper(f"gdfs://arr.zarr::{image}"), mode="r")
    assert np.array_equal(z[:], np.arange(60000, dtype="i4").reshape(300, 200))


def test_xarray_opens_a_zarr_store_inside_an_image(tree):
    xr = pytest.importorskip("xarray", reason="xarray is not installed (tests/python/requirements.txt)")
    pytest.importorskip("zarr", reason="zarr is not installed")
    got = xr.open_zarr(fsspec.get_mapper(f"gdfs://cube.zarr::{tree[1]}"))
    want = xr.open_zarr(str(tree[0] / "cube.zarr"))
    assert got.identical(want.load()) or got.load().identical(want.load())
    assert np.array_equal(got["t"].values, np.arange(600, dtype="f4").reshape(20, 30))


class RangeHandler(http.server.BaseHTTPRequestHandler):
    """GET with one Range (206 and Content-Range), as object stores serve; HEAD; an ETag."""

    path_on_disk = None

    def log_message(self, *args):
        pass

    def _head(self, status, start, end, size):
        self.send_response(status)
        self.send_header("Content-Length", str(end - start))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("ETag", '"gdfs-test"')
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{size}")
        self.end_headers()

    def do_HEAD(self):
        size = os.path.getsize(self.path_on_disk)
        self._head(200, 0, size, size)

    def do_GET(self):
        size = os.path.getsize(self.path_on_disk)
        start, end, status = 0, size, 200
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes="):
            a, b = rng[6:].split("-")
            start, end, status = int(a), min(int(b) + 1 if b else size, size), 206
        self._head(status, start, end, size)
        with open(self.path_on_disk, "rb") as f:
            f.seek(start)
            self.wfile.write(f.read(end - start))


def test_a_chained_http_image(tree):
    pytest.importorskip("aiohttp", reason="aiohttp (fsspec's http) is not installed")
    handler = type("H", (RangeHandler,), {"path_on_disk": str(tree[1])})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/set.gdfs"
        with fsspec.open(f"gdfs://data/sub/z.txt::{url}", "rb") as f:
            assert f.read() == b"zed"
        fs = fsspec.filesystem("gdfs", fo=url, target_protocol="http", skip_instance_cache=True)
        assert fs.image.fetcher == "http" or "http" in fs.image.fetcher
        assert fs.cat_file("top.bin") == (tree[0] / "top.bin").read_bytes()
        fs.image.close()
        # What repr shows ends up in logs and tracebacks: never a URL's password or presigned signature.
        port = server.server_address[1]
        with gdfs.Image(f"http://alice:s3cret@127.0.0.1:{port}/set.gdfs?X-Amz-Signature=sig0123") as img:
            assert img.read("/data/sub/z.txt") == b"zed"
            for shown in (repr(img), str(img)):
                assert f"http://127.0.0.1:{port}/set.gdfs" in shown and "s3cret" not in shown
                assert "alice" not in shown and "sig0123" not in shown
        assert "s3cret" not in repr(img)  # closed too
        # A cache folder that cannot be made raises what a bad local path does.
        with pytest.raises(NotADirectoryError, match="cache_dir"):
            gdfs.Image(url, cache_dir=str(tree[1]))
        with pytest.raises(FileNotFoundError, match="cache_dir"):
            gdfs.Image(url, cache_dir=str(tree[1].parent / "missing" / "cache"))
    finally:
        server.shutdown()


def test_a_chained_s3_image_with_fsspec_credentials(tree, tmp_path):
    pytest.importorskip("s3fs", reason="s3fs (fsspec's s3) is not installed")
    deps = os.path.join(os.environ.get("GDFS_TEST_DEPS", ""), "moto")
    server_py = os.path.join(os.environ.get("GDFS_SOURCE_DIR", ""), "tests", "remote", "s3_server.py")
    if not os.path.isdir(deps) or not os.path.exists(server_py):
        pytest.skip("moto (the S3 test server) is not installed in .test-deps/moto (scripts/test installs it)")
    env = dict(os.environ, PYTHONPATH=deps, PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.Popen(["/usr/bin/python3", server_py, "bucket", f"set.gdfs={tree[1]}"], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(tmp_path / "s3.log", "w"),
                            text=True)
    try:
        line = proc.stdout.readline()
        if not line:
            pytest.skip("the S3 test server did not start: " + (tmp_path / "s3.log").read_text()[-500:])
        s3 = json.loads(line)
        endpoint = f"http://127.0.0.1:{s3['port']}"
        options = {"s3": {"key": s3["key"], "secret": s3["secret"], "endpoint_url": endpoint,
                          "client_kwargs": {"region_name": "us-east-1"}}}
        with fsspec.open("gdfs://data/sub/z.txt::s3://bucket/set.gdfs", "rb", **options) as f:
            assert f.read() == b"zed"
        fs = fsspec.filesystem("gdfs", fo="bucket/set.gdfs", target_protocol="s3",
                               target_options=options["s3"], skip_instance_cache=True)
        assert fs.cat_file("top.bin") == (tree[0] / "top.bin").read_bytes()
        fs.image.close()
        bad = dict(options["s3"], secret="wrong")
        with pytest.raises(OSError):  # a wrong secret is refused by the server, not ignored
            fsspec.filesystem("gdfs", fo="bucket/set.gdfs", target_protocol="s3", target_options=bad,
                              image_options={"remote_timeout": 5}, skip_instance_cache=True)
    finally:
        proc.stdin.close()
        proc.terminate()
        proc.wait(10)


def test_fo_and_paths_may_be_path_objects(tree):
    import pathlib

    for fo in (pathlib.Path(tree[1]), os.fsencode(str(tree[1]))):
        fs = fsspec.filesystem("gdfs", fo=fo, skip_instance_cache=True)
        assert fs.cat_file("data/sub/z.txt") == b"zed" and fs.location == str(tree[1])
        # Paths inside the image as path objects too.
        inside = pathlib.PurePosixPath("data/sub")
        assert fs.ls(inside, detail=False) == ["data/sub/y.txt", "data/sub/z.txt"]
        assert fs.cat_file(inside / "z.txt") == b"zed" and fs.open(inside / "z.txt").read() == b"zed"
        assert fs.exists(inside) and fs.info(inside)["type"] == "directory"
        fs.image.close()


def test_refuses_what_it_cannot_read(tree):
    with pytest.raises(ValueError, match="say which image"):
        GdfsFileSystem()
    with pytest.raises(ValueError, match="memory://"):
        GdfsFileSystem(fo="x.gdfs", target_protocol="memory")
    with pytest.raises(FileNotFoundError):
        GdfsFileSystem(fo=str(tree[1]) + ".missing")
