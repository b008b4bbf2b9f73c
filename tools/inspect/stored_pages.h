// Distinct stored pages. Dedupe lets several page entries name the same stored bytes; verifying, counting
// or histogramming a page once per stored copy is both faster and what "stored" means. Entries are the same
// stored page when every field that describes the bytes matches (offset, sizes, codec, param, checksums);
// two entries at one offset that disagree on any of them are kept apart, so each is still checked.
#pragma once

#include <cstdint>
#include <vector>

#include "gdfs/image.h"

namespace gdfs::inspect {

struct StoredPages {
  std::vector<uint64_t> first;     // per distinct stored page: its lowest page entry index
  std::vector<uint64_t> group_of;  // per page entry: the index into `first` of its stored page
};

StoredPages distinct_stored_pages(const Image& img);

}  // namespace gdfs::inspect
