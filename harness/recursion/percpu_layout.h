// Where the recursion state lives in guest memory.
//
// Per-CPU page (guest::PerCpuArea(cpu), 4 KiB, TPIDR_EL1 points at it):
//
//   0x000  u32 preempt_count          (guest::kPreemptCountOffset)
//   0x004  reserved up to 0x040
//   0x040  attached program 0:  u32 active   the int counter (atomic), or
//                                            u8 active[4], byte i = context
//                                            level i (percontext, landed)
//          +0x04 u32 (pad)
//          +0x08 u64 misses
//   0x050  attached program 1, ... every 16 bytes, kMaxPrograms of them
//
// The kernel keeps prog->active and prog->stats->misses in two per-CPU
// allocations; one 16-byte slot per program keeps both at fixed offsets from
// one base register.
//
// Stacks: each CPU's 64 KiB stack region (guest::StackTop(cpu) down) is cut
// into eight 8 KiB stacks: five task stacks (one per task a schedule starts
// on the CPU), then one per interrupt level (softirq, hardirq, NMI; the
// kernel runs interrupts on per-CPU IRQ stacks, and each level is entered at
// most once at a time). A same-context trigger runs on the stack of the
// program that called it, below its frame.
#pragma once

#include <cstdint>

#include "oracle/guest_layout.h"

namespace bpfdiff::recursion {

inline constexpr int kMaxPrograms = 8;
inline constexpr uint64_t kStateBase = 0x40;
inline constexpr uint64_t kStateStride = 16;
inline constexpr uint64_t kActiveOffset = 0;
inline constexpr uint64_t kMissesOffset = 8;

inline constexpr uint64_t StateOffset(int program) {
  return kStateBase + kStateStride * static_cast<uint64_t>(program);
}
inline constexpr uint64_t ActiveAddress(int cpu, int program) {
  return guest::PerCpuArea(cpu) + StateOffset(program) + kActiveOffset;
}
inline constexpr uint64_t MissesAddress(int cpu, int program) {
  return guest::PerCpuArea(cpu) + StateOffset(program) + kMissesOffset;
}
inline constexpr uint64_t PreemptCountAddress(int cpu) {
  return guest::PerCpuArea(cpu) + guest::kPreemptCountOffset;
}

inline constexpr int kMaxTasksPerCpu = 5;
inline constexpr uint64_t kStackSlotBytes = 8 * 1024;
static_assert(kStackSlotBytes * (kMaxTasksPerCpu + 3) <= guest::kStackStride);

inline constexpr uint64_t TaskStackTop(int cpu, int slot) {
  return guest::StackTop(cpu) - kStackSlotBytes * static_cast<uint64_t>(slot);
}
// level 1 softirq, 2 hardirq, 3 NMI.
inline constexpr uint64_t InterruptStackTop(int cpu, int level) {
  return guest::StackTop(cpu) - kStackSlotBytes * static_cast<uint64_t>(kMaxTasksPerCpu + level - 1);
}

}  // namespace bpfdiff::recursion
