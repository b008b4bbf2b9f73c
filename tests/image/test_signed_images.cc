// Signed images (mkfs.gdfs --sign, trusted_key; FORMAT.md 7.1): what a reader with the key accepts,
// and every way a hostile server or cache can try to hand it other bytes: another key, no signature,
// a damaged or grafted signature region, another image's metadata, pages of another signed image, a
// page replaced behind recomputed checksums, an altered base of a layered image. Each is refused at
// open or fails the read (EIO), and no wrong byte is ever returned.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "cli_util.h"
#include "gdfs/image.h"
#include "gdfs/trust.h"
#include "key_util.h"
#include "tests/fuzz/image_surgery.h"
#include "tree_util.h"

namespace gdfs::test {
namespace {

namespace fs = std::filesystem;
using surgery::Bytes;

constexpr uint64_t kPage = 65536;

// Random bytes: every page is stored as it is, so two trees with files of equal sizes give images with
// the same layout, and a page of one lies where the same page of the other does.
void write_random(const std::string& path, uint64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  write_file(path, s);
}

std::unique_ptr<Image> open_with(const std::string& image, const std::string& key) {
  SourceOptions so;
  so.trusted_key = key;
  return Image::open(image, so);
}

// The whole of file `path`, or the ImageError's errno.
std::pair<std::string, int> read_all(const Image& img, const std::string& path) {
  PageDecoder dec;
  try {
    const uint32_t ino = img.resolve(path);
    std::string s(img.inode(ino).size, '\0');
    img.read(ino, 0, s.size(), reinterpret_cast<uint8_t*>(s.data()), dec);
    return {s, 0};
  } catch (const ImageError& e) {
    return {e.what(), e.code()};
  }
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

class SignedImages : public ::testing::Test {
 protected:
  // Trees a and b: the same names and sizes, /f differs in content (three whole pages), the rest equal.
  void SetUp() override {
    for (const std::string t : {"a", "b"}) {
      fs::create_directories(dir_ / t + "/d");
      write_random(dir_ / t + "/f", 3 * kPage, t == "a" ? 1 : 2);
      write_random(dir_ / t + "/g", 2 * kPage, 3);
      write_text_file(dir_ / t + "/d/text", 300000, 4);
    }
    a_ = make_key_pair(dir_ / "a");
    b_ = make_key_pair(dir_ / "b");
    ASSERT_EQ(run_mkfs({"-q", dir_ / "a", dir_ / "A.gdfs", "--sign", a_.priv}).code, 0);
    ASSERT_EQ(run_mkfs({"-q", dir_ / "b", dir_ / "B.gdfs", "--sign", a_.priv}).code, 0);
  }
  // Opening `image` with key `pub` is refused with EACCES and a message containing `why`.
  void expect_refused(const std::string& image, const std::string& pub, const std::string& why) {
    try {
      open_with(image, pub);
      ADD_FAILURE() << image << " was opened";
    } catch (const ImageError& e) {
      EXPECT_EQ(e.code(), EACCES) << e.what();
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line";
    }
  }
  TempDir dir_{"signed"};
  KeyPair a_, b_;
};

TEST_F(SignedImages, TheKeyOpensAndReadsEveryByteAndReadersWithoutItSeeNoChange) {
  auto img = open_with(dir_ / "A.gdfs", a_.pub);
  EXPECT_TRUE(img->trusted());
  EXPECT_EQ(img->superblock().minor, format::kMinorSigned);
  for (const char* f : {"/f", "/g", "/d/text"})
    EXPECT_EQ(read_all(*img, f).first, slurp(dir_ / "a" + std::string(f))) << f;
  auto plain = Image::open(dir_ / "A.gdfs");
  EXPECT_FALSE(plain->trusted());
  EXPECT_EQ(plain->page_digest(0), nullptr);
  EXPECT_EQ(read_all(*plain, "/f").first, slurp(dir_ / "a/f"));
  // The image ends at image_size for a reader that knows nothing of signatures (a 2.1 reader); the file
  // then ends with the signature region, padded to whole 4 KiB blocks.
  const format::Superblock& sb = plain->superblock();
  EXPECT_GE(sb.sig_offset, sb.image_size);
  EXPECT_EQ(fs::file_size(dir_ / "A.gdfs"), (sb.sig_offset + sb.sig_size + 4095) / 4096 * 4096);
}

TEST_F(SignedImages, InspectShowsTheSignatureAndVerifiesWithTheKey) {
  const auto info = run_inspect({"info", "--json", dir_ / "A.gdfs"});
  ASSERT_EQ(info.code, 0) << info.err;
  const auto j = nlohmann::json::parse(info.out);
  const std::vector<trust::PublicKey> keys = trust::load_public_keys(a_.pub);
  EXPECT_TRUE(j["signature"]["signed"].get<bool>());
  EXPECT_FALSE(j["signature"]["verified"].get<bool>());
  EXPECT_EQ(j["signature"]["key"], trust::hex(keys.at(0).fingerprint));
  EXPECT_EQ(j["version"], "2.2");
  const auto v = run_inspect({"verify", dir_ / "A.gdfs", "--key", a_.pub});
  EXPECT_EQ(v.code, 0) << v.err;
  EXPECT_NE(v.out.find("signature by key " + trust::hex(keys.at(0).fingerprint) + " verified"),
            std::string::npos)
      << v.out;
  const auto other = run_inspect({"verify", dir_ / "A.gdfs", "--key", b_.pub});
  EXPECT_EQ(other.code, 1);
  EXPECT_NE(other.err.find("which is not trusted"), std::string::npos) << other.err;
  ASSERT_EQ(run_mkfs({"-q", dir_ / "a", dir_ / "U.gdfs"}).code, 0);
  const auto plain = nlohmann::json::parse(run_inspect({"info", "--json", dir_ / "U.gdfs"}).out);
  EXPECT_FALSE(plain["signature"]["signed"].get<bool>());
  EXPECT_EQ(plain["version"], "2.0") << "an unsigned image stays 2.0";
}

TEST_F(SignedImages, SigningIsDeterministic) {
  ASSERT_EQ(run_mkfs({"-q", dir_ / "a", dir_ / "A2.gdfs", "--sign", a_.priv}).code, 0);
  EXPECT_EQ(read_bytes(dir_ / "A.gdfs"), read_bytes(dir_ / "A2.gdfs"));
}

TEST_F(SignedImages, AnUnsignedImageOrAnotherKeysImageIsRefused) {
  ASSERT_EQ(run_mkfs({"-q", dir_ / "a", dir_ / "U.gdfs"}).code, 0);
  expect_refused(dir_ / "U.gdfs", a_.pub, "the image is not signed");
  ASSERT_EQ(run_mkfs({"-q", dir_ / "a", dir_ / "Bk.gdfs", "--sign", b_.priv}).code, 0);
  expect_refused(dir_ / "Bk.gdfs", a_.pub, "which is not trusted");
  // Rotation: a key file may hold the old and the new key; an image signed by either opens.
  write_bytes(dir_ / "both.pub", [&] {
    Bytes k = read_bytes(a_.pub), kb = read_bytes(b_.pub);
    k.insert(k.end(), kb.begin(), kb.end());
    return k;
  }());
  EXPECT_TRUE(open_with(dir_ / "Bk.gdfs", dir_ / "both.pub")->trusted());
  EXPECT_TRUE(open_with(dir_ / "A.gdfs", dir_ / "both.pub")->trusted());
}

TEST_F(SignedImages, AKeyFileThatIsNotAPublicEd25519KeyIsAnError) {
  write_file(dir_ / "junk.pub", "not a key\n");
  EXPECT_THROW(open_with(dir_ / "A.gdfs", dir_ / "junk.pub"), ImageError);
  EXPECT_THROW(open_with(dir_ / "A.gdfs", dir_ / "missing.pub"), ImageError);
  const auto r = run_mkfs({"-q", dir_ / "a", dir_ / "X.gdfs", "--sign", a_.pub});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("no PEM private key"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "X.gdfs"));
}

TEST_F(SignedImages, ATruncatedOrFlippedSignatureRegionIsRefused) {
  const Bytes good = read_bytes(dir_ / "A.gdfs");
  const format::Superblock sb = surgery::superblock(good);
  Bytes cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(sb.sig_offset + sb.sig_size - 10));
  write_bytes(dir_ / "cut.gdfs", cut);
  expect_refused(dir_ / "cut.gdfs", a_.pub, "missing or truncated");
  Bytes gone(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(sb.image_size));
  write_bytes(dir_ / "gone.gdfs", gone);
  expect_refused(dir_ / "gone.gdfs", a_.pub, "missing or truncated");
  // One flipped bit anywhere in the region: its checksum catches it...
  for (uint64_t at : {uint64_t{10}, uint64_t{30}, uint64_t{100}, uint64_t{130}, sb.sig_size - 1}) {
    Bytes bad = good;
    bad[sb.sig_offset + at] ^= 0x10;
    write_bytes(dir_ / "flip.gdfs", bad);
    expect_refused(dir_ / "flip.gdfs", a_.pub, "signature region checksum mismatch");
    // ...and with the checksum made to match (an attacker's edit), the structure or the signature does.
    Bytes region = surgery::signature_region(bad);
    surgery::graft_signature(bad, region);
    write_bytes(dir_ / "flip.gdfs", bad);
    EXPECT_THROW(open_with(dir_ / "flip.gdfs", a_.pub), ImageError) << "byte " << at;
  }
  Bytes bad = good;
  bad[sb.sig_offset + offsetof(format::SignatureHeader, signature) + 5] ^= 1;
  surgery::graft_signature(bad, surgery::signature_region(bad));
  write_bytes(dir_ / "sig.gdfs", bad);
  expect_refused(dir_ / "sig.gdfs", a_.pub, "the signature does not match the image");
  bad = good;
  bad[sb.sig_offset + sizeof(format::SignatureHeader) + 7] ^= 1;  // a page digest
  surgery::graft_signature(bad, surgery::signature_region(bad));
  write_bytes(dir_ / "digest.gdfs", bad);
  expect_refused(dir_ / "digest.gdfs", a_.pub, "the signature does not match the image");
}

TEST_F(SignedImages, AnotherImagesMetadataOrSignatureIsRefused) {
  const Bytes a = read_bytes(dir_ / "A.gdfs"), b = read_bytes(dir_ / "B.gdfs");
  // B as it is, with A's signature region: the root covers B's superblock, not A's.
  Bytes b_with_a = b;
  surgery::graft_signature(b_with_a, surgery::signature_region(a));
  write_bytes(dir_ / "ba.gdfs", b_with_a);
  expect_refused(dir_ / "ba.gdfs", a_.pub, "the signature does not match the image");
  // A's superblock and signature with B's metadata region (same layout, checksums made to match).
  const format::Superblock sa = surgery::superblock(a), sbb = surgery::superblock(b);
  ASSERT_EQ(sa.meta_offset, sbb.meta_offset);
  Bytes a_meta_b(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(sa.meta_offset));
  a_meta_b.insert(a_meta_b.end(), b.begin() + static_cast<std::ptrdiff_t>(sbb.meta_offset),
                  b.begin() + static_cast<std::ptrdiff_t>(sbb.image_size));
  format::Superblock s = sa;
  s.meta_size = sbb.meta_size, s.image_size = sbb.image_size, s.meta_checksum = sbb.meta_checksum;
  s.meta_usize = sbb.meta_usize, s.meta_ucheck = sbb.meta_ucheck, s.meta_blocks = sbb.meta_blocks;
  std::copy(std::begin(sbb.sections), std::end(sbb.sections), s.sections);
  surgery::put_superblock(a_meta_b, s);
  surgery::graft_signature(a_meta_b, surgery::signature_region(a));
  write_bytes(dir_ / "ameta.gdfs", a_meta_b);
  EXPECT_NO_THROW(Image::open(dir_ / "ameta.gdfs")) << "a valid image to a reader without the key";
  EXPECT_THROW(open_with(dir_ / "ameta.gdfs", a_.pub), ImageError);
}

TEST_F(SignedImages, PagesOfAnotherSignedImageFailTheirReadsWithNoWrongByte) {
  const Bytes a = read_bytes(dir_ / "A.gdfs"), b = read_bytes(dir_ / "B.gdfs");
  auto img = Image::open(dir_ / "A.gdfs");
  const format::PageEntry& e = img->pages()[img->page_ref(img->resolve("/f"), 1).entry];
  Bytes swapped = a;  // the second page of /f as B stores it, at the same place
  std::copy_n(b.begin() + static_cast<std::ptrdiff_t>(e.offset), e.csize,
              swapped.begin() + static_cast<std::ptrdiff_t>(e.offset));
  ASSERT_NE(swapped, a);
  write_bytes(dir_ / "swapped.gdfs", swapped);
  auto t = open_with(dir_ / "swapped.gdfs", a_.pub);
  const auto [what, code] = read_all(*t, "/f");
  EXPECT_EQ(code, EIO);
  EXPECT_NE(what.find("signed digest"), std::string::npos) << what;
  EXPECT_EQ(read_all(*t, "/g").first, slurp(dir_ / "a/g")) << "other pages still read";
  PageDecoder dec;
  std::vector<uint8_t> out(kPage);
  EXPECT_EQ(t->read_page(img->page_ref(img->resolve("/f"), 1).entry, dec, out.data()), PageStatus::kDigest);
  const auto v = run_inspect({"verify", dir_ / "swapped.gdfs", "--key", a_.pub});
  EXPECT_EQ(v.code, 1);
  EXPECT_NE(v.out.find("signed digest"), std::string::npos) << v.out;
}

TEST_F(SignedImages, APageReplacedBehindRecomputedChecksumsIsRefused) {
  // The attack the checksums cannot see: B's page in A, with A's page entry given B's checksums and
  // every metadata checksum recomputed. A reader without the key reads B's bytes as A's file.
  const Bytes a = read_bytes(dir_ / "A.gdfs"), b = read_bytes(dir_ / "B.gdfs");
  surgery::Unpacked ua = surgery::unpack_image(a), ub = surgery::unpack_image(b);
  auto img = Image::open(dir_ / "A.gdfs");
  const uint64_t entry = img->page_ref(img->resolve("/f"), 0).entry;
  auto* ea = ua.record<format::PageEntry>(format::kSecPages, entry);
  const auto* eb = ub.record<format::PageEntry>(format::kSecPages, entry);
  ASSERT_EQ(ea->offset, eb->offset);
  ASSERT_EQ(ea->csize, eb->csize);
  ea->ccheck = eb->ccheck, ea->ucheck = eb->ucheck;
  Bytes forged = surgery::repack_image(a, ua);
  std::copy_n(b.begin() + static_cast<std::ptrdiff_t>(eb->offset), eb->csize,
              forged.begin() + static_cast<std::ptrdiff_t>(ea->offset));
  surgery::graft_signature(forged, surgery::signature_region(a));
  write_bytes(dir_ / "forged.gdfs", forged);
  auto plain = Image::open(dir_ / "forged.gdfs");
  const std::string f = read_all(*plain, "/f").first;
  EXPECT_EQ(f.substr(0, kPage), slurp(dir_ / "b/f").substr(0, kPage)) << "the forgery works without the key";
  expect_refused(dir_ / "forged.gdfs", a_.pub, "does not match");
}

TEST_F(SignedImages, ALayeredImageProtectsItsBasePages) {
  ASSERT_EQ(run_mkfs({"-q", dir_ / "a", dir_ / "v1.gdfs"}).code, 0);  // the base itself is unsigned
  write_random(dir_ / "a/new", kPage, 9);
  ASSERT_EQ(run_mkfs({"-q", dir_ / "a", dir_ / "v2.gdfs", "--base", dir_ / "v1.gdfs", "--layered", "--sign",
                      a_.priv})
                .code,
            0);
  auto img = open_with(dir_ / "v2.gdfs", a_.pub);
  ASSERT_EQ(img->layers().size(), 1u);
  for (const char* f : {"/f", "/g", "/d/text", "/new"})
    EXPECT_EQ(read_all(*img, f).first, slurp(dir_ / "a" + std::string(f))) << f;
  // A chain of two, the second base under a name longer than a layer record: a signed v3 covers both.
  const std::string long_name = "v2-" + std::string(80, 'x') + ".gdfs";
  fs::copy_file(dir_ / "v2.gdfs", dir_ / long_name);
  write_random(dir_ / "a/newer", kPage, 10);
  ASSERT_EQ(run_mkfs({"-q", dir_ / "a", dir_ / "v3.gdfs", "--base", dir_ / long_name, "--layered", "--sign",
                      a_.priv})
                .code,
            0);
  auto v3 = open_with(dir_ / "v3.gdfs", a_.pub);
  EXPECT_EQ(v3->layers().size(), 2u);
  for (const char* f : {"/f", "/new", "/newer"})
    EXPECT_EQ(read_all(*v3, f).first, slurp(dir_ / "a" + std::string(f))) << f;
  // Flattened, v3 is a standalone image, unsigned: readers without a key read it, and a key refuses it.
  CliResult fl = run_inspect({"flatten", dir_ / "v3.gdfs", dir_ / "flat.gdfs"});
  ASSERT_EQ(fl.code, 0) << fl.err;
  auto flat = Image::open(dir_ / "flat.gdfs");
  EXPECT_FALSE(flat->superblock().compat & format::kCompatSigned);
  EXPECT_EQ(read_all(*flat, "/newer").first, slurp(dir_ / "a/newer"));
  EXPECT_EQ(run_inspect({"verify", dir_ / "flat.gdfs"}).code, 0);
  expect_refused(dir_ / "flat.gdfs", a_.pub, "not signed");
  // Flattened with --sign (and --key, so each page copied is checked against v3's digests first): a
  // standalone image signed anew, which the key opens and the other key refuses.
  CliResult signed_fl = run_inspect(
      {"flatten", dir_ / "v3.gdfs", dir_ / "flat-signed.gdfs", "--key", a_.pub, "--sign", a_.priv});
  ASSERT_EQ(signed_fl.code, 0) << signed_fl.err;
  EXPECT_NE(signed_fl.out.find("signed"), std::string::npos) << signed_fl.out;
  auto flat_signed = open_with(dir_ / "flat-signed.gdfs", a_.pub);
  EXPECT_TRUE(flat_signed->layers().empty());
  for (const char* f : {"/f", "/g", "/new", "/newer"})
    EXPECT_EQ(read_all(*flat_signed, f).first, slurp(dir_ / "a" + std::string(f))) << f;
  EXPECT_EQ(run_inspect({"verify", dir_ / "flat-signed.gdfs", "--key", a_.pub}).code, 0);
  expect_refused(dir_ / "flat-signed.gdfs", b_.pub, "");
  // A key that is not a private key: refused, and no image left behind.
  CliResult bad_key = run_inspect({"flatten", dir_ / "v3.gdfs", dir_ / "flat-bad.gdfs", "--sign", a_.pub});
  EXPECT_EQ(bad_key.code, 1) << bad_key.out;
  EXPECT_FALSE(fs::exists(dir_ / "flat-bad.gdfs"));
  // The base's page of /g replaced by /f's (a valid page of the same size), its superblock untouched.
  auto base = Image::open(dir_ / "v1.gdfs");
  const format::PageEntry& ef = base->pages()[base->page_ref(base->resolve("/f"), 0).entry];
  const format::PageEntry& eg = base->pages()[base->page_ref(base->resolve("/g"), 0).entry];
  ASSERT_EQ(ef.csize, eg.csize);
  Bytes v1 = read_bytes(dir_ / "v1.gdfs");
  std::copy_n(v1.begin() + static_cast<std::ptrdiff_t>(ef.offset), ef.csize,
              v1.begin() + static_cast<std::ptrdiff_t>(eg.offset));
  write_bytes(dir_ / "v1.gdfs", v1);
  auto t = open_with(dir_ / "v2.gdfs", a_.pub);
  EXPECT_EQ(read_all(*t, "/g").second, EIO);
  EXPECT_EQ(read_all(*t, "/new").first, slurp(dir_ / "a/new"));
}

}  // namespace
}  // namespace gdfs::test
