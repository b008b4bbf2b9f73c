#include "source_hook.h"

#include <utility>

namespace gdfs::mkfs {
namespace {

SourceHook& hook() {
  static SourceHook h;
  return h;
}

}  // namespace

void set_source_hook(SourceHook h) {
  hook() = std::move(h);
}

int source_fault(SourceOp op, std::string_view rel) {
  const SourceHook& h = hook();
  return h ? h(op, rel) : 0;
}

}  // namespace gdfs::mkfs
