#include "emu/warp_emu.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <vector>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define GDFS_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GDFS_EMU_ASAN 1
#endif
#endif
#ifndef GDFS_EMU_ASAN
#define GDFS_EMU_ASAN 0
#endif
#if GDFS_EMU_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

#if defined(__SANITIZE_THREAD__)
#define GDFS_EMU_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GDFS_EMU_TSAN 1
#endif
#endif
#ifndef GDFS_EMU_TSAN
#define GDFS_EMU_TSAN 0
#endif
#if GDFS_EMU_TSAN
// ThreadSanitizer must be told about every stack switch, or it sees one thread's history jump stacks.
extern "C" {
void* __tsan_get_current_fiber();
void* __tsan_create_fiber(unsigned flags);
void __tsan_switch_to_fiber(void* fiber, unsigned flags);
}
#endif

#if defined(__x86_64__)
// Saves the callee-saved registers and the stack pointer in *save_sp, then resumes the context whose
// stack pointer is load_sp. Far cheaper than swapcontext, which makes a signal-mask system call on
// every switch; the emulator switches twice per lane per collective.
extern "C" void gdfs_emu_switch(void** save_sp, void* load_sp);
asm(R"(
  .pushsection .text
  .globl gdfs_emu_switch
  .type gdfs_emu_switch,@function
gdfs_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size gdfs_emu_switch,.-gdfs_emu_switch
  .popsection
)");
#endif

namespace gdfs::gpu::emu {
namespace {

constexpr unsigned kLanes = 32;
constexpr size_t kStackBytes = size_t{512} << 10;  // sanitizers make frames large

enum class LaneState : uint8_t { kRunning, kWaiting, kDone };

struct Context {
#if defined(__x86_64__)
  void* sp = nullptr;
#else
  ucontext_t uc;
#endif
#if GDFS_EMU_TSAN
  void* tsan_fiber = nullptr;
#endif
};

struct Warp {
  const std::function<void()>* fn = nullptr;
  Context sched;
  std::array<Context, kLanes> ctx;
  std::array<std::unique_ptr<char[]>, kLanes> stacks;
  std::array<LaneState, kLanes> state{};
  std::array<Op, kLanes> op{};
  std::array<uint64_t, kLanes> value{};
  std::array<unsigned, kLanes> arg{};
  std::array<uint64_t, kLanes> result{};
  unsigned current = 0;
#if GDFS_EMU_ASAN
  void* fake_stack = nullptr;
  const void* sched_bottom = nullptr;
  size_t sched_size = 0;
#endif
};

thread_local Warp* g_warp = nullptr;

void switch_to(Context& from, Context& to, [[maybe_unused]] const void* to_bottom,
               [[maybe_unused]] size_t to_size) {
#if GDFS_EMU_ASAN
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, to_bottom, to_size);
#endif
#if GDFS_EMU_TSAN
  __tsan_switch_to_fiber(to.tsan_fiber, 0);
#endif
#if defined(__x86_64__)
  gdfs_emu_switch(&from.sp, to.sp);
#else
  swapcontext(&from.uc, &to.uc);
#endif
#if GDFS_EMU_ASAN
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
}

// Lane -> scheduler.
void yield_to_scheduler() {
  Warp& w = *g_warp;
#if GDFS_EMU_ASAN
  switch_to(w.ctx[w.current], w.sched, w.sched_bottom, w.sched_size);
#else
  switch_to(w.ctx[w.current], w.sched, nullptr, 0);
#endif
}

[[noreturn]] void lane_entry() {
#if GDFS_EMU_ASAN
  Warp& w0 = *g_warp;
  __sanitizer_finish_switch_fiber(nullptr, &w0.sched_bottom, &w0.sched_size);
#endif
  (*g_warp->fn)();
  g_warp->state[g_warp->current] = LaneState::kDone;
  yield_to_scheduler();
  std::abort();  // a finished lane is never resumed
}

#if !defined(__x86_64__)
void lane_entry_uc() {
  lane_entry();
}
#endif

void start_lane(Warp& w, unsigned lane) {
  if (!w.stacks[lane]) {
    w.stacks[lane] = std::make_unique<char[]>(kStackBytes);
#if GDFS_EMU_TSAN
    w.ctx[lane].tsan_fiber = __tsan_create_fiber(0);  // kept with the stack, for the thread's lifetime
#endif
  }
  char* base = w.stacks[lane].get();
#if defined(__x86_64__)
  // A frame that gdfs_emu_switch "returns" into lane_entry from, 16-byte aligned as a call would be.
  auto top = reinterpret_cast<uintptr_t>(base + kStackBytes) & ~uintptr_t{15};
  auto* sp = reinterpret_cast<void**>(top);
  *--sp = nullptr;                               // lane_entry's (never used) return address
  *--sp = reinterpret_cast<void*>(&lane_entry);  // where the switch's ret goes
  for (int i = 0; i < 6; ++i) *--sp = nullptr;   // rbp rbx r12 r13 r14 r15
  w.ctx[lane].sp = sp;
#else
  getcontext(&w.ctx[lane].uc);
  w.ctx[lane].uc.uc_stack.ss_sp = base;
  w.ctx[lane].uc.uc_stack.ss_size = kStackBytes;
  w.ctx[lane].uc.uc_link = nullptr;
  makecontext(&w.ctx[lane].uc, lane_entry_uc, 0);
#endif
  w.state[lane] = LaneState::kRunning;
}

void resume(Warp& w, unsigned lane) {
  w.current = lane;
  switch_to(w.sched, w.ctx[lane], w.stacks[lane].get(), kStackBytes);
}

const char* op_name(Op op) {
  switch (op) {
    case Op::kBallot:
      return "ballot";
    case Op::kShfl:
      return "shfl";
    case Op::kShflUp:
      return "shfl_up";
    case Op::kShflXor:
      return "shfl_xor";
    case Op::kSync:
      return "syncwarp";
  }
  return "?";
}

// All lanes wait at the same kind of collective: compute every lane's result.
void complete(Warp& w) {
  const Op op = w.op[0];
  uint64_t ballot = 0;
  for (unsigned l = 0; l < kLanes; ++l)
    if (w.value[l]) ballot |= uint64_t{1} << l;
  for (unsigned l = 0; l < kLanes; ++l) {
    switch (op) {
      case Op::kBallot:
        w.result[l] = ballot;
        break;
      case Op::kShfl:
        w.result[l] = w.value[w.arg[l] & 31];
        break;
      case Op::kShflUp:
        w.result[l] = l >= w.arg[l] ? w.value[l - w.arg[l]] : w.value[l];
        break;
      case Op::kShflXor:
        w.result[l] = w.value[(l ^ w.arg[l]) & 31];
        break;
      case Op::kSync:
        w.result[l] = 0;
        break;
    }
  }
}

std::string check_converged(const Warp& w) {
  unsigned done = 0;
  for (unsigned l = 0; l < kLanes; ++l) done += w.state[l] == LaneState::kDone;
  if (done == kLanes) return "";
  char msg[160];
  if (done) {
    unsigned waiting = 0;
    while (w.state[waiting] == LaneState::kDone) ++waiting;
    std::snprintf(msg, sizeof msg, "%u lanes exited while lane %u waits at a %s", done, waiting,
                  op_name(w.op[waiting]));
    return msg;
  }
  for (unsigned l = 1; l < kLanes; ++l) {
    // shfl_up with different deltas is legal in CUDA but never meant in our kernels: flag it too.
    if (w.op[l] != w.op[0] || (w.op[0] == Op::kShflUp && w.arg[l] != w.arg[0])) {
      std::snprintf(msg, sizeof msg, "divergent collectives: lane 0 at %s, lane %u at %s", op_name(w.op[0]),
                    l, op_name(w.op[l]));
      return msg;
    }
  }
  return "";
}

}  // namespace

