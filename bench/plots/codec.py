"""Codec charts from 'gdeflate bench' output: ratio and speed per level, and the decoder paths.

Every codec row the output carries is a series; libdeflate is the baseline the ratios divide by. A
codec added to the bench later (nvCOMP's host codec, say) shows up as one more series with no change
here.
"""

import os
import re

from . import parse, style


def _codec_index(run, codec):
    """A codec's colour and marker index, the same in every codec chart: the baseline always takes
    index 1 (orange), ours 0 (blue), and any further codec the next free one, so that adding a codec
    row to the bench does not recolour the others."""
    if codec == run.baseline() or codec.startswith(parse.BASELINE_PREFIX):
        return 1
    i = run.others().index(codec) if codec in run.others() else 0
    return i if i == 0 else i + 1


def _stored_levels(run):
    """Levels at which no codec compresses (ratio <= 1: level 0 stores pages). They are left out of
    the per-level charts, as the README's table leaves them out: a stored page's speed is a memcpy's,
    and its ratio would squash the differences between the real levels; the footer says so."""
    levels = {lv for points in run.series.values() for lv in points}
    return sorted(lv for lv in levels
                  if all(points[lv].ratio <= 1.0 for points in run.series.values() if lv in points))


def _levels(points, skip=()):
    return sorted(lv for lv in points if lv not in skip)


def _stored_note(run):
    stored = _stored_levels(run)
    if not stored:
        return ""
    ratios = "; ".join(f"{c} {', '.join(f'{p[lv].ratio:.3f}' for lv in stored if lv in p)}"
                       for c, p in run.series.items())
    levels = ", ".join(map(str, stored))
    return f"Level {levels} left out: no codec compresses there (stored pages; ratio {ratios})."


def _scale(ax, values, label):
    """Log scale where the values span more than a decade, linear where they do not (a log axis over
    less than a decade has no labelled tick)."""
    values = [v for v in values if v > 0]
    if values and max(values) / min(values) > 10:
        style.log_axis(ax)
        label += " (log scale)"
    ax.set_ylabel(label)


def _codec_title(run):
    others = ", ".join(run.others())
    return f"{others} against {run.baseline()} per level"


def _corpus(run):
    # '1 file(s), 114086376 bytes in 1741 pages ...' -> '114.1 MB in 1741 pages ...'
    text = re.sub(r"^\d+ file\(s\), ", "", run.corpus)
    return re.sub(r"(\d+) bytes", lambda m: f"{int(m.group(1)) / 1e6:,.1f} MB", text)


def _subtitle(run):
    parts = [_corpus(run), run.method, f"gdfs decoder: {run.decoder}" if run.decoder else ""]
    return "; ".join(p for p in parts if p)


def _plot_metric(ax, run, metric):
    """One line per codec; returns every value drawn."""
    drawn = []
    for codec, points in run.series.items():
        i = _codec_index(run, codec)
        levels = _levels(points, _stored_levels(run))
        values = [getattr(points[lv], metric) for lv in levels]
        ax.plot(levels, values, label=codec, color=style.color(i), marker=style.marker(i), markersize=4,
                linewidth=1.5)
        drawn += values
    return drawn


def _level_axis(ax, run):
    ax.set_xticks(_levels({lv for points in run.series.values() for lv in points}, _stored_levels(run)))
    ax.set_xlabel("compression level")


def draw_levels(run, source, path):
    """Absolute figures per level: ratio, compression and decompression MB/s (as the README's table)."""
    fig, axes = style.figure(1, 3, (12, 5), f"{_codec_title(run)}\n{_subtitle(run)}")
    panels = [("ratio", "Compression ratio (higher is better)", "uncompressed / compressed bytes"),
              ("compress", "Compression speed", "MB/s of uncompressed bytes"),
              ("decompress", "Decompression speed", "MB/s of uncompressed bytes")]
    for ax, (metric, title, ylabel) in zip(axes[0], panels):
        _scale(ax, _plot_metric(ax, run, metric), ylabel)
        _level_axis(ax, run)
        ax.set_title(title)
    axes[0][0].legend(loc="lower right")
    style.footer(fig, source, _stored_note(run))
    return style.save(fig, path)


def _relative(run, codec):
    """Per level: compressed size, compression and decompression speed of codec / the baseline's."""
    base, mine = run.series[run.baseline()], run.series[codec]
    out = {}
    for lv in _levels(mine, _stored_levels(run)):
        if lv in base:
            b, m = base[lv], mine[lv]
            # Size ratio from the compression ratios: (bytes / m.ratio) / (bytes / b.ratio).
            out[lv] = (b.ratio / m.ratio, m.compress / b.compress, m.decompress / b.decompress)
    return out


