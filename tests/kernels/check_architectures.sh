#!/usr/bin/env bash
# The CUDA code inside the daemon is what the build says it is: `gdfs --version` names the architectures,
# and where gdfs chose them (no user setting) they include sm_80 and sm_90 machine code, the GPUs users
# run. Where the toolkit has cuobjdump (CI's minimal toolkit has not), it must find machine code for each
# "-real" architecture and PTX for each "-virtual" one in the binary.
# usage: check_architectures.sh GDFS_BINARY CUOBJDUMP|none "ARCH;ARCH..." DEFAULTED(0|1)
set -uo pipefail
bin=$1 cuobjdump=$2 archs=$3 defaulted=$4
fail() { echo "FAIL: $*"; exit 1; }
want="CUDA kernels: ${archs//;/ }"
line=$("$bin" --version 2>/dev/null | sed -n 2p)
[ "$line" = "$want" ] || fail "gdfs --version says '$line', not '$want'"
IFS=';' read -ra list <<<"$archs"
if [ "$defaulted" = 1 ]; then
  for n in 80 90; do [[ " ${list[*]} " == *" $n-real "* ]] || fail "default build without sm_$n machine code: $archs"; done
fi
if [ "$cuobjdump" = none ] || [ ! -x "$cuobjdump" ]; then
  echo "ok: $want (no cuobjdump in this toolkit: the binary itself is not inspected)"
  exit 0
fi
elf=$("$cuobjdump" --list-elf "$bin" 2>&1) || fail "cuobjdump --list-elf: $elf"
ptx=$("$cuobjdump" --list-ptx "$bin" 2>&1) || fail "cuobjdump --list-ptx: $ptx"
for a in "${list[@]}"; do
  n=${a%%-*}
  case $a in
    *-virtual) grep -q "sm_$n\.ptx" <<<"$ptx" || fail "no PTX for compute_$n in $bin:"$'\n'"$ptx" ;;
    *-real) grep -q "sm_$n\.cubin" <<<"$elf" || fail "no sm_$n machine code in $bin:"$'\n'"$elf" ;;
    *) grep -q "sm_$n\.cubin" <<<"$elf" && grep -q "sm_$n\.ptx" <<<"$ptx" || fail "no sm_$n code and PTX" ;;
  esac
done
echo "ok: $want; machine code: $(grep -o 'sm_[0-9]*\.cubin' <<<"$elf" | sort -u | tr '\n' ' ')"
