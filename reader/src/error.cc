#include <cerrno>
#include <new>
#include <stdexcept>
#include <system_error>

#include "gdfs/source.h"

namespace gdfs {

int error_code(const std::exception& e) noexcept {
  if (auto* r = dynamic_cast<const ImageError*>(&e)) return r->code();
  if (dynamic_cast<const std::bad_alloc*>(&e)) return ENOMEM;
  if (auto* s = dynamic_cast<const std::system_error*>(&e))
    if (s->code().category() == std::generic_category() || s->code().category() == std::system_category())
      return s->code().value();
  if (dynamic_cast<const std::invalid_argument*>(&e) || dynamic_cast<const std::length_error*>(&e))
    return EINVAL;
  return EIO;
}

}  // namespace gdfs
