#include "bytecode_hold.h"

#include <algorithm>

#include "data_order.h"

namespace gdfs::mkfs {

std::string BytecodeHold::source_of(std::string_view path) {
  constexpr std::string_view kCache = "__pycache__";
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return {};
  const std::string_view dir = path.substr(0, slash);
  if (!dir.ends_with(kCache)) return {};
  const size_t cut = dir.size() - kCache.size();
  if (cut > 0 && dir[cut - 1] != '/') return {};  // "x__pycache__" is another directory
  const std::string source = pyc_source_name(std::string(path.substr(slash + 1)));
  if (source.empty()) return {};
  return std::string(dir.substr(0, cut)) + source;
}

std::vector<BytecodeHold::Held> BytecodeHold::hold(const std::string& source, Held held) {
  drop(held.node);
  bytes_ += held.tail.size();
  const uint32_t node = held.node;
  fifo_.push_back({source, std::move(held)});
  const auto it = std::prev(fifo_.end());
  by_source_[source].push_back(it);
  by_node_[node] = it;
  std::vector<Held> out;
  while (bytes_ > kMaxBytes) out.push_back(remove(fifo_.begin()));
  return out;
}

uint64_t BytecodeHold::bytes_for(const std::string& source) const {
  const auto it = by_source_.find(source);
  uint64_t n = 0;
  if (it != by_source_.end())
    for (const auto& e : it->second) n += e->held.tail.size();
  return n;
}

bool BytecodeHold::has_source(const std::string& source) const {
  const auto it = by_source_.find(source);
  return it != by_source_.end() &&
         std::any_of(it->second.begin(), it->second.end(), [](const auto& e) { return !e->held.compiled; });
}

std::vector<BytecodeHold::Held> BytecodeHold::take(const std::string& source) {
  std::vector<Held> out;
  const auto it = by_source_.find(source);
  if (it == by_source_.end()) return out;
  const std::vector<std::list<Entry>::iterator> entries = it->second;
  for (const auto& e : entries) out.push_back(remove(e));
  return out;
}

void BytecodeHold::drop(uint32_t node) {
  if (const auto it = by_node_.find(node); it != by_node_.end()) remove(it->second);
}

std::vector<BytecodeHold::Held> BytecodeHold::take_all() {
  std::vector<Held> out;
  for (Entry& e : fifo_) out.push_back(std::move(e.held));
  fifo_.clear();
  by_source_.clear();
  by_node_.clear();
  bytes_ = 0;
  return out;
}

BytecodeHold::Held BytecodeHold::remove(std::list<Entry>::iterator it) {
  bytes_ -= it->held.tail.size();
  by_node_.erase(it->held.node);
  auto& same = by_source_[it->source];
  same.erase(std::find(same.begin(), same.end(), it));
  if (same.empty()) by_source_.erase(it->source);
  Held h = std::move(it->held);
  fifo_.erase(it);
  return h;
}

}  // namespace gdfs::mkfs
