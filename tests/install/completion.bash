#!/usr/bin/env bash
# The bash completions in completion/: sources bash-completion and each file, then runs the function
# each one registers as bash would on TAB, and compares COMPREPLY with what should be offered.
# Usage: completion.bash COMPLETION_DIR MKFS_BINARY INSPECT_BINARY GDEFLATE_BINARY
# Exits 77 (a skip, for ctest) when bash-completion is not installed.
set -euo pipefail

bash_completion=/usr/share/bash-completion/bash_completion
if [ ! -r "$bash_completion" ]; then
  echo "SKIP: $bash_completion is missing (Debian package bash-completion)"
  exit 77
fi
dir=$1 mkfs=$2 inspect=$3 gdeflate=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A tree to complete local names in, and an image to complete paths inside.
mkdir -p "$work/srcdir" "$work/tree/docs"
touch "$work/srcfile" "$work/tree/readme" "$work/tree/docs/a.txt"
"$mkfs" -q "$work/tree" "$work/t.gdfs"
cd "$work"

# bash-completion and the completion functions are not written for -e and -u.
set +eu
# shellcheck disable=SC1090
source "$bash_completion"
for f in gdfs mkfs.gdfs gdfs-inspect gdeflate; do
  # shellcheck disable=SC1090
  source "$dir/$f"
done
# compopt only works under a real completion; these tests look at COMPREPLY alone.
compopt() { :; }

