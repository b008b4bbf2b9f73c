// A warp emulator for running kernel code on the CPU (tests, fuzzing, machines without a GPU).
//
// run_warp() runs one function as 32 lanes, each on its own fiber. A lane runs until it reaches a warp
// collective (ballot, shuffle, syncwarp); when all 32 have reached one, the emulator computes every
// lane's result and resumes them. So the code behaves as a converged warp whose lanes interleave only
// at collectives, which is all the kernels may rely on.
//
// The emulator also checks what a GPU would silently get wrong: all lanes must reach the same kind of
// collective, and no lane may exit while others wait at one. Running the lanes between collectives in
// reverse order (Order::kReverse) exposes lanes that read another lane's shared or global writes
// without a syncwarp in between: the results then differ between the two orders. That check has a
// limit: here every collective completes all earlier writes, while on a GPU only syncwarp orders memory
// between lanes, so a syncwarp missing where some other collective sits between the write and the read
// goes unnoticed. The kernels therefore keep an explicit syncwarp at every such hand-over.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

namespace gdfs::gpu::emu {

enum class Op : uint8_t { kBallot, kShfl, kShflUp, kShflXor, kSync };
enum class Order : uint8_t { kForward, kReverse };

// The lane running now (0..31); only inside run_warp().
unsigned lane_id();
// Blocks the calling lane until all 32 reach a collective; returns this lane's result.
uint64_t collective(Op op, uint64_t value, unsigned arg);

// Runs `lane_fn` on 32 lanes to completion. Returns "" or a description of a divergence error (then
// the lanes are abandoned where they stood).
std::string run_warp(const std::function<void()>& lane_fn, Order order = Order::kForward);

}  // namespace gdfs::gpu::emu
