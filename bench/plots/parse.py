"""Parsers for the raw benchmark outputs under bench/results/.

Each parser takes the text of one raw file, exactly as the bench tool and script wrote it, and returns
plain data; nothing here draws. Old results are never rewritten, so the parsers take each format as it
is: Markdown tables (gdeflate bench, bench/run-fuse, bench/run-mkfs), the whitespace tables of
gdfs-bitpack-bench, and the one-line records of the bpmicro driver kept in a bitpack results file.
"""

import re
from dataclasses import dataclass, field


# --- provenance -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Source:
    """Where a chart's numbers come from; every chart prints this in its footer."""
    shown: str  # the file as the caption names it (repository-relative where possible)
    machine: str
    date: str
    commit: str


def _header_value(text, key):
    """The value of the first 'key: value' line, with or without the '# ' prefix bench scripts use."""
    m = re.search(rf"^#?\s*{key}:\s*(.+)$", text, re.MULTILINE)
    return m.group(1).strip() if m else ""


def source_of(text, shown):
    # The first machine line is the script's (it carries the core count); the tool's own line
    # further down is shorter. Some files run a remark on after ';' or into a parenthesis that closes
    # on the next line: the caption keeps the facts before it.
    machine = _header_value(text, "machine").split(";")[0]
    machine = re.sub(r"\s*\([^)]*$", "", machine).strip()
    # Dates are either an ISO stamp or '2026-11-21 (times in the raw sections below)'.
    date = re.sub(r"\s*\(.*$", "", _header_value(text, "date"))
    return Source(shown=shown, machine=machine, date=date, commit=_header_value(text, "commit"))


# --- cells ----------------------------------------------------------------------------------------

def number(cell):
    """A table cell as a float, or None when it is not a number ('level not supported', '')."""
    s = cell.strip().strip("*").replace(",", "")
    try:
        return float(s)
    except ValueError:
        return None


# --- Markdown tables ------------------------------------------------------------------------------

@dataclass
class Table:
    header: list
    rows: list  # lists of cell strings, as many as the header has
    preamble: str  # the text between the previous table (or the file start) and this one


def _cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _is_row(line):
    s = line.strip()
    return s.startswith("|") and s.endswith("|") and len(s) > 1


def _is_separator(line):
    return _is_row(line) and all(re.fullmatch(r":?-+:?", c) for c in _cells(line))


def markdown_tables(text):
    """Every Markdown table in text, in order.

    A '#' line inside a table does not end it: bench/run-mkfs prints each corpus's description as
    a comment between its rows. A blank or any other line does.
    """
    lines = text.splitlines()
    tables, start_of_gap, i = [], 0, 0
    while i < len(lines):
        if not (_is_row(lines[i]) and i + 1 < len(lines) and _is_separator(lines[i + 1])):
            i += 1
            continue
        header = _cells(lines[i])
        table = Table(header=header, rows=[], preamble="\n".join(lines[start_of_gap:i]))
        i += 2
        while i < len(lines) and (_is_row(lines[i]) or lines[i].startswith("#")):
            cells = _cells(lines[i]) if _is_row(lines[i]) else None
            if cells is not None and len(cells) == len(header):
                table.rows.append(cells)
            i += 1
        tables.append(table)
        start_of_gap = i
    return tables


def unique_names(header):
    """Header names made unique: bench/run-fuse repeats 'p50 µs' and 'p99 µs' after each IOPS column."""
    seen, out = {}, []
    for name in header:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return out


# --- gdeflate bench (codec) -----------------------------------------------------------------------

BASELINE_PREFIX = "libdeflate"  # the codec every gdeflate bench run measures ours against


@dataclass(frozen=True)
class CodecPoint:
    ratio: float  # uncompressed / compressed bytes
    compress: float  # MB/s of uncompressed bytes
    decompress: float


