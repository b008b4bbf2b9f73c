#!/usr/bin/env bash
# Every line of every tool's --help (and of each subcommand's, for the CLI11 tools) fits in 80 columns,
# a classic terminal. Each binary runs under its own name, so that no build path widens the usage line.
# Usage: help-width.sh NAME=BINARY...
set -euo pipefail

failed=0
check() {  # NAME BINARY [SUBCOMMAND]
  local name=$1 bin=$2 what=$1${3:+ $3} help line
  help=$( (exec -a "$name" "$bin" ${3:+"$3"} --help) 2>&1) || true
  [ "$(printf '%s\n' "$help" | wc -l)" -gt 3 ] || { echo "FAIL: $what --help printed: $help"; failed=1; return; }
  while IFS= read -r line; do
    if [ "${#line}" -gt 80 ]; then
      echo "FAIL: $what --help: ${#line} columns: $line"
      failed=1
    fi
  done <<<"$help"
  echo "ok: $what --help"
}

for spec in "$@"; do
  name=${spec%%=*} bin=${spec#*=}
  check "$name" "$bin"
  # CLI11's list: a subcommand's name starts a line two columns in; its wrapped description is deeper.
  for sub in $( (exec -a "$name" "$bin" --help) 2>&1 | sed -n '/^Subcommands:/,/^$/p' | awk 'NR > 1 && /^  [^ ]/ { print $1 }'); do
    check "$name" "$bin" "$sub"
  done
done
exit $failed
