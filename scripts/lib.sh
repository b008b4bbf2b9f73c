# Shared helpers for scripts/*: sourced, not run.

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

# Build dependencies of the default (CPU) build, its tests and its tools. libcurl (OpenSSL flavour) gives
# the reader remote images (http, https, s3); without it they are refused with a message.
GDFS_BUILD_PACKAGES=(cmake g++ make pkg-config libcli11-dev libgtest-dev libdeflate-dev zlib1g-dev
                     libxxhash-dev nlohmann-json3-dev libcurl4-openssl-dev)

# The daemon: libfuse3 and fusermount3, io_uring (optional at build time, but wanted), and bc for timings.
GDFS_DAEMON_PACKAGES=(libfuse3-dev fuse3 liburing-dev bc)

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

njobs() { nproc 2>/dev/null || echo 2; }
