// The kernel's facts about recursion detection, shared by the model that
// checks them (oracle/recursion_model.h) and the trampoline that implements
// them (jit/trampoline.h): the three policies, the points an invocation
// passes, and interrupt_context_level() over preempt_count.
//
// One type each, so that the emitted code's boundary labels and the
// model's path are the same values, not two enums kept in step by hand.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace bpfdiff::recursion {

// kernel/bpf/trampoline.c and the arm64 series "bpf: Use per-context
// recursion counters" (see jit/trampoline.h for what each does).
enum class Policy : uint8_t { kAtomic, kPerContext, kLanded };
inline constexpr Policy kPolicies[] = {Policy::kAtomic, Policy::kPerContext, Policy::kLanded};
std::string_view PolicyName(Policy policy);  // "atomic", "percontext", "landed"
std::optional<Policy> ParsePolicy(std::string_view name);

// preempt_count bits (include/linux/preempt.h).
inline constexpr uint32_t kPreemptOffset = 0x1;
inline constexpr uint32_t kPreemptMask = 0xff;
inline constexpr uint32_t kSoftirqOffset = 0x100;          // serving a softirq
inline constexpr uint32_t kSoftirqDisableOffset = 0x200;   // local_bh_disable()
inline constexpr uint32_t kSoftirqMask = 0xff00;
inline constexpr uint32_t kHardirqOffset = 0x10000;
inline constexpr uint32_t kHardirqMask = 0xf0000;
inline constexpr uint32_t kNmiOffset = 0x100000;
inline constexpr uint32_t kNmiMask = 0xf00000;

// interrupt_context_level(): 0 normal (task), 1 serving softirq, 2
// hardirq, 3 NMI.
int InterruptContextLevel(uint32_t preempt_count);
std::string_view LevelName(int level);  // "task", "softirq", "hardirq", "nmi"

// How far one invocation (one trampoline call of one attached program) has
// got: each point names the last effect that has completed. The trampoline
// labels every instruction boundary with one of them; kInProgram and kDone
// are the model's own (inside the program, and after the return).
enum class Point : uint8_t {
  kStart,                     // nothing yet (also: an LL/SC loop not yet committed)
  kPreemptDisableLoaded,      // landed enter: preempt_count loaded, not stored
  kPreemptDisabled,           //   preempt_count + 1 stored
  kActiveLoaded,              // non-atomic enter: the counter byte loaded, not stored
  kActiveStored,              // landed: the byte stored, the u32 not yet read
  kChecked,                   // landed: the u32 read; the decision is made
  kPreemptEnableLoaded,       // landed enter: preempt_count loaded for preempt_enable()
  kEntered,                   // the enter path is complete; the decision is made
  kInProgram,                 // run path: the program runs
  kProgramReturned,           // run path: the program has returned
  kMissCounted,               // miss path: misses + 1 committed
  kExitBegin,                 // the exit path starts (run and miss paths join)
  kExitPreemptDisableLoaded,  // landed exit: as on the enter side
  kExitPreemptDisabled,
  kExitLoaded,                // non-atomic exit: the byte loaded, not stored
  kExitStored,                // landed: the byte stored, preempt_enable() to come
  kExitPreemptEnableLoaded,
  kExited,                    // the exit update is complete; the rest returns
  kDone,                      // returned to the caller
};
std::string_view PointName(Point point);  // "start", "preempt-disable-loaded", ...

}  // namespace bpfdiff::recursion
