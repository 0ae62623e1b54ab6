// The reference model of the trampoline's recursion check: what each policy
// does to the per-CPU state, step by step, independent of any emitted code.
//
// An invocation (one trampoline call of one attached program on one CPU)
// walks a fixed path of points, one per effect on memory or on its own
// registers:
//
//   enter   atomic:     start, entered (active += 1; decide new == 1)
//           percontext: start, active-loaded (r = active[rctx]),
//                       entered (active[rctx] = r + 1; decide r + 1 == 1)
//           landed:     start, preempt-disable-loaded, preempt-disabled,
//                       active-loaded, active-stored (active[rctx] = r + 1),
//                       checked (decide u32 == 1 << (rctx * 8)),
//                       preempt-enable-loaded, entered
//   run     in-program, program-returned        (decision run)
//   miss    miss-counted (misses += 1)          (decision miss)
//   exit    atomic:     exit-begin, exited (active -= 1)
//           percontext: exit-begin, exit-loaded, exited (active[rctx] = r - 1)
//           landed:     exit-begin, preempt_disable (2), exit-loaded,
//                       exit-stored, preempt_enable (2) = exited
//   done
//
// A load and its store are separate points, so whatever runs between them on
// the same CPU (an interrupt, another task) is seen exactly as the code sees
// it: the store writes the value loaded before, plus or minus one. The
// driver (the harness) says where each invocation is; the model applies every
// step up to there in order, and reports an invocation asked to go where its
// path does not lead (the code ran a program the model says misses, ...).
//
// interrupt_context_level() and the preempt_count layout are those of
// include/linux/preempt.h.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernel/recursion.h"
#include "support/result.h"

namespace bpfdiff::recursion {

enum class Decision : uint8_t { kUndecided, kRun, kMiss };
std::string_view DecisionName(Decision decision);

// The parts of an invocation's path under `policy`.
std::span<const Point> EnterPath(Policy policy);
std::span<const Point> ExitPath(Policy policy);  // ends with kExited

// One CPU's modelled per-CPU memory.
struct CpuState {
  uint32_t preempt_count = 0;
  std::vector<uint32_t> active;  // per program: the int, or u8 active[4] read as a little-endian u32
  std::vector<uint64_t> misses;  // per program
};

inline constexpr uint64_t kNever = ~uint64_t{0};

struct Invocation {
  int cpu = 0;
  int program = 0;
  int level = 0;  // interrupt_context_level() when it began
  Point point = Point::kStart;
  Decision decision = Decision::kUndecided;
  uint32_t loaded = 0;          // the counter byte between its load and its store
  uint32_t loaded_preempt = 0;  // preempt_count between its load and its store
  // Times on the model's step clock (kNever: not yet). `active` is the time
  // the enter update was stored until the exit update was stored: the
  // interval in which this invocation holds the state.
  uint64_t began = kNever;
  uint64_t active_from = kNever;
  uint64_t active_to = kNever;
  uint64_t decided = kNever;
  uint64_t program_from = kNever;
  uint64_t program_to = kNever;
  uint64_t done = kNever;
  // This program's active word and the CPU's preempt_count right after the
  // decision, for timelines.
  uint32_t active_at_decision = 0;
  uint32_t preempt_at_decision = 0;
  uint64_t misses_at_decision = 0;
};

// Whether two invocations ran their programs at overlapping times (neither
// unstarted), whatever CPU or program they belong to.
inline bool ProgramsOverlap(const Invocation& a, const Invocation& b) {
  return a.program_from != kNever && b.program_from != kNever && a.program_from < b.program_to &&
         b.program_from < a.program_to;
}

class Model {
 public:
  Model(Policy policy, int cpus, int programs);

  Policy policy() const { return policy_; }
  int cpus() const { return static_cast<int>(cpus_.size()); }
  int programs() const { return programs_; }
  const CpuState& cpu(int index) const { return cpus_[static_cast<size_t>(index)]; }

  // preempt_count changes made outside any trampoline: irq_enter/irq_exit,
  // nmi_enter/nmi_exit, softirq entry/exit, local_bh_disable/enable.
  void AddPreemptCount(int cpu, int64_t delta);

  // A trampoline call of `program` starts on `cpu`, at the context level
  // preempt_count gives now. Returns its id.
  int Begin(int cpu, int program);

  // Applies every step of invocation `id` up to and including `point`. An
  // error (naming both places) when `point` is not ahead on its path.
  Status Advance(int id, Point point);

  const Invocation& invocation(int id) const { return invocations_[static_cast<size_t>(id)]; }
  const std::vector<Invocation>& invocations() const { return invocations_; }
  uint64_t clock() const { return clock_; }

  // The byte of context `level` in an active word (percontext, landed).
  static uint32_t ActiveByte(uint32_t active, int level) { return (active >> (8 * level)) & 0xff; }

 private:
  void Arrive(Invocation& inv, Point point);
  // The point after inv.point on its path; nullopt at kDone.
  std::optional<Point> Next(const Invocation& inv) const;

  Policy policy_;
  int programs_;
  std::vector<CpuState> cpus_;
  std::vector<Invocation> invocations_;
  uint64_t clock_ = 0;
};

}  // namespace bpfdiff::recursion
