#!/usr/bin/env bash
# Every option that a tool's --help prints (and each of its subcommands' --help) must appear in the
# tool's man page, so that the pages cannot drift from the parsers. For gdfs, the -o NAME options of
# its help count too. Usage: man-options.sh MAN_DIR NAME=BINARY... (the page is MAN_DIR/NAME.1).
# Exits 77 (a skip, for ctest) when man is not installed.
set -euo pipefail

if ! command -v man >/dev/null; then
  echo "SKIP: man is not installed (Debian package man-db)"
  exit 77
fi
man_dir=$1
shift

# The help of the tool and of each subcommand listed under "Subcommands:" (CLI11's layout).
all_help() {
  local bin=$1 help sub
  help=$("$bin" --help)
  printf '%s\n' "$help"
  for sub in $(printf '%s\n' "$help" | sed -n '/^Subcommands:/,/^$/p' | awk 'NR > 1 && /^  [^ ]/ { print $1 }'); do
    "$bin" "$sub" --help
  done
}

failed=0
for spec in "$@"; do
  name=${spec%%=*} bin=${spec#*=}
  page=$man_dir/$name.1
  [ -f "$page" ] || { echo "FAIL: $name has no man page $page"; failed=1; continue; }
  # Wide enough that no line breaks inside an option name; ASCII so that \- renders as -.
  text=$(MANWIDTH=1000 man -E ascii -l "$page" 2>/dev/null | col -bx)
  # tr: CLI11 prints NUL bytes in the help of an enum option (gdeflate bench --decoder).
  help=$(all_help "$bin" | tr -d '\0')
  # Long options (--name) and short ones (-x, as in "-x," or "-x ").
  opts=$(printf '%s\n' "$help" | grep -oE -- '(^|[ ,])--?[A-Za-z][A-Za-z0-9-]*' | tr -d ' ,' | sort -u |
         grep -vxE -- '-[A-Za-z][A-Za-z0-9-]+')
  # gdfs: "-o name" options, found in the page as "-o name" or "name=".
  oopts=$(printf '%s\n' "$help" | { grep -oE -- '-o [a-z_][a-z0-9_]*' || true; } | cut -c4- | sort -u)
  [ -n "$opts" ] || { echo "FAIL: $name: no options found in its --help"; failed=1; continue; }
  missing=()
  for o in $opts; do
    grep -qE -- "(^|[^A-Za-z0-9-])$o([^A-Za-z0-9-]|\$)" <<<"$text" || missing+=("$o")
  done
  for o in $oopts; do
    grep -qE -- "(-o $o|(^|[^a-z0-9_])$o=)" <<<"$text" || missing+=("-o $o")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "FAIL: $page lacks options that '$name --help' prints: ${missing[*]}"
    failed=1
  else
    echo "ok: $page has all $(wc -w <<<"$opts $oopts") options of '$name --help'"
  fi
done
exit $failed
