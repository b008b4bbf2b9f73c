#include "data_order.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <string_view>
#include <unordered_map>

namespace gdfs::mkfs {
namespace {

// The child of directory `dir` named `name` that is in the image, or null. Children are sorted by name
// bytes.
const Child* find_child(const ScanResult& scan, uint32_t dir, std::string_view name) {
  const std::vector<Child>& c = scan.nodes[dir].children;
  const auto it = std::lower_bound(c.begin(), c.end(), name, [](const Child& a, std::string_view n) {
    return std::string_view(a.name) < n;
  });
  if (it == c.end() || it->name != name || scan.nodes[it->node].skipped) return nullptr;
  return &*it;
}

bool is_regular(const ScanResult& scan, const Tree& tree, uint32_t node) {
  return S_ISREG(scan.nodes[node].mode) && tree.ino_of[node] != 0;
}

// follows[source] = the compiled files packed right after it, in name order. A file is at most one
// source's follower, and never both a source with followers and a follower (a hard link could make it
// both), so that every file is packed once.
struct Followers {
  std::unordered_map<uint32_t, std::vector<uint32_t>> follows;
  std::vector<bool> attached;  // by scan node
};

void attach_cache(const ScanResult& scan, const Tree& tree, uint32_t dir, uint32_t cache, Followers& f) {
  for_each_child(scan, cache, [&](const Child& c) {
    if (!is_regular(scan, tree, c.node) || f.attached[c.node] || f.follows.contains(c.node)) return;
    const std::string source = pyc_source_name(c.name);
    if (source.empty()) return;
    const Child* s = find_child(scan, dir, source);
    if (!s || !is_regular(scan, tree, s->node) || s->node == c.node || f.attached[s->node]) return;
    f.follows[s->node].push_back(c.node);
    f.attached[c.node] = true;
  });
}

}  // namespace

std::string pyc_source_name(const std::string& pyc) {
  constexpr std::string_view kExt = ".pyc";
  if (!pyc.ends_with(kExt)) return {};
  std::string_view s(pyc.data(), pyc.size() - kExt.size());
  // importlib's optimization tag: ".opt-" and a non-empty alphanumeric level.
  if (const size_t dot = s.rfind(".opt-");
      dot != std::string_view::npos && dot + 5 < s.size() &&
      std::all_of(s.begin() + static_cast<std::ptrdiff_t>(dot) + 5, s.end(),
                  [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)); }))
    s = s.substr(0, dot);
  const size_t dot = s.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == s.size()) return {};
  return std::string(s.substr(0, dot)) + ".py";
}

std::vector<DataOrderEntry> data_order(const ScanResult& scan, const Tree& tree, uint64_t page) {
  Followers f;
  f.attached.assign(scan.nodes.size(), false);
  for (const uint32_t dir : tree.order) {
    if (!S_ISDIR(scan.nodes[dir].mode)) continue;
    const Child* cache = find_child(scan, dir, "__pycache__");
    if (cache && S_ISDIR(scan.nodes[cache->node].mode)) attach_cache(scan, tree, dir, cache->node, f);
  }
  std::vector<DataOrderEntry> out;
  for (const uint32_t node : tree.order) {
    if (!S_ISREG(scan.nodes[node].mode) || f.attached[node]) continue;
    const auto it = f.follows.find(node);
    if (it == f.follows.end()) {
      out.push_back({node, 0, false});
      continue;
    }
    uint64_t tails = scan.nodes[node].size % page;
    for (const uint32_t c : it->second) tails += scan.nodes[c].size % page;
    out.push_back({node, static_cast<uint32_t>(std::min<uint64_t>(tails, UINT32_MAX)), false});
    for (const uint32_t c : it->second) out.push_back({c, 0, true});
  }
  return out;
}

}  // namespace gdfs::mkfs
