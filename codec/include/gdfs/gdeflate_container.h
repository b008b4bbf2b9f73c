// DirectStorage `.gdeflate` container ("TileStream"): a whole buffer cut into 64 KiB tiles, each tile one
// GDeflate page.
//
// Layout, all little-endian:
//   u8 id (4 = GDeflate), u8 magic (id ^ 0xFF), u16 numTiles,
//   u32 bits 0-1 tileSizeIdx (1 = 64 KiB tiles), bits 2-19 lastTileSize (0 = last tile is full),
//       bits 20-31 reserved (0),
//   u32 table[numTiles]: table[0] = compressed size of the LAST tile, table[i >= 1] = offset of tile i
//       from the start of the tile data (tile 0 is at 0),
//   tile data.
//
// Choices where the format leaves room (documented in docs and enforced by parse_container):
// - Empty input is a header-only container: numTiles = 0, lastTileSize = 0, 8 bytes in all.
// - The container must end exactly at the end of the last tile: trailing bytes are refused, because a
//   container is a whole file and extra bytes mean truncated or concatenated data.
// - lastTileSize = 65536 is accepted as a full last tile (writers use 0, which we always write).
// - Tiles must be non-empty and strictly increasing in offset; they need not be 4-byte aligned (the
//   page decoder checks page sizes itself).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

namespace gdfs::gdeflate {

inline constexpr uint8_t kContainerId = 4;
inline constexpr size_t kContainerHeaderBytes = 8;
inline constexpr size_t kTileBytes = 65536;
inline constexpr size_t kMaxTiles = 65535;
inline constexpr uint64_t kMaxContainerInput = uint64_t{kMaxTiles} * kTileBytes;

// Any container that is malformed, inconsistent, too large to build, or whose tile fails to decode.
class ContainerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TileSpan {
  uint64_t offset;    // of the compressed tile, from the start of the container
  uint32_t size;      // compressed bytes
  uint32_t raw_size;  // uncompressed bytes: 65536, except possibly for the last tile
};

struct ContainerInfo {
  uint32_t num_tiles = 0;
  uint32_t last_tile_size = 0;  // the header field as stored (0 = full)
  uint64_t data_offset = 0;     // start of the tile data, right after the table
  uint64_t raw_size = 0;        // total uncompressed bytes
  std::vector<TileSpan> tiles;
};

// Validates the header, table and spans of a complete container; throws ContainerError naming the
// first inconsistency. Does not decode tiles.
ContainerInfo parse_container(std::span<const uint8_t> file);

// `threads` = 0 uses all hardware threads. The output does not depend on `threads`.
// Throws std::invalid_argument for a bad level, ContainerError for input over kMaxContainerInput.
std::vector<uint8_t> compress_container(std::span<const uint8_t> in, int level, unsigned threads = 0);

// Parses and decodes every tile with its expected size. A failing tile throws ContainerError naming
// the lowest failing tile index and its status, whatever the thread count.
std::vector<uint8_t> decompress_container(std::span<const uint8_t> file, unsigned threads = 0);

}  // namespace gdfs::gdeflate
