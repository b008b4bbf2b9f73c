"""gdfs.torch.ImageDataset read by torch's DataLoader with 0, 2 and 4 workers under each start method
(fork, forkserver, spawn), every sample compared with its source file; a plain gdfs.Image handed to
worker processes; batches read through __getitems__ in one read_batch_into."""

import hashlib
import multiprocessing
import os
import random

import pytest

from conftest import mkfs

gdfs = pytest.importorskip("gdfs")
torch = pytest.importorskip("torch", reason="torch is not installed (tests/python/requirements.txt)")
from torch.utils.data import DataLoader  # noqa: E402

from gdfs.torch import ImageDataset, collate_cat, collate_list  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:This DataLoader will create")

METHODS = [m for m in ("fork", "forkserver", "spawn") if m in multiprocessing.get_all_start_methods()]


@pytest.fixture(scope="module")
def samples(tools, tmp_path_factory):
    """(source dir, image, {image path: sha256}) of 120 files of 0 B to 200 KiB in a few folders."""
    base = tmp_path_factory.mktemp("torch")
    src = base / "src"
    rng = random.Random(11)
    digests = {}
    for i in range(120):
        folder = src / f"class{i % 4}"
        folder.mkdir(parents=True, exist_ok=True)
        size = rng.choice([0, 1, 4096, 65536, 65537, rng.randrange(4 << 10, 200 << 10)])
        data = bytes(rng.getrandbits(8) for _ in range(min(size, 512))) * (size // 512 + 1)
        data = data[:size]
        name = f"s{i:03d}.bin" if i % 5 else f"s{i:03d}.jpg"
        (folder / name).write_bytes(data)
        digests[f"/class{i % 4}/{name}"] = hashlib.sha256(data).hexdigest()
    (src / "class0" / "link.bin").symlink_to("s001.bin")  # not a regular file: not a sample
    image = base / "samples.gdfs"
    mkfs(tools, src, image)
    return src, image, digests


def digest(t):
    return hashlib.sha256(t.numpy().tobytes()).hexdigest()


def test_the_dataset_lists_and_reads_files(samples):
    src, image, digests = samples
    ds = ImageDataset(str(image), image_options={"cache_size": 16 << 20})
    assert sorted(ds.files) == sorted(digests) and len(ds) == len(digests)
    assert ds.files == sorted(ds.files)  # walk order: by name, depth first
    for i in range(len(ds)):
        t = ds[i]
        assert t.dtype == torch.uint8 and t.dim() == 1 and digest(t) == digests[ds.files[i]]
    assert digest(ds[-1]) == digests[ds.files[-1]]
    with pytest.raises(IndexError):
        ds[len(ds)]
    batch = ds.__getitems__([3, 0, 3, 7])
    assert [digest(t) for t in batch] == [digests[ds.files[i]] for i in (3, 0, 3, 7)]
    storages = {t.untyped_storage().data_ptr() for t in batch}
    assert len(storages) == 1  # views of one tensor: one segment when a worker hands the batch over
    jpgs = ImageDataset(ds.image, pattern="*.jpg")
    assert jpgs.files == sorted(p for p in digests if p.endswith(".jpg"))
    sized = ImageDataset(ds.image, root="/class2", transform=lambda t, p: (p, t.numel()), with_path=True)
    assert sized[0] == (sized.files[0], ds.sizes[ds.files.index(sized.files[0])])
    assert all(p.startswith("/class2/") for p in sized.files)
    with pytest.raises(FileNotFoundError):
        ImageDataset(ds.image, files=["/class0/nope.bin"])
    with pytest.raises(FileNotFoundError):
        ImageDataset(ds.image, root="/nope")  # not an empty dataset that fails only at its first epoch
    with pytest.raises(NotADirectoryError):
        ImageDataset(ds.image, root=ds.files[0])


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("workers", [0, 2, 4])
def test_a_data_loader_reads_every_sample_under_each_start_method(samples, method, workers):
    _, image, digests = samples
    ds = ImageDataset(str(image), image_options={"cache_size": 32 << 20, "threads": 2})
    ds[0]  # the parent's reader is in use (threads started, cache warm) before the workers fork
    loader = DataLoader(ds, batch_size=8, shuffle=True, num_workers=workers, collate_fn=collate_list,
                        multiprocessing_context=method if workers else None, timeout=120 if workers else 0,
                        persistent_workers=False)
    seen = {}
    for epoch in range(2):
        for batch in loader:
            for t in batch:
                seen.setdefault(digest(t), 0)
                seen[digest(t)] += 1
    want = {}
    for d in digests.values():
        want[d] = want.get(d, 0) + 2
    assert seen == want
    assert ds[5].numel() == ds.sizes[5]  # the parent's image still reads after its workers are gone


def test_collate_cat_hands_a_batch_over_without_copying_it(samples):
    _, image, digests = samples
    ds = ImageDataset(str(image), image_options={"cache_size": 16 << 20})
    batch = ds.__getitems__([3, 0, 3, 7])
    flat, sizes = collate_cat(batch)
    assert sizes == [t.numel() for t in batch] and flat.numel() == sum(sizes)
    assert flat.data_ptr() == batch[0].data_ptr()  # the batch's own tensor, not a copy
    assert [digest(t) for t in torch.split(flat, sizes)] == [digests[ds.files[i]] for i in (3, 0, 3, 7)]
    # Anything else is concatenated: samples of their own, part of a batch, a batch out of order.
    for other in ([ds[1], ds[2]], batch[1:], batch[::-1]):
        flat, sizes = collate_cat(other)
        assert flat.numel() == sum(sizes) and all(flat.data_ptr() != t.data_ptr() for t in other if t.numel())
        assert [digest(t) for t in torch.split(flat, sizes)] == [digest(t) for t in other]
    flat, sizes = collate_cat([])
    assert flat.numel() == 0 and sizes == []


@pytest.mark.parametrize("method", METHODS)
def test_workers_make_batches_in_shared_memory(samples, method):
    _, image, digests = samples
    ds = ImageDataset(str(image), image_options={"cache_size": 16 << 20})
    assert not ds.__getitems__([0, 1])[0].is_shared()  # outside a worker: ordinary memory
    loader = DataLoader(ds, batch_size=16, num_workers=2, collate_fn=collate_cat, multiprocessing_context=method,
                        timeout=120)
    seen = []
    for flat, sizes in loader:
        assert flat.is_shared() and flat.numel() == sum(sizes)
        seen += [digest(t) for t in torch.split(flat, sizes)]
    assert seen == [digests[f] for f in ds.files]


def _read_in_worker(args):
    img, path = args
    return hashlib.sha256(img.read(path)).hexdigest(), os.getpid()


@pytest.mark.parametrize("method", METHODS)
def test_an_image_crosses_into_worker_processes(samples, method):
    _, image, digests = samples
    img = gdfs.Image(str(image))
    paths = sorted(digests)[:20]
    img.read(paths[0])
    with multiprocessing.get_context(method).Pool(2) as pool:
        got = pool.map(_read_in_worker, [(img, p) for p in paths], chunksize=3)
    assert [d for d, _ in got] == [digests[p] for p in paths]
    assert {pid for _, pid in got} - {os.getpid()}
    assert hashlib.sha256(img.read(paths[1])).hexdigest() == digests[paths[1]]
    img.close()


def test_samples_on_a_cuda_device(samples):
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device for torch here")
    _, image, digests = samples
    ds = ImageDataset(str(image), device="cuda")
    ok, how = ds.image.device_reads()
    if not ok:
        pytest.skip("device reads unavailable: " + how)
    batch = ds.__getitems__(list(range(10)))
    assert all(t.is_cuda for t in batch)
    assert [digest(t.cpu()) for t in batch] == [digests[ds.files[i]] for i in range(10)]
