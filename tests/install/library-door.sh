#!/usr/bin/env bash
# The library is the only door: `cmake --install` this build into a staging root, then build
# tests/install/use_libgdfs.cc against that tree alone (pkg-config gdfs; no include path into the source
# tree) and run it over an image the staged mkfs.gdfs made. It reads, stats, seeks holes and batch-reads
# like the daemon does. usage: library-door.sh BUILD_DIR      exit 77 (skip) without pkg-config or c++
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
command -v pkg-config >/dev/null || { echo "skip: pkg-config is not installed"; exit 77; }
command -v c++ >/dev/null || { echo "skip: no C++ compiler (c++)"; exit 77; }
work=$(mktemp -d /tmp/gdfs-door.XXXXXX)
trap 'rm -rf "$work"' EXIT
DESTDIR=$work/root cmake --install "$build" --prefix /usr >/dev/null
lib=$(dirname "$(find "$work/root" -name 'libgdfs.so' -print -quit)")
pc=$(dirname "$(find "$work/root" -name 'gdfs.pc' -print -quit)")
cflags=$(PKG_CONFIG_PATH=$pc pkg-config --cflags gdfs)
libs=$(PKG_CONFIG_PATH=$pc pkg-config --libs gdfs)
# shellcheck disable=SC2086 # the flags are words
c++ -std=c++20 -Wall -Wextra -Werror $cflags "$here/use_libgdfs.cc" $libs -o "$work/use_libgdfs"

src=$work/src
mkdir -p "$src/dir/sub"
head -c 300000 /dev/urandom >"$src/random"
seq 1 200000 >"$src/dir/numbers"
printf 'hello' >"$src/dir/sub/hello"
: >"$src/empty"
ln -s dir/numbers "$src/link"
# A sparse file: data, a 10 MiB hole, data, a hole to the end.
printf 'start' >"$src/sparse"
printf 'middle' | dd of="$src/sparse" bs=1 seek=$((10 << 20)) conv=notrunc status=none
truncate -s $((30 << 20)) "$src/sparse"
"$work/root/usr/bin/mkfs.gdfs" -q "$src" "$work/img.gdfs"
LD_LIBRARY_PATH=$lib "$work/use_libgdfs" "$work/img.gdfs" "$src" /sparse
