// Remote images against real servers on loopback (label remote): nginx over HTTP and HTTPS (HTTP/2, a
// self-signed certificate trusted through ca_file), moto's S3 API with SigV4 checked, and a fault-injecting
// proxy. The reader and gdfs-inspect open images by URL and every file is compared with its source; faults
// give the right bytes or EIO, never wrong bytes; a replaced image fails reads and is reported once; the
// disk cache serves a second open without fetching, refetches damaged blocks and keeps its bound.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <tuple>
#include <utility>

#include "cli_util.h"
#include "reader/src/testing.h"
#include "remote_util.h"

namespace gdfs::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Warnings a source reports, collected.
struct Warnings {
  std::mutex mu;
  std::vector<std::string> lines;
  std::function<void(std::string_view)> fn() {
    return [this](std::string_view l) {
      std::lock_guard lock(mu);
      lines.emplace_back(l);
    };
  }
  size_t count(const std::string& what) {
    std::lock_guard lock(mu);
    size_t n = 0;
    for (const auto& l : lines) n += l.find(what) != std::string::npos;
    return n;
  }
  std::string all() {
    std::lock_guard lock(mu);
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
  }
};

ReaderOptions quiet_options(Warnings* w = nullptr) {
  ReaderOptions o;
  o.threads = 2;
  o.cache_size = 64 << 20;
  o.decoder = DecoderChoice::kCpu;
  if (w) o.source.warn = w->fn();
  return o;
}

void copy_file(const std::string& from, const std::string& to) {
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
}

// Replaces `path` atomically with `from`'s bytes and a different mtime (nginx's ETag is mtime and size).
void replace_file(const std::string& from, const std::string& path) {
  const std::string tmp = path + ".new";
  copy_file(from, tmp);
  struct stat st {};
  stat(path.c_str(), &st);
  const timespec times[2] = {{st.st_mtim.tv_sec + 100, 0}, {st.st_mtim.tv_sec + 100, 0}};
  utimensat(AT_FDCWD, tmp.c_str(), times, 0);
  fs::rename(tmp, path);
}

#define REQUIRE_SERVER(server) \
  if (!(server).ok()) GTEST_SKIP() << "cannot start the test server: " << (server).error()

// ---- HTTP and HTTPS (nginx) ------------------------------------------------------------------------------

TEST(RemoteHttp, EdgeTreeOverHttpOpensInTwoRequests) {
  const TestImage& img = edge_image();
  WebServer web;
  REQUIRE_SERVER(*web.nginx);
  auto r = Reader::open(web.http_url(img.name), quiet_options());
  // Counted by the client: nginx logs a request after its response, so under load its log can lag.
  ASSERT_EQ(counter(*r, "remote_requests"), 2u)
      << "opening must cost the probe and the metadata region, nothing per file";
  const auto at_open = web.nginx->requests("access.log", 2);
  ASSERT_EQ(at_open.size(), 2u);
  EXPECT_EQ(at_open[0].range, "bytes=0-65535");
  EXPECT_EQ(at_open[0].status, 206);
  EXPECT_EQ(at_open[1].status, 206);
  EXPECT_EQ(r->name(), web.http_url(img.name));
  EXPECT_EQ(std::string(r->fetcher_name()), "http");
  EXPECT_GE(expect_same_tree(*r, img), 2000u);
  EXPECT_GT(counter(*r, "remote_requests"), 2u);
  EXPECT_EQ(counter(*r, "remote_failures"), 0u);
  for (const auto& q : web.nginx->requests()) EXPECT_EQ(q.status, 206) << q.uri << " " << q.range;
}

TEST(RemoteHttp, EdgeTreeOverHttpsWithHttp2AndTheTestCa) {
  const TestImage& img = edge_image();
  TestCert cert(fresh_dir("cert"));
  if (!cert.error.empty()) GTEST_SKIP() << cert.error;
  WebServer web(&cert);
  REQUIRE_SERVER(*web.nginx);
  // Verification is on by default: the self-signed certificate is refused...
  unsetenv("GDFS_CA_FILE");
  try {
    Image::open(web.https_url(img.name));
    ADD_FAILURE() << "an untrusted certificate was accepted";
  } catch (const ImageError& e) {
    EXPECT_NE(std::string(e.what()).find("certificate"), std::string::npos) << e.what();
  }
  // ...and trusted through ca_file (or GDFS_CA_FILE).
  ReaderOptions o = quiet_options();
  o.source.ca_file = cert.cert;
  auto r = Reader::open(web.https_url(img.name), o);
  EXPECT_GE(expect_same_tree(*r, img), 2000u);
  setenv("GDFS_CA_FILE", cert.cert.c_str(), 1);
  EXPECT_NO_THROW(Image::open(web.https_url(img.name)));
  unsetenv("GDFS_CA_FILE");
  size_t h2 = 0, tls = 0;
  for (const auto& q : web.nginx->requests()) {
    if (q.port != web.https) continue;
    ++tls;
    h2 += q.protocol == "HTTP/2.0";
  }
  EXPECT_GT(tls, 2u);
  EXPECT_EQ(h2, tls) << "HTTPS requests should use HTTP/2 where the server offers it";
}

