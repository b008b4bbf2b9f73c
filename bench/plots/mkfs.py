"""Image-building chart from bench/run-mkfs output: image size, build time and peak memory of each
tool, one row of panels per tree. Bars carry the value and, as the README's table does, the ratio to
mksquashfs gzip in the same run."""

import os
import re

from . import parse, style

BASELINE_PREFIX = "mksquashfs gzip"  # the README's reference for size and time

# (MkfsRow field, panel title, x label, scale to display units, value format, ratio format or None, log?)
# Sizes differ by tenths of a percent between the DEFLATE-class tools, hence four digits on their ratio.
PANELS = [
    ("image_bytes", "Image size (lower is better)", "image MB", 1e-6, "{:,.1f}", "{:#.4g}", False),
    ("wall_s", "Build time (lower is better)", "wall-clock seconds", 1.0, "{:,.1f}", "{:.2f}", False),
    ("rss_mib", "Peak memory (lower is better)", "peak RSS, MiB (log scale)", 1.0, "{:,.0f}", None, True),
]


def _tool_label(tool):
    # The script prints gdfs's level bare ('mkfs.gdfs 7'); say what the number is.
    return re.sub(r"^(mkfs\.gdfs) (\d+)$", r"\1 -l \2", tool)


def _family_color(tool, families):
    """One colour per tool (the name's first word: mksquashfs, mkfs.erofs, mkfs.gdfs), in the order
    families lists them; a tool not listed yet takes the next colour."""
    family = tool.split()[0]
    if family not in families:
        families.append(family)
    return style.color(families.index(family))


def _describe(corpus, line):
    m = re.match(r"\S+, (\d+) bytes in (\d+) entries$", line or "")
    return f"{corpus}\n{int(m.group(1)) / 1e6:,.0f} MB, {int(m.group(2)):,} entries" if m else corpus


def _panel(ax, rows, panel, families):
    field, _, _, scale, fmt, rel_fmt, log = panel
    base = next((r for r in rows if r.tool.startswith(BASELINE_PREFIX)), None)
    ys = range(len(rows))
    values = [getattr(r, field) * scale for r in rows]
    bars = ax.barh(ys, values, color=[_family_color(r.tool, families) for r in rows], height=0.7)
    labels = []
    for r, v in zip(rows, values):
        rel = ""
        if base and rel_fmt and r is not base:
            rel = "  (" + rel_fmt.format(getattr(r, field) / getattr(base, field)) + "×)"
        labels.append(fmt.format(v) + rel)
    ax.bar_label(bars, labels=labels, fontsize=7, padding=2)
    ax.set_yticks(list(ys), [_tool_label(r.tool) for r in rows])
    ax.invert_yaxis()
    if log:
        style.log_axis(ax, "x", values=values, headroom=6)
    else:
        ax.set_xlim(0, max(values) * 1.4)


def draw(text, source, out_dir, stem):
    rows, corpora = parse.parse_mkfs(text)
    order = list(dict.fromkeys(r.corpus for r in rows))
    title = "Building images: mkfs.gdfs against mksquashfs and mkfs.erofs, same trees, same run"
    fig, axes = style.figure(len(order), len(PANELS), (12, 2.2 + 2.6 * len(order)), title, sharey="row")
    families = ["mkfs.gdfs"]  # gdfs first: blue, as in every other chart
    for row_axes, corpus in zip(axes, order):
        rows_c = [r for r in rows if r.corpus == corpus]
        for ax, panel in zip(row_axes, PANELS):
            _panel(ax, rows_c, panel, families)
            ax.set_title(f"{panel[1]}, {_describe(corpus, corpora.get(corpus))}")
            ax.set_xlabel(panel[2])
    base = next((r.tool for r in rows if r.tool.startswith(BASELINE_PREFIX)), None)
    style.footer(fig, source, f"In brackets: the ratio to {base} on the same tree (size: image bytes; "
                 "time: wall seconds)." if base else "")
    return [style.save(fig, os.path.join(out_dir, f"{stem}.png"))]
