// The remote layer's parts that need no server (label remote): URL redaction, the response
// parsers, S3 configuration from the environment and the AWS files, and the disk cache (verification,
// torn files, the bound, LRU order, two users of one folder).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <numeric>
#include <random>
#include <thread>

#include "fetch/remote/disk_cache.h"
#include "fetch/remote/http_object.h"
#include "fetch/remote/http_response.h"
#include "fetch/remote/prefetch_store.h"
#include "fetch/remote/s3_config.h"
#include "gdfs/source.h"
#include "remote_util.h"
#include "servers.h"

namespace gdfs::test {
namespace {

using remote::DiskCache;

TEST(RemoteUnits, UrlsForMessagesHideCredentials) {
  EXPECT_EQ(url_for_messages("https://user:pa%40ss@host:8443/a/b.gdfs?X-Amz-Signature=abc#frag"),
            "https://host:8443/a/b.gdfs");
  EXPECT_EQ(url_for_messages("http://host/x?sig=1"), "http://host/x");
  EXPECT_EQ(url_for_messages("http://u@h"), "http://h");
  EXPECT_EQ(url_for_messages("http://a:b@c@host/p"), "http://host/p");
  EXPECT_EQ(url_for_messages("s3://bucket/key/with/slashes.gdfs"), "s3://bucket/key/with/slashes.gdfs");
  EXPECT_EQ(url_for_messages("/local/path?not-a-url"), "/local/path?not-a-url");
  EXPECT_TRUE(is_url("http://h/x") && is_url("https://h/x") && is_url("s3://b/k"));
  EXPECT_FALSE(is_url("ftp://h/x") || is_url("/srv/x.gdfs") || is_url("http:/x"));
}

TEST(RemoteUnits, ContentRangeAndEtags) {
  uint64_t f = 0, l = 0, t = 0;
  EXPECT_TRUE(remote::parse_content_range("bytes 0-511/4096", f, l, t));
  EXPECT_EQ(f, 0u);
  EXPECT_EQ(l, 511u);
  EXPECT_EQ(t, 4096u);
  EXPECT_TRUE(remote::parse_content_range("Bytes  10-10/11 ", f, l, t));
  for (const char* bad : {"", "bytes */4096", "bytes 0-511/*", "bytes 5-4/10", "bytes 0-10/10", "items 0-1/2",
                          "bytes 0-1/2x", "bytes -1/2", "bytes 0-18446744073709551616/5"})
    EXPECT_FALSE(remote::parse_content_range(bad, f, l, t)) << bad;
  EXPECT_TRUE(remote::same_etag("\"abc\"", "\"abc\""));
  EXPECT_TRUE(remote::same_etag("W/\"abc\"", "\"abc\""));
  EXPECT_FALSE(remote::same_etag("\"abc\"", "\"abd\""));
  EXPECT_EQ(remote::parse_retry_after(" 3 "), 3);
  EXPECT_EQ(remote::parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), -1);
  EXPECT_EQ(remote::parse_retry_after(""), -1);
  remote::ObjectIdentity id;
  EXPECT_EQ(id.version(), "");
  id.last_modified = "Mon, 23 Nov 2026 15:45:29 GMT";
  EXPECT_EQ(id.version(), "last-modified Mon, 23 Nov 2026 15:45:29 GMT");
  id.etag = "W/\"x\"";
  EXPECT_FALSE(id.strong_etag());
  EXPECT_EQ(id.version(), "etag W/\"x\"");
}

// One response fed line by line and chunk by chunk, as libcurl's callbacks would: its outcome and why.
struct Fed {
  remote::Outcome outcome;
  std::string why;
  uint64_t got;
};
Fed feed(remote::RangeResponse& r, std::initializer_list<std::string_view> headers, std::string_view body,
         size_t chunk = 7) {
  for (std::string_view h : headers) r.header(h);
  for (size_t i = 0; i < body.size(); i += chunk)
    if (!r.take_body(body.data() + i, std::min(chunk, body.size() - i))) break;
  const remote::Outcome o = r.conclude();
  return {o, r.why, r.got};
}

TEST(RemoteUnits, ResponsesAreCheckedBeforeTheirBytesAreTaken) {
  using remote::Outcome;
  remote::ObjectIdentity id;
  id.size = 100;
  id.etag = "\"v1\"";
  std::vector<uint8_t> dst(10);
  remote::RangeGet g{40, 10, dst.data(), false};
  auto fresh = [&] {
    remote::RangeResponse r;
    r.get = &g;
    r.id = &id;
    std::fill(dst.begin(), dst.end(), 0);
    return r;
  };
  {  // the range asked for, after a redirect whose headers must not count
    auto r = fresh();
    const Fed f =
        feed(r,
             {"HTTP/1.1 302 Found\r\n", "Content-Range: bytes 0-9/100\r\n", "HTTP/1.1 206 Partial\r\n",
              "content-range:  bytes 40-49/100 \r\n", "ETag: W/\"v1\"\r\n"},
             "0123456789");
    EXPECT_EQ(f.outcome, Outcome::kOk) << f.why;
    EXPECT_EQ(std::string(dst.begin(), dst.end()), "0123456789");
  }
  struct Case {
    std::vector<std::string_view> headers;
    std::string_view body;
    Outcome outcome;
    std::string_view why;  // a part of the reason given
  };
  const Case cases[] = {
      {{"HTTP/1.1 206 x", "Content-Range: bytes 41-50/100"}, "0123456789", Outcome::kRetry, "not the range"},
      {{"HTTP/1.1 206 x", "Content-Range: bytes 40-49/100"}, "0123456789A", Outcome::kRetry, "more bytes"},
      {{"HTTP/1.1 206 x", "Content-Range: bytes 40-49/100"}, "01234", Outcome::kRetry, "short body"},
      {{"HTTP/1.1 206 x", "Content-Range: bytes 40-49/100", "ETag: \"v2\""},
       "0123456789",
       Outcome::kChanged,
       "is now"},
      {{"HTTP/1.1 206 x", "Content-Range: bytes 40-49/120"}, "0123456789", Outcome::kChanged, "size is now"},
      {{"HTTP/1.1 206 x", "Content-Range: bytes 40-49/120", "ETag: \"v1\""},
       "0123456789",
       Outcome::kRetry,
       "inconsistent"},
      {{"HTTP/1.1 206 x", "Content-Range: bytes 40-49/100", "Content-Encoding: gzip"},
       "0123456789",
       Outcome::kFail,
       "encoded"},
      {{"HTTP/1.1 200 OK", "Content-Length: 100"}, std::string_view(), Outcome::kFail, "ignored the Range"},
      {{"HTTP/1.1 206 x", "Content-Range: garbage"}, "", Outcome::kRetry, "bad Content-Range"},
      {{"HTTP/1.1 412 x"}, "", Outcome::kChanged, "precondition"},
      {{"HTTP/1.1 503 x", "Retry-After: 2"}, "", Outcome::kRetry, "HTTP 503"},
      {{"HTTP/1.1 403 x"}, "<Error><Code>AccessDenied</Code>", Outcome::kFail, "HTTP 403 (AccessDenied)"},
  };
  for (const Case& c : cases) {
    auto r = fresh();
    for (std::string_view h : c.headers) r.header(h);
    for (size_t i = 0; i < c.body.size(); i += 4)
      if (!r.take_body(c.body.data() + i, std::min<size_t>(4, c.body.size() - i))) break;
    const Outcome o = r.conclude();
    EXPECT_EQ(o, c.outcome) << c.headers[0] << " / " << c.body << ": " << r.why;
    EXPECT_NE(r.why.find(c.why), std::string::npos) << r.why;
    EXPECT_LE(r.got, g.length);
    if (o != Outcome::kOk && c.outcome != Outcome::kRetry) {
      EXPECT_EQ(r.got, 0u) << r.why;  // refused before any byte was taken
    }
  }
  // A probe learns the size and identity; a server without ranges may send a small object whole.
  remote::RangeGet head{0, 64, dst.data(), false};
  remote::RangeResponse p;
  p.get = &head;
  p.probe = true;
  std::vector<uint8_t> big(64);
  head.dst = big.data();
  const Fed f = feed(p, {"HTTP/2 200", "content-length: 5", "etag: \"e\""}, "hello");
  EXPECT_EQ(f.outcome, Outcome::kOk) << f.why;
  EXPECT_EQ(p.found.size, 5u);
  EXPECT_EQ(p.found.etag, "\"e\"");
}

// An environment for resolve_s3: only what the test sets.
struct Env {
  std::map<std::string, std::string> vars;
  remote::EnvLookup lookup() const {
    return [this](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

TEST(RemoteUnits, S3FromTheEnvironment) {
  Env env;
  env.vars = {
      {"AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"}, {"AWS_SECRET_ACCESS_KEY", "s3cr3t"}, {"AWS_REGION", "eu-west-3"}};
  auto t = remote::resolve_s3("s3://my-bucket/images/tree v1+x.gdfs", "", env.lookup());
  EXPECT_EQ(t.url, "https://my-bucket.s3.eu-west-3.amazonaws.com/images/tree%20v1%2Bx.gdfs");
  EXPECT_FALSE(t.path_style);
  EXPECT_EQ(t.region, "eu-west-3");
  EXPECT_EQ(t.access_key, "AKIDEXAMPLE");
  EXPECT_EQ(t.secret_key, "s3cr3t");
  EXPECT_EQ(t.where, "s3://my-bucket/images/tree v1+x.gdfs");
  // Dots in the bucket: path style (a wildcard certificate covers one label only).
  t = remote::resolve_s3("s3://my.bucket/k", "", env.lookup());
  EXPECT_EQ(t.url, "https://s3.eu-west-3.amazonaws.com/my.bucket/k");
  // An endpoint: path style unless told otherwise; AWS_ENDPOINT_URL_S3 wins over AWS_ENDPOINT_URL.
  env.vars["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9000/";
  t = remote::resolve_s3("s3://bkt1/k", "", env.lookup());
  EXPECT_EQ(t.url, "http://127.0.0.1:9000/bkt1/k");
  env.vars["AWS_ENDPOINT_URL_S3"] = "https://minio.local:9443/prefix";
  t = remote::resolve_s3("s3://bkt1/k", "", env.lookup());
  EXPECT_EQ(t.url, "https://minio.local:9443/prefix/bkt1/k");
  t = remote::resolve_s3("s3://b1x/k", "virtual", env.lookup());
  EXPECT_EQ(t.url, "https://b1x.minio.local:9443/prefix/k");
  env.vars["AWS_S3_ADDRESSING_STYLE"] = "virtual";
  EXPECT_FALSE(remote::resolve_s3("s3://b1x/k", "", env.lookup()).path_style);
  EXPECT_TRUE(remote::resolve_s3("s3://b1x/k", "path", env.lookup()).path_style);  // the option wins
  // AWS_DEFAULT_REGION, then us-east-1.
  env.vars.erase("AWS_REGION");
  env.vars["AWS_DEFAULT_REGION"] = "ap-south-1";
  EXPECT_EQ(remote::resolve_s3("s3://bkt1/k", "", env.lookup()).region, "ap-south-1");
  env.vars.erase("AWS_DEFAULT_REGION");
  EXPECT_EQ(remote::resolve_s3("s3://bkt1/k", "", env.lookup()).region, "us-east-1");
  // A session token travels with its keys.
  env.vars["AWS_SESSION_TOKEN"] = "tok";
  EXPECT_EQ(remote::resolve_s3("s3://bkt1/k", "", env.lookup()).session_token, "tok");
  // No credentials at all: unsigned requests (public buckets).
  Env anon;
  t = remote::resolve_s3("s3://public-data/k", "", anon.lookup());
  EXPECT_TRUE(t.access_key.empty() && t.secret_key.empty());
  // Refused: no key, a bad bucket, a bad style, a virtual host that cannot be.
  for (const char* bad : {"s3://bucket", "s3://bucket/", "s3:///key", "s3://b?u/k", "s3://a b/k"})
    EXPECT_THROW(remote::resolve_s3(bad, "", anon.lookup()), std::invalid_argument) << bad;
  EXPECT_THROW(remote::resolve_s3("s3://b/k", "sideways", anon.lookup()), std::invalid_argument);
  EXPECT_THROW(remote::resolve_s3("s3://Upper_Case/k", "virtual", anon.lookup()), std::invalid_argument);
  EXPECT_TRUE(remote::resolve_s3("s3://Upper_Case/k", "", anon.lookup()).path_style);
}

TEST(RemoteUnits, S3FromTheAwsFiles) {
  const std::string dir = fresh_dir("aws");
  {
    std::ofstream c(dir + "/credentials");
    c << "[default]\naws_access_key_id = DEFKEY\naws_secret_access_key = defsecret\n\n"
         "# a comment\n[ci]\naws_access_key_id=CIKEY\naws_secret_access_key=cisecret\naws_session_token = "
         "citoken\n";
    std::ofstream f(dir + "/config");
    f << "[default]\nregion = eu-north-1\n\n[profile ci]\nregion = us-west-2\nservices = local\n"
         "s3 =\n  addressing_style = virtual\n\n[services local]\ns3 =\n  endpoint_url = "
         "http://127.0.0.1:9999\n"
         "\n[profile sso]\nsso_start_url = https://example.invalid/start\n";
  }
  Env env;
  env.vars = {{"AWS_SHARED_CREDENTIALS_FILE", dir + "/credentials"}, {"AWS_CONFIG_FILE", dir + "/config"}};
  auto t = remote::resolve_s3("s3://bkt/k", "", env.lookup());
  EXPECT_EQ(t.access_key, "DEFKEY");
  EXPECT_EQ(t.secret_key, "defsecret");
  EXPECT_EQ(t.region, "eu-north-1");
  EXPECT_EQ(t.url, "https://bkt.s3.eu-north-1.amazonaws.com/k");
  env.vars["AWS_PROFILE"] = "ci";
  t = remote::resolve_s3("s3://bkt/k", "", env.lookup());
  EXPECT_EQ(t.access_key, "CIKEY");
  EXPECT_EQ(t.session_token, "citoken");
  EXPECT_EQ(t.region, "us-west-2");
  EXPECT_EQ(t.url, "http://bkt.127.0.0.1:9999/k");  // the profile asked for virtual hosts
  // The environment's keys win over the files'.
  env.vars["AWS_ACCESS_KEY_ID"] = "ENVKEY";
  env.vars["AWS_SECRET_ACCESS_KEY"] = "envsecret";
  EXPECT_EQ(remote::resolve_s3("s3://bkt/k", "", env.lookup()).access_key, "ENVKEY");
  // A profile that does not exist, or one that needs what we do not support, is an error that says so.
  env.vars = {{"AWS_SHARED_CREDENTIALS_FILE", dir + "/credentials"},
              {"AWS_CONFIG_FILE", dir + "/config"},
              {"AWS_PROFILE", "nope"}};
  EXPECT_THROW(remote::resolve_s3("s3://bkt/k", "", env.lookup()), std::invalid_argument);
  env.vars["AWS_PROFILE"] = "sso";
  try {
    remote::resolve_s3("s3://bkt/k", "", env.lookup());
    ADD_FAILURE() << "an SSO profile was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("sso_start_url"), std::string::npos) << e.what();
  }
  // HOME/.aws is where they are by default.
  const std::string home = fresh_dir("home");
  mkdir((home + "/.aws").c_str(), 0755);
  std::ofstream(home + "/.aws/credentials")
      << "[default]\naws_access_key_id=HOMEKEY\naws_secret_access_key=h\n";
  Env h;
  h.vars = {{"HOME", home}};
  EXPECT_EQ(remote::resolve_s3("s3://bkt/k", "", h.lookup()).access_key, "HOMEKEY");
}

TEST(RemoteUnits, IniNestedBlocks) {
  const auto ini = remote::parse_ini(
      "top = ignored\n[a]\nk = v\n; c\ns3 =\n  x = 1\n\ty = 2\nafter = 3\n  z = 4\n[b]\n[broken\nkey\n");
  EXPECT_EQ(ini.at("a").at("k"), "v");
  EXPECT_EQ(ini.at("a").at("s3.x"), "1");
  EXPECT_EQ(ini.at("a").at("s3.y"), "2");
  EXPECT_EQ(ini.at("a").at("after"), "3");
  EXPECT_EQ(ini.at("a").count("s3.z"), 0u);  // "after" closed the nested block
  EXPECT_EQ(ini.count("b"), 1u);
  EXPECT_EQ(ini.count(""), 0u);
}

// ---- the disk cache --------------------------------------------------------------------------------------

constexpr uint32_t kBlock = 4096;

std::vector<uint8_t> block_bytes(uint64_t index, uint32_t len) {
  std::vector<uint8_t> b(len);
  for (uint32_t i = 0; i < len; ++i) b[i] = static_cast<uint8_t>(index * 131 + i * 7);
  return b;
}

struct Warnings {
  std::vector<std::string> lines;
  std::mutex mu;
  std::function<void(std::string_view)> fn() {
    return [this](std::string_view l) {
      std::lock_guard lock(mu);
      lines.emplace_back(l);
    };
  }
};

TEST(RemoteUnits, DiskCacheStoresVerifiesAndRefusesDamage) {
  const std::string dir = fresh_dir("cache");
  Warnings w;
  const uint64_t size = 10 * kBlock + 123;  // a short last block
  DiskCache c(dir, 1 << 20, "http://h/x\netag \"1\"\nsize 41083", size, kBlock, w.fn());
  EXPECT_EQ(c.block_count(), 11u);
  EXPECT_EQ(c.block_length(10), 123u);
  std::vector<uint8_t> got(kBlock);
  EXPECT_FALSE(c.get(3, got.data()));
  for (uint64_t i = 0; i < 11; ++i) c.put(i, block_bytes(i, c.block_length(i)).data());
  for (uint64_t i = 0; i < 11; ++i) {
    got.assign(c.block_length(i), 0);
    ASSERT_TRUE(c.get(i, got.data())) << i;
    EXPECT_EQ(got, block_bytes(i, c.block_length(i))) << i;
  }
  const auto files = files_named(dir, ".blk");
  ASSERT_EQ(files.size(), 11u);
  EXPECT_EQ(c.bytes(), 10 * (kBlock + DiskCache::kHeaderSize) + 123 + DiskCache::kHeaderSize);
  // A flipped data byte, a flipped header byte, a torn (short) file and an empty one: each is detected,
  // deleted and reported, never returned.
  auto flip = [](const std::string& f, off_t at) {
    const int fd = open(f.c_str(), O_RDWR);
    uint8_t b = 0;
    ASSERT_EQ(pread(fd, &b, 1, at), 1);
    b ^= 1;
    ASSERT_EQ(pwrite(fd, &b, 1, at), 1);
    close(fd);
  };
  flip(files[1], DiskCache::kHeaderSize + 100);
  flip(files[2], 20);
  ASSERT_EQ(truncate(files[3].c_str(), DiskCache::kHeaderSize + 10), 0);
  ASSERT_EQ(truncate(files[4].c_str(), 0), 0);
  for (uint64_t i = 1; i <= 4; ++i) {
    EXPECT_FALSE(c.get(i, got.data())) << i;
    EXPECT_NE(access(files[i].c_str(), F_OK), 0) << "a damaged file was kept: " << files[i];
  }
  EXPECT_EQ(c.counters().corrupt.load(), 4u);
  EXPECT_FALSE(w.lines.empty());
  // Rewritten, they are good again.
  c.put(1, block_bytes(1, kBlock).data());
  got.assign(kBlock, 0);
  EXPECT_TRUE(c.get(1, got.data()));
  EXPECT_EQ(got, block_bytes(1, kBlock));
  // Another version of the object (a new ETag) never sees these blocks, and a reopen of the same one
  // does, with nothing left behind by the writes.
  DiskCache other(dir, 1 << 20, "http://h/x\netag \"2\"\nsize 41083", size, kBlock, w.fn());
  EXPECT_FALSE(other.get(0, got.data()));
  DiskCache again(dir, 1 << 20, "http://h/x\netag \"1\"\nsize 41083", size, kBlock, w.fn());
  EXPECT_TRUE(again.get(0, got.data()));
  EXPECT_TRUE(files_named(dir, "").size() == files_named(dir, ".blk").size() + 2)  // + the two "object" files
      << "temporary files left behind";
}

TEST(RemoteUnits, DiskCacheBoundEvictsLeastRecentlyUsed) {
  const std::string dir = fresh_dir("cache");
  Warnings w;
  const uint64_t file = kBlock + DiskCache::kHeaderSize;
  const uint64_t bound = 10 * file;
  DiskCache c(dir, bound, "http://h/y\netag \"1\"\nsize 409600", 100 * kBlock, kBlock, w.fn());
  std::vector<uint8_t> got(kBlock);
  for (uint64_t i = 0; i < 10; ++i) c.put(i, block_bytes(i, kBlock).data());
  EXPECT_EQ(files_named(dir, ".blk").size(), 10u);  // exactly the bound: nothing evicted yet
  EXPECT_EQ(c.counters().evictions.load(), 0u);
  // Use block 0 (it becomes the most recent), then add more: block 1.. go first, 0 stays.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(c.get(0, got.data()));
  for (uint64_t i = 10; i < 14; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    c.put(i, block_bytes(i, kBlock).data());
  }
  EXPECT_LE(files_named(dir, ".blk").size() * file, bound);
  EXPECT_GT(c.counters().evictions.load(), 0u);
  EXPECT_TRUE(c.get(0, got.data())) << "the most recently used block was evicted";
  EXPECT_FALSE(c.get(1, got.data())) << "the least recently used block was kept";
  EXPECT_TRUE(c.get(13, got.data()));
  // Two users of one folder (two mounts): each keeps its own index, rescans before evicting, and the
  // folder stays near the bound.
  DiskCache a(dir, bound, "http://h/z\netag \"1\"\nsize 409600", 100 * kBlock, kBlock, w.fn());
  DiskCache b(dir, bound, "http://h/w\netag \"1\"\nsize 409600", 100 * kBlock, kBlock, w.fn());
  std::thread ta([&] {
    for (uint64_t i = 0; i < 60; ++i) a.put(i, block_bytes(i, kBlock).data());
  });
  std::thread tb([&] {
    for (uint64_t i = 0; i < 60; ++i) b.put(i, block_bytes(i + 7, kBlock).data());
  });
  ta.join();
  tb.join();
  // Each user adds at most a tenth of the bound and one block between its rescans (disk_cache.h).
  EXPECT_LE(files_named(dir, ".blk").size() * file, bound / 10 * 9 + 2 * (bound / 10 + file));
  // Whatever survived is intact.
  size_t good = 0;
  for (uint64_t i = 0; i < 60; ++i) {
    if (a.get(i, got.data())) {
      EXPECT_EQ(got, block_bytes(i, kBlock));
      ++good;
    }
    if (b.get(i, got.data())) {
      EXPECT_EQ(got, block_bytes(i + 7, kBlock));
      ++good;
    }
  }
  EXPECT_GT(good, 0u);
  EXPECT_EQ(a.counters().corrupt.load() + b.counters().corrupt.load(), 0u);
}

TEST(RemoteUnits, DiskCacheTooSmallOrUnwritable) {
  Warnings w;
  const std::string dir = fresh_dir("cache");
  DiskCache tiny(dir, kBlock, "http://h/t\netag \"1\"\nsize 40960", 10 * kBlock, kBlock, w.fn());
  tiny.put(0, block_bytes(0, kBlock).data());
  EXPECT_TRUE(files_named(dir, ".blk").empty());
  EXPECT_FALSE(w.lines.empty());  // said once that nothing will be cached
  if (geteuid() != 0) {           // root writes anywhere
    const std::string ro = fresh_dir("readonly");
    chmod(ro.c_str(), 0555);
    EXPECT_THROW(DiskCache(ro + "/sub", 1 << 20, "x", 1, kBlock, w.fn()), ImageError);
  }
  EXPECT_THROW(DiskCache("/proc/gdfs-no-such-dir", 1 << 20, "x", 1, kBlock, w.fn()), ImageError);
}

}  // namespace
}  // namespace gdfs::test

// ---- The prefetch store and the link estimate ----------------------------------------------------------

namespace {
using Copied = gdfs::remote::PrefetchStore::Copied;
std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 7 + i / 251);
  return v;
}
// Issue 24: a closed port printed nothing for 12 s, then three lines. The first failure now says what
// is retried, how many more times, and for how long at most.
TEST(RemoteUnits, AClosedPortSaysAtOnceWhatIsRetriedAndForHowLong) {
  const int port = gdfs::test::free_port();  // bound and closed again: connections are refused
  ASSERT_GT(port, 0);
  std::vector<std::pair<double, std::string>> lines;
  const auto t0 = std::chrono::steady_clock::now();
  gdfs::SourceOptions o;
  o.remote_timeout_s = 2;  // bounds the test
  o.warn = [&](std::string_view l) {
    lines.emplace_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), l);
  };
  EXPECT_THROW(gdfs::open_source("http://127.0.0.1:" + std::to_string(port) + "/img.gdfs", o),
               std::exception);
  ASSERT_FALSE(lines.empty()) << "no warning before giving up";
  const std::string& first = lines.front().second;
  EXPECT_LT(lines.front().first, 1.0) << first;  // at the first failure, not at the end
  EXPECT_NE(first.find("opening the image"), std::string::npos) << first;
  EXPECT_NE(first.find("retrying: at most 9 more attempts"), std::string::npos) << first;
  EXPECT_NE(first.find("none later than 2 s from now"), std::string::npos) << first;
}

}  // namespace

