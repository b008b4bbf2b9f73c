"""Image.open's file objects read by the libraries that take files (numpy.load, PIL, tarfile, zipfile,
json, pickle), against the source files; seek/tell/readinto edge cases; pickling an Image; per-request
results of read_batch and read_batch_into (errors as OSError with errno, path and page)."""

import errno
import io
import json
import os
import pickle
import random
import tarfile
import zipfile

import pytest

from conftest import damage_page, mkfs

gdfs = pytest.importorskip("gdfs")
np = pytest.importorskip("numpy")


@pytest.fixture(scope="module")
def tree(tools, tmp_path_factory):
    """(source dir, image) of a tree of files in the formats the libraries read."""
    base = tmp_path_factory.mktemp("fileobj")
    src = base / "src"
    (src / "d" / "e").mkdir(parents=True)
    rng = random.Random(7)
    big = bytes(rng.getrandbits(8) for _ in range(50000)) * 7 + b"tail" * 999  # pages and a tail
    (src / "big.bin").write_bytes(big)
    np.save(src / "table.npy", np.arange(100000, dtype=np.int32).reshape(1000, 100))
    (src / "meta.json").write_text(json.dumps({"name": "gdfs", "n": [1, 2, 3], "é": "ü"}))
    (src / "obj.pkl").write_bytes(pickle.dumps({"a": list(range(1000)), "b": b"\x00" * 70000}))
    (src / "text.txt").write_text("line one\nzwei ü\r\nthree\n", newline="")
    with tarfile.open(src / "set.tar", "w") as t:
        t.add(src / "meta.json", arcname="inner/meta.json")
        t.add(src / "big.bin", arcname="inner/big.bin")
    with zipfile.ZipFile(src / "set.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.write(src / "table.npy", "table.npy")
        z.writestr("hello.txt", "hello from a zip in an image")
    (src / "d" / "e" / "deep.txt").write_text("deep")
    os.symlink("../big.bin", src / "d" / "link.bin")
    os.symlink("d/e", src / "dirlink")
    os.symlink("loop2", src / "loop1")
    os.symlink("loop1", src / "loop2")
    try:
        from PIL import Image as PILImage

        PILImage.new("RGB", (64, 48), (10, 200, 30)).save(src / "pic.png")
    except ImportError:
        pass
    image = base / "tree.gdfs"
    mkfs(tools, src, image)
    return src, image


@pytest.fixture
def img(tree):
    with gdfs.Image(str(tree[1])) as image:
        yield image


def test_libraries_read_files_inside_an_image(tree, img):
    src = tree[0]
    with img.open("/table.npy") as f:
        assert np.array_equal(np.load(f), np.load(src / "table.npy"))
    with img.open("/meta.json") as f:
        assert json.load(f) == json.loads((src / "meta.json").read_text())
    with img.open("/obj.pkl") as f:
        assert pickle.load(f) == pickle.loads((src / "obj.pkl").read_bytes())
    with img.open("/set.tar") as f, tarfile.open(fileobj=f) as t:
        assert t.getnames() == ["inner/meta.json", "inner/big.bin"]
        assert t.extractfile("inner/big.bin").read() == (src / "big.bin").read_bytes()
    with img.open("/set.zip") as f, zipfile.ZipFile(f) as z:
        assert z.read("hello.txt") == b"hello from a zip in an image"
        assert np.array_equal(np.load(io.BytesIO(z.read("table.npy"))), np.load(src / "table.npy"))
    with img.open("/text.txt", "r", encoding="utf-8", newline="") as f:
        assert f.read() == "line one\nzwei ü\r\nthree\n" and f.mode == "r"
    with img.open("/text.txt", "r", encoding="utf-8") as f:
        assert f.readlines() == ["line one\n", "zwei ü\n", "three\n"]


def test_pil_reads_an_image_inside_an_image(tree, img):
    PILImage = pytest.importorskip("PIL.Image", reason="Pillow is not installed (tests/python/requirements.txt)")
    if not (tree[0] / "pic.png").exists():
        pytest.skip("Pillow could not write the test picture")
    with img.open("/pic.png") as f, PILImage.open(f) as pic:
        assert pic.size == (64, 48) and pic.getpixel((5, 5)) == (10, 200, 30)


def test_file_object_semantics(tree, img):
    want = (tree[0] / "big.bin").read_bytes()
    with img.open("/big.bin") as f:
        assert isinstance(f, io.BufferedIOBase) and f.readable() and f.seekable() and not f.writable()
        assert f.name == "/big.bin" and f.mode == "rb" and f.raw.size == len(want)
        assert f.read(10) == want[:10] and f.tell() == 10
        assert f.seek(-4, io.SEEK_END) == len(want) - 4 and f.read() == b"tail"
        assert f.read() == b"" and f.read(5) == b""
        f.seek(65530)
        buf = bytearray(100)
        assert f.readinto(buf) == 100 and buf == want[65530:65630]
        assert f.seek(len(want) + 10) == len(want) + 10 and f.read(3) == b""  # past EOF: reads nothing
        with pytest.raises(OSError):
            f.seek(-1)
        with pytest.raises(io.UnsupportedOperation):
            f.fileno()
    assert f.closed
    with pytest.raises(ValueError):
        f.read(1)
    raw = img.open("/big.bin", buffering=0)
    assert isinstance(raw, gdfs.ImageFile) and raw.readall() == want
    assert raw.read() == b"" and raw.read(7) == b""
    raw.seek(65530)
    got = raw.read(70000)  # across a page boundary, one bytes object straight from the reader
    assert type(got) is bytes and got == want[65530:135530] and raw.tell() == 135530
    raw.seek(len(want) - 3)
    assert raw.read(100) == want[-3:] and raw.read(None) == b"" and raw.read(-1) == b""
    raw.close()
    with pytest.raises(ValueError):
        raw.read(1)
    # The private call behind it clamps a size past the end of the file itself (no huge allocation).
    ino = img.stat("/big.bin").st_ino
    assert img._pread(ino, len(want) - 5, 1 << 50, "/big.bin") == want[-5:]
    assert img._pread(ino, len(want) + 5, 1 << 50, "/big.bin") == b""
    rng = random.Random(3)
    with img.open("/big.bin", buffering=4096) as f:  # random seeks and reads against the source
        for _ in range(300):
            off, n = rng.randrange(len(want) + 100), rng.choice([0, 1, 100, 4096, 70000])
            f.seek(off)
            assert f.read(n) == want[off:off + n]
            assert f.tell() == min(off + n, max(off, len(want)))


def test_open_follows_symlinks_and_refuses_what_it_cannot_open(tree, img):
    src = tree[0]
    with img.open("/d/link.bin") as f:
        assert f.read() == (src / "big.bin").read_bytes()
    with img.open("/dirlink/deep.txt", "rt") as f:  # a symlink on the way
        assert f.read() == "deep"
    with img.open(b"/d/../meta.json") as f:
        assert json.load(f)["name"] == "gdfs"
    with pytest.raises(FileNotFoundError) as e:
        img.open("/nope")
    assert e.value.filename == "/nope"
    with pytest.raises(IsADirectoryError):
        img.open("/d")
    with pytest.raises(NotADirectoryError):
        img.open("/big.bin/x")
    with pytest.raises(OSError) as e:
        img.open("/loop1")
    assert e.value.errno == errno.ELOOP
    for mode in ("w", "wb", "a", "r+", "x"):
        with pytest.raises(OSError) as e:
            img.open("/big.bin", mode)
        assert e.value.errno == errno.EROFS
    for mode in ("rbt", "q", "rr"):
        with pytest.raises(ValueError):
            img.open("/big.bin", mode)
    with pytest.raises(ValueError):
        img.open("/big.bin", "rb", encoding="utf-8")


def test_a_file_on_a_damaged_page_reads_as_eio(tools, tree, tmp_path):
    bad = tmp_path / "bad.gdfs"
    damage_page(tools, tree[1], bad, "/big.bin", 2)
    with gdfs.Image(str(bad)) as img, img.open("/big.bin") as f:
        assert len(f.read(65536)) == 65536
        with pytest.raises(OSError) as e:
            f.read()
        assert e.value.errno == errno.EIO and "page 2" in e.value.strerror
    with gdfs.Image(str(bad)) as img, img.open("/big.bin", buffering=0) as raw:
        assert len(raw.read(65536)) == 65536
        with pytest.raises(OSError) as e:
            raw.read()
        assert e.value.errno == errno.EIO and e.value.filename == "/big.bin" and raw.tell() == 65536


def test_an_image_pickles_as_what_opens_it_again(tree):
    with gdfs.Image(str(tree[1]), cache_size=8 << 20, threads=2, decoder="cpu") as img:
        again = pickle.loads(pickle.dumps(img))
        assert again is not img and again.path == img.path and again._kwargs() == img._kwargs()
        assert again._kwargs()["cache_size"] == 8 << 20 and again.decoder == "cpu"
        assert again.read("/meta.json") == img.read("/meta.json")
        again.close()
    with pytest.raises(ValueError, match="closed"):
        pickle.dumps(img)


def test_an_image_opened_by_a_relative_path_opens_again_from_another_directory(tree, tmp_path, monkeypatch):
    # A pickled copy (a spawned data loader worker) or a forked child may run with another working
    # directory: relative local paths are anchored where the image was opened.
    monkeypatch.chdir(tree[1].parent)
    with gdfs.Image(tree[1].name, cache_dir="cache") as img:
        data = pickle.dumps(img)
        assert img.path == tree[1].name  # as given
        monkeypatch.chdir(tmp_path)
        again = pickle.loads(data)
        assert again.path == str(tree[1]) and again._kwargs()["cache_dir"] == str(tree[1].parent / "cache")
        assert again.read("/meta.json") == img.read("/meta.json")
        again.close()
        pid = os.fork()
        if pid == 0:  # the child opens the image again, from tmp_path
            ok = False
            try:
                ok = img.read("/meta.json") == (tree[0] / "meta.json").read_bytes()
            finally:
                os._exit(0 if ok else 1)
        assert os.waitpid(pid, 0)[1] == 0


def test_read_batch_returns_each_requests_result_when_asked(tools, tree, tmp_path):
    src = tree[0]
    bad = tmp_path / "bad.gdfs"
    damage_page(tools, tree[1], bad, "/big.bin", 1)
    big = (src / "big.bin").read_bytes()
    reqs = [("/meta.json", 0, -1), ("/big.bin", 70000, 10), ("/nope", 0, 1), ("/d", 0, 1),
            ("/big.bin", 0, 100), ("/big.bin", -5, 1)]
    with gdfs.Image(str(bad)) as img:
        out = img.read_batch(reqs, return_exceptions=True)
        assert out[0] == (src / "meta.json").read_bytes() and out[4] == big[:100]
        assert isinstance(out[1], OSError) and out[1].errno == errno.EIO and out[1].filename == "/big.bin"
        assert "page 1" in out[1].strerror and "bad.gdfs" in out[1].strerror
        assert isinstance(out[2], FileNotFoundError) and out[2].filename == "/nope"
        assert isinstance(out[3], IsADirectoryError) and out[3].filename == "/d"
        assert isinstance(out[5], OSError) and out[5].errno == errno.EINVAL
        with pytest.raises(OSError) as e:  # without return_exceptions: the first failure raises
            img.read_batch(reqs)
        assert e.value.errno == errno.EIO
        assert img.read_batch([]) == []

        a, b, c = bytearray(10), np.zeros(100, np.uint8), bytearray(5)
        counts = img.read_batch_into([("/big.bin", 70000, a), ("/big.bin", 0, b), ("/nope", 0, c),
                                      ("/meta.json", 3, bytearray(1000))], return_exceptions=True)
        assert isinstance(counts[0], OSError) and counts[0].errno == errno.EIO
        assert counts[1] == 100 and bytes(b) == big[:100]
        assert isinstance(counts[2], FileNotFoundError)
        assert counts[3] == len((src / "meta.json").read_bytes()) - 3
        with pytest.raises(FileNotFoundError):
            img.read_batch_into([("/big.bin", 0, b), ("/nope", 0, c)])
        with pytest.raises(TypeError):
            img.read_batch_into([("/big.bin", 0, b"read-only")])


def test_image_takes_remote_options(tree):
    with gdfs.Image(str(tree[1]), cache_dir="/nonexistent-but-unused", ca_file=None, remote_timeout=5,
                    aws={"AWS_REGION": "eu-west-1", "AWS_PROFILE": None}) as img:
        assert img._kwargs()["aws"] == {"AWS_REGION": "eu-west-1", "AWS_PROFILE": None}
        assert img.read("/d/e/deep.txt") == b"deep"
