"""Tests of scripts/plots and its parsers (bench/plots), on the real raw files in bench/results.

Each parser test reads the expected figures out of the raw text itself, by a simpler and independent
route (a regex over the lines, or the '# raw' samples behind a table of medians), and compares them
with what the parser extracts: no figure is written down here. The chart test runs the script and
checks it writes every PNG, the same bytes twice; it skips when matplotlib is absent.
"""

import os
import re
import shutil
import statistics
import struct
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, "bench", "results")
sys.path.insert(0, os.path.join(ROOT, "bench"))

from plots import parse  # noqa: E402  (after the path)

CODEC = "2026-11-21-codec-vm.txt"
DECODER_PATHS = "2026-11-21-codec-decoder-paths-vm.txt"
CODEC_PER_CORPUS = "2026-11-23-codec-final-paired-vm.txt"  # one run per corpus: judging, then tuning
FUSE = ["2026-11-21-fuse-vm-all-peers.txt", "2026-11-21-fuse-vm-gdfs-squashfuse.txt"]
MKFS = "2026-11-21-mkfs-vm.txt"
BITPACK = "2026-11-21-bitpack-3-vm.txt"
BITPACK_NUMERIC = "2026-11-21-bitpack-numeric-vm.txt"


def raw(name):
    with open(os.path.join(RESULTS, name), encoding="utf-8") as f:
        return f.read()


# --- codec ----------------------------------------------------------------------------------------

# A codec row with five numeric cells, as the raw text has it.
CODEC_ROW = re.compile(r"^\| ([^|/]+?) \| (\d+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$", re.MULTILINE)


def test_codec_series_are_every_absolute_row():
    text = raw(CODEC)
    (run,) = parse.parse_codec(text)
    rows = CODEC_ROW.findall(text)
    assert rows, "no codec rows in the raw file"
    for name, level, ratio, comp, decomp in rows:
        assert run.series[name][int(level)] == parse.CodecPoint(float(ratio), float(comp), float(decomp))
    assert sum(len(points) for points in run.series.values()) == len(rows)
    assert run.baseline().startswith("libdeflate") and run.baseline() in text
    assert run.others() == [n for n in dict.fromkeys(r[0] for r in rows) if n != run.baseline()]
    assert run.decoder and f"gdfs decoder: {run.decoder}" in text


def quotient_may_round_to(a, b, half_step, expected, expected_half_step):
    """Whether a / b, from cells rounded to +-half_step, agrees with a ratio cell rounded to
    +-expected_half_step: the intervals the true values lie in overlap. (At 4.9 / 6.0 MB/s, one decimal
    alone is +-2%.)"""
    lo, hi = (a - half_step) / (b + half_step), (a + half_step) / (b - half_step)
    return lo <= expected + expected_half_step and expected - expected_half_step <= hi


def test_codec_ratios_from_the_series_match_the_tools_own_ratio_rows():
    # The charts derive ratios from the absolute rows; the tool derived its own from unrounded times.
    text = raw(CODEC)
    (run,) = parse.parse_codec(text)
    ours, base = run.series[run.others()[0]], run.series[run.baseline()]
    ratio_rows = re.findall(r"^\| ours / libdeflate \| (\d+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$", text,
                            re.MULTILINE)
    assert len(ratio_rows) == len(ours)
    for level, size, comp, decomp in ratio_rows:
        a, b = ours[int(level)], base[int(level)]
        assert quotient_may_round_to(a.ratio, b.ratio, 0.0005, float(size), 0.0005)
        assert quotient_may_round_to(a.compress, b.compress, 0.05, float(comp), 0.0005)
        assert quotient_may_round_to(a.decompress, b.decompress, 0.05, float(decomp), 0.0005)


def test_a_file_with_a_run_per_corpus_keeps_them_apart():
    # The README's two codec tables come from one file: the judging corpus's run, then pages.bin's.
    text = raw(CODEC_PER_CORPUS)
    fresh, pages = parse.parse_codec(text)
    assert "130310476 bytes" in fresh.corpus and "114086376 bytes" in pages.corpus
    for run in (fresh, pages):
        assert sorted(run.series[run.others()[0]]) == list(range(13))
        assert sorted(run.series[run.baseline()]) == list(range(13))
    assert fresh.series["gdfs GDeflate"][6] != pages.series["gdfs GDeflate"][6]


def test_decoder_paths_are_one_run_each():
    text = raw(DECODER_PATHS)
    runs = parse.parse_codec(text)
    # Each 'gdfs decoder:' line, and the first gdfs row after it, read straight from the text.
    expected = re.findall(r"^gdfs decoder: (.+)$(?:.|\n)*?^\| gdfs GDeflate \| (\d+) \| [\d.]+ \| [\d.]+ \| "
                          r"([\d.]+) \|$", text, re.MULTILINE)
    assert [r.decoder for r in runs] == [d for d, _, _ in expected]
    for run, (_, level, decomp) in zip(runs, expected):
        assert run.series["gdfs GDeflate"][int(level)].decompress == float(decomp)
        assert run.baseline() in run.series


