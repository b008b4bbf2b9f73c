#include "read/stats.h"

#include <nlohmann/json.hpp>

namespace gdfs::engine {

std::string stats_json(const Stats& s, const StatsContext& ctx) {
  nlohmann::ordered_json j;
  s.for_each([&](const char* name, uint64_t value) { j[name] = value; });
  j["cache_bytes"] = ctx.cache_bytes;
  j["cache_capacity"] = ctx.cache_capacity;
  j["cache_pages"] = ctx.cache_pages;
  j["decoder"] = ctx.decoder;
  j["fetcher"] = ctx.fetcher;
  j["threads"] = ctx.threads;
  for (const auto& [name, value] : ctx.source) j[name] = value;
  return j.dump();
}

}  // namespace gdfs::engine
