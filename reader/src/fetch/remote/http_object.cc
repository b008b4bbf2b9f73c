#include "fetch/remote/http_object.h"

#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <thread>

#include "fetch/remote/http_response.h"
#include "gdfs/source.h"

namespace gdfs::remote {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr long kMaxHostConnections = 8;    // per multi handle (one per concurrent fetch() call)
constexpr unsigned kMaxAttempts = 10;      // per range, within the deadline
constexpr milliseconds kBackoffBase{100};  // doubled per attempt, with jitter
constexpr milliseconds kBackoffCap{4000};
constexpr milliseconds kRetryAfterCap{10000};
// SHA-256 of the empty body: S3 wants the payload hash of a GET in x-amz-content-sha256.
constexpr const char* kEmptySha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// A curl error a retry may cure; certificate problems, bad URLs and the like fail at once.
bool transient(CURLcode c) {
  switch (c) {
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_NOT_BUILT_IN:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_LOGIN_DENIED:
    case CURLE_TOO_MANY_REDIRECTS:
    case CURLE_OUT_OF_MEMORY:
    case CURLE_FAILED_INIT:
    case CURLE_BAD_FUNCTION_ARGUMENT:
    case CURLE_UNKNOWN_OPTION:
    case CURLE_AUTH_ERROR:
      return false;
    default:
      return true;
  }
}

}  // namespace

std::string ObjectIdentity::version() const {
  if (!etag.empty()) return "etag " + etag;
  if (!last_modified.empty()) return "last-modified " + last_modified;
  return "";
}

// ---- one transfer -------------------------------------------------------------------------------------

struct HttpObject::Transfer : RangeResponse {
  // Per attempt:
  CURL* easy = nullptr;
  char errbuf[CURL_ERROR_SIZE] = {};
  bool done = false;
  CURLcode code = CURLE_OK;
  // Across attempts:
  Outcome outcome = Outcome::kRetry;
  unsigned attempts = 0;
  long retry_after_s = -1;

  void reset() {
    RangeResponse::reset();
    errbuf[0] = 0;
    done = false;
    code = CURLE_OK;
    retry_after_s = -1;
  }
};

namespace {

HttpObject::Transfer& xfer(void* p) {
  return *static_cast<HttpObject::Transfer*>(p);
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  xfer(user).header(std::string_view(data, size * n));
  return size * n;
}

size_t on_body(char* data, size_t size, size_t n, void* user) {
  return xfer(user).take_body(data, size * n) ? size * n : 0;  // 0 aborts: CURLE_WRITE_ERROR
}

}  // namespace

// ---- handles ------------------------------------------------------------------------------------------

// Idle multi handles (each with its connection cache) and easy handles, and the share of DNS answers and
// TLS sessions. A process that forked (the daemon does, once mounted) abandons what its parent pooled:
// closing those connections would also end them for the parent.
struct HttpObject::Pool {
  std::mutex mu;
  pid_t pid = getpid();
  std::vector<CURLM*> multis;
  std::vector<CURL*> easies;
  CURLSH* share = nullptr;
  std::mutex share_mu[CURL_LOCK_DATA_LAST];

  Pool() {
    share = curl_share_init();
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_share_setopt(
        share, CURLSHOPT_LOCKFUNC, +[](CURL*, curl_lock_data d, curl_lock_access, void* p) {
          static_cast<Pool*>(p)->share_mu[d].lock();
        });
    curl_share_setopt(
        share, CURLSHOPT_UNLOCKFUNC,
        +[](CURL*, curl_lock_data d, void* p) { static_cast<Pool*>(p)->share_mu[d].unlock(); });
    curl_share_setopt(share, CURLSHOPT_USERDATA, this);
  }
  ~Pool() {
    if (pid != getpid()) return;  // a forked child: leave the parent's connections alone
    for (CURL* e : easies) curl_easy_cleanup(e);
    for (CURLM* m : multis) curl_multi_cleanup(m);
    curl_share_cleanup(share);
  }
  void forked_check() {  // under mu
    if (pid == getpid()) return;
    multis.clear();  // abandoned, not cleaned up
    easies.clear();
    pid = getpid();
  }
  CURLM* take_multi() {
    {
      std::lock_guard lock(mu);
      forked_check();
      if (!multis.empty()) {
        CURLM* m = multis.back();
        multis.pop_back();
        return m;
      }
    }
    CURLM* m = curl_multi_init();
    if (!m) return nullptr;
    curl_multi_setopt(m, CURLMOPT_PIPELINING, long{CURLPIPE_MULTIPLEX});
    curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS, kMaxHostConnections);
    curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, 2 * kMaxHostConnections);
    return m;
  }
  void give_multi(CURLM* m) {
    std::lock_guard lock(mu);
    forked_check();
    multis.push_back(m);
  }
  CURL* take_easy() {
    {
      std::lock_guard lock(mu);
      forked_check();
      if (!easies.empty()) {
        CURL* e = easies.back();
        easies.pop_back();
        return e;
      }
    }
    return curl_easy_init();
  }
  void give_easy(CURL* e) {
    std::lock_guard lock(mu);
    forked_check();
    if (easies.size() < 64)
      easies.push_back(e);
    else
      curl_easy_cleanup(e);
  }
};