TEST(RemoteHttp, SixteenConcurrentReadersThroughOneReader) {
  const TestImage& img = data_image();
  WebServer web;
  REQUIRE_SERVER(*web.nginx);
  ReaderOptions o = quiet_options();
  o.cache_size = 4 << 20;  // small: pages are evicted and fetched again while others read
  auto r = Reader::open(web.http_url(img.name), o);
  std::vector<std::thread> threads;
  std::atomic<size_t> eio{0};
  for (int t = 0; t < 16; ++t) threads.emplace_back([&, t] { eio += random_reads(*r, img, 1000 + t, 40); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(eio.load(), 0u);
  EXPECT_EQ(counter(*r, "remote_failures"), 0u);
}

// Waits until a reader's background requests (readahead) have stopped: its request count holds still.
void settle(Reader& r) {
  uint64_t last = counter(r, "remote_requests");
  for (int still = 0; still < 3;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const uint64_t now = counter(r, "remote_requests");
    still = now == last ? still + 1 : 0;
    last = now;
  }
}

// A walk through many small files (tar, cp -r) reads the image front to back a few KiB at a time: the
// stretch after it is prefetched, so the walk costs a few requests instead of one per file, and the
// bytes are the same. Random reads far apart prefetch nothing.
TEST(RemoteHttp, AWalkThroughSmallFilesIsPrefetchedAndRandomReadsAreNot) {
  const TestImage& img = data_image();
  WebServer web;
  REQUIRE_SERVER(*web.nginx);
  auto walk = [&](uint64_t readahead) {
    ReaderOptions o = quiet_options();
    o.readahead = readahead;
    auto r = Reader::open(web.http_url(img.name), o);
    const uint64_t at_open = counter(*r, "remote_requests");
    size_t files = 0;
    for (const auto& e : r->list("/small")) {
      EXPECT_TRUE(same_file(*r, img, "/small/" + e.name)) << e.name;
      ++files;
    }
    EXPECT_EQ(files, 60u);
    settle(*r);
    return std::tuple{counter(*r, "remote_requests") - at_open, counter(*r, "prefetch_hits"),
                      counter(*r, "decoded_ahead_pages")};
  };
  const auto [plain, plain_hits, plain_decoded] = walk(0);
  const auto [ahead, ahead_hits, ahead_decoded] = walk(4 << 20);
  std::cout << "[          ] 60 small files: " << plain << " requests without readahead, " << ahead
            << " with (" << ahead_hits << " reads from prefetched stretches, " << ahead_decoded
            << " pages decoded ahead from them)\n";
  EXPECT_EQ(plain_hits, 0u) << "readahead 0 turns prefetching off too";
  EXPECT_EQ(plain_decoded, 0u) << "and decoding ahead of walks";
  // The walk's pages come from the prefetched stretches: read there whole when decoded ahead of the
  // walk (a few reads), or file by file when the walk gets there first.
  EXPECT_GT(ahead_hits, 0u);
  EXPECT_GT(ahead_hits + ahead_decoded, 20u);
  EXPECT_LE(ahead, 12u);
  EXPECT_LT(2 * ahead, plain);
  EXPECT_EQ(counter(*Reader::open(web.http_url(img.name), quiet_options()), "prefetch_bytes"), 0u);

  // 4 KiB reads of the incompressible file, each at least 1 MiB from the one before.
  auto r = Reader::open(web.http_url(img.name), quiet_options());
  const auto local = read_bytes(img.src + "/random");
  const uint64_t order[] = {0, 2, 1, 3, 0, 2, 1, 3};
  uint64_t k = 0;
  for (uint64_t m : order) {
    const uint64_t off = m * (1 << 20) + (k++ % 4) * 200000;
    std::vector<uint8_t> buf(4096);
    ASSERT_EQ(r->read("/random", off, buf.size(), buf.data()), buf.size());
    EXPECT_TRUE(std::equal(buf.begin(), buf.end(), local.begin() + off));
  }
  settle(*r);
  EXPECT_EQ(counter(*r, "prefetch_bytes"), 0u);
}

// The prefetch's claim, held open (testing::after_prefetch_claim): says it got there, then waits.
std::promise<void>* g_in_claim = nullptr;
void pause_in_claim() {
  if (std::promise<void>* p = std::exchange(g_in_claim, nullptr)) {
    p->set_value();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
}

// A read that needs a chunk a prefetch has just claimed runs the prefetch itself (so that nobody waits
// for work not yet started), possibly before the prefetch has recorded what it claimed. It must still
// get its bytes: not wait forever for chunks nobody fetches, nor fail.
TEST(RemoteHttp, AReadThatRunsAPrefetchMidClaimGetsItsBytes) {
  const TestImage& img = data_image();
  no_proxies();
  WebServer web;
  REQUIRE_SERVER(*web.nginx);
  auto image = Image::open(web.http_url(img.name), quiet_options().source);
  Source& src = image->source();
  const std::vector<uint8_t> local = read_bytes(img.file);
  ASSERT_EQ(local.size(), src.size());
  const uint64_t at = local.size() / 2, len = std::min<uint64_t>(512 << 10, local.size() - at);
  std::promise<void> in_claim;
  g_in_claim = &in_claim;
  testing::after_prefetch_claim = pause_in_claim;
  std::thread prefetcher([&] {
    if (std::shared_ptr<Source::Prefetch> p = src.start_prefetch(at, len)) p->run();
  });
  in_claim.get_future().wait();
  std::vector<uint8_t> buf(4096);
  auto reading = std::async(std::launch::async, [&] {
    ReadRange r{at + 100, static_cast<uint32_t>(buf.size()), buf.data(), false};
    src.read({&r, 1});
    return r.ok;
  });
  if (reading.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    std::fprintf(stderr, "a read of a prefetched stretch never returned\n");
    std::abort();  // its thread cannot be joined: fail now rather than at ctest's timeout
  }
  prefetcher.join();
  testing::after_prefetch_claim = nullptr;
  EXPECT_EQ(g_in_claim, nullptr) << "the prefetch claimed nothing";
  ASSERT_TRUE(reading.get());
  EXPECT_TRUE(std::equal(buf.begin(), buf.end(), local.begin() + at + 100));
}

TEST(RemoteHttp, InspectCommandsTakeUrls) {
  const TestImage& img = edge_image();
  WebServer web;
  REQUIRE_SERVER(*web.nginx);
  const std::string url = web.http_url(img.name);
  auto same_output = [&](std::vector<std::string> args_local, std::vector<std::string> args_url) {
    const CliResult local = run_inspect(args_local), remote = run_inspect(args_url);
    EXPECT_EQ(remote.code, 0) << remote.err;
    EXPECT_EQ(local.code, 0) << local.err;
    std::string want = local.out;
    for (size_t p; (p = want.find(img.file)) != std::string::npos;) want.replace(p, img.file.size(), url);
    EXPECT_EQ(remote.out, want) << args_url[0];
  };
  same_output({"info", img.file}, {"info", url});
  same_output({"info", "--json", img.file}, {"info", "--json", url});
  same_output({"ls", "-l", "-R", img.file}, {"ls", "-l", "-R", url});
  same_output({"pages", img.file, "/big"}, {"pages", url, "/big"});
  same_output({"stats", img.file}, {"stats", url});
  same_output({"verify", img.file}, {"verify", url});
  same_output({"cat", img.file, "/pages+tail"}, {"cat", url, "/pages+tail"});
  const std::string out = fresh_dir("extract") + "/tree";
  const CliResult x = run_inspect({"extract", url, out});
  ASSERT_EQ(x.code, 0) << x.err;
  const auto diffs = compare_trees(img.src, out, img.caps.root, img.caps.xattrs);
  EXPECT_TRUE(diffs.empty()) << diffs.size() << " differences, first: " << diffs.front();
}

TEST(RemoteHttp, NamesAndMessagesNeverShowCredentials) {
  const TestImage& img = edge_image();
  WebServer web;
  REQUIRE_SERVER(*web.nginx);
  const std::string host = "127.0.0.1:" + std::to_string(web.http);
  Warnings w;
  ReaderOptions o = quiet_options(&w);
  auto r = Reader::open(
      "http://alice:hunter2secret@" + host + "/" + img.name + "?X-Amz-Signature=sig0123456789", o);
  EXPECT_EQ(r->name(), "http://" + host + "/" + img.name);
  EXPECT_TRUE(same_file(*r, img, "/page"));
  const std::string stats = r->stats_json();
  for (const char* secret : {"hunter2secret", "alice", "sig0123456789"})
    EXPECT_EQ(stats.find(secret), std::string::npos);
  try {
    Image::open("http://alice:hunter2secret@" + host + "/missing.gdfs?token=tok0123456789", o.source);
    ADD_FAILURE() << "a missing image opened";
  } catch (const ImageError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what, "http://" + host + "/missing.gdfs: cannot open: HTTP 404");
    EXPECT_EQ(e.code(), ENOENT);  // as for a missing local file
  }
  const std::string warned = w.all();
  for (const char* secret : {"hunter2secret", "tok0123456789", "sig0123456789"})
    EXPECT_EQ(warned.find(secret), std::string::npos) << warned;
}

TEST(RemoteHttp, ReplacedImageFailsReadsAndIsReportedOnce) {
  const TestImage& img = edge_image();
  const TestImage& other = data_image();
  WebServer web;
  REQUIRE_SERVER(*web.nginx);
  copy_file(img.file, www() + "/changing.gdfs");
  Warnings w;
  ReaderOptions o = quiet_options(&w);
  o.readahead = 0;
  auto r = Reader::open(web.http_url("changing.gdfs"), o);
  ASSERT_TRUE(same_file(*r, img, "/page"));
  replace_file(other.file, www() + "/changing.gdfs");
  int failed = 0;
  for (const char* path : {"/big", "/pages+tail", "/random", "/dup-a"}) {
    std::vector<uint8_t> buf(1 << 20);
    try {
      r->read(path, 0, buf.size(), buf.data());
    } catch (const ImageError& e) {
      EXPECT_EQ(e.code(), EIO) << e.what();
      ++failed;
    }
  }
  EXPECT_EQ(failed, 4) << "reads of the replaced image must fail";
  EXPECT_EQ(w.count("the image changed on the server since it was opened"), 1u) << w.all();
  EXPECT_GE(counter(*r, "remote_changed"), 4u);
  // What was read before the change is still the old image's, whole and right.
  EXPECT_TRUE(same_file(*r, img, "/page"));
  // Opened again, it is the new image.
  auto again = Reader::open(web.http_url("changing.gdfs"), quiet_options());
  EXPECT_TRUE(same_file(*again, other, "/random"));
}

// ---- faults (the proxy between the reader and nginx) ----------------------------------------------------

struct ProxiedServer {
  WebServer web;
  std::unique_ptr<FaultProxy> proxy;
  ProxiedServer() {
    if (web.nginx->ok()) proxy = std::make_unique<FaultProxy>(fresh_dir("proxy"), web.http);
  }
  std::string why() const { return !web.nginx->ok() ? web.nginx->error() : proxy->error(); }
  bool ok() const { return proxy && proxy->ok(); }
  std::string url(const std::string& name) const {
    return "http://127.0.0.1:" + std::to_string(proxy->port()) + "/" + name;
  }
  nlohmann::json stats() const { return nlohmann::json::parse(proxy->stats()); }
};

#define REQUIRE_PROXY(p) \
  if (!(p).ok()) GTEST_SKIP() << "cannot start the servers: " << (p).why()

TEST(RemoteFaults, EachTransientFaultIsRetried) {
  const TestImage& img = data_image();
  ProxiedServer p;
  REQUIRE_PROXY(p);
  Warnings w;
  ReaderOptions o = quiet_options(&w);
  o.readahead = 0;
  o.source.remote_timeout_s = 8;  // stalls are noticed after 2 s
  // Each fault on the next request(s) only, after a fresh open (nothing cached); the read still returns
  // the right bytes.
  const std::vector<std::pair<std::string, int>> faults = {{"drop", 2},  {"503", 2},      {"429", 1},
                                                           {"stall", 1}, {"truncate", 2}, {"badrange", 2}};
  for (const auto& [mode, n] : faults) {
    ASSERT_TRUE(p.proxy->set("none"));
    auto r = Reader::open(p.url(img.name), o);
    ASSERT_TRUE(p.proxy->set(mode, 1.0, n));
    const auto t0 = Clock::now();
    EXPECT_TRUE(same_file(*r, img, "/small/f7")) << mode;
    // libcurl itself sends a request again, once, when a kept-alive connection turns out closed.
    EXPECT_GE(counter(*r, "remote_retries"), uint64_t(mode == "drop" ? n - 1 : n)) << mode;
    EXPECT_EQ(counter(*r, "remote_failures"), 0u) << mode;
    EXPECT_LT(Clock::now() - t0, std::chrono::seconds(8)) << mode;
  }
  const auto s = p.stats();
  for (const auto& [mode, n] : faults) EXPECT_EQ(s["faults"].value(mode, 0), n) << mode;
  EXPECT_GE(w.count("retrying"), 1u);
}

TEST(RemoteFaults, MixedFaultsGiveRightBytesOrEioNeverWrongBytes) {
  const TestImage& img = data_image();
  ProxiedServer p;
  REQUIRE_PROXY(p);
  ReaderOptions o = quiet_options();
  o.source.remote_timeout_s = 3;  // stalls noticed after 1 s; some reads run out of time: EIO
  o.cache_size = 8 << 20;
  auto r = Reader::open(p.url(img.name), o);
  ASSERT_TRUE(p.proxy->set("mixed", 0.35, -1, 7));
  // How many requests 100 reads make depends on timing (prefetch, coalescing), so rounds of 100 reads run
  // until enough faults have met the reader; one round injects about a dozen.
  const size_t enough = 11;
  size_t injected = 0;
  int reads = 0;
  std::atomic<size_t> eio{0};
  for (int round = 0; round < 8 && injected < enough; ++round) {
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] { eio += random_reads(*r, img, 500 + 4 * round + t, 25); });
    for (auto& t : threads) t.join();
    reads += 100;
    injected = 0;
    const auto s = p.stats();
    for (const auto& [k, v] : s["faults"].items()) injected += v.get<size_t>();
  }
  EXPECT_GE(injected, enough);
  std::cout << "[          ] " << injected << " faults injected, " << eio.load() << " of " << reads
            << " reads failed (EIO), " << counter(*r, "remote_retries") << " retries\n";
  // The reader is as good as new once the faults stop and the fetches begun under them have ended: a
  // read that joins one of those shares its outcome, which is EIO when it runs out of time, as a loaded
  // machine makes more likely.
  ASSERT_TRUE(p.proxy->set("none"));
  std::this_thread::sleep_for(std::chrono::duration<double>(o.source.remote_timeout_s));
  EXPECT_GE(expect_same_tree(*r, img), 60u);
}

