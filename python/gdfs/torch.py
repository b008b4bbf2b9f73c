"""PyTorch datasets over the files of a gdfs image (importable where torch is).

    from torch.utils.data import DataLoader
    from gdfs.torch import ImageDataset, collate_list
    ds = ImageDataset("train.gdfs", pattern="*.jpg")      # every regular file matching, in walk order
    loader = DataLoader(ds, batch_size=64, num_workers=4, collate_fn=collate_list)
    for batch in loader:                                  # a list of 1-D uint8 tensors, one per file
        ...

Each sample is the whole file as a 1-D torch.uint8 tensor (host, pinned host, or CUDA memory), passed
through `transform` when given. A DataLoader with batches reads each batch in one Image.read_batch_into
(one fetch, one decode batch on all the reader's threads) through __getitems__, into views of one
tensor (in shared memory in a worker, which collate_cat hands over as one tensor without a copy). The
dataset holds a gdfs.Image, which survives fork (the worker opens it again on first use)
and pickling (spawn and forkserver workers open it again), so every start method works with any
num_workers.
"""

import errno
import fnmatch
import stat as _stat

import torch
from torch.utils.data import Dataset, get_worker_info

from . import Image

__all__ = ["ImageDataset", "collate_cat", "collate_list"]

# The decoded-page cache of an image the dataset opens itself (image_options' cache_size wins). Items
# are whole files, each read once an epoch, so cached pages are rarely read again, and every worker
# process has its own cache: with Image's default (an eighth of RAM) in 4 workers, half the machine's
# memory went to caches instead of the page cache that holds the image, and the loader read at 0.46x
# (cold) and 0.60x (warm) a plain directory's speed, against 1.01x and 0.84x with this cache
# (bench/results/2026-11-26-python-loader-bigcache-vm.txt and -python-loader-vm.txt).
DEFAULT_CACHE_SIZE = 64 << 20


def collate_list(batch):
    """A DataLoader collate_fn that keeps a batch of variable-length samples as a list."""
    return list(batch)


def collate_cat(batch):
    """A DataLoader collate_fn that hands a batch over as one flat tensor and the samples' sizes:
    `(flat, sizes)`, with `torch.split(flat, sizes)` giving the samples back.

    The samples of an ImageDataset batch (without a transform) are consecutive views of one tensor,
    which a worker allocates in shared memory: that tensor itself is the result, with no copy, and it
    crosses to the main process without one either. Other samples are concatenated (torch.cat)."""
    sizes = [t.numel() for t in batch]
    base = batch[0]._base if batch else None
    if base is not None and base.dim() == 1 and base.numel() == sum(sizes) and all(
        t._base is base and t.dim() == 1 and t.storage_offset() == base.storage_offset() + at
        for t, at in zip(batch, _starts(sizes))
    ):
        return base, sizes
    return (torch.cat(batch) if batch else torch.empty(0, dtype=torch.uint8)), sizes


def _starts(sizes):
    at = 0
    for size in sizes:
        yield at
        at += size


class ImageDataset(Dataset):
    """A map-style dataset whose items are files of a gdfs image.

    image: a gdfs.Image, or a path or URL to open (with `image_options`: cache_size, threads, ...; the
        cache is DEFAULT_CACHE_SIZE, 64 MiB, unless they say otherwise).
    files: the image paths of the items, in order; default: every regular file under `root`, in the
        order Image.walk gives them (sorted by name, depth first), that matches `pattern` (fnmatch on
        the path) when one is given.
    transform: called on each sample tensor (and its path when `with_path` is true) in the worker.
    device: where samples are made: "cpu" (default) or a CUDA device ("cuda", "cuda:1": decoded by
        the GPU where device reads work, Image.device_reads()); pin_memory: host samples in pinned
        memory (for copies to a GPU that overlap with compute).
    """

    def __init__(
        self,
        image,
        files=None,
        *,
        root="/",
        pattern=None,
        transform=None,
        with_path=False,
        device="cpu",
        pin_memory=False,
        image_options=None,
    ):
        if not isinstance(image, Image):
            options = dict(image_options or {})
            options.setdefault("cache_size", DEFAULT_CACHE_SIZE)
            image = Image(image, **options)
        self.image = image
        if files is None:
            files = self._list(root, pattern)
        self.files = list(files)
        self.sizes = [self.image.stat(p).st_size for p in self.files]
        self.transform = transform
        self.with_path = with_path
        self.device = torch.device(device)
        self.pin_memory = pin_memory and self.device.type == "cpu"

    def _list(self, root, pattern):
        # Image.walk, as os.walk, yields nothing for a root that is not there: a dataset of no files from a
        # mistyped root would only fail at its first epoch.
        if not _stat.S_ISDIR(self.image.stat(root).st_mode):
            raise NotADirectoryError(errno.ENOTDIR, "not a directory", root)
        out = []
        for dirpath, _, filenames in self.image.walk(root):
            for name in filenames:
                path = dirpath.rstrip("/") + "/" + name
                if pattern is not None and not fnmatch.fnmatchcase(path, pattern):
                    continue
                if _stat.S_ISREG(self.image.stat(path, follow_symlinks=False).st_mode):
                    out.append(path)
        return out

    def __len__(self):
        return len(self.files)

    def _empty(self, size):
        if self.device.type == "cpu" and not self.pin_memory and get_worker_info() is not None:
            # In a DataLoader worker: the batch is made in shared memory, so that handing it to the main
            # process (which moves every tensor's storage into shared memory) copies nothing.
            flat = torch.empty(0, dtype=torch.uint8)
            return flat.set_(torch.UntypedStorage._new_shared(size), 0, (size,))
        return torch.empty(size, dtype=torch.uint8, device=self.device, pin_memory=self.pin_memory)

    def _finish(self, sample, index):
        if self.transform is None:
            return sample
        if self.with_path:
            return self.transform(sample, self.files[index])
        return self.transform(sample)

    def __getitem__(self, index):
        if index < 0:
            index += len(self.files)
        return self.__getitems__([index])[0]

    def __getitems__(self, indices):
        """The samples of `indices`, read in one batch (what DataLoader calls with batch_size). They are
        views of one tensor: one allocation, and one shared-memory segment when a worker hands the batch
        over (torch moves each storage through its own), not one per sample. A sample kept alive keeps its
        batch's memory."""
        sizes = [self.sizes[i] for i in indices]
        flat = self._empty(sum(sizes))
        host = None if flat.is_cuda else flat.numpy()
        samples, targets, at = [], [], 0
        for size in sizes:
            samples.append(flat[at : at + size])
            targets.append(samples[-1] if host is None else host[at : at + size])
            at += size
        counts = self.image.read_batch_into(
            [(self.files[i], 0, t) for i, t in zip(indices, targets)],
            stream=torch.cuda.current_stream(self.device) if self.device.type == "cuda" else None,
            once=True,  # a sample is read once an epoch: its whole pages skip the cache
        )
        assert counts == sizes  # an image never changes under its reader
        return [self._finish(s, i) for i, s in zip(indices, samples)]
