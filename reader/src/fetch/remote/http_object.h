// One object on an HTTP(S) server or an S3-compatible store, read by ranged GETs through libcurl.
//
// Requests: every range of one fetch() call runs concurrently in one libcurl multi handle (HTTP/2
// streams on one connection where the server offers h2, else up to kMaxHostConnections keep-alive
// connections). Idle multi handles, with their open connections, go back to a pool for the next call;
// DNS answers and TLS sessions are shared by all of them. No thread of our own: the calling thread drives
// its transfers, so a source opened before the daemon forks works after it.
//
// Consistency: probe() records the object's size and identity (ETag, else Last-Modified). Every later
// request is conditional (If-Match on a strong ETag, else If-Unmodified-Since) and every response is
// checked against the identity (Content-Range total, ETag, Last-Modified): a changed object fails the
// range and is reported once; its bytes are never returned.
//
// Faults: connect timeout, a stall timeout (no progress), and an overall deadline per call; connection
// errors, 408, 429 and 5xx, short or overlong bodies and a wrong Content-Range are retried with
// exponential backoff and jitter (honouring Retry-After) until the deadline. Every byte from the server is
// untrusted: a body is written only inside the range asked for.
//
// Secrets (URL user info and query, S3 keys and tokens) never appear in messages or counters.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gdfs::remote {

// What the server says about the object when it is opened.
struct ObjectIdentity {
  uint64_t size = 0;
  std::string etag;           // as sent, quotes included (W/"..." when weak); may be empty
  std::string last_modified;  // as sent; may be empty
  bool strong_etag() const { return !etag.empty() && !etag.starts_with("W/"); }
  // What the disk cache keys on: the ETag, else Last-Modified; empty when the server sends neither.
  std::string version() const;
};

struct HttpConfig {
  std::string url;   // the request URL; may hold credentials (user info, a presigned query): never shown
  std::string name;  // the URL as messages show it
  std::string ca_file;
  // S3: sign every request with SigV4 (libcurl's CURLOPT_AWS_SIGV4) when access_key is set.
  bool s3 = false;
  std::string region, access_key, secret_key, session_token;
  double timeout_s = 60;                       // bound on one fetch() or probe(), retries included
  std::function<void(std::string_view)> warn;  // one line each; never null
};

// One ranged GET into `dst`.
struct RangeGet {
  uint64_t offset = 0;
  uint64_t length = 0;
  uint8_t* dst = nullptr;
  bool ok = false;
};

struct HttpCounters {
  std::atomic<uint64_t> requests{0};  // HTTP requests sent (each attempt counts)
  std::atomic<uint64_t> bytes{0};     // body bytes accepted
  std::atomic<uint64_t> retries{0};   // attempts repeated after a transient failure
  std::atomic<uint64_t> failures{0};  // ranges that failed for good (the reader saw EIO)
  std::atomic<uint64_t> changed{0};   // responses that showed the object had changed
};

// What the transfers so far say about the link: the time to a response's first byte (a round trip plus
// the server's time) and the rate of a body once it flows. Readahead sizes itself from these.
class LinkEstimate {
 public:
  // One successful transfer: seconds to its first body byte, seconds in all, and body bytes.
  void add(double first_byte_s, double total_s, uint64_t bytes);
  double latency_s() const;    // 0 until a transfer has finished
  double bytes_per_s() const;  // 0 until a body large enough to time has arrived

 private:
  mutable std::mutex mu_;
  double latency_s_ = 0, rate_ = 0;
  bool have_latency_ = false;
};

class HttpObject {
 public:
  explicit HttpObject(HttpConfig config);
  ~HttpObject();
  HttpObject(const HttpObject&) = delete;
  HttpObject& operator=(const HttpObject&) = delete;

  // Opens the object: one GET of its first `n` bytes (all of it when smaller) into `head`, which learns
  // the size and identity. Retries like fetch(). Throws ImageError naming the URL.
  ObjectIdentity probe(std::vector<uint8_t>& head, uint32_t n);
  // Fetches every range (inside the object; after probe) concurrently, retrying transient failures until
  // the deadline, and sets each one's `ok`.
  void fetch(std::span<RangeGet> gets);
  // Its reader is closing: transfers in flight end within a poll (250 ms), retries stop waiting, and
  // every range not yet fetched, now or later, fails at once.
  void cancel();

  const HttpCounters& counters() const { return counters_; }
  const LinkEstimate& link() const { return link_; }
  const std::string& name() const { return cfg_.name; }

  struct Transfer;  // http_object.cc
  struct Pool;

 private:
  using Clock = std::chrono::steady_clock;
  // Runs the transfers once, all at once; each one's outcome is set.
  void attempt(std::span<Transfer*> xs, Clock::time_point deadline);
  // Runs them until each succeeds or fails for good, or the deadline passes.
  void run(std::span<Transfer*> xs, Clock::time_point deadline);
  void setup(void* easy, Transfer& x, Clock::time_point deadline);
  void report(Transfer& x);
  std::string scrub(std::string s) const;
  void warn_limited(int kind, const std::string& line);

  HttpConfig cfg_;
  ObjectIdentity id_;
  bool probed_ = false;
  std::unique_ptr<Pool> pool_;
  void* probe_headers_ = nullptr;  // curl_slist*
  void* fetch_headers_ = nullptr;  // curl_slist*: the probe's plus the precondition
  HttpCounters counters_;
  LinkEstimate link_;
  std::atomic<bool> changed_warned_{false};
  std::atomic<bool> cancelled_{false};
  std::mutex cancel_mu_;  // with cancel_cv_: a retry's backoff that cancel() cuts short
  std::condition_variable cancel_cv_;
  std::mutex warn_mu_;
  Clock::time_point last_warn_[3]{};
  unsigned suppressed_[3]{};
};

}  // namespace gdfs::remote
