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

# Build dependencies of the default (CPU) build, its tests and its tools.
GDFS_BUILD_PACKAGES=(cmake g++ make pkg-config libcli11-dev libgtest-dev libdeflate-dev zlib1g-dev
                     libxxhash-dev nlohmann-json3-dev
                     # tests/install and scripts/check-install: man pages (man-db, groff-base), bash
                     # completions (bash-completion), cpack -G DEB's dpkg-shlibdeps (dpkg-dev)
                     man-db groff-base bash-completion dpkg-dev)

# The daemon: libfuse3 and fusermount3, io_uring (optional at build time, but wanted), and bc for timings.
GDFS_DAEMON_PACKAGES=(libfuse3-dev fuse3 liburing-dev bc)

# scripts/plots (charts of bench/results); python3-pytest runs its test, tests/plots, which skips
# without it.
GDFS_PLOT_PACKAGES=(python3-matplotlib)
GDFS_PLOT_TEST_PACKAGES=(python3-pytest)

njobs() { nproc 2>/dev/null || echo 2; }
