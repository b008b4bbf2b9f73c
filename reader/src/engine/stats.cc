#include "engine/stats.h"

#include <nlohmann/json.hpp>

namespace gdfs::engine {

std::string stats_json(const Stats& s, const StatsContext& ctx) {
  nlohmann::ordered_json j;
  j["reads"] = Stats::get(s.reads);
  j["bytes_served"] = Stats::get(s.bytes_served);
  j["read_errors"] = Stats::get(s.read_errors);
  j["cache_hits"] = Stats::get(s.cache_hits);
  j["cache_misses"] = Stats::get(s.cache_misses);
  j["inflight_joins"] = Stats::get(s.inflight_joins);
  j["readahead_pages"] = Stats::get(s.readahead_pages);
  j["pages_decoded_cpu"] = Stats::get(s.pages_decoded_cpu);
  j["pages_decoded_gpu"] = Stats::get(s.pages_decoded_gpu);
  j["gpu_batches"] = Stats::get(s.gpu_batches);
  j["gpu_fallback_pages"] = Stats::get(s.gpu_fallback_pages);
  j["gpu_small_reads"] = Stats::get(s.gpu_small_reads);
  j["decode_ns"] = Stats::get(s.decode_ns);
  j["fetch_ops"] = Stats::get(s.fetch_ops);
  j["fetch_bytes"] = Stats::get(s.fetch_bytes);
  j["coalesced_reads"] = Stats::get(s.coalesced_reads);
  j["uring_submits"] = Stats::get(s.uring_submits);
  j["bad_pages"] = Stats::get(s.bad_pages);
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