def with_extra_codec(text, name):
    """The raw text with, after each of our rows, the same row under another codec's name, and a ratio
    row for it and an unsupported-level row: what a bench with one more codec might print."""
    out = []
    for line in text.splitlines(keepends=True):
        out.append(line)
        if line.startswith("| gdfs GDeflate |"):
            level = line.split("|")[2].strip()
            out.append(line.replace("gdfs GDeflate", name))
            out.append(f"| {name.split()[0]} / libdeflate | {level} | 1.000 | 1.000 | 1.000 |\n")
            out.append(f"| {name} | {level} | level not supported | | |\n")
    return "".join(out)


def test_an_extra_codec_row_becomes_an_extra_series():
    text = raw(CODEC)
    (plain,) = parse.parse_codec(text)
    (extra,) = parse.parse_codec(with_extra_codec(text, "nvcomp-cpu GDeflate"))
    assert extra.others() == plain.others() + ["nvcomp-cpu GDeflate"]
    assert extra.series["nvcomp-cpu GDeflate"] == plain.series["gdfs GDeflate"]
    assert extra.baseline() == plain.baseline()


# --- FUSE -----------------------------------------------------------------------------------------

RAW_FUSE = re.compile(r"^# raw (\S+) (\S+) (cold|warm) (tar|dd|fio numjobs=\d|find): (.+)$", re.MULTILINE)


def raw_samples(text):
    """(corpus, fs, run, metric) -> the values of its '# raw' lines: seconds for tar, dd and find,
    IOPS for fio; dd lines also give their byte count."""
    out = {}
    for corpus, fs, run, metric, rest in RAW_FUSE.findall(text):
        number = re.match(r"([\d.]+) IOPS", rest) or re.search(r"in ([\d.]+) s", rest)
        out.setdefault((corpus, fs, run, metric), []).append(float(number.group(1)))
    return out


@pytest.mark.parametrize("name", FUSE)
def test_fuse_medians_match_the_raw_samples(name):
    text = raw(name)
    res = parse.parse_fuse(text)
    samples = raw_samples(text)
    checked = 0
    for (corpus, fs, run), values in res.medians.items():
        if fs != "gdfs":  # the only filesystem named alike in the raw lines and the table
            continue
        tree_bytes = int(re.search(rf"^# {corpus}: \S+, (\d+) bytes in", text, re.MULTILINE).group(1))
        big_bytes = int(re.search(rf"^# raw {corpus} gdfs {run} dd: (\d+) bytes", text, re.M).group(1))
        median = {m: statistics.median(v) for (c, f, r, m), v in samples.items()
                  if (c, f, r) == (corpus, fs, run)}
        # The table has three significant figures (and find two decimals): compare at that precision.
        assert values["tree MB/s"] == pytest.approx(tree_bytes / median["tar"] / 1e6, rel=6e-3)
        assert values["big file MB/s"] == pytest.approx(big_bytes / median["dd"] / 1e6, rel=6e-3)
        assert values["4K IOPS 1 job"] == pytest.approx(median["fio numjobs=1"], abs=1)
        assert values["4K IOPS 4 jobs"] == pytest.approx(median["fio numjobs=4"], abs=1)
        assert values["find s"] == pytest.approx(median["find"], abs=5e-3)
        checked += 1
    assert checked == 4, "gdfs rows: two corpora, cold and warm"
    assert set(res.corpora) == {c for c, _, _ in res.medians}


@pytest.mark.parametrize("name", FUSE)
def test_fuse_ratio_table_divides_by_its_baseline(name):
    res = parse.parse_fuse(raw(name))
    assert res.baseline and res.ratios
    base_fs = next(fs for (_, fs, _) in res.medians if fs.replace(",", "") == res.baseline.replace(",", ""))
    for (corpus, fs, run), ratios in res.ratios.items():
        mine, base = res.medians[(corpus, fs, run)], res.medians[(corpus, base_fs, run)]
        for column, ratio in [("tree MB/s", "tree"), ("big file MB/s", "big file"),
                              ("4K IOPS 1 job", "4K IOPS 1 job"), ("4K IOPS 4 jobs", "4K IOPS 4 jobs")]:
            # Medians have three significant figures, ratios two decimals.
            assert ratios[ratio] == pytest.approx(mine[column] / base[column], rel=0.02, abs=6e-3)


# --- mkfs -----------------------------------------------------------------------------------------

def test_mkfs_rows_match_the_raw_table():
    text = raw(MKFS)
    rows, corpora = parse.parse_mkfs(text)
    lines = re.findall(r"^\| (\w+) \| ([^|]+?) \| (\d+) \| ([\d.]+) \| ([\d.]+) \| (\d+) \|$", text, re.M)
    assert len(lines) == len(rows) > 0
    for row, (corpus, tool, size, ratio, wall, rss) in zip(rows, lines):
        assert row == parse.MkfsRow(corpus, tool, float(size), float(ratio), float(wall), float(rss))
    for corpus, line in corpora.items():
        assert f"# {corpus}: {line}" in text
    assert set(corpora) == {r.corpus for r in rows}


