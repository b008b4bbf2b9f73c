#include "gdfs/gdeflate.h"

namespace gdfs::gdeflate {

const char* status_name(Status s) {
  switch (s) {
    case Status::kOk:
      return "ok";
    case Status::kBadData:
      return "bad data";
    case Status::kSizeMismatch:
      return "size mismatch";
  }
  return "unknown status";
}

}  // namespace gdfs::gdeflate
