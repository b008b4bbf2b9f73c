// DirectStorage `.gdeflate` container: parse/validate, parallel tile compression and decompression.
#include "gdfs/gdeflate_container.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <limits>
#include <mutex>
#include <string>
#include <thread>

#include "gdfs/gdeflate.h"

namespace gdfs::gdeflate {
namespace {

constexpr uint32_t kTileSizeIdx64K = 1;
constexpr uint32_t kLastTileBits = 18;

uint32_t load_u32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

void store_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

[[noreturn]] void fail(const std::string& what) {
  throw ContainerError("gdeflate container: " + what);
}

std::string str(uint64_t v) {
  return std::to_string(v);
}

std::string hex(uint8_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02X", v);
  return buf;
}

// Runs job(state, tile) for every tile on up to `threads` workers, each with its own state from make().
// Tiles are handed out in increasing order and none is started after a failed one, so the lowest
// failing tile, whose exception is rethrown, is the same for any thread count.
template <class Make, class Job>
void for_each_tile(size_t tiles, unsigned threads, Make make, Job job) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  const size_t workers = std::min<size_t>(threads, tiles);
  std::atomic<size_t> next{0};
  std::atomic<size_t> first_failed{tiles};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    size_t i = 0;
    try {
      auto state = make();
      while ((i = next.fetch_add(1)) < tiles && i < first_failed.load()) job(state, i);
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (i < first_failed.load()) {
        first_failed.store(i);
        error = std::current_exception();
      }
    }
  };
  if (workers <= 1) {
    work();
  } else {
    std::vector<std::jthread> pool;
    for (size_t w = 0; w < workers; ++w) pool.emplace_back(work);
  }  // jthreads join here
  if (error) std::rethrow_exception(error);
}

size_t tile_count(size_t n) {
  return (n + kTileBytes - 1) / kTileBytes;
}

// Header, table and tile data from the compressed tiles, in tile order.
std::vector<uint8_t> assemble(const std::vector<std::vector<uint8_t>>& pages, size_t raw_size) {
  const size_t n = pages.size();
  const size_t data_offset = kContainerHeaderBytes + 4 * n;
  size_t total = data_offset;
  for (const auto& p : pages) total += p.size();
  std::vector<uint8_t> out(total);
  out[0] = kContainerId;
  out[1] = kContainerId ^ 0xFF;
  out[2] = static_cast<uint8_t>(n);
  out[3] = static_cast<uint8_t>(n >> 8);
  const uint32_t last = static_cast<uint32_t>(raw_size % kTileBytes);
  store_u32(&out[4], kTileSizeIdx64K | last << 2);
  uint64_t offset = 0;
  for (size_t i = 0; i < n; ++i) {
    // Offsets are u32: a nearly 4 GiB input of incompressible data does not fit.
    if (offset > std::numeric_limits<uint32_t>::max()) fail("compressed tile data exceeds 4 GiB");
    if (i > 0) store_u32(&out[kContainerHeaderBytes + 4 * i], static_cast<uint32_t>(offset));
    std::copy(pages[i].begin(), pages[i].end(), out.begin() + data_offset + offset);
    offset += pages[i].size();
  }
  if (n > 0) store_u32(&out[kContainerHeaderBytes], static_cast<uint32_t>(pages.back().size()));
  return out;
}

struct Header {
  uint32_t num_tiles, last_tile_size;
};

Header parse_header(std::span<const uint8_t> file) {
  if (file.size() < kContainerHeaderBytes)
    fail(str(file.size()) + " bytes is shorter than the 8-byte header");
  if (file[0] != kContainerId) fail("id is " + str(file[0]) + ", expected 4 (GDeflate)");
  if (file[1] != (kContainerId ^ 0xFF)) fail("magic is " + hex(file[1]) + ", expected 0xFB (id ^ 0xFF)");
  const uint32_t word = load_u32(&file[4]);
  const uint32_t size_idx = word & 3;
  const uint32_t last = (word >> 2) & ((1u << kLastTileBits) - 1);
  const uint32_t reserved = word >> (2 + kLastTileBits);
  if (size_idx != kTileSizeIdx64K) fail("tileSizeIdx is " + str(size_idx) + ", only 1 (64 KiB) is supported");
  if (reserved != 0) fail("reserved header bits are " + str(reserved) + ", expected 0");
  if (last > kTileBytes) fail("lastTileSize " + str(last) + " exceeds the 65536-byte tile size");
  const uint32_t n = file[2] | uint32_t{file[3]} << 8;
  if (n == 0 && last != 0) fail("no tiles but lastTileSize is " + str(last));
  return {n, last};
}