// One Source::read call serves its ranges concurrently: eight ranges from a server 300 ms away take
// about one round trip, not eight.
TEST(RemoteFaults, OneReadCallRunsItsRangesConcurrently) {
  const TestImage& img = data_image();
  ProxiedServer p;
  REQUIRE_PROXY(p);
  auto image = Image::open(p.url(img.name));
  ASSERT_TRUE(p.proxy->reset());
  ASSERT_TRUE(p.proxy->set("delay", 1.0, -1, 1, 300));
  const auto local = read_bytes(img.file);
  std::vector<ReadRange> ranges;
  std::vector<std::vector<uint8_t>> bufs(8, std::vector<uint8_t>(100000));
  for (size_t i = 0; i < 8; ++i)
    ranges.push_back(ReadRange{(1 << 20) + i * 500000, 100000, bufs[i].data(), false});
  const auto t0 = Clock::now();
  image->source().read(ranges);
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  for (size_t i = 0; i < 8; ++i) {
    ASSERT_TRUE(ranges[i].ok) << i;
    EXPECT_TRUE(std::equal(bufs[i].begin(), bufs[i].end(), local.begin() + ranges[i].offset)) << i;
  }
  std::cout << "[          ] 8 ranges, 300 ms per request: " << s << " s\n";
  EXPECT_LT(s, 1.2) << "the ranges were fetched one after another";
  EXPECT_EQ(p.stats()["requests"].get<int>(), 8);
}

