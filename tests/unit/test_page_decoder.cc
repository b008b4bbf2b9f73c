// PageDecoder::decode's checks on a stored page: the stored checksum first, and the decoded checksum,
// which is skipped only when it cannot fail (equal to the stored one, which the bytes just passed).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "gdfs/checksum.h"
#include "gdfs/format.h"
#include "gdfs/page.h"

namespace gdfs {
namespace {

struct StoredPage {
  std::vector<uint8_t> bytes = std::vector<uint8_t>(5000);
  format::PageEntry entry{};
  StoredPage() {
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 3);
    entry.csize = entry.usize = static_cast<uint32_t>(bytes.size());
    entry.ccheck = entry.ucheck = checksum32(bytes.data(), bytes.size());
    entry.codec = format::kCodecStored;
  }
};

TEST(PageDecoder, StoredPageCopiesItsBytes) {
  StoredPage p;
  std::vector<uint8_t> out(p.bytes.size(), 0xEE);
  PageDecoder dec;
  for (const bool verified : {false, true}) {
    ASSERT_EQ(dec.decode(p.entry, p.bytes.data(), out.data(), verified), PageStatus::kOk);
    EXPECT_EQ(out, p.bytes);
  }
}

TEST(PageDecoder, StoredPageWithDamagedBytesFailsItsStoredChecksum) {
  StoredPage p;
  p.bytes[1234] ^= 0x10;
  std::vector<uint8_t> out(p.bytes.size());
  PageDecoder dec;
  EXPECT_EQ(dec.decode(p.entry, p.bytes.data(), out.data(), false), PageStatus::kStoredChecksum);
}

TEST(PageDecoder, StoredPageWhoseChecksumsDisagreeFails) {
  // Not what mkfs writes: the bytes pass the stored checksum, and the decoded one is still checked.
  StoredPage p;
  p.entry.ucheck ^= 1;
  std::vector<uint8_t> out(p.bytes.size());
  PageDecoder dec;
  for (const bool verified : {false, true})
    EXPECT_EQ(dec.decode(p.entry, p.bytes.data(), out.data(), verified), PageStatus::kChecksum);
}

}  // namespace
}  // namespace gdfs