TEST(RemoteUnits, PrefetchStoreServesHeldChunksAndWaitsForOnesInFlight) {
  const auto image = pattern(10000);
  gdfs::remote::PrefetchStore store(image.size(), 1024, 1 << 20);
  std::vector<uint8_t> out(3000);
  EXPECT_EQ(store.copy(100, 3000, out.data()), Copied::kAbsent) << "nothing held yet";
  auto claims = store.claim(1000, 4000);  // chunks 0..4
  ASSERT_EQ(claims.size(), 5u);
  EXPECT_EQ(claims.front().first, 0u);
  EXPECT_TRUE(store.claim(1500, 100).empty()) << "a chunk in flight is not claimed twice";
  // A reader of chunks 1..3 waits until they arrive.
  std::atomic<bool> copied{false};
  std::thread reader([&] { copied = store.copy(1100, 3000, out.data()) == Copied::kYes; });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(copied.load());
  for (auto& [i, c] : claims) store.finish(i, c, image.data() + i * 1024);
  reader.join();
  ASSERT_TRUE(copied.load());
  EXPECT_TRUE(std::equal(out.begin(), out.end(), image.begin() + 1100));
  EXPECT_EQ(store.hits(), 1u);
  // The last chunk is short; a range past the image is refused.
  auto tail = store.claim(9500, 500);
  ASSERT_EQ(tail.size(), 1u);
  EXPECT_EQ(store.chunk_length(tail[0].first), 10000u - 9 * 1024);
  store.finish(tail[0].first, tail[0].second, image.data() + 9 * 1024);
  std::vector<uint8_t> end(300);
  EXPECT_EQ(store.copy(9700, 300, end.data()), Copied::kYes);
  EXPECT_TRUE(std::equal(end.begin(), end.end(), image.begin() + 9700));
  EXPECT_EQ(store.copy(9800, 300, end.data()), Copied::kAbsent);
}

