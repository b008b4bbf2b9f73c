"""Bit-plane codec charts: decode speed per bitpack decode path, per data set (gdfs-bitpack-bench
tables) and per vector shape (bpmicro lines), in GB/s of decoded bytes as the README reports them."""

import os
import re
import statistics

from . import parse, style


def _row(table, data_set, codec):
    return next((r for r in table.rows if r["set"] == data_set and r["codec"] == codec), None)


def _sets(tables):
    """Data sets with at least one page on bitpack: a bitpack-only 'decode' of a set bitpack
    stored raw times a copy, which says nothing about the decoder (the text control)."""
    names = list(dict.fromkeys(r["set"] for t in tables for r in t.rows))
    return [s for s in names if any((_row(t, s, "bitpack") or {}).get("bitpack", 0) > 0 for t in tables)]


def _samples(tables, data_set, codec, column):
    return [r[column] for t in tables if (r := _row(t, data_set, codec)) and r.get(column) is not None]


def _bars(ax, x, samples, width, color, label):
    """A bar at the median, with a min-max whisker when there is more than one run."""
    med = statistics.median(samples)
    err = [[med - min(samples)], [max(samples) - med]] if len(samples) > 1 else None
    ax.bar([x], [med], width, color=color, label=label, yerr=err, capsize=2, ecolor="#333333")
    return med


def _speed_panel(ax, tables, sets, paths):
    series = [("bitpack", p, f"bitpack, {p} path") for p in paths] + [("gdeflate", paths[0], "GDeflate")]
    width = 0.8 / len(series)
    for i, (codec, column, label) in enumerate(series):
        for s_i, data_set in enumerate(sets):
            samples = [v / 1000 for v in _samples(tables, data_set, codec, column)]  # MB/s -> GB/s
            if samples:
                _bars(ax, s_i - 0.4 + width * (i + 0.5), samples, width * 0.92, style.color(i), label)
                label = None  # one legend entry per series
    ax.set_xticks(range(len(sets)), sets)
    ax.set_ylabel("decode GB/s of decoded bytes, one thread")
    ax.set_title("Decode speed of the bitpack-only encoding, per decode path")
    ax.set_ylim(top=ax.get_ylim()[1] * 1.15)  # room for the legend
    ax.legend(loc="upper right", ncol=len(paths) + 1)


# (bench codec row, legend label, colour index): GDeflate keeps the colour of its speed bars.
RATIO_SERIES = [("gdeflate", "GDeflate only", 3), ("bitpack", "bitpack only", 7), ("auto", "--codec auto", 4)]


def _ratio_panel(ax, tables, sets):
    width = 0.8 / len(RATIO_SERIES)
    top = 0.0
    for i, (codec, label, color) in enumerate(RATIO_SERIES):
        xs = [s_i - 0.4 + width * (i + 0.5) for s_i in range(len(sets))]
        # The ratio of a set does not change between runs; the median is just one of them.
        ys = [statistics.median(_samples(tables, s, codec, "ratio") or [float("nan")]) for s in sets]
        bars = ax.bar(xs, ys, width * 0.92, color=style.color(color), label=label)
        ax.bar_label(bars, fmt="%.3f", fontsize=7, padding=1)
        top = max([top] + [y for y in ys if y == y])
    ax.set_xticks(range(len(sets)), sets)
    ax.set_ylabel("ratio: set bytes / stored bytes")
    ax.set_title("Compression ratio (higher is better)")
    ax.set_ylim(0, top * 1.3)
    ax.legend(loc="upper right", ncol=len(RATIO_SERIES))