// Fills the tile spans from the offset table; checks order, bounds and that nothing trails.
void parse_tiles(std::span<const uint8_t> file, ContainerInfo& info) {
  const uint32_t n = info.num_tiles;
  const uint64_t data_size = file.size() - info.data_offset;
  auto entry = [&](uint32_t i) { return load_u32(&file[kContainerHeaderBytes + 4 * i]); };
  uint64_t prev = 0;
  info.tiles.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t start = i == 0 ? 0 : entry(i);
    if (i > 0 && start <= prev)
      fail("tile " + str(i) + " offset " + str(start) + " is not after tile " + str(i - 1) + " offset " +
           str(prev) + " (tiles overlap, are out of order or empty)");
    if (start >= data_size)
      fail("tile " + str(i) + " offset " + str(start) + " is past the end of the " + str(data_size) +
           " bytes of tile data");
    const uint64_t end = i + 1 < n ? entry(i + 1) : start + entry(0);
    const uint32_t raw = i + 1 < n || info.last_tile_size == 0 ? kTileBytes : info.last_tile_size;
    info.tiles.push_back(
        {info.data_offset + start, static_cast<uint32_t>(std::max(end, start) - start), raw});
    prev = start;
  }
  const uint64_t end = prev + entry(0);
  if (entry(0) == 0) fail("last tile (" + str(n - 1) + ") has compressed size 0");
  if (end > data_size)
    fail("last tile (" + str(n - 1) + ") ends at " + str(end) + ", past the end of the " + str(data_size) +
         " bytes of tile data");
  if (end < data_size) fail(str(data_size - end) + " trailing bytes after the last tile");
}

}  // namespace

ContainerInfo parse_container(std::span<const uint8_t> file) {
  const Header h = parse_header(file);
  ContainerInfo info;
  info.num_tiles = h.num_tiles;
  info.last_tile_size = h.last_tile_size;
  info.data_offset = kContainerHeaderBytes + uint64_t{4} * h.num_tiles;
  if (h.num_tiles == 0) {
    if (file.size() != kContainerHeaderBytes)
      fail("no tiles but " + str(file.size() - kContainerHeaderBytes) + " bytes after the header");
    return info;
  }
  if (info.data_offset > file.size())
    fail("offset table of " + str(h.num_tiles) + " tiles ends at byte " + str(info.data_offset) +
         ", past the end of the " + str(file.size()) + "-byte container");
  parse_tiles(file, info);
  info.raw_size = uint64_t{h.num_tiles - 1} * kTileBytes + info.tiles.back().raw_size;
  return info;
}

std::vector<uint8_t> compress_container(std::span<const uint8_t> in, int level, unsigned threads) {
  if (in.size() > kMaxContainerInput)
    fail("input of " + str(in.size()) + " bytes exceeds the " + str(kMaxContainerInput) + "-byte maximum");
  (void)Compressor(level);  // throws std::invalid_argument on a bad level before any thread starts
  const size_t n = tile_count(in.size());
  std::vector<std::vector<uint8_t>> pages(n);
  struct State {
    Compressor compressor;
    std::vector<uint8_t> scratch;
  };
  auto make = [&] { return State{Compressor(level), std::vector<uint8_t>(compress_bound(kTileBytes))}; };
  for_each_tile(n, threads, make, [&](State& s, size_t i) {
    const auto raw = in.subspan(i * kTileBytes, std::min(kTileBytes, in.size() - i * kTileBytes));
    const size_t got = s.compressor.compress(raw.data(), raw.size(), s.scratch.data(), s.scratch.size());
    if (got == 0) fail("tile " + str(i) + " did not fit in compress_bound bytes (codec bug)");
    pages[i].assign(s.scratch.begin(), s.scratch.begin() + got);
  });
  return assemble(pages, in.size());
}

std::vector<uint8_t> decompress_container(std::span<const uint8_t> file, unsigned threads) {
  const ContainerInfo info = parse_container(file);
  if (info.raw_size > std::numeric_limits<size_t>::max())
    fail("uncompressed size " + str(info.raw_size) + " does not fit in memory on this platform");
  std::vector<uint8_t> out(info.raw_size);
  for_each_tile(
      info.num_tiles, threads, [] { return Decompressor(); },
      [&](Decompressor& d, size_t i) {
        const TileSpan& t = info.tiles[i];
        const PageStatus s = d.decompress(&file[t.offset], t.size, &out[i * kTileBytes], t.raw_size);
        if (s != PageStatus::kOk)
          fail("tile " + str(i) + " of " + str(info.num_tiles) + " (" + str(t.size) + " bytes at offset " +
               str(t.offset) + ") failed to decode to " + str(t.raw_size) +
               " bytes: " + page_status_message(s));
      });
  return out;
}

}  // namespace gdfs::gdeflate
