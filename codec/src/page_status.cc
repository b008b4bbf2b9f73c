#include "gdfs/page_status.h"

namespace gdfs {

const char* page_status_message(PageStatus s) {
  switch (s) {
    case PageStatus::kOk:
      return "ok";
    case PageStatus::kBadData:
      return "bad data";
    case PageStatus::kSizeMismatch:
      return "size mismatch";
    case PageStatus::kUnsupported:
      return "unsupported page codec";
    case PageStatus::kNotRun:
      return "not run";
    case PageStatus::kIoError:
      return "read error";
    case PageStatus::kStoredChecksum:
      return "stored-bytes checksum mismatch (image damaged)";
    case PageStatus::kDecodeError:
      return "page does not decode";
    case PageStatus::kChecksum:
      return "page checksum mismatch";
    case PageStatus::kDigest:
      return "stored bytes do not match their signed digest (image altered)";
  }
  return "unknown page status";
}

}  // namespace gdfs