TEST(RemoteFaults, FlippedBytesAreCaughtByThePageChecksums) {
  const TestImage& img = data_image();
  ProxiedServer p;
  REQUIRE_PROXY(p);
  ReaderOptions o = quiet_options();
  o.readahead = 0;
  auto r = Reader::open(p.url(img.name), o);
  ASSERT_TRUE(p.proxy->set("flip"));
  std::vector<uint8_t> buf(1 << 20);
  for (const char* path : {"/text", "/random", "/small/f3"}) {
    try {
      r->read(path, 0, buf.size(), buf.data());
      ADD_FAILURE() << path << ": a corrupted page was returned";
    } catch (const ImageError& e) {
      EXPECT_EQ(e.code(), EIO);
    }
  }
  ASSERT_TRUE(p.proxy->set("none"));
  for (const char* path : {"/text", "/random", "/small/f3"}) EXPECT_TRUE(same_file(*r, img, path)) << path;
}

TEST(RemoteFaults, AServerThatKeepsFailingIsEioWithinTheTimeout) {
  const TestImage& img = data_image();
  ProxiedServer p;
  REQUIRE_PROXY(p);
  Warnings w;
  ReaderOptions o = quiet_options(&w);
  o.readahead = 0;
  o.source.remote_timeout_s = 3;
  auto r = Reader::open(p.url(img.name), o);
  for (const char* mode : {"503", "stall"}) {
    ASSERT_TRUE(p.proxy->set(mode));
    std::vector<uint8_t> buf(100000);
    const auto t0 = Clock::now();
    const std::string path = std::string("/small/f") + (mode[0] == '5' ? "10" : "11");
    try {
      r->read(path, 0, buf.size(), buf.data());
      ADD_FAILURE() << mode << ": the read succeeded";
    } catch (const ImageError& e) {
      EXPECT_EQ(e.code(), EIO) << e.what();
    }
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    EXPECT_LT(s, 3 + 1.5) << mode << ": the read must end within remote_timeout";
  }
  EXPECT_GE(counter(*r, "remote_failures"), 2u);
  EXPECT_GE(w.count("the read fails (EIO)"), 1u) << w.all();
  ASSERT_TRUE(p.proxy->set("none"));
  EXPECT_TRUE(same_file(*r, img, "/small/f10"));
}

