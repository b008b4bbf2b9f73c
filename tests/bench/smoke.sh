#!/bin/bash
# usage: smoke.sh MKFS METADATA_INFLATE_TIME INCOMPRESSIBLE_PROBE READ_BENCH
set -euo pipefail
mkfs=$1 inflate=$2 probe=$3 read_bench=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
# Runs a command that must exit with `want`; its stdout goes to $work/out.
expect() {
  local want=$1 rc=0
  shift
  "$@" >"$work/out" 2>"$work/err" || rc=$?
  [ "$rc" -eq "$want" ] || fail "$* exited $rc, not $want: $(cat "$work/err")"
}

mkdir "$work/tree"
seq 1 40000 >"$work/tree/text"                                   # 228,894 bytes: 3 whole 64 KiB pages
head -c 131072 /dev/urandom >"$work/tree/random"                  # 2 whole pages
"$mkfs" -q "$work/tree" "$work/img.gdfs" || fail "mkfs.gdfs"

expect 0 "$inflate" "$work/img.gdfs" 2
grep -Eq "^$work/img.gdfs: [0-9]+ stored -> [0-9]+ bytes, 2 thread\(s\): inflate " "$work/out" ||
  fail "metadata-inflate-time printed: $(cat "$work/out")"
expect 2 "$inflate"
expect 1 "$inflate" "$work/tree/text"                             # not an image

expect 0 "$probe" full "$work/tree"
grep -Eq "^pages 5 skip [0-9]+ probe " "$work/out" || fail "incompressible-probe printed: $(cat "$work/out")"
expect 2 "$probe" sideways "$work/tree"
expect 2 "$probe" full

expect 0 "$read_bench" "$work/img.gdfs" /text --size 4096 --iters 20 --reps 2
[ "$(grep -c '^cxx pass=' "$work/out")" -eq 2 ] || fail "read-bench printed: $(cat "$work/out")"
grep -q '^cxx median ' "$work/out" || fail "read-bench printed no medians: $(cat "$work/out")"
expect 2 "$read_bench" "$work/img.gdfs"
echo "ok"