HttpObject::HttpObject(HttpConfig config) : cfg_(std::move(config)) {
  global_init();
  pool_ = std::make_unique<Pool>();
  curl_slist* h = nullptr;
  if (cfg_.s3) {
    h = curl_slist_append(h, (std::string("x-amz-content-sha256: ") + kEmptySha256).c_str());
    if (!cfg_.session_token.empty())
      h = curl_slist_append(h, ("x-amz-security-token: " + cfg_.session_token).c_str());
  }
  probe_headers_ = h;
}

HttpObject::~HttpObject() {
  pool_.reset();
  curl_slist_free_all(static_cast<curl_slist*>(probe_headers_));
  curl_slist_free_all(static_cast<curl_slist*>(fetch_headers_));
}

std::string HttpObject::scrub(std::string s) const {
  std::vector<std::string> secrets = {cfg_.secret_key, cfg_.session_token, cfg_.access_key};
  // The parts of the URL that messages never show: user info and query string.
  const size_t scheme = cfg_.url.find("://");
  if (scheme != std::string::npos) {
    const size_t host_end = cfg_.url.find_first_of("/?#", scheme + 3);
    const std::string authority = cfg_.url.substr(scheme + 3, host_end - (scheme + 3));
    const size_t at = authority.rfind('@');
    if (at != std::string::npos) secrets.push_back(authority.substr(0, at));
    const size_t q = cfg_.url.find('?');
    if (q != std::string::npos) secrets.push_back(cfg_.url.substr(q + 1));
    secrets.push_back(cfg_.url);  // the whole URL, in case a message quotes it
  }
  for (const std::string& secret : secrets) {
    if (secret.size() < 4) continue;
    for (size_t p; (p = s.find(secret)) != std::string::npos;) s.replace(p, secret.size(), "***");
  }
  return s;
}

void HttpObject::setup(void* easy, Transfer& x, Clock::time_point deadline) {
  CURL* e = static_cast<CURL*>(easy);
  curl_easy_reset(e);
  x.reset();
  x.easy = e;
  const long left_ms =
      std::max<long>(1, std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count());
  // A stall: less than 1 KiB/s for this long. A quarter of the bound, 1 to 15 seconds.
  const long stall_s = std::clamp<long>(static_cast<long>(cfg_.timeout_s / 4), 1, 15);
  curl_easy_setopt(e, CURLOPT_URL, cfg_.url.c_str());
  curl_easy_setopt(e, CURLOPT_PRIVATE, &x);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_SHARE, pool_->share);
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION, long{CURL_HTTP_VERSION_2TLS});
  curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  // Plain HTTP(S) may redirect (a CDN, a mirror); a signed S3 request is for one host only.
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, cfg_.s3 ? 0L : 1L);
  curl_easy_setopt(e, CURLOPT_MAXREDIRS, 5L);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, std::min<long>(left_ms, 10000));
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, left_ms);
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1024L);
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, stall_s);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(e, CURLOPT_USERAGENT, "gdfs");
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x.errbuf);
  const std::string range =
      std::to_string(x.get->offset) + "-" + std::to_string(x.get->offset + x.get->length - 1);
  curl_easy_setopt(e, CURLOPT_RANGE, range.c_str());  // copied by libcurl
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, x.probe ? probe_headers_ : fetch_headers_);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, &x);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &x);
  if (!cfg_.ca_file.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, cfg_.ca_file.c_str());
  if (cfg_.s3) {
    curl_easy_setopt(e, CURLOPT_PATH_AS_IS, 1L);  // the key exactly as encoded: it is what is signed
    if (!cfg_.access_key.empty()) {
      const std::string sigv4 = "aws:amz:" + cfg_.region + ":s3";
      curl_easy_setopt(e, CURLOPT_AWS_SIGV4, sigv4.c_str());
      curl_easy_setopt(e, CURLOPT_USERNAME, cfg_.access_key.c_str());
      curl_easy_setopt(e, CURLOPT_PASSWORD, cfg_.secret_key.c_str());
    }
  }
}

