#!/usr/bin/env bash
# Seeds for fuzz_image: small images of a tree with every entry kind (pages, tails, holes, dedupe,
# stored pages, x86-filtered pages, symlinks, a fifo, xattrs, nested dirs), at 4 KiB pages so each seed
# stays small. With STORED_META (the fuzz_stored_meta_seed tool), also a copy of each whose metadata
# blocks are stored, so that the fuzzer's mutations reach the records rather than a GDeflate block.
# Usage: make_image_seeds.sh MKFS OUTDIR [STORED_META]
set -euo pipefail
mkfs=$1 out=$2 stored_meta=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
t=$work/tree
mkdir -p "$t/dir/sub" "$t/empty-dir" "$out"
printf 'hello\n' >"$t/small"
seq 1 3000 >"$t/numbers"                      # pages and a tail
cp "$t/numbers" "$t/dir/numbers-copy"         # dedupe
LC_ALL=C awk 'BEGIN { srand(7); for (i = 0; i < 6000; i++) printf "%c", int(rand() * 256) }' >"$t/dir/random"  # stored
{ printf 'a'; head -c 9000 /dev/zero; printf 'z'; } >"$t/dir/sub/holes"
# x86-filtered pages (codec 4): a call every 8 bytes, to one of 7 targets.
for i in $(seq 0 1199); do
  printf -v rel '%02x' $((16 * (i % 7) + 1))
  printf "\\xe8\\x${rel}\\x01\\x00\\x00HHH"
done >"$t/dir/calls"
: >"$t/empty"
ln -s numbers "$t/link"
ln "$t/small" "$t/dir/hardlink"
mkfifo "$t/fifo"
setfattr -n user.seed -v 1 "$t/small" 2>/dev/null || true
export SOURCE_DATE_EPOCH=1700000000
"$mkfs" -q --force --page-size 4096 "$t" "$out/tree-4k.img"
"$mkfs" -q --force --page-size 4096 --no-dedupe -l 1 "$t" "$out/tree-4k-l1.img"
"$mkfs" -q --force --page-size 4096 "$t/dir/sub" "$out/one-file.img"
# A layered image (FORMAT.md 4.3) on tree-4k: its layer table and layer fields get fuzzed too (its base
# is not beside the fuzzer's input, so open stops after validation, where the parsing is).
printf 'new\n' >"$t/added"
"$mkfs" -q --force --page-size 4096 --base "$out/tree-4k.img" --layered "$t" "$out/layered.img"
# Signed images (FORMAT.md 7.1) for fuzz_signature, by the test key whose public half it trusts.
key=$(dirname "$0")/signature-test-key.pem
"$mkfs" -q --force --page-size 4096 --sign "$key" "$t" "$out/signed.img"
"$mkfs" -q --force --page-size 4096 --sign "$key" "$t/dir/sub" "$out/signed-one-file.img"
if [ -n "$stored_meta" ]; then
  for img in tree-4k tree-4k-l1 one-file; do "$stored_meta" "$out/$img.img" "$out/$img-stored-meta.img"; done
fi