@dataclass
class CodecRun:
    """One 'gdeflate bench' table: codec name -> level -> point, codecs in order of appearance."""
    decoder: str  # the 'gdfs decoder:' line: the page decoder our rows ran on
    corpus: str  # the 'gdeflate bench:' line: '1 file(s), 114086376 bytes in 1741 pages of up to 64 KiB'
    method: str  # the 'method:' line up to its first ';': 'single thread'
    series: dict = field(default_factory=dict)

    def baseline(self):
        return next((c for c in self.series if c.startswith(BASELINE_PREFIX)), None)

    def others(self):
        """Every codec but the baseline: ours first, then any extra codec rows the run carries."""
        return [c for c in self.series if c != self.baseline()]


def parse_codec(text):
    """Every gdeflate bench table in text (a file may hold several runs, e.g. one per decoder path).

    Rows named 'A / B' are ratios the tool derives from the absolute rows; they are skipped and the
    charts derive ratios themselves, so that any further codec row (say nvCOMP's host codec) gets the
    same treatment as ours without the parser knowing its name. Rows with a non-numeric cell ('level
    not supported') are skipped too.
    """
    runs = []
    for t in markdown_tables(text):
        if [h.lower() for h in t.header[:2]] != ["codec", "level"]:
            continue
        run = CodecRun(decoder=_header_value(t.preamble, "gdfs decoder"),
                       corpus=_header_value(t.preamble, "gdeflate bench"),
                       method=_header_value(t.preamble, "method").split(";")[0])
        for name, level, ratio, comp, decomp in (r[:5] for r in t.rows):
            values = [number(level), number(ratio), number(comp), number(decomp)]
            if "/" in name or None in values:
                continue
            run.series.setdefault(name, {})[int(values[0])] = CodecPoint(*values[1:])
        runs.append(run)
    return runs


# --- bench/run-fuse ---------------------------------------------------------------------------

@dataclass
class FuseResults:
    medians: dict  # (corpus, filesystem, run) -> {column: value}, in the file's row order
    ratios: dict  # the same keys (baseline rows absent) -> {column: ratio to the baseline}
    baseline: str  # the filesystem the ratio table divides by, as its caption names it
    corpora: dict  # corpus -> its description line ('/tmp/..., 959140332 bytes in 10 files, ...')
    note: str  # the medians table's caption: 'Medians of 3 runs (cold: caches dropped ...; warm: ...)'

    def filesystems(self, corpus):
        return list(dict.fromkeys(fs for c, fs, _ in self.medians if c == corpus))

    def runs(self, corpus):
        return list(dict.fromkeys(r for c, _, r in self.medians if c == corpus))


def _keyed_rows(table):
    names = unique_names(table.header)
    out = {}
    for row in table.rows:
        out[tuple(row[:3])] = {n: number(v) for n, v in zip(names[3:], row[3:])}
    return out


def parse_fuse(text):
    """The medians table and the ratio table that bench/run-fuse prints at the end of its run."""
    medians, ratios, baseline, note = {}, {}, "", ""
    for t in markdown_tables(text):
        if [h.lower() for h in t.header[:3]] != ["corpus", "filesystem", "run"]:
            continue
        m = re.search(r"Ratios to (.+?) in the same run", t.preamble)
        if m:
            ratios, baseline = _keyed_rows(t), m.group(1)
        else:
            medians = _keyed_rows(t)
            note = t.preamble.strip().splitlines()[-1].rstrip(".") if t.preamble.strip() else ""
    corpora = dict(re.findall(r"^# (\w+): (/\S+, \d+ bytes in .+)$", text, re.MULTILINE))
    return FuseResults(medians=medians, ratios=ratios, baseline=baseline, corpora=corpora, note=note)


# --- bench/run-mkfs ---------------------------------------------------------------------------

@dataclass(frozen=True)
class MkfsRow:
    corpus: str
    tool: str
    image_bytes: float
    ratio: float
    wall_s: float
    rss_mib: float


