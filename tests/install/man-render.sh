#!/usr/bin/env bash
# Renders each man page given (roff source, or gzip'd as installed) and fails on any warning: from
# man-db's whole pipeline (man --warnings), and from groff alone at its strictest (-ww) formatting for
# an 80-column terminal, where lines that cannot be broken or adjusted are reported.
# Exits 77 (a skip, for ctest) when man or groff is not installed.
set -euo pipefail

for tool in man groff; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool is not installed (Debian packages man-db, groff-base)"
    exit 77
  fi
done
[ $# -gt 0 ] || { echo "usage: $0 PAGE..." >&2; exit 2; }

failed=0
for page in "$@"; do
  # zcat -f passes uncompressed pages through unchanged.
  warnings=$({
    MANWIDTH=80 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null
    zcat -f "$page" | groff -man -Tutf8 -ww -z 2>&1
  } || echo "(exit status $?)")
  if [ -n "$warnings" ]; then
    printf 'FAIL: %s:\n%s\n' "$page" "$warnings"
    failed=1
  else
    echo "ok: $page renders without warnings"
  fi
done
exit $failed