TEST(RemoteUnits, PrefetchStoreForgetsFailedChunksAndStaysWithinItsCapacity) {
  const auto image = pattern(64 * 1024);
  gdfs::remote::PrefetchStore store(image.size(), 1024, 8 * 1024);
  auto claims = store.claim(0, 2048);
  ASSERT_EQ(claims.size(), 2u);
  std::atomic<Copied> result{Copied::kYes};
  std::vector<uint8_t> out(2048);
  std::thread reader([&] { result = store.copy(0, 2048, out.data()); });
  store.finish(claims[0].first, claims[0].second, image.data());
  store.finish(claims[1].first, claims[1].second, nullptr);              // its fetch failed
  store.finish(claims[1].first, claims[1].second, image.data() + 1024);  // a second finish: no effect
  reader.join();
  // A reader that waited on the failed chunk fails too (that fetch had the reader's retries and deadline);
  // one that came after finds the chunk gone and fetches for itself.
  EXPECT_NE(result.load(), Copied::kYes);
  EXPECT_EQ(store.held_bytes(), 1024u);
  auto again = store.claim(1024, 1024);
  ASSERT_EQ(again.size(), 1u) << "a failed chunk can be claimed again";
  std::thread waiter([&] { result = store.copy(1024, 1024, out.data()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the waiter is waiting (or about to)
  store.finish(again[0].first, again[0].second, nullptr);
  waiter.join();
  EXPECT_NE(result.load(), Copied::kYes);
  // In-flight chunks fill the capacity: claims stop there rather than push them out.
  gdfs::remote::PrefetchStore small(image.size(), 1024, 4 * 1024);
  auto a = small.claim(0, 16 * 1024);
  EXPECT_EQ(a.size(), 4u);
  for (auto& [i, c] : a) small.finish(i, c, image.data() + i * 1024);
  // Held chunks are evicted oldest first for new ones.
  auto b = small.claim(8 * 1024, 2048);
  ASSERT_EQ(b.size(), 2u);
  for (auto& [i, c] : b) small.finish(i, c, image.data() + i * 1024);
  EXPECT_LE(small.held_bytes(), 4u * 1024);
  std::vector<uint8_t> x(1024);
  EXPECT_EQ(small.copy(0, 1024, x.data()), Copied::kAbsent) << "the oldest chunk went first";
  EXPECT_EQ(small.copy(3 * 1024, 1024, x.data()), Copied::kYes);
  EXPECT_TRUE(std::equal(x.begin(), x.end(), image.begin() + 3 * 1024));
  EXPECT_EQ(small.copy(8 * 1024, 2048, out.data()), Copied::kYes);
}

TEST(RemoteUnits, PrefetchStoreGivenUpChunksSendWaitersToFetchThemselves) {
  const auto image = pattern(8192);
  gdfs::remote::PrefetchStore store(image.size(), 1024, 1 << 20);
  auto claims = store.claim(0, 1024);
  ASSERT_EQ(claims.size(), 1u);
  std::atomic<Copied> result{Copied::kYes};
  std::vector<uint8_t> out(1024);
  std::thread waiter([&] { result = store.copy(0, 1024, out.data()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  store.finish(claims[0].first, claims[0].second, nullptr, /*tried=*/false);  // never fetched
  waiter.join();
  EXPECT_EQ(result.load(), Copied::kAbsent) << "no fetch was tried: the reader must fetch, not fail";
  EXPECT_EQ(store.held_bytes(), 0u);
  EXPECT_EQ(store.claim(0, 1024).size(), 1u);
}

// A reader must never wait for a prefetch nobody has started (a pool thread waiting on a task queued
// behind it would wait forever): it runs the owner itself, and the owner's later run does nothing.
TEST(RemoteUnits, PrefetchStoreRunsAnUnstartedOwnerInsteadOfWaiting) {
  const auto image = pattern(4096);
  gdfs::remote::PrefetchStore store(image.size(), 1024, 1 << 20);
  struct Fetch : gdfs::Source::Prefetch {
    gdfs::remote::PrefetchStore* store = nullptr;
    const std::vector<uint8_t>* image = nullptr;
    gdfs::remote::PrefetchStore::Claims claims;
    std::atomic<int> runs{0}, fetches{0};
    void run() override {
      if (runs++ > 0) return;
      ++fetches;
      for (auto& [i, c] : claims) store->finish(i, c, image->data() + i * 1024);
    }
  };
  auto fetch = std::make_shared<Fetch>();
  fetch->store = &store;
  fetch->image = &image;
  fetch->claims = store.claim(0, 4096, fetch);
  ASSERT_EQ(fetch->claims.size(), 4u);
  std::vector<uint8_t> out(3000);
  EXPECT_EQ(store.copy(500, 3000, out.data()), Copied::kYes) << "the reader ran the fetch itself";
  EXPECT_TRUE(std::equal(out.begin(), out.end(), image.begin() + 500));
  fetch->run();  // the pool task, later
  EXPECT_EQ(fetch->fetches.load(), 1);
}

TEST(RemoteUnits, PrefetchStoreUnderManyThreads) {
  const auto image = pattern(1 << 20);
  gdfs::remote::PrefetchStore store(image.size(), 4096, 256 << 10);
  std::atomic<size_t> wrong{0}, hits{0}, finished{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      std::vector<uint8_t> buf(10000);
      // Readers start once something was prefetched: on a loaded machine they could otherwise all run
      // before any prefetcher and have nothing to hit.
      while (t % 2 == 0 && finished.load() == 0) std::this_thread::yield();
      for (int k = 0; k < 2000; ++k) {
        const uint64_t off = rng() % (image.size() - buf.size());
        if (t % 2) {  // prefetchers: some fetches fail
          for (auto& [i, c] : store.claim(off, 3 * 4096)) {
            store.finish(i, c, rng() % 5 ? image.data() + i * 4096 : nullptr);
            ++finished;
          }
        } else if (store.copy(off, buf.size(), buf.data()) == Copied::kYes) {
          ++hits;
          if (!std::equal(buf.begin(), buf.end(), image.begin() + off)) ++wrong;
        }
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0u);
  EXPECT_GT(hits.load(), 0u);
  EXPECT_LE(store.held_bytes(), 256u << 10);
}

TEST(RemoteUnits, LinkEstimateFollowsRecentTransfers) {
  gdfs::remote::LinkEstimate link;
  EXPECT_EQ(link.latency_s(), 0.0);
  EXPECT_EQ(link.bytes_per_s(), 0.0);
  link.add(0.050, 0.051, 4096);  // small: sets the latency only
  EXPECT_DOUBLE_EQ(link.latency_s(), 0.050);
  EXPECT_EQ(link.bytes_per_s(), 0.0);
  link.add(0.050, 0.150, 10 << 20);  // 10 MiB in 0.1 s after the first byte
  EXPECT_NEAR(link.bytes_per_s(), (10 << 20) / 0.1, 1.0);
  for (int i = 0; i < 50; ++i) link.add(0.010, 0.011, 1000);
  EXPECT_NEAR(link.latency_s(), 0.010, 0.001) << "the average follows the link as it changes";
}