namespace {

// A write to a connection the server closed raises SIGPIPE, which kills a process that has not ignored it
// (the daemon has; a program using the library may not). libcurl skips its own guard with CURLOPT_NOSIGNAL,
// which threads need, so the transfers run with SIGPIPE blocked in this thread, and one raised meanwhile
// (it is sent to the thread that wrote) is taken off before the mask is restored.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeGuard() {
    if (sigismember(&old_, SIGPIPE)) return;  // it was blocked before us: leave it to the owner
    sigset_t pending;
    if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE)) {
      const timespec zero{};
      sigtimedwait(&pipe_, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t pipe_, old_;
};

}  // namespace

void LinkEstimate::add(double first_byte_s, double total_s, uint64_t bytes) {
  // Bodies shorter than this arrive in a few packets: their time says nothing about the rate.
  constexpr uint64_t kTimedBody = 256 << 10;
  std::lock_guard lock(mu_);
  // Moving averages: recent transfers count most, one odd transfer does not swing readahead.
  if (first_byte_s > 0) {
    latency_s_ = have_latency_ ? latency_s_ + (first_byte_s - latency_s_) / 8 : first_byte_s;
    have_latency_ = true;
  }
  const double body_s = total_s - first_byte_s;
  if (bytes >= kTimedBody && body_s > 1e-4) {
    const double rate = double(bytes) / body_s;
    rate_ = rate_ > 0 ? rate_ + (rate - rate_) / 4 : rate;
  }
}

double LinkEstimate::latency_s() const {
  std::lock_guard lock(mu_);
  return latency_s_;
}

double LinkEstimate::bytes_per_s() const {
  std::lock_guard lock(mu_);
  return rate_;
}

void HttpObject::attempt(std::span<Transfer*> xs, Clock::time_point deadline) {
  SigpipeGuard sigpipe;
  CURLM* m = pool_->take_multi();
  if (!m) {
    for (Transfer* x : xs) x->outcome = Outcome::kRetry, x->why = "cannot create a transfer (out of memory?)";
    return;
  }
  std::vector<Transfer*> added;
  for (size_t i = 0; i < xs.size(); ++i) {
    Transfer& x = *xs[i];
    CURL* e = pool_->take_easy();
    if (!e) {
      x.reset();
      x.outcome = Outcome::kRetry;
      x.why = "cannot create a transfer (out of memory?)";
      continue;
    }
    setup(e, x, deadline);
    if (curl_multi_add_handle(m, e) != CURLM_OK) {
      pool_->give_easy(e);
      x.easy = nullptr;
      x.outcome = Outcome::kRetry;
      x.why = "cannot start a transfer";
      continue;
    }
    counters_.requests.fetch_add(1, std::memory_order_relaxed);
    added.push_back(&x);
  }
  auto drain = [&] {
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(m, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      char* priv = nullptr;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
      Transfer& x = xfer(priv);
      x.done = true;
      x.code = msg->data.result;
    }
  };
  // Every transfer carries its own timeout (the deadline), so this loop ends; the guard is for a bug.
  const auto guard = deadline + std::chrono::seconds(10);
  int running = static_cast<int>(added.size());
  while (running > 0 && Clock::now() < guard && !cancelled_.load(std::memory_order_relaxed)) {
    if (curl_multi_perform(m, &running) != CURLM_OK) break;
    drain();
    if (running == 0) break;
    curl_multi_poll(m, nullptr, 0, 250, nullptr);
  }
  drain();
  for (Transfer* x : added) {
    curl_multi_remove_handle(m, x->easy);
    if (x->done && x->code == CURLE_OK && x->status == 0)
      curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
    if (x->done && x->code == CURLE_OK && (x->status == 206 || x->status == 200)) {
      curl_off_t first_us = 0, total_us = 0;
      curl_easy_getinfo(x->easy, CURLINFO_STARTTRANSFER_TIME_T, &first_us);
      curl_easy_getinfo(x->easy, CURLINFO_TOTAL_TIME_T, &total_us);
      link_.add(double(first_us) / 1e6, double(total_us) / 1e6, x->got);
    }
    pool_->give_easy(x->easy);
    x->easy = nullptr;
    report(*x);
  }
  pool_->give_multi(m);
}

