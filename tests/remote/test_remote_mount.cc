// The gdfs daemon mounting images by URL (label remote): the edge-case tree over http://
// compared entry by entry with its source, over https:// with a disk cache that serves the next mount,
// over s3:// with signed requests (moto), and through faults that give readers the right bytes or EIO while
// the daemon keeps serving. Skips, saying why, where FUSE mounts or the servers are unavailable.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "gdfs/mount_counters.h"
#include "mount_util.h"
#include "remote_util.h"

namespace gdfs::test {
namespace {

namespace fs = std::filesystem;

// Through the root's ioctl (gdfs/mount_counters.h), which every mount answers.
nlohmann::json counters(const std::string& mnt) {
  std::vector<char> buf(kStatsIoctlBytes);
  const int fd = open(mnt.c_str(), O_RDONLY | O_DIRECTORY);
  const int n = fd < 0 ? -1 : ioctl(fd, kStatsIoctl, buf.data());
  if (fd >= 0) close(fd);
  return n > 0 ? nlohmann::json::parse(std::string(buf.data(), static_cast<size_t>(n)))
               : nlohmann::json::object();
}

class RemoteMount : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = fuse_unavailable();
    if (!why.empty()) GTEST_SKIP() << "FUSE mounts unavailable: " << why;
    no_proxies();
  }
  static std::string mount_point() { return fresh_dir("mnt"); }
};

TEST_F(RemoteMount, EdgeTreeOverHttp) {
  const TestImage& img = edge_image();
  WebServer web;
  if (!web.nginx->ok()) GTEST_SKIP() << web.nginx->error();
  const std::string url = web.http_url(img.name);
  Mount m(url, mount_point(), "threads=2");
  ASSERT_TRUE(m.ok()) << m.error() << "\n" << m.log();
  EXPECT_TRUE(is_gdfs_mount(m.dir()));
  const auto diffs = compare_trees(img.src, m.dir(), img.caps.root, img.caps.xattrs);
  EXPECT_TRUE(diffs.empty()) << diffs.size() << " differences, first: " << diffs.front();
  const auto c = counters(m.dir());
  EXPECT_EQ(c.value("fetcher", ""), "http");
  EXPECT_GT(c.value("remote_requests", 0), 2);
  EXPECT_EQ(c.value("remote_failures", -1), 0);
  // /proc/mounts names the image by its URL (without credentials).
  std::ifstream mounts("/proc/self/mounts");
  std::string all((std::istreambuf_iterator<char>(mounts)), std::istreambuf_iterator<char>());
  EXPECT_NE(all.find(url + " " + m.dir() + " fuse.gdfs"), std::string::npos);
  EXPECT_EQ(m.unmount(), 0) << m.log();
}

TEST_F(RemoteMount, HttpsWithADiskCacheThatServesTheNextMount) {
  const TestImage& img = edge_image();
  TestCert cert(fresh_dir("cert"));
  if (!cert.error.empty()) GTEST_SKIP() << cert.error;
  WebServer web(&cert);
  if (!web.nginx->ok()) GTEST_SKIP() << web.nginx->error();
  const std::string cache = fresh_dir("cache");
  const std::string opts = "ca_file=" + cert.cert + ",cache_dir=" + cache + ",disk_cache_size=64M,threads=2";
  {
    Mount m(web.https_url(img.name), mount_point(), opts);
    ASSERT_TRUE(m.ok()) << m.error() << "\n" << m.log();
    const auto diffs = compare_trees(img.src, m.dir(), img.caps.root, img.caps.xattrs);
    EXPECT_TRUE(diffs.empty()) << diffs.size() << " differences, first: " << diffs.front();
    EXPECT_GT(counters(m.dir()).value("disk_cache_writes", 0), 0);
    EXPECT_EQ(m.unmount(), 0) << m.log();
  }
  const size_t before = web.nginx->requests().size();
  {
    Mount m(web.https_url(img.name), mount_point(), opts);
    ASSERT_TRUE(m.ok()) << m.error() << "\n" << m.log();
    const auto diffs = compare_trees(img.src, m.dir(), img.caps.root, img.caps.xattrs);
    EXPECT_TRUE(diffs.empty()) << diffs.size() << " differences, first: " << diffs.front();
    const auto c = counters(m.dir());
    EXPECT_EQ(c.value("disk_cache_misses", -1), 0);
    EXPECT_EQ(m.unmount(), 0) << m.log();
  }
  EXPECT_EQ(web.nginx->requests().size() - before, 1u) << "the second mount fetched more than the probe";
}

