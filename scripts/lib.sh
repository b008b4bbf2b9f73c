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

# Build dependencies of the default (CPU) build, its tests and its tools; the Python module (pybind11,
# the headers) and its tests (pytest, numpy).
GDFS_BUILD_PACKAGES=(cmake g++ make pkg-config libcli11-dev libgtest-dev libdeflate-dev zlib1g-dev
                     libxxhash-dev nlohmann-json3-dev pybind11-dev python3-dev python3-pytest python3-numpy)

# The daemon: libfuse3 and fusermount3, io_uring (optional at build time, but wanted), and bc for timings.
GDFS_DAEMON_PACKAGES=(libfuse3-dev fuse3 liburing-dev bc)

njobs() { nproc 2>/dev/null || echo 2; }
