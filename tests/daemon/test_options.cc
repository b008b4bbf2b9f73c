// The daemon's own -o option parsing (label unit).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "daemon/daemon.h"
#include "daemon/options.h"

namespace gdfs::daemon {
namespace {

TEST(Options, ParseSize) {
  uint64_t v = 0;
  EXPECT_TRUE(parse_size("4096", v));
  EXPECT_EQ(v, 4096u);
  EXPECT_TRUE(parse_size("512M", v));
  EXPECT_EQ(v, 512ull << 20);
  EXPECT_TRUE(parse_size("2G", v));
  EXPECT_EQ(v, 2ull << 30);
  EXPECT_TRUE(parse_size("64KiB", v));
  EXPECT_EQ(v, 64ull << 10);
  for (const char* bad : {"", "M", "-1", "1T", "12 M", "99999999999999999999", "17179869184G"})
    EXPECT_FALSE(parse_size(bad, v)) << bad;
}

bool parse(std::vector<const char*> argv, DaemonOptions& out) {
  argv.insert(argv.begin(), "gdfs");
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
  const bool ok = parse_options(args, out);
  fuse_opt_free_args(&args);
  return ok;
}

TEST(Options, TrustedKey) {
  DaemonOptions o;
  ASSERT_TRUE(parse({"-o", "trusted_key=/etc/gdfs/publisher.pub", "image.gdfs", "/mnt"}, o));
  EXPECT_EQ(o.source.trusted_key, "/etc/gdfs/publisher.pub");
  DaemonOptions none;
  ASSERT_TRUE(parse({"image.gdfs", "/mnt"}, none));
  EXPECT_TRUE(none.source.trusted_key.empty()) << "without the option, signatures are not looked at";
  DaemonOptions bad;
  EXPECT_FALSE(parse({"-o", "trusted_key=", "image.gdfs", "/mnt"}, bad));
}

TEST(Options, StoreAheadWalkAheadAndUring) {
  DaemonOptions on;
  ASSERT_TRUE(parse({"image.gdfs", "/mnt"}, on));
  EXPECT_TRUE(on.store_ahead) << "on by default";
  EXPECT_TRUE(on.walk_ahead) << "on by default";
  EXPECT_TRUE(on.uring);
  DaemonOptions off;
  ASSERT_TRUE(parse({"-o", "store_ahead=0,uring=0,walk_ahead=0", "image.gdfs", "/mnt"}, off));
  EXPECT_FALSE(off.store_ahead);
  EXPECT_FALSE(off.walk_ahead);
  EXPECT_FALSE(off.uring);
  DaemonOptions again;
  ASSERT_TRUE(parse({"-o", "store_ahead=0", "-o", "store_ahead=1", "image.gdfs", "/mnt"}, again));
  EXPECT_TRUE(again.store_ahead) << "the last one counts";
  for (const char* bad :
       {"store_ahead=2", "store_ahead=", "store_ahead=yes", "walk_ahead=2", "walk_ahead="}) {
    DaemonOptions o;
    EXPECT_FALSE(parse({"-o", bad, "image.gdfs", "/mnt"}, o)) << bad;
  }
}

TEST(Options, Xattr) {
  DaemonOptions o;
  ASSERT_TRUE(parse({"image.gdfs", "/mnt"}, o));
  EXPECT_EQ(o.xattr, XattrMode::kAuto) << "auto by default";
  for (const auto& [text, mode] : std::vector<std::pair<const char*, XattrMode>>{
           {"xattr=0", XattrMode::kOff}, {"xattr=1", XattrMode::kOn}, {"xattr=auto", XattrMode::kAuto}}) {
    DaemonOptions p;
    ASSERT_TRUE(parse({"-o", text, "image.gdfs", "/mnt"}, p)) << text;
    EXPECT_EQ(p.xattr, mode) << text;
  }
  for (const char* bad : {"xattr=", "xattr=2", "xattr=on"}) {
    DaemonOptions p;
    EXPECT_FALSE(parse({"-o", bad, "image.gdfs", "/mnt"}, p)) << bad;
  }
}

TEST(Options, UidGidAndUmask) {
  DaemonOptions none;
  ASSERT_TRUE(parse({"image.gdfs", "/mnt"}, none));
  EXPECT_FALSE(none.uid || none.gid || none.umask) << "the image's own owners and modes by default";
  DaemonOptions o;
  ASSERT_TRUE(parse({"-o", "uid=1000,gid=0,umask=027", "image.gdfs", "/mnt"}, o));
  EXPECT_EQ(o.uid, 1000u);
  EXPECT_EQ(o.gid, 0u);
  EXPECT_EQ(o.umask, 027u);  // octal, as umask(1)
  for (const char* bad : {"uid=", "uid=-1", "uid=4294967295", "uid=1x", "gid= 5", "umask=8", "umask=010000",
                          "umask=-2", "umask="}) {
    DaemonOptions b;
    EXPECT_FALSE(parse({"-o", bad, "image.gdfs", "/mnt"}, b)) << bad;
  }
}

TEST(Options, KernelReadaheadIsOneRequestAtMost) {
  EXPECT_EQ(kernel_readahead(4u << 20), 1u << 20);
  EXPECT_EQ(kernel_readahead(256u << 10), 256u << 10);
  EXPECT_EQ(kernel_readahead(0), 0u) << "readahead=0 leaves the kernel's default";
}

TEST(Options, RemoteImages) {
  DaemonOptions o;
  ASSERT_TRUE(parse({"-o",
                     "cache_dir=/var/cache/gdfs,disk_cache_size=2G,remote_timeout=30,ca_file=/etc/ca.pem,"
                     "s3_addressing=path",
                     "s3://bucket/key.gdfs", "/mnt"},
                    o));
  EXPECT_EQ(o.image, "s3://bucket/key.gdfs");
  EXPECT_EQ(o.source.cache_dir, "/var/cache/gdfs");
  EXPECT_EQ(o.source.disk_cache_size, 2ull << 30);
  EXPECT_EQ(o.source.remote_timeout_s, 30);
  EXPECT_EQ(o.source.ca_file, "/etc/ca.pem");
  EXPECT_EQ(o.source.s3_addressing, "path");
  DaemonOptions d;
  ASSERT_TRUE(parse({"https://host/tree.gdfs", "/mnt", "-o", "s3_addressing=auto"}, d));
  EXPECT_EQ(d.image, "https://host/tree.gdfs");
  EXPECT_TRUE(d.source.cache_dir.empty());
  EXPECT_EQ(d.source.disk_cache_size, 1ull << 30);
  EXPECT_EQ(d.source.remote_timeout_s, 60);
  EXPECT_EQ(d.source.s3_addressing, "");
  for (const char* bad : {"remote_timeout=0", "remote_timeout=x", "disk_cache_size=1T", "s3_addressing=host",
                          "cache_dir=", "ca_file="}) {
    DaemonOptions b;
    EXPECT_FALSE(parse({"-o", bad, "http://h/i", "/mnt"}, b)) << bad;
  }
}

TEST(Options, UrlSecretsAreHiddenInPlace) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"https://alice:pw@host/x.gdfs?X-Amz-Signature=abc", "https://host/x.gdfs"},
      {"base=s3://b/k.gdfs?X-Amz-Credential=k,cache_dir=/c,base=http://u:p@h/b.gdfs",
       "base=s3://b/k.gdfs,cache_dir=/c,base=http://h/b.gdfs"},
      {"/local/x.gdfs", "/local/x.gdfs"},
      {"http://host/plain.gdfs", "http://host/plain.gdfs"},
  };
  for (const auto& [given, shown] : cases) {
    std::vector<char> arg(given.begin(), given.end());
    arg.push_back('\0');
    hide_url_secrets(arg.data());
    EXPECT_EQ(std::string(arg.data()), shown) << given;
    // What stays past the shorter text is NULs: nothing of the secret is left in the argument's bytes.
    EXPECT_TRUE(std::all_of(arg.begin() + static_cast<long>(shown.size()), arg.end(), [](char c) {
      return c == 0;
    })) << given;
  }
}

}  // namespace
}  // namespace gdfs::daemon
