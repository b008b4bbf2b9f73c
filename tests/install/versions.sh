#!/usr/bin/env bash
# Every tool prints the same first --version line, "NAME VERSION (gdfs image format MAJOR.MINOR)", with
# VERSION the project's (CMake's project()) and MAJOR.MINOR the newest format version mkfs.gdfs writes
# into an image's superblock (as gdfs-inspect info reads it back from a signed image). gdfs answers -V
# as well.
# Usage: versions.sh VERSION NAME=BINARY... (mkfs.gdfs and gdfs-inspect among them).
set -euo pipefail

expected=$1
shift
declare -A bin
for spec in "$@"; do bin[${spec%%=*}]=${spec#*=}; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The newest format version mkfs.gdfs writes, which the tools report: that of a signed image with a page
# of x86 calls (2.3; an image without them stays at the lowest minor it needs).
mkdir "$work/tree"
echo hello >"$work/tree/file"
for i in $(seq 2000); do printf '\xe8\x10\x00\x00\x00'; done >"$work/tree/calls"
openssl genpkey -algorithm ed25519 -out "$work/key.pem"
"${bin[mkfs.gdfs]}" -q --sign "$work/key.pem" "$work/tree" "$work/image"
format=$("${bin[gdfs-inspect]}" info --json "$work/image" | sed -n 's/^ *"version": "\([0-9.]*\)",$/\1/p')
[[ $format =~ ^[0-9]+\.[0-9]+$ ]] || { echo "FAIL: no format version in gdfs-inspect info --json"; exit 1; }

failed=0
check() {  # check NAME ARGS...: the first line of "BINARY ARGS..." against the expected line
  local name=$1 out
  shift
  out=$("${bin[$name]}" "$@")  # whole: gdfs goes on with libfuse's versions
  local line=${out%%$'\n'*}
  if [ "$line" = "$name $expected (gdfs image format $format)" ]; then
    echo "ok: $name $*: $line"
  else
    echo "FAIL: $name $*: '$line', expected '$name $expected (gdfs image format $format)'"
    failed=1
  fi
}
for name in "${!bin[@]}"; do check "$name" --version; done
[ -z "${bin[gdfs]:-}" ] || check gdfs -V
[ ${#bin[@]} -ge 4 ] || echo "note: only ${#bin[@]} tools checked (no gdfs daemon in this build?)"
exit $failed
