"""pip builds and installs the package from a clean clone into a fresh virtualenv (scikit-build-core and
pybind11 from PyPI, build isolation, as a user's `pip install .`), then makes a wheel that installs into
another virtualenv and still imports and reads after the clone is gone. The clone is the repository's
HEAD with the working tree's changes (tracked and new, not ignored) laid over it, so the test checks
what would be committed. Skips, saying why, without git, venv or PyPI."""

import os
import shutil
import subprocess
import sys

import pytest

from conftest import mkfs

SOURCE = os.environ.get("GDFS_SOURCE_DIR", "")


def run(*argv, **kw):
    print("+", " ".join(map(str, argv)))
    return subprocess.run([str(a) for a in argv], check=True, **kw)


def clean_clone(dest):
    run("git", "clone", "-q", "--no-hardlinks", SOURCE, dest)
    files = subprocess.run(["git", "-C", SOURCE, "ls-files", "-z", "-c", "-o", "--exclude-standard"],
                           check=True, capture_output=True).stdout.split(b"\0")
    for f in filter(None, files):
        src, dst = os.path.join(SOURCE, os.fsdecode(f)), os.path.join(dest, os.fsdecode(f))
        if os.path.islink(src) or not os.path.isfile(src):
            continue  # deleted in the working tree, or not a file
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)
    deleted = subprocess.run(["git", "-C", SOURCE, "ls-files", "-z", "-d"], check=True,
                             capture_output=True).stdout.split(b"\0")
    for f in filter(None, deleted):
        p = os.path.join(dest, os.fsdecode(f))
        if os.path.exists(p):
            os.remove(p)


def venv(path):
    run(sys.executable, "-m", "venv", path)
    return os.path.join(path, "bin", "python")


CHECK = """
import gdfs, importlib.metadata as md, sys
eps = md.entry_points()
specs = eps.select(group="fsspec.specs") if hasattr(eps, "select") else eps.get("fsspec.specs", [])
assert [e.value for e in specs if e.name == "gdfs"] == ["gdfs.fs:GdfsFileSystem"], list(specs)
assert md.version("gdfs") == gdfs.__version__, (md.version("gdfs"), gdfs.__version__)
with gdfs.Image(sys.argv[1]) as img:
    assert img.read("/a/b.txt") == b"hello from pip"
    with img.open("/a/b.txt") as f:
        assert f.read(5) == b"hello"
import gdfs._gdfs, os
assert os.path.exists(os.path.join(os.path.dirname(gdfs.__file__), "py.typed"))
print("ok", gdfs.__file__)
"""


def test_pip_install_and_wheel_from_a_clean_clone(tools, tmp_path):
    if not SOURCE or not os.path.isdir(os.path.join(SOURCE, ".git")) or not shutil.which("git"):
        pytest.skip("not run from a git checkout (GDFS_SOURCE_DIR)")
    src = tmp_path / "tree"
    (src / "a").mkdir(parents=True)
    (src / "a" / "b.txt").write_bytes(b"hello from pip")
    image = tmp_path / "t.gdfs"
    mkfs(tools, src, image)

    clone = tmp_path / "clone"
    clean_clone(clone)
    try:
        py = venv(tmp_path / "venv")
    except subprocess.CalledProcessError:
        pytest.skip("python3 -m venv does not work here (Debian: python3-venv)")
    probe = subprocess.run([py, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp_path / "probe",
                            "--timeout", "15", "scikit-build-core"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("PyPI cannot be reached: " + probe.stderr.strip()[-300:])
    # The GPU decoder is left out: it builds the same way, and CUDA would double the time of the test.
    env = dict(os.environ, CMAKE_BUILD_PARALLEL_LEVEL=str(os.cpu_count() or 2))
    if shutil.which("ccache"):
        env.update(CMAKE_CXX_COMPILER_LAUNCHER="ccache", CMAKE_C_COMPILER_LAUNCHER="ccache",
                   CCACHE_BASEDIR=str(clone))  # paths relative to the clone: later runs hit the cache
    env.pop("PYTHONPATH", None)
    options = ["--config-settings=cmake.define.GDFS_ENABLE_CUDA=OFF", "--disable-pip-version-check"]
    run(py, "-m", "pip", "install", "-q", *options, clone, env=env)
    out = run(py, "-c", CHECK, image, env=env, capture_output=True, text=True, cwd=tmp_path).stdout
    assert out.startswith("ok ") and str(tmp_path / "venv") in out, out

    run(py, "-m", "pip", "wheel", "-q", "--no-deps", *options, "-w", tmp_path / "dist", clone, env=env)
    wheels = os.listdir(tmp_path / "dist")
    assert len(wheels) == 1 and wheels[0].startswith("gdfs-") and wheels[0].endswith(".whl"), wheels
    shutil.rmtree(clone)  # the wheel must not need the tree it was built from
    py2 = venv(tmp_path / "venv2")
    run(py2, "-m", "pip", "install", "-q", "--no-deps", "--disable-pip-version-check",
        tmp_path / "dist" / wheels[0], env=env)
    out = run(py2, "-c", CHECK, image, env=env, capture_output=True, text=True, cwd=tmp_path).stdout
    assert out.startswith("ok ") and str(tmp_path / "venv2") in out, out