def draw_relative(run, source, path):
    """Each codec against the baseline in the same run: below 1 is smaller, above 1 is faster."""
    base = run.baseline()
    fig, axes = style.figure(1, 2, (11, 5.5), f"{_codec_title(run)}, same run\n{_subtitle(run)}")
    size_ax, speed_ax = axes[0]
    speeds = []
    for codec in run.others():
        i = _codec_index(run, codec)
        rel = _relative(run, codec)
        levels = list(rel)
        size_ax.plot(levels, [rel[lv][0] for lv in levels], color=style.color(i), marker="o", markersize=4,
                     label=codec)
        # Colour says the codec, line style and marker the direction.
        directions = [("compression", "--", "s"), ("decompression", "-", "o")]
        for k, (what, dash, mark) in enumerate(directions, start=1):
            values = [rel[lv][k] for lv in levels]
            speed_ax.plot(levels, values, color=style.color(i), marker=mark, markersize=4, linestyle=dash,
                          label=f"{codec}: {what}")
            speeds += values
    for ax in (size_ax, speed_ax):
        ax.axhline(1.0, color="black", linewidth=0.8)
        _level_axis(ax, run)
    short = base.split()[0]
    size_ax.set_title(f"Compressed size relative to {base} (below 1: smaller)")
    size_ax.set_ylabel(f"compressed bytes / {short}'s")
    speed_ax.set_title(f"Speed relative to {base} (above 1: faster)")
    _scale(speed_ax, speeds + [1.0], f"MB/s / {short}'s")
    if speed_ax.get_yscale() == "linear":
        speed_ax.set_ylim(0, max(speeds + [1.0]) * 1.1)  # ratios start at 0
    # Legends under the panels: with more codecs, the lines fill the whole plot area.
    for ax in (size_ax, speed_ax):
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2)
    style.footer(fig, source, _stored_note(run))
    return style.save(fig, path)


def _group_label(run, level):
    return f"{run.decoder or 'default'} decoder\nlevel {level}"


def draw_decoder_paths(runs, source, path):
    """Decompression MB/s of each codec, one group per gdfs decoder path (one run each); each
    non-baseline bar says its speed relative to the baseline of its own run."""
    groups = [(run, lv) for run in runs for lv in _levels(next(iter(run.series.values()), {}))]
    codecs = list(dict.fromkeys(c for run in runs for c in run.series))
    fig, axes = style.figure(1, 1, (10, 6), "Decompression speed per gdfs decoder path, "
                             f"each against {runs[0].baseline()} in the same run\n"
                             f"{_corpus(runs[0])}; {runs[0].method}")
    ax = axes[0][0]
    width = 0.8 / len(codecs)
    for i, codec in enumerate(codecs):
        color = style.color(_codec_index(runs[0], codec))
        xs, ys = [], []
        for g, (run, lv) in enumerate(groups):
            point = run.series.get(codec, {}).get(lv)
            if point:
                xs.append(g - 0.4 + width * (i + 0.5))
                ys.append(point.decompress)
        bars = ax.bar(xs, ys, width * 0.95, color=color, label=codec)
        ax.bar_label(bars, fmt="%.0f", fontsize=8, padding=2)
    _label_relative(ax, groups, codecs, width)
    ax.set_xticks(range(len(groups)), [_group_label(run, lv) for run, lv in groups])
    ax.set_ylabel("decompression MB/s of uncompressed bytes")
    ax.margins(y=0.15)
    ax.legend(loc="upper left")
    style.footer(fig, source, f"White figures: the bar's speed / {runs[0].baseline()}'s in the same run.")
    return style.save(fig, path)


def _label_relative(ax, groups, codecs, width):
    for g, (run, lv) in enumerate(groups):
        base = run.series.get(run.baseline(), {}).get(lv)
        for i, codec in enumerate(codecs):
            point = run.series.get(codec, {}).get(lv)
            if not base or not point or codec == run.baseline():
                continue
            # Three decimals, as the bench's own 'ours / libdeflate' rows.
            ax.text(g - 0.4 + width * (i + 0.5), point.decompress / 2,
                    f"{point.decompress / base.decompress:.3f}×", ha="center", va="center", color="white",
                    fontsize=9, fontweight="bold")


def draw(text, source, out_dir, stem, run_index=-1):
    """STEM-levels and STEM-vs-libdeflate from one bench table in the file, the last unless run_index
    says which (a file may hold one run per corpus); the second chart only when the run has baseline
    rows."""
    run = parse.parse_codec(text)[run_index]
    out = [draw_levels(run, source, os.path.join(out_dir, f"{stem}-levels.png"))]
    if run.baseline():
        name = f"{stem}-vs-{parse.BASELINE_PREFIX}.png"
        out.append(draw_relative(run, source, os.path.join(out_dir, name)))
    return out


def draw_paths(text, source, out_dir, stem):
    return [draw_decoder_paths(parse.parse_codec(text), source, os.path.join(out_dir, f"{stem}.png"))]