// Turns one finished attempt into its outcome.
void HttpObject::report(Transfer& x) {
  ++x.attempts;
  auto set = [&](Outcome o, std::string why) {
    x.outcome = o;
    if (!why.empty()) x.why = std::move(why);
  };
  if (!x.done) return set(Outcome::kRetry, "the transfer did not finish");
  if (x.refused != Outcome::kOk) return set(x.refused, "");
  if (x.code != CURLE_OK) {
    std::string why = curl_easy_strerror(x.code);
    if (x.errbuf[0]) why += std::string(" (") + clipped_ascii(x.errbuf, 200) + ")";
    return set(transient(x.code) ? Outcome::kRetry : Outcome::kFail, scrub(why));
  }
  const Outcome o = x.conclude();
  if (o == Outcome::kOk) counters_.bytes.fetch_add(x.got, std::memory_order_relaxed);
  if (x.status != 206 && x.status != 200) x.retry_after_s = parse_retry_after(x.retry_after);
  x.outcome = o;
}

void HttpObject::warn_limited(int kind, const std::string& line) {
  // At most one line of each kind every 10 seconds, saying how many were held back.
  std::string out;
  {
    std::lock_guard lock(warn_mu_);
    const auto now = Clock::now();
    if (last_warn_[kind] != Clock::time_point{} && now - last_warn_[kind] < std::chrono::seconds(10)) {
      ++suppressed_[kind];
      return;
    }
    last_warn_[kind] = now;
    out = line;
    if (suppressed_[kind]) out += " (" + std::to_string(suppressed_[kind]) + " more like it not shown)";
    suppressed_[kind] = 0;
  }
  cfg_.warn(out);
}

namespace {

// The backoff before the retry after round `round`: the upper half of an exponential step is drawn.
milliseconds backoff_step(unsigned round) {
  return std::min<milliseconds>(kBackoffCap, kBackoffBase * (1L << std::min(round, 10u)));
}

// The first warning of a run says what is retried and for how long, so that a server that is down does
// not look like a hang: up to kMaxAttempts attempts, backoff at its longest, never past the deadline.
std::string retry_line(const std::string& what, unsigned round, unsigned attempts,
                       Clock::time_point deadline) {
  const unsigned left = kMaxAttempts - std::min(attempts, kMaxAttempts);
  milliseconds backoff{0};
  for (unsigned r = round; r < round + left; ++r) backoff += backoff_step(r);
  const auto to_s = [](milliseconds ms) { return std::to_string((ms.count() + 999) / 1000); };
  const auto remaining = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
  return what + "; retrying: at most " + std::to_string(left) +
         (left == 1 ? " more attempt" : " more attempts") + ", waiting up to " +
         to_s(std::min(backoff, remaining)) + " s between them, none later than " + to_s(remaining) +
         " s from now";
}

}  // namespace

void HttpObject::cancel() {
  {
    std::lock_guard lock(cancel_mu_);
    cancelled_.store(true);
  }
  cancel_cv_.notify_all();
}

