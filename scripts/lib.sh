# Shared helpers for scripts/*: sourced, not run.

# The raw-output file of a benchmark: ROOT/bench/results/DATE-NAME-HOST.txt (HOST: this machine's short
# name unless given), or, when that file exists, the same name with the time added, so that a second run
# on the same day never writes over a kept result. Usage: out=${OUT:-$(result_file "$root" NAME [HOST])}
result_file() {
  local f="$1/bench/results/$(date -u +%F)-$2-${3:-$(hostname -s)}.txt"
  [ ! -e "$f" ] || f=${f%.txt}-$(date -u +%H%M).txt
  echo "$f"
}

# Installs the Debian packages in "$@" that are missing (apt-get update first, once).
ensure_packages() {
  local missing=()
  for p in "$@"; do
    # dpkg -s also succeeds for removed packages whose config files remain: check the status line.
    dpkg -s "$p" 2>/dev/null | grep -q '^Status: install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing: ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# Build dependencies of the default (CPU) build, its tests and its tools; the Python module (pybind11,
# the headers) and its tests (pytest, numpy). libcurl (OpenSSL flavour) gives the reader remote images
# (http, https, s3); without it they are refused with a message. libarchive gives mkfs.gdfs its
# archive sources (tar, cpio, zip, ...), and the archive tests their writer.
GDFS_BUILD_PACKAGES=(cmake g++ make pkg-config libcli11-dev libgtest-dev libdeflate-dev zlib1g-dev
                     libxxhash-dev nlohmann-json3-dev libcurl4-openssl-dev libssl-dev
                     # signed images: libcrypto; the tests and bench/run-sign make keys with openssl
                     openssl
                     # gdfs-inspect extract --archive (libarchive); its tests read back with bsdtar and cpio;
                     # mkfs.gdfs inflates gzip archives with ISA-L and decodes xz on several threads
                     # with liblzma (both optional)
                     libarchive-dev libarchive-tools cpio libisal-dev liblzma-dev
                     pybind11-dev python3-dev python3-pytest python3-numpy python3-venv
                     # tests/install and scripts/check-install: man pages (man-db, groff-base), bash
                     # completions (bash-completion), cpack -G DEB's dpkg-shlibdeps (dpkg-dev), and
                     # lintian, which must find no error in the .deb
                     man-db groff-base bash-completion dpkg-dev lintian)

# The daemon: libfuse3 and fusermount3, io_uring (optional at build time, but wanted), and bc for timings.
GDFS_DAEMON_PACKAGES=(libfuse3-dev fuse3 liburing-dev bc)

# scripts/plots (charts of bench/results); python3-pytest runs its test, tests/plots, which skips
# without it.
GDFS_PLOT_PACKAGES=(python3-matplotlib)
GDFS_PLOT_TEST_PACKAGES=(python3-pytest)

# The remote-image tests (label remote): an HTTP(S) server (nginx, run unprivileged on loopback with its
# own configuration), openssl for a self-signed test certificate, and python3 for the fault-injecting
# proxy and the S3 server. Tests skip, saying why, where one is missing.
GDFS_REMOTE_TEST_PACKAGES=(nginx-light openssl python3 python3-pip)

# The S3 API server the remote tests run on loopback: moto (PyPI), installed into .test-deps/moto (git
# ignored; the tests look there). A test oracle only, never part of the product. Best effort: without pip
# or the network the S3 tests skip, and this never fails the caller.
fetch_test_oracles() {
  local root=$1 dir=$1/.test-deps/moto
  if [ -f "$dir/.complete" ]; then return 0; fi
  if ! command -v python3 >/dev/null || ! python3 -m pip --version >/dev/null 2>&1; then
    echo "note: python3 -m pip unavailable: the S3 tests will skip" >&2
    return 0
  fi
  echo "installing moto[server] (the S3 test server) into $dir" >&2
  rm -rf "$dir"
  if python3 -m pip install -q --disable-pip-version-check --no-warn-script-location --target "$dir" \
       'moto[server]>=5,<6' >&2; then
    touch "$dir/.complete"
  else
    echo "note: could not install moto: the S3 tests will skip" >&2
  fi
  return 0
}

# The Python tests' virtualenv (.test-deps/pyenv, git-ignored): Debian's python3 (the one the module is
# built for) with tests/python/requirements.txt from PyPI, made once and remade only when that file
# changes. torch brings its CUDA libraries (~5 GB installed, about a minute from PyPI); no pip cache is
# kept beside it. Best effort: without the network the tests that need these packages skip, saying so,
# and this never fails the caller.
python_test_env() {
  local root=$1 env=$1/.test-deps/pyenv req=$1/tests/python/requirements.txt stamp
  stamp=$(sha256sum "$req" | cut -c1-16)
  if [ "$(cat "$env/.complete" 2>/dev/null)" = "$stamp" ]; then return 0; fi
  echo "making the Python tests' virtualenv in $env (tests/python/requirements.txt)" >&2
  rm -rf "$env"
  if /usr/bin/python3 -m venv "$env" >&2 &&
     timeout 1200 "$env/bin/pip" install -q --disable-pip-version-check --no-cache-dir --timeout 30 \
       -r "$req" >&2; then
    echo "$stamp" >"$env/.complete"
  else
    echo "note: could not make the Python tests' virtualenv: the tests that need its packages will skip" >&2
    rm -rf "$env"
  fi
  return 0
}

njobs() { nproc 2>/dev/null || echo 2; }

# nvCOMP's pip wheel, pinned: bench/run-gpu takes its GPU library (libnvcomp.so.6) from it, the
# NvcompOracle tests and `gdeflate bench --nvcomp-cpu` its host GDeflate codec (libnvcomp_cpu.so.6).
# Both use the one cache, .nvcomp-wheel/ (git-ignored); nothing is installed into any Python.
NVCOMP_WHEEL=nvidia-libnvcomp-cu13
NVCOMP_WHEEL_VERSION=6.0.0.12

# Prints the path of the pinned wheel in DIR, downloading it first when it is not there (pip download,
# no dependencies, short network timeouts). Returns 1 with a note on stderr when it cannot: no pip, no
# network, no such wheel for this platform.
nvcomp_wheel() {
  local dir=$1 whl
  whl=$(ls "$dir/${NVCOMP_WHEEL//-/_}-$NVCOMP_WHEEL_VERSION-"*.whl 2>/dev/null | head -n 1)
  if [ -z "$whl" ]; then
    if ! python3 -m pip --version >/dev/null 2>&1; then
      echo "nvcomp_wheel: no python3 -m pip: cannot fetch $NVCOMP_WHEEL==$NVCOMP_WHEEL_VERSION" >&2
      return 1
    fi
    timeout 300 python3 -m pip download -q --no-deps --disable-pip-version-check --timeout 15 --retries 1 \
      "$NVCOMP_WHEEL==$NVCOMP_WHEEL_VERSION" -d "$dir" >&2 ||
      { echo "nvcomp_wheel: pip download of $NVCOMP_WHEEL==$NVCOMP_WHEEL_VERSION failed" >&2; return 1; }
    whl=$(ls "$dir/${NVCOMP_WHEEL//-/_}-$NVCOMP_WHEEL_VERSION-"*.whl 2>/dev/null | head -n 1)
    [ -n "$whl" ] || { echo "nvcomp_wheel: pip left no wheel in $dir" >&2; return 1; }
  fi
  echo "$whl"
}

# Extracts one member, MEMBER (a path inside the wheel), of the pinned wheel in DIR to DEST (a file),
# fetching the wheel first when needed, unless DEST is already newer than the wheel. Python's zipfile,
# not unzip: pip needs python3 anyway, unzip may be missing.
nvcomp_wheel_extract() {
  local dir=$1 member=$2 dest=$3 whl
  whl=$(nvcomp_wheel "$dir") || return 1
  [ -s "$dest" ] && [ "$dest" -nt "$whl" ] && return 0
  mkdir -p "$(dirname "$dest")"
  python3 - "$whl" "$member" "$dest" <<'PY' || { echo "nvcomp_wheel_extract: no $member in $whl" >&2; return 1; }
import shutil, sys, zipfile
whl, member, dest = sys.argv[1:]
with zipfile.ZipFile(whl) as z, z.open(member) as src, open(dest + ".tmp", "wb") as out:
    shutil.copyfileobj(src, out)
shutil.move(dest + ".tmp", dest)
PY
}

# The host GDeflate codec for the NvcompOracle tests: DIR/lib64/libnvcomp_cpu.so.6, where the build looks
# by default (CMake's GDFS_NVCOMP_CPU_LIB). Prints its path; returns 1 when the wheel cannot be had.
nvcomp_cpu_lib() {
  local dir=$1 lib=$1/lib64/libnvcomp_cpu.so.6
  nvcomp_wheel_extract "$dir" nvidia/libnvcomp/lib64/libnvcomp_cpu.so.6 "$lib" || return 1
  echo "$lib"
}

# bench/run-remote (remote images against squashfuse on httpdirfs and rclone mount, on loopback behind
# tests/remote/fault_proxy.py): the peers, the images, the server, fio and jq for the random reads.
GDFS_BENCH_REMOTE_PACKAGES=(httpdirfs squashfuse squashfs-tools rclone fio nginx-light fuse3 jq curl tar python3)
