#!/usr/bin/env bash
# The library is the only door: `cmake --install` this build into a staging root, then build
# tests/install/use_libgdfs.cc against that tree alone (pkg-config gdfs; no include path into the source
# tree) and run it over an image the staged mkfs.gdfs made. It reads, stats, seeks holes and batch-reads
# like the daemon does. Then the same program and a C99 one (use_libgdfs.c) as a CMake project would
# build them: find_package(gdfs CONFIG) and the target gdfs::gdfs.
# usage: library-door.sh BUILD_DIR      exit 77 (skip) without pkg-config, c++, cc or cmake
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
command -v pkg-config >/dev/null || { echo "skip: pkg-config is not installed"; exit 77; }
command -v c++ >/dev/null || { echo "skip: no C++ compiler (c++)"; exit 77; }
command -v cc >/dev/null || { echo "skip: no C compiler (cc)"; exit 77; }
command -v cmake >/dev/null || { echo "skip: cmake is not installed"; exit 77; }
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

# A CMake project outside this tree, told only where the staged prefix is.
user=$work/cmake-user
mkdir -p "$user"
cp "$here/use_libgdfs.cc" "$here/use_libgdfs.c" "$user/"
cat >"$user/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.16)
project(use_libgdfs C CXX)
find_package(gdfs 0 CONFIG REQUIRED)
add_executable(use_libgdfs use_libgdfs.cc)
target_compile_features(use_libgdfs PRIVATE cxx_std_20)
target_link_libraries(use_libgdfs PRIVATE gdfs::gdfs)
add_executable(use_libgdfs_c use_libgdfs.c)
set_target_properties(use_libgdfs_c PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_link_libraries(use_libgdfs_c PRIVATE gdfs::gdfs)
foreach(t use_libgdfs use_libgdfs_c)
  target_compile_options(${t} PRIVATE -Wall -Wextra -Werror)
endforeach()
CMAKE
cmake -S "$user" -B "$user/build" -DCMAKE_PREFIX_PATH="$work/root/usr" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$user/build" >/dev/null
LD_LIBRARY_PATH=$lib "$user/build/use_libgdfs" "$work/img.gdfs" "$src" /sparse
LD_LIBRARY_PATH=$lib "$user/build/use_libgdfs_c" "$work/img.gdfs" /link "$src/dir/numbers"
