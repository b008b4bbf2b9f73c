#include "servers.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

namespace gdfs::test {
namespace {

using Clock = std::chrono::steady_clock;

sockaddr_in loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

bool executable(const std::string& path) {
  return access(path.c_str(), X_OK) == 0;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in a = loopback(0);
  socklen_t len = sizeof a;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

bool wait_for_port(int port, double seconds) {
  const auto until = Clock::now() + std::chrono::milliseconds(static_cast<long>(seconds * 1000));
  while (Clock::now() < until) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a = loopback(port);
    const bool up = fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    if (fd >= 0) close(fd);
    if (up) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::string python3() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string d; std::getline(dirs, d, ':');)
    if (!d.empty() && executable(d + "/python3")) return d + "/python3";
  return "";
}

// ---- Child ----------------------------------------------------------------------------------------------

bool Child::start(const std::vector<std::string>& argv, const std::string& log_path,
                  const std::map<std::string, std::string>& env) {
  log_path_ = log_path;
  int out[2], in[2];
  if (pipe2(out, O_CLOEXEC) != 0) return error_ = "pipe failed", false;
  if (pipe2(in, O_CLOEXEC) != 0) {
    close(out[0]), close(out[1]);
    return error_ = "pipe failed", false;
  }
  const int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);  // never outlive the test
    if (getppid() != parent) _exit(127);
    dup2(in[0], 0);
    dup2(out[1], 1);
    if (log_fd >= 0) dup2(log_fd, 2);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  close(in[0]);
  if (log_fd >= 0) close(log_fd);
  if (pid_ < 0) {
    close(out[0]), close(in[1]);
    return error_ = "fork failed", false;
  }
  out_fd_ = out[0];
  in_fd_ = in[1];
  return true;
}

bool Child::read_line(std::string& line, double seconds) {
  const auto until = Clock::now() + std::chrono::milliseconds(static_cast<long>(seconds * 1000));
  for (;;) {
    const size_t nl = buffered_.find('\n');
    if (nl != std::string::npos) {
      line = buffered_.substr(0, nl);
      buffered_.erase(0, nl + 1);
      return true;
    }
    const long left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    if (left <= 0 || out_fd_ < 0) return false;
    pollfd p{out_fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(out_fd_, buf, sizeof buf);
    if (n <= 0) return false;
    buffered_.append(buf, static_cast<size_t>(n));
  }
}

bool Child::write_line(const std::string& line) {
  const std::string s = line + "\n";
  return in_fd_ >= 0 && write(in_fd_, s.data(), s.size()) == static_cast<ssize_t>(s.size());
}

void Child::stop() {
  if (in_fd_ >= 0) close(in_fd_), in_fd_ = -1;
  if (out_fd_ >= 0) close(out_fd_), out_fd_ = -1;
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  const auto until = Clock::now() + std::chrono::seconds(5);
  int status = 0;
  while (waitpid(pid_, &status, WNOHANG) == 0) {
    if (Clock::now() > until) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pid_ = -1;
}

std::string Child::log() const {
  return read_file(log_path_);
}

// ---- TestCert -------------------------------------------------------------------------------------------

TestCert::TestCert(const std::string& dir) : cert(dir + "/cert.pem"), key(dir + "/key.pem") {
  const std::string cmd =
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 "
      "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout '" +
      key + "' -out '" + cert + "' >'" + dir + "/openssl.log' 2>&1";
  if (std::system(cmd.c_str()) != 0 || access(cert.c_str(), R_OK) != 0)
    error = "openssl could not make a test certificate: " + read_file(dir + "/openssl.log");
}

// ---- Nginx ----------------------------------------------------------------------------------------------

Nginx::Nginx(const std::string& dir, const std::string& servers, const std::vector<int>& ports) : dir_(dir) {
  std::string nginx;
  for (const char* p : {"/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"})
    if (executable(p)) nginx = p;
  if (nginx.empty()) {
    error_ = "nginx is not installed (Debian: nginx-light)";
    return;
  }
  for (const char* sub : {"", "/logs", "/tmp"}) mkdir((dir + sub).c_str(), 0755);
  std::ofstream conf(dir + "/nginx.conf");
  conf << "daemon off;\nmaster_process off;\nworker_processes 1;\n"
       << "pid " << dir << "/nginx.pid;\nerror_log " << dir << "/logs/error.log warn;\n"
       << "events { worker_connections 1024; }\n"
       << "http {\n  default_type application/octet-stream;\n"
       << "  log_format gdfs '$request_method $uri $status \"$http_range\" $body_bytes_sent $server_protocol "
          "$server_port';\n"
       << "  access_log " << dir << "/logs/access.log gdfs;\n";
  for (const char* t : {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"})
    conf << "  " << t << "_temp_path " << dir << "/tmp/" << t << ";\n";
  conf << servers << "\n}\n";
  conf.close();
  if (!proc_.start({nginx, "-p", dir, "-c", dir + "/nginx.conf"}, dir + "/logs/stderr.log")) {
    error_ = proc_.error();
    return;
  }
  for (int port : ports) {
    if (!wait_for_port(port, 10)) {
      error_ =
          "nginx did not start: " + read_file(dir + "/logs/stderr.log") + read_file(dir + "/logs/error.log");
      proc_.stop();
      return;
    }
  }
}

std::vector<Nginx::Request> Nginx::requests(const std::string& log, size_t at_least) const {
  // nginx appends a request's line after its response has gone out, so a client can be ahead of the
  // log: wait until the log has not grown for 100 ms and holds `at_least` lines (at most 5 s).
  const std::string path = dir_ + "/logs/" + log;
  auto lines = [&] {
    std::ifstream f(path);
    return static_cast<size_t>(std::count(std::istreambuf_iterator<char>(f), {}, '\n'));
  };
  std::error_code ec;
  uintmax_t size = std::filesystem::file_size(path, ec);
  for (int quiet = 0, waited = 0; (quiet < 2 || lines() < at_least) && waited < 100; ++waited) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const uintmax_t now = std::filesystem::file_size(path, ec);
    quiet = now == size ? quiet + 1 : 0;
    size = now;
  }
  std::vector<Request> out;
  std::ifstream f(path);
  for (std::string line; std::getline(f, line);) {
    Request r;
    std::istringstream s(line);
    std::string range;
    s >> r.method >> r.uri >> r.status >> std::quoted(range) >> r.bytes >> r.protocol >> r.port;
    r.range = range == "-" ? "" : range;
    out.push_back(r);
  }
  return out;
}

// ---- FaultProxy -----------------------------------------------------------------------------------------

FaultProxy::FaultProxy(const std::string& dir, int upstream_port) {
  const std::string py = python3();
  if (py.empty()) {
    error_ = "no python3";
    return;
  }
  if (!proc_.start({py, std::string(remote_test_dir()) + "/fault_proxy.py", std::to_string(upstream_port)},
                   dir + "/fault_proxy.log")) {
    error_ = proc_.error();
    return;
  }
  std::string line;
  if (!proc_.read_line(line, 20)) {
    error_ = "the fault proxy did not start: " + proc_.log();
    return;
  }
  try {
    port_ = nlohmann::json::parse(line).at("port").get<int>();
  } catch (const std::exception& e) {
    error_ = std::string("the fault proxy said: ") + line;
  }
}

std::string FaultProxy::get(const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  sockaddr_in a = loopback(port_);
  std::string resp;
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    const std::string req = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    if (write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size())) {
      // One response with a Content-Length; read until it is all here.
      char buf[65536];
      for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) {
        resp.append(buf, static_cast<size_t>(n));
        const size_t end = resp.find("\r\n\r\n");
        if (end == std::string::npos) continue;
        const size_t cl = resp.find("Content-Length: ");
        if (cl == std::string::npos || cl > end) break;
        if (resp.size() >= end + 4 + std::stoul(resp.substr(cl + 16))) break;
      }
    }
  }
  close(fd);
  const size_t end = resp.find("\r\n\r\n");
  return end == std::string::npos ? "" : resp.substr(end + 4);
}

bool FaultProxy::set(const std::string& mode, double p, int n, int seed, int delay_ms) {
  return get("/__proxy/set?mode=" + mode + "&p=" + std::to_string(p) + "&n=" + std::to_string(n) +
             "&seed=" + std::to_string(seed) + "&d=" + std::to_string(delay_ms)) == "{}";
}

std::string FaultProxy::stats() {
  return get("/__proxy/stats");
}

bool FaultProxy::reset() {
  return get("/__proxy/reset") == "{}";
}

// ---- S3Server -------------------------------------------------------------------------------------------

S3Server::S3Server(const std::string& dir, const std::string& bucket,
                   const std::map<std::string, std::string>& objects) {
  const std::string py = python3();
  const std::string deps = GDFS_TEST_DEPS_DIR "/moto";
  if (py.empty()) {
    error_ = "no python3";
    return;
  }
  if (access(deps.c_str(), R_OK) != 0) {
    error_ = "moto is not installed in " + deps +
             " (scripts/test installs it: fetch_test_oracles in scripts/lib.sh)";
    return;
  }
  std::vector<std::string> argv = {py, std::string(remote_test_dir()) + "/s3_server.py", bucket};
  for (const auto& [k, file] : objects) argv.push_back(k + "=" + file);
  if (!proc_.start(argv, dir + "/s3_server.log", {{"PYTHONPATH", deps}, {"PYTHONDONTWRITEBYTECODE", "1"}})) {
    error_ = proc_.error();
    return;
  }
  std::string line;
  if (!proc_.read_line(line, 90)) {
    error_ = "the S3 server did not start: " + proc_.log();
    return;
  }
  try {
    const auto j = nlohmann::json::parse(line);
    key = j.at("key").get<std::string>();
    secret = j.at("secret").get<std::string>();
    session_key = j.at("session").at("key").get<std::string>();
    session_secret = j.at("session").at("secret").get<std::string>();
    session_token = j.at("session").at("token").get<std::string>();
    port_ = j.at("port").get<int>();
  } catch (const std::exception& e) {
    error_ = "the S3 server said: " + line + "; " + proc_.log();
  }
}

bool S3Server::put(const std::string& object_key, const std::string& file) {
  std::string line;
  return proc_.write_line("put " + object_key + " " + file) && proc_.read_line(line, 30) && line == "ok";
}

}  // namespace gdfs::test
