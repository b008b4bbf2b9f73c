// Servers the remote tests start on loopback (127.0.0.1 only): nginx (HTTP, HTTPS with HTTP/2, or any
// server blocks a test writes), the fault-injecting proxy (fault_proxy.py) and the S3 API server
// (s3_server.py over moto). Each one is a child process, stopped by its destructor; one that cannot start
// says why in error(), and the tests skip with that reason.
#pragma once
#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace gdfs::test {

// A port on 127.0.0.1 that nothing listened on a moment ago.
int free_port();
// True once something accepts connections on 127.0.0.1:port (waits up to `seconds`).
bool wait_for_port(int port, double seconds);
// The python3 that runs the helper scripts ("" when there is none).
std::string python3();

// A child process with its stdout on a pipe (the helper scripts print one JSON line when ready) and its
// stderr in a log file.
class Child {
 public:
  Child() = default;
  ~Child() { stop(); }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  // Starts argv (argv[0] by path) with `env` added to the environment. False, with error(), on failure.
  bool start(const std::vector<std::string>& argv, const std::string& log_path,
             const std::map<std::string, std::string>& env = {});
  // One line of its stdout, waiting up to `seconds`; false at EOF or timeout.
  bool read_line(std::string& line, double seconds);
  bool write_line(const std::string& line);  // to its stdin
  void stop();                               // SIGTERM, then SIGKILL after 5 s; reaped
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  std::string log() const;
  const std::string& error() const { return error_; }

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1, in_fd_ = -1;
  std::string buffered_, log_path_, error_;
};

// A self-signed certificate for 127.0.0.1 made with the openssl command. error() when it could not be.
struct TestCert {
  explicit TestCert(const std::string& dir);
  std::string cert, key, error;
};

// nginx in the foreground as the current user (no master process), with its own prefix, pid file, logs
// and temp folders under `dir`. `servers` is the text of the server blocks (and any other http-level
// directives); the access log format "gdfs" logs "METHOD URI STATUS RANGE BYTES PROTOCOL PORT" per
// request.
class Nginx {
 public:
  Nginx(const std::string& dir, const std::string& servers, const std::vector<int>& ports);
  ~Nginx() = default;
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  struct Request {
    std::string method, uri, range, protocol;
    int status = 0;
    uint64_t bytes = 0;
    int port = 0;
  };
  // Every request logged so far by a server that logs to `log` (a file name under dir/logs).
  std::vector<Request> requests(const std::string& log = "access.log", size_t at_least = 0) const;
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_, error_;
  Child proc_;
};

// The fault proxy in front of 127.0.0.1:upstream_port.
class FaultProxy {
 public:
  explicit FaultProxy(const std::string& dir, int upstream_port);
  bool ok() const { return port_ > 0; }
  const std::string& error() const { return error_; }
  int port() const { return port_; }
  // mode: none, drop, 503, 429, stall, truncate, badrange, flip, mixed, delay (by delay_ms); p per
  // request; at most n faults (-1: no limit).
  bool set(const std::string& mode, double p = 1.0, int n = -1, int seed = 1, int delay_ms = 0);
  // {"requests": ..., "forwarded": ..., "faults": {...}, "ranges": [...]}, as raw JSON ("" on failure).
  std::string stats();
  bool reset();

 private:
  std::string get(const std::string& path);
  Child proc_;
  int port_ = 0;
  std::string error_;
};

// moto's S3 on loopback with one bucket holding the given objects (key -> file), SigV4 checked.
class S3Server {
 public:
  S3Server(const std::string& dir, const std::string& bucket,
           const std::map<std::string, std::string>& objects);
  bool ok() const { return port_ > 0; }
  const std::string& error() const { return error_; }
  int port() const { return port_; }
  std::string key, secret;                                           // an IAM user's access key
  std::string session_key, session_secret, session_token;            // temporary credentials (STS)
  bool put(const std::string& object_key, const std::string& file);  // a new version

 private:
  Child proc_;
  int port_ = 0;
  std::string error_;
};

// Where the test sources are (tests/remote), set by CMake.
inline const char* remote_test_dir() {
  return GDFS_REMOTE_TEST_DIR;
}

}  // namespace gdfs::test