# complete LINE: fills COMPREPLY as bash does for TAB at the end of LINE. LINE is split into words as
# bash splits it (at blanks and at the '=' and ':' of COMP_WORDBREAKS; no quotes in these tests).
complete_line() {
  local line=$1 w
  COMP_LINE=$line COMP_POINT=${#line} COMP_WORDS=()
  set -f
  for w in $line; do
    while [[ $w =~ ^([^=:]*)([=:]+)(.*)$ ]]; do
      [ -n "${BASH_REMATCH[1]}" ] && COMP_WORDS+=("${BASH_REMATCH[1]}")
      COMP_WORDS+=("${BASH_REMATCH[2]}")
      w=${BASH_REMATCH[3]}
    done
    [ -n "$w" ] && COMP_WORDS+=("$w")
  done
  set +f
  [[ $line == *' ' ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  local spec func
  spec=$(complete -p "${COMP_WORDS[0]##*/}") || return
  func=$(sed -n 's/.*-F \([^ ]*\).*/\1/p' <<<"$spec")
  COMPREPLY=()
  "$func" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
}

failed=0
# expect LINE WORD...: the sorted completions for LINE are exactly the WORDs.
expect() {
  local line=$1 got want
  shift
  complete_line "$line"
  got=$(printf '%s\n' "${COMPREPLY[@]}" | sort | xargs)
  want=$(printf '%s\n' "$@" | sort | xargs)
  if [ "$got" = "$want" ]; then
    echo "ok: '$line' -> $got"
  else
    echo "FAIL: '$line' -> '$got', expected '$want'"
    failed=1
  fi
}
# expect_some LINE WORD...: the completions for LINE include every WORD.
expect_some() {
  local line=$1 w
  shift
  complete_line "$line"
  for w in "$@"; do
    if ! printf '%s\n' "${COMPREPLY[@]}" | grep -qxF -- "$w"; then
      echo "FAIL: '$line' -> '${COMPREPLY[*]}', lacks '$w'"
      failed=1
      return
    fi
  done
  echo "ok: '$line' -> includes $*"
}

# The options of a --help (CLI11's layout: "  -l,--level,--levels TYPE"), one per line.
help_options() {
  "$@" --help | grep -aoE '^  (-[a-zA-Z],)?--[a-z0-9-]+(,--[a-z0-9-]+)*' | tr -d ' ' | tr ',' '\n'
}
# Each command offers every option of its --help after '-', and nothing else.
mapfile -t options < <(help_options "$mkfs")
expect 'mkfs.gdfs -' "${options[@]}"
for sub in info ls pages stats verify cat extract flatten counters; do
  mapfile -t options < <(help_options "$inspect" "$sub")
  expect "gdfs-inspect $sub -" "${options[@]}"
done
for sub in compress decompress bench; do
  mapfile -t options < <(help_options "$gdeflate" "$sub")
  expect "gdeflate $sub -" "${options[@]}"
done

# mkfs.gdfs: options and their values, SOURCE (a directory or an archive), then IMAGE (any file).
expect_some 'mkfs.gdfs --co' --codec --codec-for
expect_some 'mkfs.gdfs --' --base --layered --base-hint --sign
expect 'mkfs.gdfs --base sr' srcdir srcfile
expect 'mkfs.gdfs --sign k.pem --base old.gdfs srcdir out.gdfs x'
expect 'mkfs.gdfs --codec ' gdeflate bitpack auto
expect 'mkfs.gdfs --codec=bi' bitpack
expect 'mkfs.gdfs --codec-for *.wav=au' auto
expect 'mkfs.gdfs --codec-for=*.wav=au' auto
expect 'mkfs.gdfs --page-size 3' 32768
expect 'mkfs.gdfs -l 1' 1 10 11 12
expect 'mkfs.gdfs sr' srcdir srcfile
expect 'mkfs.gdfs -l 9 --exclude *.o srcdir sr' srcdir srcfile
expect 'mkfs.gdfs --exclude-xattr security.* --tail-pack-limit 0 sr' srcdir srcfile
expect 'mkfs.gdfs srcdir out.gdfs x'

# gdfs: options, the -o list (names, and values after '='), IMAGE then MOUNTPOINT.
expect_some 'gdfs -' -f -o --version
expect 'gdfs -o ca' ca_file= cache_dir= cache_size=
expect 'gdfs -o s3_addressing=v' virtual
expect 'gdfs -o decoder=g' gpu
expect 'gdfs -o allow_other,dec' allow_other,decoder=
expect 'gdfs -o cache_size=1G,dec' 1G,decoder=
expect 'gdfs -o uring=' 0 1
expect 'gdfs -o store_ahead=' 0 1
expect 'gdfs -o walk_ahead=' 0 1
expect 'gdfs -o xattr=' auto 0 1
expect 'gdfs -o trus' trusted_key=
expect 'gdfs -o u' uid= umask= uring=
expect 'gdfs -o ro sr' srcdir srcfile
expect 'gdfs srcfile sr' srcdir

# gdfs-inspect: subcommands, each one's options, and paths inside the image (the binary lists them).
expect 'gdfs-inspect ' info ls pages stats verify cat extract flatten counters
expect 'gdfs-inspect ls -' -h --help -l --long -R --recursive --json --base --key
expect 'gdfs-inspect flatten --' --help --base --key --force --sign
expect 'gdfs-inspect counters --' --help --json
expect "$inspect cat --key srcfile t.gdfs " docs/ readme
expect 'gdfs-inspect verify --' --help --threads --base --key
expect "$inspect cat t.gdfs " docs/ readme
expect "$inspect cat t.gdfs /d" /docs/
expect "$inspect ls -l t.gdfs docs/" docs/a.txt
expect "$inspect extract t.gdfs srcdir /r" /readme
expect "$inspect extract t.gdfs sr" srcdir
expect "$inspect extract t.gdfs --archive x.tar /r" /readme
expect 'gdfs-inspect extract --format gn' gnutar
expect 'gdfs-inspect extract --compress z' zstd
expect "$inspect info t.gdfs "

# gdeflate: subcommands, options and their values, INPUT and OUTPUT.
expect 'gdeflate ' compress decompress bench
expect 'gdeflate decompress --' --help --threads --raw --size
expect 'gdeflate bench --decoder av' avx2 avx512
expect 'gdeflate bench -l a' all
expect 'gdeflate compress -l 1' 1 10 11 12
expect 'gdeflate compress srcf' srcfile
expect 'gdeflate compress srcfile out x'

exit $failed