# --- bitpack --------------------------------------------------------------------------------------

def per_path_rows(text, codec):
    """(set, [path speeds]) of every 'codec' row in the per-path tables, straight from the text: rows
    of a table whose header has 'avx2' (one column per path), in file order."""
    out, per_path = [], False
    for line in text.splitlines():
        if re.match(r"^set\s+codec\s+", line):
            per_path = "avx2" in line.split()
            n_paths = len(re.split(r"\s{2,}", line.strip())) - 8
        elif per_path and re.match(rf"^\S+\s+{codec}\s+\d", line):
            tokens = line.split()
            out.append((tokens[0], [float(t) for t in tokens[7:7 + n_paths]]))
    return out


def test_bitpack_per_path_tables_match_the_raw_rows():
    text = raw(BITPACK)
    tables = parse.per_path_tables(parse.parse_bitpack_tables(text))
    assert tables and all(t.paths() for t in tables)
    for codec in ("bitpack", "gdeflate", "auto"):
        parsed = [(r["set"], [r[p] for p in t.paths()])
                  for t in tables for r in t.rows if r["codec"] == codec]
        assert parsed == per_path_rows(text, codec)


def test_bitpack_numeric_last_table_is_the_last_section():
    text = raw(BITPACK_NUMERIC)
    last = parse.per_path_tables(parse.parse_bitpack_tables(text))[-1]
    expected = per_path_rows(text[text.rindex("\nset "):], "bitpack")
    parsed = [(r["set"], [r[p] for p in last.paths()]) for r in last.rows if r["codec"] == "bitpack"]
    assert parsed == expected


def test_bitpack_shapes_match_the_raw_lines():
    text = raw(BITPACK)
    shapes = parse.parse_bitpack_shapes(text)
    lines = [ln for ln in text.splitlines() if re.match(r"^\d+ B=\d+ stride=\d+ .*MB/s$", ln)]
    assert len(shapes) == len(lines) > 0
    for shape, line in zip(shapes, lines):
        assert line.startswith(f"{shape.sample_bits} B={shape.block} stride={shape.stride} {shape.mode} "
                               f"{shape.path}: ratio ")
        assert line.endswith(f"{shape.mbps:.0f} MB/s")


# --- provenance -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name",
                         [CODEC, CODEC_PER_CORPUS, DECODER_PATHS, *FUSE, MKFS, BITPACK, BITPACK_NUMERIC])
def test_captions_quote_the_file(name):
    text = raw(name)
    source = parse.source_of(text, name)
    assert source.machine and source.machine in text
    assert source.date and source.date in text
    assert source.commit in text


# --- the script -----------------------------------------------------------------------------------

def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def run_script(out_dir):
    env = dict(os.environ, PYTHON=sys.executable)
    proc = subprocess.run([os.path.join(ROOT, "scripts", "plots"), RESULTS, str(out_dir)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_the_script_writes_every_chart_and_the_same_bytes_twice(tmp_path):
    pytest.importorskip("matplotlib", reason="python3-matplotlib is not installed: chart test skipped")
    from plots.__main__ import CHARTS

    first = run_script(tmp_path / "a")
    names = sorted(os.path.basename(p) for p in first)
    assert names == sorted(os.listdir(tmp_path / "a"))
    for chart in CHARTS:
        assert any(n.startswith(chart.stem) for n in names), f"no PNG for {chart.stem}"
        if chart.draw.__module__.endswith("fuse"):  # one per tree in the file
            res = parse.parse_fuse(raw(chart.raw))
            for corpus in {c for c, _, _ in res.medians}:
                assert f"{chart.stem}-{corpus}.png" in names
    for n in names:
        width, height = png_size(tmp_path / "a" / n)
        assert 900 <= width <= 1300 and 450 <= height <= 900, f"{n}: {width}x{height}"
    run_script(tmp_path / "b")
    for n in names:
        assert (tmp_path / "a" / n).read_bytes() == (tmp_path / "b" / n).read_bytes(), f"{n} differs"


def test_charts_draw_a_file_with_an_extra_codec(tmp_path):
    pytest.importorskip("matplotlib", reason="python3-matplotlib is not installed: chart test skipped")
    from plots import codec

    for name, draw in ((CODEC, codec.draw), (DECODER_PATHS, codec.draw_paths)):
        text = with_extra_codec(raw(name), "nvcomp-cpu GDeflate")
        for path in draw(text, parse.source_of(text, name), str(tmp_path), "extra"):
            assert png_size(path)[0] > 0


def test_a_missing_raw_file_is_reported(tmp_path):
    pytest.importorskip("matplotlib", reason="python3-matplotlib is not installed: chart test skipped")
    shutil.copy(os.path.join(RESULTS, MKFS), tmp_path / MKFS)
    env = dict(os.environ, PYTHON=sys.executable)
    proc = subprocess.run([os.path.join(ROOT, "scripts", "plots"), str(tmp_path), str(tmp_path / "out")],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1
    assert os.listdir(tmp_path / "out") == ["mkfs.png"]
    assert CODEC_PER_CORPUS in proc.stderr
