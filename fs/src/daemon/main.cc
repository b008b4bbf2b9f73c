// gdfs IMAGE MOUNTPOINT: everything up to the session loop. Problems with the arguments or the image
// are reported, with exit status 1, before anything is mounted.
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <csignal>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "daemon/daemon.h"
#include "daemon/mountpoint.h"
#include "gdfs/log.h"
#include "gdfs/printable.h"
#include "gdfs/version.h"

namespace gdfs::daemon {
namespace {

struct Args {
  fuse_args args;
  fuse_cmdline_opts cmd{};
  ~Args() {
    fuse_opt_free_args(&args);
    std::free(cmd.mountpoint);
  }
};

// The mount options gdfs always sets: read-only, kernel permission checks, and a source and type that
// show up in /proc/mounts as "IMAGE on DIR type fuse.gdfs".
bool add_mount_options(fuse_args& args, const std::string& image) {
  char* opts = nullptr;
  bool ok = fuse_opt_add_opt(&opts, "ro,default_permissions,subtype=gdfs") == 0 &&
            fuse_opt_add_opt_escaped(&opts, ("fsname=" + image).c_str()) == 0 &&
            fuse_opt_add_arg(&args, "-o") == 0 && fuse_opt_add_arg(&args, opts) == 0;
  std::free(opts);
  return ok;
}

std::string absolute(const std::string& path) {
  char* cwd = getcwd(nullptr, 0);
  std::string out = cwd ? std::string(cwd) + "/" + path : path;
  std::free(cwd);
  return out;
}

// The kernel reads ahead of a FUSE file in requests of up to 1 MiB, but its window starts at the
// mount's read_ahead_kb, 128 KiB, so a sequential reader waited on 128 KiB round trips. The INIT reply
// can only lower that setting, so it is raised here, after mounting and before INIT is answered (op_init
// then asks for the same). A daemon that is not root cannot write it and keeps the kernel's default.
void widen_kernel_readahead(const std::string& mountpoint, uint64_t daemon_readahead) {
  const uint64_t bytes = kernel_readahead(daemon_readahead);
  if (bytes == 0 || geteuid() != 0) return;
  if (!set_kernel_readahead(mountpoint, bytes))
    log_line(LogLevel::kWarning, "could not set the mount's kernel readahead (read_ahead_kb)");
}

// Serves until unmounted or signalled. Returns the process exit status.
int serve(Daemon& daemon, Args& a) {
  fuse_session* se = fuse_session_new(&a.args, &daemon_ops(), sizeof(fuse_lowlevel_ops), &daemon);
  if (!se) return 1;  // libfuse printed why (an unknown option, usually)
  int status = 1;
  if (fuse_set_signal_handlers(se) == 0) {
    if (fuse_session_mount(se, a.cmd.mountpoint) == 0) {
      widen_kernel_readahead(a.cmd.mountpoint, daemon.options().readahead);
      fuse_daemonize(a.cmd.foreground);
      log_to_syslog(!a.cmd.foreground);
      set_log_level(LogLevel::kInfo);
      int rc = 0;
      // Start-up after mounting is the one place where a failure (threads, memory, a device) would
      // otherwise leave a mount point with no daemon behind it: log it, unmount, exit 1.
      try {
        daemon.start();
      } catch (const std::exception& e) {
        log_line(LogLevel::kError, std::string("cannot start serving: ") + e.what());
        fuse_session_unmount(se);
        fuse_remove_signal_handlers(se);
        fuse_session_destroy(se);
        return 1;
      }
      // A push may wait on a page whose read is still queued; only the other request threads can
      // answer that read, so half of them at most push, and a single-threaded daemon does not.
      daemon.enable_pushes(se, a.cmd.singlethread ? 0 : a.cmd.max_threads / 2);
      if (a.cmd.singlethread) {
        rc = fuse_session_loop(se);
      } else {
        fuse_loop_config* cfg = fuse_loop_cfg_create();
        fuse_loop_cfg_set_clone_fd(cfg, a.cmd.clone_fd);
        fuse_loop_cfg_set_idle_threads(cfg, a.cmd.max_idle_threads == UINT_MAX ? 16 : a.cmd.max_idle_threads);
        fuse_loop_cfg_set_max_threads(cfg, a.cmd.max_threads);  // -o max_threads= (libfuse's default: 10)
        rc = fuse_session_loop_mt(se, cfg);
        fuse_loop_cfg_destroy(cfg);
      }
      daemon.stop();
      fuse_session_unmount(se);
      // libfuse reports the signal that ended the loop (SIGTERM, SIGINT, SIGHUP): a clean unmount too.
      status = (rc == 0 || rc == SIGTERM || rc == SIGINT || rc == SIGHUP) ? 0 : 1;
    }
    fuse_remove_signal_handlers(se);
  }
  fuse_session_destroy(se);
  return status;
}

}  // namespace

int gdfs_main(int argc, char** argv) {
  Args a{FUSE_ARGS_INIT(argc, argv)};
  DaemonOptions opt;
  if (!parse_options(a.args, opt)) return 1;
  // What is left to parse are copies (fuse_opt_parse made them): argv itself can be changed now.
  for (int i = 1; i < argc; ++i) hide_url_secrets(argv[i]);
  // Before libfuse sees the mount point: its realpath() of a dead mount fails with ENOTCONN.
  if (!clear_dead_mount(opt.mountpoint)) return 1;
  if (fuse_parse_cmdline(&a.args, &a.cmd) != 0) return 1;
  if (a.cmd.show_help) {
    print_usage(argv[0]);
    fuse_cmdline_help();
    fuse_lowlevel_help();
    return 0;
  }
  if (a.cmd.show_version) {
    std::printf("%s\n", version_line("gdfs").c_str());
    std::printf("CUDA kernels: %s\n", gpu_architectures());
    std::fflush(stdout);  // libfuse prints its versions through its own path
    fuse_lowlevel_version();
    return 0;
  }
  if (opt.image.empty() || !a.cmd.mountpoint) {
    std::fprintf(stderr, "usage: %s [options] IMAGE MOUNTPOINT (see --help)\n", argv[0]);
    return 1;
  }
  if (const std::string why = mountpoint_problem(a.cmd.mountpoint, is_url(opt.image) ? "" : opt.image);
      !why.empty()) {
    std::fprintf(stderr, "gdfs: %s\n", why.c_str());
    return 1;
  }
  // Asked before mounting, so that decoder=gpu without a GPU is an error, not a mount on the CPU.
  std::string why;
  if (opt.decoder == DecoderChoice::kGpu && !probe_gpu_decoder(why)) {
    std::fprintf(stderr, "gdfs: -o decoder=gpu: no usable GPU (%s)\n", why.c_str());
    return 1;
  }
  std::unique_ptr<Image> image;
  try {
    std::string path = opt.image;
    if (!is_url(path)) {  // a local image is named by its absolute path; a URL as it is
      char* abs = realpath(opt.image.c_str(), nullptr);
      if (abs) path = abs;
      std::free(abs);
    }
    // The daemon leaves its working directory once mounted: relative paths must not depend on it.
    for (std::string* p : {&opt.source.cache_dir, &opt.source.ca_file})
      if (!p->empty() && p->front() != '/') *p = absolute(*p);
    // A remote source's warnings (retries, an image that changed on the server) go to the daemon's log:
    // stderr now, syslog once daemonized.
    opt.source.warn = [](std::string_view line) { log_line(LogLevel::kWarning, line); };
    image = Image::open(path, opt.source);  // validates every metadata record before anything is mounted
  } catch (const ImageError& e) {
    std::fprintf(stderr, "gdfs: %s\n", printable_name(e.what()).c_str());
    return 1;
  }
  if (!add_mount_options(a.args, image->name())) return 1;
  Daemon daemon(std::move(image), opt);
  return serve(daemon, a);
}

}  // namespace gdfs::daemon