void HttpObject::run(std::span<Transfer*> xs, Clock::time_point deadline) {
  thread_local std::minstd_rand rng(
      static_cast<unsigned>(std::hash<std::thread::id>()(std::this_thread::get_id())));
  std::vector<Transfer*> todo(xs.begin(), xs.end());
  for (unsigned round = 0; !todo.empty(); ++round) {
    attempt(todo, deadline);
    if (cancelled_.load()) {
      for (Transfer* x : todo)
        if (x->outcome == Outcome::kRetry) x->outcome = Outcome::kFail, x->why = "the reader is closing";
      break;
    }
    std::vector<Transfer*> again;
    long retry_after_s = -1;
    for (Transfer* x : todo) {
      if (x->outcome == Outcome::kChanged) {
        counters_.changed.fetch_add(1, std::memory_order_relaxed);
        if (!changed_warned_.exchange(true))
          cfg_.warn(cfg_.name + ": the image changed on the server since it was opened (" + x->why +
                    "); reads of pages not already fetched fail (EIO) until it is mounted again");
      }
      if (x->outcome != Outcome::kRetry) continue;
      if (x->attempts >= kMaxAttempts) {
        x->outcome = Outcome::kFail;
        x->why += " (" + std::to_string(x->attempts) + " attempts)";
        continue;
      }
      again.push_back(x);
      retry_after_s = std::max(retry_after_s, x->retry_after_s);
    }
    if (again.empty()) break;
    // Full jitter over the upper half of an exponential step, or what the server asked for.
    const auto step = backoff_step(round);
    auto wait = milliseconds(step.count() / 2 + static_cast<long>(rng() % (step.count() / 2 + 1)));
    if (retry_after_s >= 0)
      wait = std::max(wait, std::min<milliseconds>(kRetryAfterCap, milliseconds(retry_after_s * 1000)));
    if (Clock::now() + wait >= deadline) {
      for (Transfer* x : again) x->outcome = Outcome::kFail, x->why += " (no time left to retry)";
      break;
    }
    counters_.retries.fetch_add(again.size(), std::memory_order_relaxed);
    const Transfer& first = *again.front();
    const std::string what =
        first.probe ? "opening the image"
                    : "bytes " + std::to_string(first.get->offset) + "+" + std::to_string(first.get->length);
    warn_limited(0, retry_line(cfg_.name + ": " + what + ": " + first.why, round, first.attempts, deadline));
    {
      std::unique_lock lock(cancel_mu_);
      cancel_cv_.wait_for(lock, wait, [&] { return cancelled_.load(); });
    }
    todo = std::move(again);
  }
}

ObjectIdentity HttpObject::probe(std::vector<uint8_t>& head, uint32_t n) {
  head.assign(n, 0);
  RangeGet g{0, n, head.data(), false};
  Transfer x;
  x.get = &g;
  x.probe = true;
  Transfer* xs[] = {&x};
  run(xs, Clock::now() + std::chrono::milliseconds(static_cast<long>(cfg_.timeout_s * 1000)));
  if (x.outcome != Outcome::kOk) {
    if (x.status == 416) throw ImageError(cfg_.name + ": the object is empty");
    // What a local open says of a missing or forbidden file, so that callers tell them apart the same way.
    const int code = x.status == 404 || x.status == 410   ? ENOENT
                     : x.status == 401 || x.status == 403 ? EACCES
                                                          : EIO;
    throw ImageError(cfg_.name + ": cannot open: " + x.why, code);
  }
  id_ = x.found;
  head.resize(std::min<uint64_t>(n, id_.size));
  // Every later request asks for this version only.
  curl_slist* h = nullptr;
  for (curl_slist* p = static_cast<curl_slist*>(probe_headers_); p; p = p->next)
    h = curl_slist_append(h, p->data);
  if (id_.strong_etag())
    h = curl_slist_append(h, ("If-Match: " + id_.etag).c_str());
  else if (!id_.last_modified.empty())
    h = curl_slist_append(h, ("If-Unmodified-Since: " + id_.last_modified).c_str());
  fetch_headers_ = h;
  probed_ = true;
  return id_;
}

void HttpObject::fetch(std::span<RangeGet> gets) {
  std::vector<Transfer> xs(gets.size());
  std::vector<Transfer*> todo;
  for (size_t i = 0; i < gets.size(); ++i) {
    gets[i].ok = false;
    xs[i].get = &gets[i];
    xs[i].id = &id_;
    if (!probed_ || gets[i].length == 0 || gets[i].offset > id_.size ||
        gets[i].length > id_.size - gets[i].offset)
      continue;  // outside the object: fails without a request
    todo.push_back(&xs[i]);
  }
  if (todo.empty()) return;
  run(todo, Clock::now() + std::chrono::milliseconds(static_cast<long>(cfg_.timeout_s * 1000)));
  for (Transfer* x : todo) {
    x->get->ok = x->outcome == Outcome::kOk;
    if (x->get->ok) continue;
    counters_.failures.fetch_add(1, std::memory_order_relaxed);
    if (x->outcome != Outcome::kChanged && !cancelled_.load())  // closing: nobody reads the result
      warn_limited(1, cfg_.name + ": bytes " + std::to_string(x->get->offset) + "+" +
                          std::to_string(x->get->length) + ": " + x->why + "; the read fails (EIO)");
  }
}

}  // namespace gdfs::remote
