"""python3 -m plots [RESULTS_DIR] [OUT_DIR]: every chart from the raw files under bench/results/.

Run it through scripts/plots, which installs matplotlib and sets the paths.
"""

import functools
import os
import sys
from collections import namedtuple

from . import bitpack, codec, fuse, mkfs, parse

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Which raw file feeds which chart. The files are named rather than globbed: a results folder holds
# several runs of the same bench (before/after a change, demo files), and the README reports these.
Chart = namedtuple("Chart", "raw draw stem")
CHARTS = [
    # every level on the judging corpus (fresh-pages.bin, the file's first run) and on pages.bin (its last)
    Chart("2026-11-23-codec-final-paired-vm.txt", functools.partial(codec.draw, run_index=0),
          "codec-fresh"),
    Chart("2026-11-23-codec-final-paired-vm.txt", codec.draw, "codec"),
    Chart("2026-11-21-codec-decoder-paths-vm.txt", codec.draw_paths, "codec-decoder-paths"),
    # ours, libdeflate and nvCOMP's host codec in one run (the last of the two runs in the file)
    Chart("2026-11-23-codec-nvcomp-cpu-vm.txt", codec.draw, "codec-nvcomp"),
    Chart("2026-11-21-fuse-vm-gdfs-squashfuse.txt", fuse.draw, "fuse-gdfs-squashfuse"),
    Chart("2026-11-21-fuse-vm-all-peers.txt", fuse.draw, "fuse-all-peers"),
    Chart("2026-11-21-mkfs-vm.txt", mkfs.draw, "mkfs"),
    Chart("2026-11-21-bitpack-3-vm.txt", bitpack.draw_sets_all_runs, "bitpack-audio"),
    Chart("2026-11-21-bitpack-numeric-vm.txt", bitpack.draw_sets_last_run, "bitpack-numeric"),
    Chart("2026-11-21-bitpack-3-vm.txt", bitpack.draw_shapes, "bitpack-shapes"),
]


def shown_path(path):
    """The raw file as captions name it: relative to the repository when it is inside it, so that the
    PNGs do not depend on where the checkout lives."""
    path = os.path.abspath(path)
    if path.startswith(REPO + os.sep):
        return os.path.relpath(path, REPO)
    return os.path.basename(path)


def run(results_dir, out_dir):
    """Draws every chart whose raw file is present; returns the PNGs written and the files missing."""
    os.makedirs(out_dir, exist_ok=True)
    written, missing = [], []
    for chart in CHARTS:
        raw = os.path.join(results_dir, chart.raw)
        if not os.path.isfile(raw):
            missing.append(raw)
            continue
        with open(raw, encoding="utf-8") as f:
            text = f.read()
        written += chart.draw(text, parse.source_of(text, shown_path(raw)), out_dir, chart.stem)
    return written, missing


def main(argv):
    if len(argv) > 2 or any(a in ("-h", "--help") for a in argv):
        print(__doc__.strip())
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    results = argv[0] if argv else os.path.join(REPO, "bench", "results")
    out = argv[1] if len(argv) > 1 else os.path.join(REPO, "docs", "plots")
    written, missing = run(results, out)
    for path in missing:
        print(f"plots: {path}: no such file, its chart skipped", file=sys.stderr)
    for path in written:
        print(path)
    # A missing file is worth a non-zero status: the caller asked for charts it did not get.
    return 1 if missing or not written else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
