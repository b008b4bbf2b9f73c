"""FUSE read charts from bench/run-fuse output: one figure per tree, one panel per metric, cold and
warm side by side, a bar per filesystem. gdfs's bars carry its ratio to the baseline filesystem from
the ratio table the script prints (above 1 is better in every column, find included)."""

import math
import os
import re

from . import parse, style

# (median-table column, ratio-table column, panel title, y label). The columns are the script's.
METRICS = [
    ("tree MB/s", "tree", "Whole tree (tar of the mount)", "MB/s of tree bytes"),
    ("big file MB/s", "big file", "Largest file (dd bs=1M)", "MB/s"),
    ("4K IOPS 1 job", "4K IOPS 1 job", "4 KiB random reads, 1 job (fio)", "IOPS"),
    ("4K IOPS 4 jobs", "4K IOPS 4 jobs", "4 KiB random reads, 4 jobs (fio)", "IOPS"),
    ("find s", "find", "find over the tree (lower is better)", "seconds"),
]


def _describe(corpus, line):
    """'/tmp/x, 959140332 bytes in 10 files, 11 entries, tar ...' -> '959 MB in 10 files, 11 entries'."""
    m = re.match(r"\S+, (\d+) bytes in ([^;]+?)(?:, tar .*|;.*)?$", line or "")
    if not m:
        return corpus
    counts = re.sub(r"\d{4,}", lambda n: f"{int(n.group(0)):,}", m.group(2))
    return f"{corpus}: {int(m.group(1)) / 1e6:,.0f} MB in {counts}"


def _ours(filesystems):
    return next((fs for fs in filesystems if fs.startswith("gdfs")), None)


def _value(table, key, column):
    """A cell of a keyed table; NaN (no bar, no label) where the script printed 'n/a' or no row."""
    v = table.get(key, {}).get(column)
    return float("nan") if v is None else v


def _ratio_label(ratio):
    return "" if math.isnan(ratio) else f"{ratio:.3g}×"


def _panel(ax, res, corpus, metric, ratio_col):
    filesystems, runs = res.filesystems(corpus), res.runs(corpus)
    width = 0.8 / len(filesystems)
    drawn = []
    for i, fs in enumerate(filesystems):
        xs = [r - 0.4 + width * (i + 0.5) for r in range(len(runs))]
        ys = [_value(res.medians, (corpus, fs, run), metric) for run in runs]
        drawn += ys
        bars = ax.bar(xs, ys, width * 0.92, color=style.color(i), label=fs)
        if fs == _ours(filesystems) and res.ratios:
            labels = [_ratio_label(_value(res.ratios, (corpus, fs, run), ratio_col)) for run in runs]
            ax.bar_label(bars, labels=labels, fontsize=7, padding=2, color=style.color(i),
                         fontweight="bold")
    ax.set_xticks(range(len(runs)), runs)
    style.log_axis(ax, values=drawn, headroom=2.0)


def _finds_at_resolution(res, corpus):
    return any(v.get("find s") is not None and v["find s"] <= 0.01
               for (c, _, _), v in res.medians.items() if c == corpus)


def draw_corpus(res, corpus, source, path):
    title = f"Reading through the mount, {_describe(corpus, res.corpora.get(corpus))}\n{res.note}"
    fig, axes = style.figure(2, 3, (12, 7), title)
    flat = [ax for row in axes for ax in row]
    for ax, (metric, ratio_col, title, ylabel) in zip(flat, METRICS):
        _panel(ax, res, corpus, metric, ratio_col)
        ax.set_title(title)
        ax.set_ylabel(f"{ylabel} (log scale)")
    legend_ax = flat[len(METRICS)]
    legend_ax.axis("off")
    handles, labels = flat[0].get_legend_handles_labels()
    legend_ax.legend(handles, labels, loc="center", title="filesystem", fontsize=9)
    ours = _ours(res.filesystems(corpus))
    note = (f"Labels on {ours}'s bars: its ratio to {res.baseline} in the same run, from the file's ratio "
            "table (above 1 is better in every panel, find included)." if ours and res.ratios else "")
    if note and _finds_at_resolution(res, corpus):
        # Otherwise a '1.59×' over two equal 0.01 s bars looks like an error.
        note += " find times print to 0.01 s; the script computed the ratios from the unrounded times."
    style.footer(fig, source, note)
    return style.save(fig, path)


def draw(text, source, out_dir, stem):
    """One figure per tree (corpus) the file has, named STEM-CORPUS.png."""
    res = parse.parse_fuse(text)
    corpora = list(dict.fromkeys(c for c, _, _ in res.medians))
    return [draw_corpus(res, c, source, os.path.join(out_dir, f"{stem}-{c}.png")) for c in corpora]