unsigned lane_id() {
  return g_warp->current;
}

uint64_t collective(Op op, uint64_t value, unsigned arg) {
  Warp& w = *g_warp;
  const unsigned l = w.current;
  w.op[l] = op;
  w.value[l] = value;
  w.arg[l] = arg;
  w.state[l] = LaneState::kWaiting;
  yield_to_scheduler();
  return w.result[l];
}

std::string run_warp(const std::function<void()>& lane_fn, Order order) {
  if (g_warp) throw std::logic_error("run_warp: already inside an emulated warp");
  thread_local std::unique_ptr<Warp> warp_storage;  // stacks are reused across runs on this thread
  if (!warp_storage) warp_storage = std::make_unique<Warp>();
  Warp& w = *warp_storage;
  w.fn = &lane_fn;
#if GDFS_EMU_TSAN
  w.sched.tsan_fiber = __tsan_get_current_fiber();
#endif
  g_warp = &w;
  for (unsigned l = 0; l < kLanes; ++l) start_lane(w, l);
  std::string error;
  for (;;) {
    for (unsigned i = 0; i < kLanes; ++i) {
      const unsigned l = order == Order::kForward ? i : kLanes - 1 - i;
      if (w.state[l] != LaneState::kDone) resume(w, l);
    }
    bool all_done = true;
    for (unsigned l = 0; l < kLanes; ++l) all_done = all_done && w.state[l] == LaneState::kDone;
    if (all_done) break;
    error = check_converged(w);
    if (!error.empty()) break;
    complete(w);
  }
  g_warp = nullptr;
  return error;
}

}  // namespace gdfs::gpu::emu