def parse_mkfs(text):
    """The rows of bench/run-mkfs's table, and each corpus's description from its '# corpus:' line."""
    rows = []
    for t in markdown_tables(text):
        if [h.lower() for h in t.header[:2]] != ["corpus", "tool"]:
            continue
        for corpus, tool, *vals in (r[:6] for r in t.rows):
            nums = [number(v) for v in vals]
            if None not in nums:
                rows.append(MkfsRow(corpus, tool, *nums))
    corpora = dict(re.findall(r"^# (\w+): (/\S+, \d+ bytes in .+)$", text, re.MULTILINE))
    return rows, corpora


# --- gdfs-bitpack-bench ---------------------------------------------------------------------------

@dataclass
class BitpackTable:
    columns: list  # 'set', 'codec', 'pages', ..., one name per column ('enc MB/s' is one name)
    rows: list  # dicts column -> value: str for set and codec, float for the rest
    label: str  # the last '== ...' line before the table ('after (this tree) run 1'), or ''
    caption: str  # the line above the header: 'GDeflate level 7, 65536-byte pages; decode MB/s ...'

    def paths(self):
        """The decode-path columns: those between the 'bitpack' page count and 'enc MB/s'."""
        return self.columns[self.columns.index("bitpack") + 1:self.columns.index("enc MB/s")]


def per_path_tables(tables):
    """The tables with a decode-speed column per bitpack decode path. Older bench binaries printed one
    'dec MB/s' column (one path) and 'portable'; their figures cannot be set beside the newer ones."""
    return [t for t in tables if "dec MB/s" not in t.columns and {"bitpack", "enc MB/s"} <= set(t.columns)]


def parse_bitpack_tables(text):
    """Every gdfs-bitpack-bench table in text.

    Columns are separated by two or more spaces in the header ('enc MB/s' holds one space). The
    bench's header changed: older binaries print 'dec MB/s  portable', newer ones one column per
    decode path ('avx512  avx2  portable'). 'estimate' lines, a timing of the size search, are not
    table rows and are skipped.
    """
    tables, label, current, previous = [], "", None, ""
    for line in text.splitlines():
        if line.startswith("=="):
            label, current = line.strip("= ").strip(), None
        elif re.match(r"^set\s{2,}codec\s{2,}", line):
            current = BitpackTable(columns=re.split(r"\s{2,}", line.strip()), rows=[], label=label,
                                   caption=previous.strip())
            tables.append(current)
        elif current is not None and not _is_estimate(line):
            row = _bitpack_row(current.columns, line.split())
            if row is None:
                current = None  # the table has ended
            else:
                current.rows.append(row)
        previous = line
    return tables


def _is_estimate(line):
    tokens = line.split()
    return len(tokens) >= 2 and tokens[1] == "estimate"


def _bitpack_row(columns, tokens):
    """tokens as a row of a table with these columns, or None when they are not one."""
    if len(tokens) != len(columns) or None in map(number, tokens[2:]):
        return None
    row = dict(zip(columns[:2], tokens[:2]))
    row.update({c: number(v) for c, v in zip(columns[2:], tokens[2:])})
    return row


@dataclass(frozen=True)
class BitpackShape:
    sample_bits: int
    block: int
    stride: int
    mode: str
    path: str
    ratio: float
    mbps: float


_SHAPE = re.compile(r"^(16|32) B=(\d+) stride=(\d+) (\w+) (\w+): ratio ([\d.]+), ([\d.]+) MB/s$",
                    re.MULTILINE)


def parse_bitpack_shapes(text):
    """The bpmicro lines ('16 B=32 stride=1 outlier avx2: ratio 1.883, 4141 MB/s'), in order."""
    return [BitpackShape(int(b), int(blk), int(s), mode, path, float(r), float(v))
            for b, blk, s, mode, path, r, v in _SHAPE.findall(text)]
