#include "stored_pages.h"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace gdfs::inspect {

namespace {

auto key(const format::PageEntry& e) {
  return std::tie(e.offset, e.csize, e.usize, e.codec, e.param, e.ccheck, e.ucheck);
}

}  // namespace

StoredPages distinct_stored_pages(const Image& img) {
  const auto pages = img.pages();
  std::vector<uint64_t> order(pages.size());
  std::iota(order.begin(), order.end(), uint64_t{0});
  // Stable, so the first entry of each group is its lowest index.
  std::stable_sort(order.begin(), order.end(),
                   [&](uint64_t a, uint64_t b) { return key(pages[a]) < key(pages[b]); });
  StoredPages sp;
  sp.group_of.resize(pages.size());
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || key(pages[order[i]]) != key(pages[order[i - 1]])) sp.first.push_back(order[i]);
    sp.group_of[order[i]] = sp.first.size() - 1;
  }
  return sp;
}

}  // namespace gdfs::inspect
