"""One timed epoch of a PyTorch DataLoader over the files of a dataset (bench/run-python-loader).

    python_loader.py gdfs IMAGE      # gdfs.torch.ImageDataset: batches through read_batch_into
    python_loader.py files DIR       # the same files read with open()/readinto from DIR (a mount, a folder)

Options: --workers 4 --batch 64 --start fork --seed 0 --collate cat|list. Every file is read once, in
a shuffled order that is the same for both modes (same seed, same sorted file list); each worker hands
a batch over as one tensor (the samples concatenated; --collate cat) or as the list of samples
(--collate list). Prints one JSON line: mode, files, bytes, seconds (wall, from the first batch asked
for to the last received), MB/s, and a checksum of every sample's first and last bytes (both modes must
print the same)."""

import argparse
import json
import os
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset


class FileDataset(Dataset):
    """The files under `root`, sorted as ImageDataset lists them, each read whole into a uint8 tensor."""

    def __init__(self, root):
        self.root = root
        self.files = []
        for dirpath, _, filenames in os.walk(root):
            self.files += ["/" + os.path.relpath(os.path.join(dirpath, n), root) for n in filenames]
        self.files.sort()

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        path = self.root + self.files[i]
        with open(path, "rb", buffering=0) as f:
            size = os.fstat(f.fileno()).st_size
            t = torch.empty(size, dtype=torch.uint8)
            view = memoryview(t.numpy())
            got = 0
            while got < size:
                n = f.readinto(view[got:])
                if not n:
                    break
                got += n
        return t


def collate_list(batch):
    # The samples as they are: what a loader of variable-size samples does (gdfs.torch.collate_list).
    return batch, [t.numel() for t in batch]


def collate(batch):
    # In the worker: one tensor per batch crosses to the main process (torch moves each tensor of a
    # batch through its own shared-memory segment; 64 of them per batch would cost more than the reads).
    # gdfs.torch.collate_cat: torch.cat of the samples, or, for an ImageDataset batch, the one
    # shared-memory tensor the worker read it into, with no copy.
    from gdfs.torch import collate_cat

    return collate_cat(batch)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["gdfs", "files"])
    ap.add_argument("path")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--start", default="fork")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--collate", choices=["cat", "list"], default="cat")
    args = ap.parse_args()
    if args.mode == "gdfs":
        from gdfs.torch import ImageDataset

        options = {"threads": 1}  # one decode thread per worker: the workers are the parallelism
        if os.environ.get("CACHE"):
            options["cache_size"] = int(os.environ["CACHE"])  # else ImageDataset's own default
        listed = ImageDataset(args.path, image_options=options)
        ds = ImageDataset(listed.image, files=sorted(listed.files))  # the order FileDataset uses
    else:
        ds = FileDataset(args.path)
    g = torch.Generator()
    g.manual_seed(args.seed)
    loader = DataLoader(ds, batch_size=args.batch, shuffle=True, generator=g, num_workers=args.workers,
                        collate_fn=collate if args.collate == "cat" else collate_list,
                        multiprocessing_context=args.start if args.workers else None,
                        prefetch_factor=4 if args.workers else None)
    n = total = check = 0
    start = time.perf_counter()
    for flat, sizes in loader:
        parts = flat if isinstance(flat, list) else torch.split(flat, sizes)
        for t in parts:
            n += 1
            total += t.numel()
            if t.numel():
                check = (check * 31 + int(t[0]) * 7 + int(t[-1])) % (1 << 61)
    secs = time.perf_counter() - start
    print(json.dumps({"mode": args.mode, "path": args.path, "files": n, "bytes": total, "seconds": round(secs, 3),
                      "MBps": round(total / secs / 1e6, 1), "workers": args.workers, "batch": args.batch,
                      "start": args.start, "collate": args.collate, "check": check}))
    return 0 if n == len(ds) else 1


if __name__ == "__main__":
    sys.exit(main())