// The proxy that stalls every request from the moment a prefetch has claimed its stretch (the claim may
// be made on a pool thread: a walk decoded ahead prefetches too).
std::atomic<FaultProxy*> g_stall_proxy{nullptr};
void stall_from_now() {
  if (FaultProxy* p = g_stall_proxy.exchange(nullptr)) p->set("stall");
}

// Closing a reader (a daemon's unmount) while its prefetch waits on a server that stopped answering:
// the prefetch gives up at once, since nobody is left to wait for it, instead of holding the close for
// its whole timeout and retries.
TEST(RemoteFaults, ClosingAReaderGivesUpAStalledPrefetchAtOnce) {
  const TestImage& img = data_image();
  ProxiedServer p;
  REQUIRE_PROXY(p);
  Warnings w;
  ReaderOptions o = quiet_options(&w);
  o.source.remote_timeout_s = 30;
  auto r = Reader::open(p.url(img.name), o);
  g_stall_proxy.store(p.proxy.get());
  testing::after_prefetch_claim = stall_from_now;
  // A walk through the small files: after a few fetches in a row the stretch ahead is prefetched, and
  // from then on the server stalls.
  for (const auto& e : r->list("/small")) {
    EXPECT_TRUE(same_file(*r, img, "/small/" + e.name)) << e.name;
    if (!g_stall_proxy.load()) break;
  }
  testing::after_prefetch_claim = nullptr;
  ASSERT_EQ(g_stall_proxy.load(), nullptr) << "the walk started no prefetch";
  const auto t0 = Clock::now();
  r.reset();
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_LT(s, 3.0) << "closing waited for the stalled prefetch";
  ASSERT_TRUE(p.proxy->set("none"));
}

// ---- the disk cache ---------------------------------------------------------------------------------------

TEST(RemoteCache, ASecondOpenFetchesOnlyTheProbe) {
  const TestImage& img = data_image();
  ProxiedServer p;
  REQUIRE_PROXY(p);
  ReaderOptions o = quiet_options();
  o.source.cache_dir = fresh_dir("cache");
  {
    auto r = Reader::open(p.url(img.name), o);
    expect_same_tree(*r, img);
    EXPECT_GT(counter(*r, "disk_cache_writes"), 4u);
  }
  const uint64_t blocks = files_named(o.source.cache_dir, ".blk").size();
  EXPECT_EQ(blocks, (fs::file_size(img.file) + (1 << 20) - 1) >> 20) << "every block of the image is cached";
  ASSERT_TRUE(p.proxy->reset());
  {
    auto r = Reader::open(p.url(img.name), o);
    expect_same_tree(*r, img);
    EXPECT_EQ(counter(*r, "disk_cache_misses"), 0u);
    EXPECT_GT(counter(*r, "disk_cache_hits"), 0u);
  }
  const auto s = p.stats();
  EXPECT_EQ(s["requests"].get<int>(), 1) << "only the probe, which checks the image's version: " << s.dump();
  EXPECT_EQ(s["ranges"][0].get<std::string>(), "bytes=0-65535");
}

