#!/usr/bin/env bash
# Seeds for fuzz_archive: one tiny tree (a small file, a few pages with a tail, a hole, a symlink, a
# hard link, nested dirs) as a ustar tar, a GNU tar with a sparse member, a tar.gz (and one of two gzip
# members, and as xz in blocks), a zip and a newc cpio, each a few KiB; and a Python package with
# bytecode as a tar. The committed copies in regressions/fuzz_archive/ were made by this script; a
# format whose tool is missing is left out.
# Usage: make_archive_seeds.sh OUTDIR
set -euo pipefail
out=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
t=$work/tree
mkdir -p "$t/dir/sub" "$out"
printf 'hello\n' >"$t/small"
seq 1 1500 >"$t/dir/numbers"              # a page and a tail at 4 KiB pages
{ printf 'a'; head -c 9000 /dev/zero; printf 'z'; } >"$t/dir/sub/holes"
truncate -s 20000 "$t/sparse"
printf 'middle' | dd of="$t/sparse" bs=1 seek=12000 conv=notrunc status=none
ln -s small "$t/link"
ln "$t/small" "$t/dir/hardlink"
find "$t" -exec touch -h -d @1700000000 {} +
tar_opts=(-C "$t" --sort=name --owner=0 --group=0 --numeric-owner -b 1)
tar "${tar_opts[@]}" --format=ustar -cf "$out/tree.tar" .
tar "${tar_opts[@]}" --format=gnu --sparse -cf "$out/sparse-gnu.tar" sparse small
tar "${tar_opts[@]}" --format=pax --pax-option=delete=atime,delete=ctime -cf - . | gzip -9n >"$out/tree.tar.gz"
# The same tar as two gzip members, cut inside a header (as bgzip or `cat a.gz b.gz` make them).
tar "${tar_opts[@]}" --format=ustar -cf "$work/two.tar" .
{ head -c 700 "$work/two.tar" | gzip -9n; tail -c +701 "$work/two.tar" | gzip -9n; } >"$out/two-members.tar.gz"
# The same tar as xz in blocks of 4 KiB, which mkfs decodes on several threads.
xz -T2 --block-size=4KiB -c "$work/two.tar" >"$out/blocks.tar.xz"
# Python bytecode before its source (name order), which the archive walk holds back until the source.
p=$work/py
mkdir -p "$p/pkg/__pycache__"
seq 1 900 | sed 's/^/name_/' >"$p/pkg/m.py"
{ printf '\xa7\r\r\n'; seq 1 700 | sed 's/^/name_/'; } >"$p/pkg/__pycache__/m.cpython-311.pyc"
cp "$p/pkg/__pycache__/m.cpython-311.pyc" "$p/pkg/__pycache__/m.cpython-311.opt-1.pyc"
find "$p" -exec touch -h -d @1700000000 {} +
tar -C "$p" --sort=name --owner=0 --group=0 --numeric-owner -b 1 --format=ustar -cf "$out/pycache.tar" .
if command -v cpio >/dev/null; then
  (cd "$t" && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) >"$out/tree.cpio"
fi
python3 - "$t" "$out/tree.zip" <<'PY'
import os, sys, zipfile
root, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
    for d, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(files):
            p = os.path.join(d, name)
            if not os.path.islink(p):
                z.write(p, os.path.relpath(p, root))
PY