def _draw_sets(tables, source, path, what):
    paths = tables[0].paths()
    sets = _sets(tables)
    if len(tables) > 1:
        runs = f"{len(tables)} runs: bars at the median, whiskers min-max"
    else:
        # One table: say which (bitpack-numeric's label names the section and its commit).
        label = re.sub(r"^(\d+)\)\s*", r"section \1: ", tables[0].label.split(",")[0])
        runs = "one run" + (f", {label}" if label else "")
    setup = tables[0].caption.split(";")[0]  # 'GDeflate level 7, 65536-byte pages'
    title = f"Bit-plane codec on {what}: decode speed per path, and ratio\n{setup}; {runs}"
    if len(sets) <= 4:
        fig, axes = style.figure(1, 2, (12, 6), title, gridspec_kw={"width_ratios": [3, 2]})
        speed_ax, ratio_ax = axes[0]
    else:
        # Speed above ratio, both full width: ten sets in half a figure's width are unreadable.
        fig, axes = style.figure(2, 1, (12, 8.5), title)
        speed_ax, ratio_ax = axes[0][0], axes[1][0]
    _speed_panel(speed_ax, tables, sets, paths)
    _ratio_panel(ratio_ax, tables, sets)
    style.footer(fig, source, "GDeflate bars: GDeflate-only encoding of the same set, on its own best "
                 "decoder. Sets with no page on bitpack are left out.")
    return style.save(fig, path)


def draw_sets_all_runs(text, source, out_dir, stem):
    """Every per-path table in the file, as repeated runs of one tree (bitpack-3: 'after' runs)."""
    tables = parse.per_path_tables(parse.parse_bitpack_tables(text))
    return [_draw_sets(tables, source, os.path.join(out_dir, f"{stem}.png"), "the audio sets")]


def draw_sets_last_run(text, source, out_dir, stem):
    """Only the file's last per-path table: bitpack-numeric's sections are two trees, the later one
    (with the interleave probe) is the one the README reports."""
    tables = parse.per_path_tables(parse.parse_bitpack_tables(text))[-1:]
    what = "the numeric-data sets (bench/numeric)"
    return [_draw_sets(tables, source, os.path.join(out_dir, f"{stem}.png"), what)]


def draw_shapes(text, source, out_dir, stem):
    """bpmicro: one panel per sample width, a group per (stride, block), a bar per decode path."""
    shapes = parse.parse_bitpack_shapes(text)
    widths = list(dict.fromkeys(s.sample_bits for s in shapes))
    paths = list(dict.fromkeys(s.path for s in shapes))
    modes = ", ".join(dict.fromkeys(s.mode for s in shapes))
    # What the file says about its data, where it says it.
    note = re.search(r"The int32 rows read (.+?) as 32-bit samples", text)
    data = re.search(r"bpmicro\b.*?encodes the (.+?) in\s+(\d+ KiB pages)", text, re.DOTALL)
    data = f" on the {data.group(1)} in {data.group(2)}" if data else ""
    fig, axes = style.figure(1, len(widths), (12, 5.5), "Bitpack decode speed per vector shape and decode "
                             f"path\nbpmicro{data}, {modes} mode, one thread", sharey=True)
    for ax, bits in zip(axes[0], widths):
        mine = [s for s in shapes if s.sample_bits == bits]
        groups = list(dict.fromkeys((s.stride, s.block) for s in mine))
        width = 0.8 / len(paths)
        for i, p in enumerate(paths):
            by_group = {(s.stride, s.block): s.mbps / 1000 for s in mine if s.path == p}
            xs = [g - 0.4 + width * (i + 0.5) for g in range(len(groups))]
            ax.bar(xs, [by_group.get(k, float("nan")) for k in groups], width * 0.92, color=style.color(i),
                   label=p)
        ax.set_xticks(range(len(groups)), [f"B={b}\nstride {s}" for s, b in groups])
        title = f"int{bits} samples"
        if bits == 32 and note:
            title += f" ({note.group(1)} read as int32)"
        ax.set_title(title)
        ax.set_xlabel("block size (samples) and stride")
    axes[0][0].set_ylabel("decode GB/s of decoded bytes")
    axes[0][0].legend(title="decode path", loc="upper left")
    style.footer(fig, source)
    return [style.save(fig, os.path.join(out_dir, f"{stem}.png"))]
