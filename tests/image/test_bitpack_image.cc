// Bitpack pages in images: mkfs.gdfs --codec and --codec-for on a tree with 16-bit PCM (Debian's
// alsa-utils WAVs when installed, else generated), text and stereo samples; gdfs-inspect verify,
// extract, pages and stats on the result; `auto` never larger than gdeflate; and the reader's checks of
// codec 3 entries (feature bit, param) behind valid checksums.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "gdfs/bitpack.h"
#include "gdfs/checksum.h"
#include "gdfs/format.h"
#include "gdfs/gdeflate.h"
#include "gdfs/image.h"
#include "gdfs/page_encode.h"
#include "image_checks.h"
#include "tests/fuzz/image_surgery.h"
#include "tree_util.h"

namespace gdfs::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Bytes = std::vector<uint8_t>;

// 16-bit samples of two sines and a little deterministic noise, `channels` interleaved.
Bytes pcm(size_t frames, unsigned channels, uint32_t seed) {
  Bytes b;
  uint32_t x = seed;
  for (size_t i = 0; i < frames; ++i) {
    for (unsigned c = 0; c < channels; ++c) {
      x = x * 1664525u + 1013904223u;
      const double t = static_cast<double>(i) / (30.0 + 7 * c);
      const auto v = static_cast<int16_t>(9000 * std::sin(t) + 3000 * std::sin(t * 3.1) + (x >> 28) - 8 +
                                          (c ? -12000 : 0));
      b.push_back(static_cast<uint8_t>(v));
      b.push_back(static_cast<uint8_t>(static_cast<uint16_t>(v) >> 8));
    }
  }
  return b;
}

class BitpackImage : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("bitpack");
    const std::string src = *dir_ / "src";
    fs::create_directories(src + "/sounds");
    const fs::path alsa = "/usr/share/sounds/alsa";
    if (fs::is_directory(alsa)) {
      for (const auto& e : fs::directory_iterator(alsa))
        if (e.path().extension() == ".wav")
          fs::copy_file(e.path(), src + "/sounds/" + e.path().filename().string());
    }
    if (fs::is_empty(src + "/sounds")) {
      std::printf("note: no /usr/share/sounds/alsa (alsa-utils): using generated mono PCM\n");
      write_bytes(src + "/sounds/mono.wav", pcm(150000, 1, 1));
    }
    write_bytes(src + "/sounds/stereo.raw", pcm(70000, 2, 2));
    write_text_file(src + "/notes.txt", 3 * 65536 + 77, 3);
    for (const char* codec : {"gdeflate", "auto"}) {
      CliResult r = run_mkfs({"-q", "--json", "--codec", codec, src, *dir_ / codec});
      ASSERT_EQ(r.code, 0) << r.err;
      summary_[codec] = json::parse(r.out);
    }
  }
  static void TearDownTestSuite() { delete dir_; }
  static void expect_verifies_and_extracts(const std::string& image) {
    test::expect_verifies_and_extracts(image, *dir_ / "src");
  }
  static inline TempDir* dir_ = nullptr;
  static inline std::map<std::string, json> summary_;
};

TEST_F(BitpackImage, AutoUsesBitpackAndIsNeverLargerThanGDeflate) {
  const json& g = summary_["gdeflate"];
  const json& a = summary_["auto"];
  EXPECT_EQ(g["pages"]["bitpack"], 0);
  EXPECT_GT(a["pages"]["bitpack"].get<int>(), 0);
  EXPECT_LT(a["image_bytes"].get<uint64_t>(), g["image_bytes"].get<uint64_t>());
  std::printf("image bytes: gdeflate %llu, auto %llu\n", g["image_bytes"].get<unsigned long long>(),
              a["image_bytes"].get<unsigned long long>());
  const auto img = Image::open(*dir_ / "auto");
  EXPECT_TRUE(img->superblock().incompat & format::kIncompatBitpack);
  EXPECT_FALSE(Image::open(*dir_ / "gdeflate")->superblock().incompat & format::kIncompatBitpack);
  expect_verifies_and_extracts(*dir_ / "auto");
  expect_verifies_and_extracts(*dir_ / "gdeflate");
}