// Without -f the daemon opens and validates the image, then forks into the background: the child must
// make connections of its own (TLS included), and relative cache_dir and ca_file paths must survive its
// chdir("/").
TEST_F(RemoteMount, DaemonizedMountOverHttpsWithRelativePaths) {
  const TestImage& img = edge_image();
  const std::string work = fresh_dir("daemonized");
  TestCert cert(work);
  if (!cert.error.empty()) GTEST_SKIP() << cert.error;
  WebServer web(&cert);
  if (!web.nginx->ok()) GTEST_SKIP() << web.nginx->error();
  const std::string mnt = mount_point();
  char* cwd = getcwd(nullptr, 0);
  ASSERT_EQ(chdir(work.c_str()), 0);
  std::string out;
  // A password and a presigned query in the URL: ps shows every local user the daemon's command line.
  std::string url = web.https_url(img.name) + "?X-Amz-Signature=sig0123456789";
  url.insert(url.find("://") + 3, "alice:hunter2secret@");
  const int rc =
      run_command({gdfs_binary(), "-o", "ca_file=cert.pem,cache_dir=cache,threads=2", url, mnt}, &out);
  EXPECT_EQ(chdir(cwd), 0);
  std::free(cwd);
  ASSERT_EQ(rc, 0) << out;
  ASSERT_TRUE(is_gdfs_mount(mnt));
  const std::vector<pid_t> pids = find_processes({gdfs_binary(), mnt});
  ASSERT_EQ(pids.size(), 1u);
  std::ifstream cmdline("/proc/" + std::to_string(pids[0]) + "/cmdline");
  const std::string cmd((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
  EXPECT_NE(cmd.find(web.https_url(img.name)), std::string::npos) << cmd;
  for (const char* secret : {"hunter2secret", "alice", "sig0123456789"})
    EXPECT_EQ(cmd.find(secret), std::string::npos) << secret;
  const auto diffs = compare_trees(img.src, mnt, img.caps.root, img.caps.xattrs);
  EXPECT_TRUE(diffs.empty()) << diffs.size() << " differences, first: " << diffs.front();
  EXPECT_FALSE(files_named(work + "/cache", ".blk").empty()) << "the relative cache_dir was not used";
  ASSERT_EQ(run_command({"fusermount3", "-u", mnt}), 0);
  for (int i = 0; i < 500 && !find_processes({gdfs_binary(), mnt}).empty(); ++i) usleep(20000);
  EXPECT_TRUE(find_processes({gdfs_binary(), mnt}).empty()) << "daemon still running after unmount";
}

TEST_F(RemoteMount, S3ImageWithSignedRequests) {
  const TestImage& img = edge_image();
  S3Server s3(fresh_dir("s3"), "gdfs-mount", {{"trees/edge.gdfs", img.file}});
  if (!s3.ok()) GTEST_SKIP() << "cannot start the S3 server: " << s3.error();
  // The daemon takes its S3 settings from the environment it is started with.
  for (const char* v : {"AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3", "AWS_S3_ADDRESSING_STYLE"})
    unsetenv(v);
  setenv("HOME", fresh_dir("home").c_str(), 1);
  setenv("AWS_ENDPOINT_URL", ("http://127.0.0.1:" + std::to_string(s3.port())).c_str(), 1);
  setenv("AWS_REGION", "us-east-1", 1);
  setenv("AWS_ACCESS_KEY_ID", s3.key.c_str(), 1);
  setenv("AWS_SECRET_ACCESS_KEY", s3.secret.c_str(), 1);
  Mount m("s3://gdfs-mount/trees/edge.gdfs", mount_point(), "threads=2");
  ASSERT_TRUE(m.ok()) << m.error() << "\n" << m.log();
  const auto diffs = compare_trees(img.src, m.dir(), img.caps.root, img.caps.xattrs);
  EXPECT_TRUE(diffs.empty()) << diffs.size() << " differences, first: " << diffs.front();
  EXPECT_EQ(counters(m.dir()).value("fetcher", ""), "s3");
  EXPECT_EQ(m.unmount(), 0) << m.log();
  EXPECT_EQ(m.log().find(s3.secret), std::string::npos);
}

TEST_F(RemoteMount, FaultsGiveRightBytesOrEioAndTheDaemonKeepsServing) {
  const TestImage& img = data_image();
  WebServer web;
  if (!web.nginx->ok()) GTEST_SKIP() << web.nginx->error();
  FaultProxy proxy(fresh_dir("proxy"), web.http);
  if (!proxy.ok()) GTEST_SKIP() << proxy.error();
  const std::string url = "http://127.0.0.1:" + std::to_string(proxy.port()) + "/" + img.name;
  Mount m(url, mount_point(), "remote_timeout=3,threads=2,readahead=0,cache_size=1M");
  ASSERT_TRUE(m.ok()) << m.error() << "\n" << m.log();
  ASSERT_TRUE(proxy.set("mixed", 0.4, -1, 3));
  std::mt19937_64 rng(5);
  int right = 0, eio = 0;
  for (int i = 0; i < 40; ++i) {
    const std::string& path = img.files[rng() % img.files.size()];
    const uint64_t size = fs::file_size(img.src + path);
    const uint64_t off = rng() % (size + 1);
    const size_t len = rng() % 200000;
    std::vector<uint8_t> want(len), got(len);
    const int sfd = open((img.src + path).c_str(), O_RDONLY);
    want.resize(
        static_cast<size_t>(std::max<ssize_t>(0, pread(sfd, want.data(), len, static_cast<off_t>(off)))));
    close(sfd);
    const int fd = open((m.dir() + path).c_str(), O_RDONLY | O_DIRECT);
    ASSERT_GE(fd, 0) << path;
    const ssize_t n = pread(fd, got.data(), len, static_cast<off_t>(off));
    const int err = errno;
    close(fd);
    if (n < 0) {
      EXPECT_EQ(err, EIO) << path;
      ++eio;
      continue;
    }
    got.resize(static_cast<size_t>(n));
    // A short read is allowed only where the kernel split a request and a later part failed.
    ASSERT_LE(got.size(), want.size());
    ASSERT_TRUE(std::equal(got.begin(), got.end(), want.begin())) << "WRONG BYTES: " << path << " at " << off;
    ++right;
  }
  const auto s = nlohmann::json::parse(proxy.stats());
  int injected = 0;
  for (const auto& [k, v] : s["faults"].items()) injected += v.get<int>();
  std::cout << "[          ] " << injected << " faults injected; " << right << " reads right, " << eio
            << " EIO\n";
  EXPECT_GT(injected, 5);
  EXPECT_TRUE(m.alive());
  ASSERT_TRUE(proxy.set("none"));
  const auto diffs = compare_trees(img.src, m.dir(), false, false);
  EXPECT_TRUE(diffs.empty()) << diffs.size() << " differences, first: " << diffs.front();
  EXPECT_EQ(m.unmount(), 0) << m.log();
}

}  // namespace
}  // namespace gdfs::test
