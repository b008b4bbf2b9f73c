"""The look every chart shares, and saving it so that a rerun writes the same bytes."""

import math

import matplotlib

matplotlib.use("Agg")  # no display; also the backend whose PNG output is byte-stable

import matplotlib.pyplot as plt  # noqa: E402  (after use())
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

DPI = 100
# One colour per series, always in this order, so a codec or filesystem keeps its colour across the
# panels of a figure. gdfs is the first series everywhere, hence blue.
COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
          "#bcbd22", "#17becf"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]

# Fixed fonts and sizes: the output must not depend on the user's matplotlibrc.
_RC = {
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "figure.titlesize": 12,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.axisbelow": True,
    "savefig.facecolor": "white",
}


def color(i):
    return COLORS[i % len(COLORS)]


def marker(i):
    return MARKERS[i % len(MARKERS)]


def figure(nrows, ncols, size, title, **kwargs):
    """A figure of size (width, height) in inches at DPI, with a constrained layout that leaves a
    strip at the bottom for the footer."""
    plt.rcdefaults()
    plt.rcParams.update(_RC)
    fig, axes = plt.subplots(nrows, ncols, figsize=size, dpi=DPI, squeeze=False, layout="constrained",
                             **kwargs)
    fig.get_layout_engine().set(rect=(0, 0.045, 1, 0.955))
    fig.suptitle(title)
    return fig, axes


def footer(fig, source, note=""):
    """Names the raw file, the machine, the date and the commit: every chart says where it is from."""
    parts = [f"Source: {source.shown}", source.machine, source.date]
    if source.commit:
        parts.append(f"commit {source.commit}")
    text = " | ".join(p for p in parts if p)
    if note:
        text += "\n" + note
    fig.text(0.005, 0.005, text, fontsize=7, color="#444444", ha="left", va="bottom")


def _plain(value, _pos=None):
    # '1,000' and '0.01' read better than '10^3' and '10^-2' for people comparing with the tables.
    return f"{value:,.10g}"


def log_axis(ax, axis="y", values=None, headroom=1.0):
    """Log scale labelled with plain numbers.

    With values, the axis starts at the power of ten below the smallest: bars on a log axis start at
    the axis's bottom, so it must be a round number rather than wherever autoscaling puts it. Over
    two and a half decades or less, ticks go at 1, 2 and 5 times each power of ten, so that a short
    axis still has several labels.
    headroom multiplies the top, to leave room for labels above bars.
    """
    given = values is not None
    values = [v for v in values or [] if v and v > 0 and math.isfinite(v)]
    if given and not values:
        # Every cell n/a: an empty linear panel that says so, rather than a log axis with no range.
        ax.text(0.5, 0.5, "no figures in the raw file", transform=ax.transAxes, ha="center", va="center")
        (ax.set_yticks if axis == "y" else ax.set_xticks)([])
        return
    target = ax.yaxis if axis == "y" else ax.xaxis
    (ax.set_yscale if axis == "y" else ax.set_xscale)("log")
    subs = (1.0,)
    if values:
        lo, hi = 10 ** math.floor(math.log10(min(values))), max(values) * headroom
        if lo >= min(values):
            lo /= 10  # a bar exactly at the bottom would not show
        (ax.set_ylim if axis == "y" else ax.set_xlim)(lo, hi)
        if math.log10(hi / lo) <= 2.5:
            subs = (1.0, 2.0, 5.0)
    target.set_major_locator(LogLocator(base=10, subs=subs))
    target.set_major_formatter(FuncFormatter(_plain))
    target.set_minor_formatter(NullFormatter())


def save(fig, path):
    # Matplotlib writes its version into the PNG's 'Software' chunk; dropping it keeps the file the
    # same across reruns (and across patch releases that draw identically). Agg stores no timestamp.
    fig.savefig(path, dpi=DPI, metadata={"Software": None})
    plt.close(fig)
    return path