TEST(RemoteCache, DamagedBlocksAreFetchedAgain) {
  const TestImage& img = data_image();
  ProxiedServer p;
  REQUIRE_PROXY(p);
  Warnings w;
  ReaderOptions o = quiet_options(&w);
  o.source.cache_dir = fresh_dir("cache");
  {
    auto r = Reader::open(p.url(img.name), o);
    expect_same_tree(*r, img);
  }
  auto blocks = files_named(o.source.cache_dir, ".blk");
  ASSERT_GE(blocks.size(), 4u);
  {  // a flipped byte in one block's data, and another block torn in half (a crash during writeback)
    std::fstream f(blocks[1], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(5000);
    f.put('\x5a' ^ static_cast<char>(f.peek()));
  }
  ASSERT_EQ(truncate(blocks[3].c_str(), static_cast<off_t>(fs::file_size(blocks[3]) / 2)), 0);
  ASSERT_TRUE(p.proxy->reset());
  {
    auto r = Reader::open(p.url(img.name), o);
    expect_same_tree(*r, img);
    EXPECT_EQ(counter(*r, "disk_cache_corrupt"), 2u);
  }
  EXPECT_EQ(p.stats()["requests"].get<int>(), 3) << "the probe and the two damaged blocks";
  EXPECT_GE(w.count("failed its checks"), 1u);
  ASSERT_TRUE(p.proxy->reset());
  {
    auto r = Reader::open(p.url(img.name), o);
    expect_same_tree(*r, img);
  }
  EXPECT_EQ(p.stats()["requests"].get<int>(), 1) << "the damaged blocks were stored again";
}

TEST(RemoteCache, TheBoundHoldsAndAChangedImageNeverMeetsOldBlocks) {
  const TestImage& img = data_image();
  const TestImage& edge = edge_image();
  ProxiedServer p;
  REQUIRE_PROXY(p);
  copy_file(img.file, www() + "/cached.gdfs");
  ReaderOptions o = quiet_options();
  o.source.cache_dir = fresh_dir("cache");
  o.source.disk_cache_size = 3 << 20;  // the image is about twice that
  {
    auto r = Reader::open(p.url("cached.gdfs"), o);
    expect_same_tree(*r, img);
    EXPECT_GT(counter(*r, "disk_cache_evictions"), 0u);
  }
  uint64_t cached = 0;
  for (const auto& b : files_named(o.source.cache_dir, ".blk")) cached += fs::file_size(b);
  EXPECT_GT(cached, 0u);
  EXPECT_LE(cached, o.source.disk_cache_size);
  // The same URL now holds another image: its blocks are fetched, never taken from the old ones.
  replace_file(edge.file, www() + "/cached.gdfs");
  ASSERT_TRUE(p.proxy->reset());
  auto r = Reader::open(p.url("cached.gdfs"), o);
  EXPECT_TRUE(same_file(*r, edge, "/big"));
  EXPECT_TRUE(same_file(*r, edge, "/pages+tail"));
  EXPECT_GT(p.stats()["requests"].get<int>(), 1);
  // The new version has a folder of its own next to the old one's.
  size_t objects = 0;
  for (const auto& e : fs::directory_iterator(o.source.cache_dir + "/gdfs-cache-v1"))
    objects += e.is_directory();
  EXPECT_EQ(objects, 2u);
}

TEST(RemoteCache, TwoReadersShareOneFolder) {
  const TestImage& img = data_image();
  WebServer web;
  REQUIRE_SERVER(*web.nginx);
  ReaderOptions o = quiet_options();
  o.source.cache_dir = fresh_dir("cache");
  auto a = Reader::open(web.http_url(img.name), o);
  auto b = Reader::open(web.http_url(img.name), o);
  std::thread ta([&] { EXPECT_EQ(random_reads(*a, img, 1, 80), 0u); });
  std::thread tb([&] { EXPECT_EQ(random_reads(*b, img, 2, 80), 0u); });
  ta.join();
  tb.join();
  expect_same_tree(*a, img);
  expect_same_tree(*b, img);
  EXPECT_EQ(counter(*a, "disk_cache_corrupt") + counter(*b, "disk_cache_corrupt"), 0u);
  // Their temporary files never share a name (one would fail the other's write).
  EXPECT_EQ(counter(*a, "disk_cache_write_errors") + counter(*b, "disk_cache_write_errors"), 0u);
  EXPECT_TRUE(files_named(o.source.cache_dir, "").size() ==
              files_named(o.source.cache_dir, ".blk").size() + 1)
      << "temporary files left behind";
}

TEST(RemoteCache, AFolderThatCannotBeMadeIsRefusedWithItsOwnErrno) {
  const TestImage& img = data_image();
  WebServer web;
  REQUIRE_SERVER(*web.nginx);
  const std::string dir = fresh_dir("cache-errors");
  const std::string file = dir + "/a-file";
  std::ofstream(file) << "x";
  ReaderOptions o = quiet_options();
  for (const auto& [cache_dir, code] :
       {std::pair{dir + "/missing/cache", ENOENT}, std::pair{file, ENOTDIR}}) {
    o.source.cache_dir = cache_dir;
    try {
      Reader::open(web.http_url(img.name), o);
      ADD_FAILURE() << cache_dir << " was taken as a cache folder";
    } catch (const ImageError& e) {
      EXPECT_EQ(e.code(), code) << e.what();  // FileNotFoundError, NotADirectoryError in Python
      EXPECT_NE(std::string(e.what()).find("cache_dir " + cache_dir), std::string::npos) << e.what();
    }
  }
}

// ---- a site: one object store, one caching proxy, many readers ---------------------------------------

// docs/REMOTE.md's recipe: nginx's proxy_cache with the slice module in front of the store caches range
// requests as aligned 1 MiB slices, so the store serves each slice once however many readers (or mounts)
// there are. Here the "store" is nginx too; its access log shows what it served.
// ---- Layered images over HTTP ------------------------------------------------------------------------

// Every regular file under `src` read through `r` (whole) and compared with its source.
void expect_same_files(Reader& r, const std::string& src) {
  for (const auto& e : fs::recursive_directory_iterator(src)) {
    if (!e.is_regular_file()) continue;
    const std::string rel = "/" + e.path().lexically_relative(src).string();
    std::ifstream f(e.path(), std::ios::binary);
    const std::string want{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
    std::string got(want.size(), '\0');
    ASSERT_EQ(r.read(rel, 0, got.size(), got.data()), got.size()) << rel;
    ASSERT_TRUE(got == want) << rel;
  }
}

// Bytes nginx sent for `uri` among `requests`.
uint64_t bytes_for(const std::vector<Nginx::Request>& requests, const std::string& uri, size_t from = 0) {
  uint64_t n = 0;
  for (size_t i = from; i < requests.size(); ++i)
    if (requests[i].uri == uri) n += requests[i].bytes;
  return n;
}

TEST(RemoteLayers, AnUpdateFetchesItsNewPagesAndMetadataOnly) {
  no_proxies();
  WebServer web;
  REQUIRE_SERVER(*web.nginx);
  const std::string src = fresh_dir("layers-src");
  fs::create_directories(src + "/d");
  for (int i = 0; i < 80; ++i) write_text_file(src + "/d/f" + std::to_string(i), 20000 + 3001 * i, i);
  write_text_file(src + "/big", 3 << 20, 7);
  fs::create_directories(www() + "/layers");
  const std::string v1 = www() + "/layers/v1.gdfs", v2 = www() + "/layers/v2.gdfs";
  ASSERT_EQ(run_mkfs({"-q", "--force", src, v1}).code, 0);
  write_text_file(src + "/d/f3", 25000, 1003);   // changed
  write_text_file(src + "/d/new", 90000, 1004);  // added
  ASSERT_EQ(run_mkfs({"-q", "--force", "--base", v1, "--layered", src, v2}).code, 0);

  ReaderOptions o = quiet_options();
  o.source.cache_dir = fresh_dir("layers-cache");
  {
    auto r = Reader::open(web.http_url("layers/v1.gdfs"), o);
    for (int i = 0; i < 80; ++i) {
      std::string all(r->stat("/d/f" + std::to_string(i)).size, '\0');
      r->read("/d/f" + std::to_string(i), 0, all.size(), all.data());
    }
    std::string big(3 << 20, '\0');
    r->read("/big", 0, big.size(), big.data());
  }
  const size_t before = web.nginx->requests().size();
  {
    auto r = Reader::open(web.http_url("layers/v2.gdfs"), o);
    expect_same_files(*r, src);
  }
  const auto requests = web.nginx->requests("access.log", before);
  // v1's pages all come from the disk cache: v1 costs only the probe that checks it is the same object.
  EXPECT_LE(bytes_for(requests, "/layers/v1.gdfs", before), 65536u);
  // v2 is its new pages and its metadata; it is fetched once, in cache blocks (and one probe).
  EXPECT_LE(bytes_for(requests, "/layers/v2.gdfs", before), fs::file_size(v2) + 65536);
  EXPECT_LT(fs::file_size(v2), fs::file_size(v1) / 5);
}

TEST(RemoteCluster, ACachingProxyWithSliceServesEachSliceOnceFromTheStore) {
  const TestImage& img = data_image();
  no_proxies();
  const std::string dir = fresh_dir("site");
  std::unique_ptr<Nginx> site;
  int store = 0, proxy = 0;
  for (int attempt = 0; attempt < 3 && !(site && site->ok()); ++attempt) {
    store = free_port();
    proxy = free_port();
    const std::string d = dir + "/" + std::to_string(attempt);
    std::string servers;
    servers +=
        "  proxy_cache_path " + d + "/cache levels=1:2 keys_zone=gdfs:10m inactive=1d use_temp_path=off;\n";
    servers += "  server { listen 127.0.0.1:" + std::to_string(store) + "; root " + www() + "; access_log " +
               d + "/logs/store.log gdfs; }\n";
    servers += "  server {\n    listen 127.0.0.1:" + std::to_string(proxy) + ";\n    location / {\n";
    servers += "      slice 1m;\n";
    servers += "      proxy_cache gdfs;\n";
    servers += "      proxy_cache_key $uri$is_args$args$slice_range;\n";
    servers += "      proxy_set_header Range $slice_range;\n";
    servers += "      proxy_cache_valid 200 206 1h;\n";
    servers += "      proxy_cache_lock on;\n";
    servers += "      proxy_http_version 1.1;\n";
    servers += "      proxy_set_header Connection \"\";\n";
    servers += "      proxy_pass http://127.0.0.1:" + std::to_string(store) + ";\n    }\n  }\n";
    site = std::make_unique<Nginx>(d, servers, std::vector<int>{store, proxy});
  }
  REQUIRE_SERVER(*site);
  const std::string url = "http://127.0.0.1:" + std::to_string(proxy) + "/" + img.name;
  // Two readers at once, and a third after them: a node that joins later.
  {
    auto a = Reader::open(url, quiet_options());
    auto b = Reader::open(url, quiet_options());
    std::thread ta([&] { expect_same_tree(*a, img); });
    std::thread tb([&] { expect_same_tree(*b, img); });
    ta.join();
    tb.join();
  }
  auto c = Reader::open(url, quiet_options());
  expect_same_tree(*c, img);
  const auto served = site->requests("store.log");
  std::map<std::string, int> per_slice;
  uint64_t bytes = 0;
  for (const auto& q : served) {
    ++per_slice[q.range];
    bytes += q.bytes;
  }
  const uint64_t slices = (fs::file_size(img.file) + (1 << 20) - 1) >> 20;
  EXPECT_EQ(per_slice.size(), slices);
  for (const auto& [range, n] : per_slice)
    EXPECT_EQ(n, 1) << "the store served " << range << " " << n << " times";
  EXPECT_EQ(bytes, fs::file_size(img.file)) << "the store should serve the image exactly once";
  EXPECT_GT(site->requests().size(), 10u) << "the readers' requests go through the proxy";
}

// ---- S3 (moto) -----------------------------------------------------------------------------------------

// The S3 server with the edge image as s3://gdfs-test/images/edge.gdfs, and an environment that points
// at it and at nothing of the user's (no ~/.aws).
struct S3Fixture {
  std::unique_ptr<S3Server> s3;
  std::string home;
  explicit S3Fixture(const TestImage& img) {
    no_proxies();
    home = fresh_dir("home");
    s3 = std::make_unique<S3Server>(fresh_dir("s3"), "gdfs-test",
                                    std::map<std::string, std::string>{{"images/edge.gdfs", img.file}});
    for (const char* v :
         {"AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_SESSION_TOKEN",
          "AWS_ENDPOINT_URL_S3", "AWS_S3_ADDRESSING_STYLE", "AWS_DEFAULT_REGION"})
      unsetenv(v);
    setenv("HOME", home.c_str(), 1);
    setenv("AWS_REGION", "us-east-1", 1);
    if (s3->ok()) setenv("AWS_ENDPOINT_URL", ("http://127.0.0.1:" + std::to_string(s3->port())).c_str(), 1);
  }
  void use_keys(const std::string& key, const std::string& secret) {
    setenv("AWS_ACCESS_KEY_ID", key.c_str(), 1);
    setenv("AWS_SECRET_ACCESS_KEY", secret.c_str(), 1);
  }
};

TEST(RemoteS3, SignedRequestsReadTheEdgeTreeAndBadCredentialsAreRefused) {
  const TestImage& img = edge_image();
  S3Fixture f(img);
  REQUIRE_SERVER(*f.s3);
  f.use_keys(f.s3->key, f.s3->secret);
  auto r = Reader::open("s3://gdfs-test/images/edge.gdfs", quiet_options());
  EXPECT_EQ(r->name(), "s3://gdfs-test/images/edge.gdfs");
  EXPECT_EQ(std::string(r->fetcher_name()), "s3");
  EXPECT_GE(expect_same_tree(*r, img), 2000u);
  EXPECT_EQ(counter(*r, "remote_failures"), 0u);
  // The server checks signatures: a wrong secret, or none at all, is refused, and no message shows it.
  f.use_keys(f.s3->key, "WRONGwrongWRONGwrongWRONGwrong0123456789");
  try {
    Image::open("s3://gdfs-test/images/edge.gdfs");
    ADD_FAILURE() << "a wrong secret was accepted";
  } catch (const ImageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("HTTP 403"), std::string::npos) << what;
    EXPECT_EQ(e.code(), EACCES);
    EXPECT_NE(what.find("SignatureDoesNotMatch"), std::string::npos) << what;
    EXPECT_EQ(what.find("WRONGwrong"), std::string::npos) << what;
    EXPECT_EQ(what.find(f.s3->key), std::string::npos) << what;
  }
  unsetenv("AWS_ACCESS_KEY_ID");
  unsetenv("AWS_SECRET_ACCESS_KEY");
  EXPECT_THROW(Image::open("s3://gdfs-test/images/edge.gdfs"), ImageError);
  f.use_keys(f.s3->key, f.s3->secret);
  try {
    Image::open("s3://gdfs-test/images/missing.gdfs");
    ADD_FAILURE() << "a missing object opened";
  } catch (const ImageError& e) {
    EXPECT_EQ(e.code(), ENOENT) << e.what();
  }
}

TEST(RemoteS3, ProfileSessionTokensAndVirtualHosts) {
  const TestImage& img = edge_image();
  S3Fixture f(img);
  REQUIRE_SERVER(*f.s3);
  unsetenv("AWS_ACCESS_KEY_ID");
  unsetenv("AWS_SECRET_ACCESS_KEY");
  // Temporary credentials (with their session token) from ~/.aws/credentials, region from ~/.aws/config.
  fs::create_directories(f.home + "/.aws");
  std::ofstream(f.home + "/.aws/credentials")
      << "[default]\naws_access_key_id = nothing\naws_secret_access_key = x\n"
      << "[ci]\naws_access_key_id = " << f.s3->session_key
      << "\naws_secret_access_key = " << f.s3->session_secret
      << "\naws_session_token = " << f.s3->session_token << "\n";
  std::ofstream(f.home + "/.aws/config") << "[profile ci]\nregion = us-east-1\n";
  unsetenv("AWS_REGION");
  setenv("AWS_PROFILE", "ci", 1);
  {
    auto r = Reader::open("s3://gdfs-test/images/edge.gdfs", quiet_options());
    EXPECT_TRUE(same_file(*r, img, "/big"));
    EXPECT_TRUE(same_file(*r, img, "/sparse-5g"));
  }
  // Virtual-host addressing: http://gdfs-test.localhost:PORT/images/edge.gdfs (libcurl resolves
  // *.localhost to the loopback address itself).
  ReaderOptions o = quiet_options();
  o.source.s3_addressing = "virtual";
  setenv("AWS_ENDPOINT_URL", ("http://localhost:" + std::to_string(f.s3->port())).c_str(), 1);
  auto r = Reader::open("s3://gdfs-test/images/edge.gdfs", o);
  EXPECT_TRUE(same_file(*r, img, "/pages+tail"));
}

TEST(RemoteS3, AReplacedObjectFailsReads) {
  const TestImage& img = edge_image();
  const TestImage& other = data_image();
  S3Fixture f(img);
  REQUIRE_SERVER(*f.s3);
  f.use_keys(f.s3->key, f.s3->secret);
  Warnings w;
  ReaderOptions o = quiet_options(&w);
  o.readahead = 0;
  auto r = Reader::open("s3://gdfs-test/images/edge.gdfs", o);
  ASSERT_TRUE(same_file(*r, img, "/page"));
  ASSERT_TRUE(f.s3->put("images/edge.gdfs", other.file));
  std::vector<uint8_t> buf(1 << 20);
  for (const char* path : {"/big", "/dup-a"}) {
    try {
      r->read(path, 0, buf.size(), buf.data());
      ADD_FAILURE() << path << ": read from a replaced object";
    } catch (const ImageError& e) {
      EXPECT_EQ(e.code(), EIO);
    }
  }
  EXPECT_EQ(w.count("the image changed on the server since it was opened"), 1u) << w.all();
}

}  // namespace
}  // namespace gdfs::test
