// Which codec a page gets (mkfs.gdfs --codec, --codec-for) and the encoding itself.
//
// gdeflate: GDeflate, or the raw bytes when that is not smaller or when looks_incompressible() (below)
// says it would barely be. bitpack: the best of a few bitpack
// guesses (sample type and stride; codec/include/gdfs/bitpack.h), or the raw bytes when that is not
// smaller. auto: the smallest of GDeflate, the best bitpack guess and the raw bytes; bitpack only when
// strictly smaller than GDeflate, so an auto image is never larger than a gdeflate one (every page is at
// most its gdeflate size, and everything else in the image is the same).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gdfs/bitpack.h"
#include "gdfs/format.h"
#include "gdfs/gdeflate.h"

namespace gdfs::page {

enum class CodecChoice : uint8_t { kGDeflate, kBitpack, kAuto };
std::optional<CodecChoice> parse_codec(std::string_view name);  // "gdeflate", "bitpack", "auto"
const char* codec_choice_name(CodecChoice c);

// --codec-for GLOB=CODEC: files whose relative path or name matches GLOB (fnmatch) get CODEC.
struct CodecRule {
  std::string glob;
  CodecChoice codec = CodecChoice::kAuto;
};
// The codec of the file at `rel` (relative path): the last matching rule, else `fallback`.
CodecChoice codec_for(const std::vector<CodecRule>& rules, const std::string& rel, CodecChoice fallback);

// The bitpack params mkfs tries first on a page, in order; ties go to the earlier one. Outlier mode and
// 32-sample blocks throughout; strides 1 and 2 for mono and stereo.
const std::vector<bitpack::Params>& bitpack_candidates();
// The stride (1..bitpack::kMaxStride) whose int16 differences need the fewest bits over the first 2048
// samples: the channel count of interleaved data, guessed without coding anything.
unsigned guess_interleave(const uint8_t* in, size_t n);
// The best params for `n` bytes at `in`, and their size (exact, nothing written): the best of the
// candidates (plus int16 with the guess_interleave() stride when it is above 2), then that one with the
// other block sizes of 16, 32, 64 and 128, then in plain mode; the smallest wins at each step. 7 or 8
// size passes.
struct BitpackGuess {
  bitpack::Params params;
  size_t size = 0;
};
BitpackGuess best_bitpack(const uint8_t* in, size_t n);

// True when GDeflate would almost surely save less than 1/128 of these bytes, judged by one cheap pass
// (an order-0 entropy bound plus a greedy probe for repeats of 8 bytes or more) at about a tenth of the
// cost of compressing them at level 7. encode_page() stores such pages without running the parser: on
// the CUDA libraries that is over half the pages, already-compressed fat binaries, most of which GDeflate
// could not shrink at all (bench/results/2026-11-23-incompressible-vm.txt). Never true for more than
// gdeflate::kMaxPageBytes bytes.
bool looks_incompressible(const uint8_t* in, size_t n);
// The levels that use looks_incompressible(); the top ones try every page, whatever it costs.
inline constexpr int kMaxShortcutLevel = 9;

// One page, encoded: codec, param, and the stored bytes (empty for kCodecStored, whose stored bytes are
// the raw ones). With `x86_filter`, a page that x86::looks_like_code() goes through the x86 branch
// filter before GDeflate (kCodecGDeflateX86; gdfs/x86_filter.h): decided by counting, so it costs one
// scan of the page, not a second compression.
struct Encoded {
  format::Codec codec = format::kCodecStored;
  uint16_t param = 0;
  std::vector<uint8_t> bytes;
};
void encode_page(const std::vector<uint8_t>& raw, CodecChoice choice, gdeflate::Compressor& comp,
                 Encoded& out, bool x86_filter = false);

}  // namespace gdfs::page
