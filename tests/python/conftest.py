"""Shared fixtures of the Python tests: the tools from the build tree, the edge-case tree (built by
gdfs_make_edge_tree, the same tree the C++ image tests use) and its image (made by mkfs.gdfs).

ctest names the tools in GDFS_MKFS, GDFS_INSPECT and GDFS_MAKE_EDGE_TREE; run by hand
(PYTHONPATH=build/python python3 -m pytest tests/python) they are found next to the imported module."""

import json
import os
import shutil
import subprocess

import pytest


def _tool(env, *build_relative):
    path = os.environ.get(env)
    if path and os.path.exists(path):
        return path
    gdfs = pytest.importorskip("gdfs")  # the test modules skip first when it is missing
    # <build>/python/gdfs/__init__.py -> <build>/...
    build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(gdfs.__file__))))
    path = os.path.join(build, *build_relative)
    if os.path.exists(path):
        return path
    pytest.skip(f"{build_relative[-1]} not found: set {env} or build it")


@pytest.fixture(scope="session")
def tools():
    return {
        "mkfs": _tool("GDFS_MKFS", "mkfs", "mkfs.gdfs"),
        "inspect": _tool("GDFS_INSPECT", "tools", "inspect", "gdfs-inspect"),
        "make_edge_tree": _tool("GDFS_MAKE_EDGE_TREE", "tests", "python", "gdfs_make_edge_tree"),
    }


def mkfs(tools, src, image, *options):
    subprocess.run([tools["mkfs"], "-q", "--force", *options, str(src), str(image)], check=True)


@pytest.fixture(scope="session")
def edge(tools, tmp_path_factory):
    """(source dir, image path) of the edge-case tree."""
    base = tmp_path_factory.mktemp("edge")
    src = base / "src"
    out = subprocess.run([tools["make_edge_tree"], str(src)], check=True, capture_output=True, text=True)
    for line in out.stdout.splitlines():
        print(line)
    image = base / "edge.gdfs"
    mkfs(tools, src, image)
    return src, image


@pytest.fixture
def img(edge):
    gdfs = pytest.importorskip("gdfs")
    with gdfs.Image(str(edge[1])) as image:
        yield image


def page_entry(tools, image, path, index):
    """(image offset, stored size) of logical page `index` of `path`, from gdfs-inspect pages --json."""
    out = subprocess.run([tools["inspect"], "pages", "--json", str(image), path], check=True,
                         capture_output=True, text=True)
    page = next(p for p in json.loads(out.stdout)["pages"] if p["index"] == index)
    return page["image_offset"], page["stored_size"]


def damage_page(tools, image, damaged, path, index):
    """Copies `image` to `damaged` with one byte of page `index` of `path` flipped."""
    shutil.copyfile(image, damaged)
    offset, size = page_entry(tools, image, path, index)
    with open(damaged, "r+b") as f:
        f.seek(offset + size // 2)
        byte = f.read(1)[0]
        f.seek(offset + size // 2)
        f.write(bytes([byte ^ 0x40]))