TEST_F(BitpackImage, StereoPagesUseStrideTwo) {
  const json j = inspect_json({"pages", *dir_ / "auto", "/sounds/stereo.raw"});
  const json& p = j["pages"][0];
  ASSERT_EQ(p["codec"], "bitpack");
  EXPECT_EQ(p["codec_params"]["type"], "int16");
  EXPECT_EQ(p["codec_params"]["stride"], 2);
  CliResult t = run_inspect({"pages", *dir_ / "auto", "/sounds/stereo.raw"});
  EXPECT_NE(t.out.find("bitpack i16 B"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find(" S2 "), std::string::npos) << t.out;
}

// Interleaved data with more channels than the fixed candidates (mono, stereo): the probe finds the
// channel count and the page is coded with it, smaller than with stride 2.
TEST(BitpackChoice, FindsTheChannelCountOfInterleavedData) {
  for (unsigned channels : {1u, 2u, 5u, 12u}) {
    const Bytes page = pcm(32768 / channels, channels, 3);
    const unsigned guess = page::guess_interleave(page.data(), page.size());
    if (channels > 1) {
      EXPECT_EQ(guess, channels);
    } else {
      EXPECT_LE(guess, 2u);
    }
    const page::BitpackGuess g = page::best_bitpack(page.data(), page.size());
    if (channels > 2) {
      EXPECT_EQ(g.params.stride, channels);
      bitpack::Params two = g.params;
      two.stride = 2;
      EXPECT_LT(g.size, bitpack::compressed_size(page.data(), page.size(), two));
    }
  }
  EXPECT_EQ(page::guess_interleave(nullptr, 0), 1u);  // nothing to probe
}

// Every block size mkfs tries has a vector decoder, so none is favoured: the guess is at most the
// smallest of them (plain mode may then shave a little more), and it is exactly what compress() writes.
TEST(BitpackChoice, KeepsTheSmallestBlockSize) {
  for (unsigned channels : {1u, 2u}) {
    const Bytes page = pcm(32768 / channels, channels, 11);
    const page::BitpackGuess g = page::best_bitpack(page.data(), page.size());
    for (const uint16_t block : {16, 32, 64, 128}) {
      bitpack::Params q = g.params;
      q.block = block;
      q.mode = bitpack::Mode::kOutlier;
      EXPECT_LE(g.size, bitpack::compressed_size(page.data(), page.size(), q)) << "block " << block;
    }
    EXPECT_EQ(g.size, bitpack::compressed_size(page.data(), page.size(), g.params));
  }
}

TEST(BitpackChoice, StereoPageGetsStrideTwoAndIsSmallerThanStrideOne) {
  const Bytes page = pcm(16384, 2, 5);  // one 65536-byte page
  const page::BitpackGuess g = page::best_bitpack(page.data(), page.size());
  EXPECT_EQ(g.params.type, bitpack::Type::kInt16);
  EXPECT_EQ(g.params.stride, 2);
  bitpack::Params s1 = g.params;
  s1.stride = 1;
  const size_t one = bitpack::compressed_size(page.data(), page.size(), s1);
  EXPECT_LT(g.size, one);
  std::printf("stereo page: %zu bytes with %u-sample blocks, stride 2; %zu with stride 1\n", g.size,
              unsigned{g.params.block}, one);
  // Whatever bitpack picks, auto is never larger than gdeflate-only.
  gdeflate::Compressor comp;
  page::Encoded a, d;
  page::encode_page(page, page::CodecChoice::kAuto, comp, a);
  page::encode_page(page, page::CodecChoice::kGDeflate, comp, d);
  const size_t as = a.codec == format::kCodecStored ? page.size() : a.bytes.size();
  const size_t ds = d.codec == format::kCodecStored ? page.size() : d.bytes.size();
  EXPECT_LE(as, ds);
  EXPECT_EQ(a.codec, format::kCodecBitpack);
  std::vector<uint8_t> back(page.size());
  ASSERT_EQ(bitpack::decompress(a.bytes.data(), a.bytes.size(), *bitpack::from_param(a.param), back.data(),
                                back.size()),
            PageStatus::kOk);
  EXPECT_EQ(back, page);
}

TEST_F(BitpackImage, StatsShowTheCodecMixAndParameters) {
  const json j = inspect_json({"stats", *dir_ / "auto"});
  EXPECT_GT(j["codecs"]["bitpack"]["pages"].get<int>(), 0);
  EXPECT_GT(j["codecs"]["gdeflate"]["pages"].get<int>(), 0);  // the text file
  bool stereo = false;  // the stereo file's pages: int16, stride 2 (block size as mkfs finds best)
  for (const auto& [key, v] : j["bitpack_params"].items())
    stereo |= key.rfind("i16 B", 0) == 0 && key.find(" S2 ") != std::string::npos;
  EXPECT_TRUE(stereo) << j["bitpack_params"].dump();
  CliResult t = run_inspect({"stats", *dir_ / "auto"});
  EXPECT_NE(t.out.find("bitpack parameters"), std::string::npos) << t.out;
}

TEST_F(BitpackImage, CodecForAppliesPerPattern) {
  const std::string image = *dir_ / "rules";
  CliResult r = run_mkfs({"-q", "--codec", "gdeflate", "--codec-for", "*.raw=bitpack", "--codec-for",
                          "notes.txt=bitpack", "--codec-for", "notes.*=gdeflate", *dir_ / "src", image});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(inspect_json({"pages", image, "/sounds/stereo.raw"})["pages"][0]["codec"], "bitpack");
  EXPECT_EQ(inspect_json({"pages", image, "/notes.txt"})["pages"][0]["codec"], "gdeflate");  // last rule wins
  expect_verifies_and_extracts(image);
}

TEST_F(BitpackImage, ForcedBitpackStoresWhatItCannotShrink) {
  const std::string image = *dir_ / "forced";
  ASSERT_EQ(run_mkfs({"-q", "--codec", "bitpack", *dir_ / "src", image}).code, 0);
  const json text = inspect_json({"pages", image, "/notes.txt"});
  for (const json& p : text["pages"]) EXPECT_NE(p["codec"], "gdeflate");
  expect_verifies_and_extracts(image);
}

TEST_F(BitpackImage, BadCodecArgumentsAreUsageErrors) {
  EXPECT_EQ(run_mkfs({"--codec", "zstd", *dir_ / "src", *dir_ / "x"}).code, 2);
  EXPECT_EQ(run_mkfs({"--codec-for", "*.wav", *dir_ / "src", *dir_ / "x"}).code, 2);
  EXPECT_EQ(run_mkfs({"--codec-for", "*.wav=lz4", *dir_ / "src", *dir_ / "x"}).code, 2);
}

// Crafted entries behind valid checksums: the reader must refuse them at open.
class BitpackCrafted : public BitpackImage {
 protected:
  // The "auto" image with its first bitpack page entry changed, encoded again and resealed.
  static Bytes crafted(const std::function<void(surgery::Unpacked&, format::PageEntry&)>& change) {
    const Bytes b = read_bytes(*dir_ / "auto");
    surgery::Unpacked u = surgery::unpack_image(b);
    auto* pages = u.record<format::PageEntry>(format::kSecPages);
    for (uint64_t i = 0; i < u.sb.page_count; ++i) {
      if (pages[i].codec == format::kCodecBitpack) {
        change(u, pages[i]);
        break;
      }
    }
    return surgery::repack_image(b, u);
  }
};

TEST_F(BitpackCrafted, RefusesBadParamsAndAMissingFeatureBit) {
  EXPECT_EQ(open_error(crafted([](surgery::Unpacked&, format::PageEntry&) {})), "");
  // Stride 15 with 32-sample blocks is fine; with 1-sample blocks it is not a valid param.
  EXPECT_NE(open_error(crafted([](surgery::Unpacked&, format::PageEntry& e) {
              e.param = 15u << 12;
            })).find("bad bitpack parameter"),
            std::string::npos);
  EXPECT_NE(open_error(crafted([](surgery::Unpacked&, format::PageEntry& e) { e.csize = 0xFFFFFF; })), "");
  EXPECT_NE(open_error(crafted([](surgery::Unpacked& u, format::PageEntry&) {
              u.sb.incompat &= ~uint64_t{format::kIncompatBitpack};
            })).find("without the bitpack feature bit"),
            std::string::npos);
  EXPECT_NE(open_error(crafted([](surgery::Unpacked& u, format::PageEntry&) {
              auto* pages = u.record<format::PageEntry>(format::kSecPages);
              for (uint64_t i = 0; i < u.sb.page_count; ++i)
                if (pages[i].codec == format::kCodecGDeflate) pages[i].param = 1;
            })).find("codec parameter on a codec without one"),
            std::string::npos);
}

TEST_F(BitpackCrafted, AWrongButValidParamFailsTheRead) {
  // Another valid param (stride 1 <-> 0, 2 <-> 3): the page decodes to other bytes or not at all, and
  // either way the read is an error rather than those bytes.
  const auto img = Image::from_memory(
      crafted([](surgery::Unpacked&, format::PageEntry& e) { e.param ^= 1u << 12; }), "crafted");
  const auto good = Image::from_memory(read_bytes(*dir_ / "auto"), "good");
  PageDecoder dec;
  for (uint64_t i = 0; i < img->pages().size(); ++i) {
    if (img->pages()[i].codec != format::kCodecBitpack) continue;
    std::vector<uint8_t> out(img->pages()[i].usize);
    const PageStatus s = img->read_page(i, dec, out.data());
    EXPECT_TRUE(s == PageStatus::kChecksum || s == PageStatus::kDecodeError) << page_status_message(s);
    EXPECT_EQ(good->read_page(i, dec, out.data()), PageStatus::kOk);
    return;  // the first bitpack page is the one crafted
  }
  FAIL() << "no bitpack page in the image";
}

}  // namespace
}  // namespace gdfs::test
