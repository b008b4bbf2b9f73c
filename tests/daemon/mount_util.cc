#include "mount_util.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "daemon/mountpoint.h"

namespace gdfs::test {
namespace {

using Clock = std::chrono::steady_clock;

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

bool in_path(const std::string& prog) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string d; std::getline(dirs, d, ':');)
    if (access((d + "/" + prog).c_str(), X_OK) == 0) return true;
  return false;
}

bool wait_pid(pid_t pid, int& status, std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    int st = 0;
    const pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) {
      status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace

std::string fuse_unavailable() {
  if (access("/dev/fuse", R_OK | W_OK) != 0) return "no usable /dev/fuse";
  if (!in_path("fusermount3")) return "fusermount3 not installed (Debian package fuse3)";
  return "";
}

bool is_gdfs_mount(const std::string& dir) {
  return gdfs_mount_count(dir) > 0;
}

int gdfs_mount_count(const std::string& dir) {
  return daemon::gdfs_mounts_at(dir);
}

Mount::Mount(const std::string& image, const std::string& dir, const std::string& opts)
    : dir_(dir), log_path_(dir + ".log") {
  pid_ = fork();
  if (pid_ == 0) {
    FILE* log = std::fopen(log_path_.c_str(), "w");
    if (log) dup2(fileno(log), 2);
    std::vector<std::string> args = {gdfs_binary(), "-f"};
    if (!opts.empty()) args.insert(args.end(), {"-o", opts});
    args.insert(args.end(), {image, dir});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (!is_gdfs_mount(dir_)) {
    int st = 0;
    if (waitpid(pid_, &st, WNOHANG) == pid_) {
      waited_ = true;
      status_ = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
      error_ = "gdfs exited (status " + std::to_string(status_) + ") before mounting: " + log();
      return;
    }
    if (Clock::now() > deadline) {
      error_ = "not mounted after 30 s: " + log();
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Mount::~Mount() {
  if (!waited_ && pid_ > 0) unmount();
}

bool Mount::alive() const {
  return !waited_ && pid_ > 0 && kill(pid_, 0) == 0 && is_gdfs_mount(dir_);
}

std::string Mount::log() const {
  return slurp(log_path_);
}

int Mount::unmount() {
  if (waited_) return status_;
  if (is_gdfs_mount(dir_)) run_command({"fusermount3", "-u", dir_});
  return wait_exit();
}

int Mount::wait_exit() {
  if (waited_) return status_;
  if (!wait_pid(pid_, status_, std::chrono::seconds(30))) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    run_command({"fusermount3", "-u", "-z", dir_});
    status_ = -1;
  }
  waited_ = true;
  return status_;
}

int run_command(const std::vector<std::string>& argv, std::string* output) {
  const std::string out_path = "/tmp/gdfs-test-cmd-" + std::to_string(getpid()) + ".out";
  const pid_t pid = fork();
  if (pid == 0) {
    FILE* f = std::fopen(out_path.c_str(), "w");
    if (f) {
      dup2(fileno(f), 1);
      dup2(fileno(f), 2);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = -1;
  if (!wait_pid(pid, status, std::chrono::seconds(60))) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  if (output) *output = slurp(out_path);
  unlink(out_path.c_str());
  return status;
}

std::vector<pid_t> find_processes(const std::vector<std::string>& needles) {
  std::vector<pid_t> found;
  DIR* proc = opendir("/proc");
  if (!proc) return found;
  while (dirent* e = readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    std::string cmd = slurp("/proc/" + std::string(e->d_name) + "/cmdline");
    const std::string stat = slurp("/proc/" + std::string(e->d_name) + "/stat");
    if (cmd.empty() || stat.find(") Z ") != std::string::npos) continue;  // gone, or a zombie
    bool all = true;
    for (const auto& n : needles) all = all && cmd.find(n) != std::string::npos;
    if (all) found.push_back(pid);
  }
  closedir(proc);
  return found;
}

}  // namespace gdfs::test
