// The BPF trampoline's enter / run / exit path for one attached program, with
// the recursion check in one of three policies (kernel/bpf/trampoline.c,
// __bpf_prog_enter_recur / __bpf_prog_exit_recur, and the arm64 series
// "bpf: Use per-context recursion counters"):
//
//   atomic      int active; this_cpu_inc_return(active) != 1 is a miss;
//               exit: this_cpu_dec(active). One atomic RMW each way, in the
//               LSE or the LL/SC lowering.
//   percontext  u8 active[4]; rctx = interrupt_context_level();
//               ++active[rctx] != 1 is a miss (plain load, add, store);
//               exit: --active[rctx].
//   landed      preempt_disable(); ++active[rctx]; v = the four bytes as one
//               u32; preempt_enable(); a miss unless v == 1 << (rctx * 8);
//               exit: preempt_disable(); --active[rctx]; preempt_enable().
//
// On a miss the program's misses counter is incremented (an atomic add, as
// local64_inc is on arm64, in every policy) and the program is skipped; the
// exit update always runs, on the run and the miss path alike.
//
// The code is real arm64, executed by the harness instruction by instruction,
// so an interrupt or a task switch can land between any two instructions:
// between the load and the store of a non-atomic increment, inside an LL/SC
// loop, inside the program. To let a model follow it, every instruction
// boundary carries a label naming how far the invocation has got (the
// recursion::Point after the last instruction with an effect).
//
// Calling convention (a plain function): x0 = the program's context
// argument; returns x0 = the program's r0 (0 on a miss) and x1 = 1 if the
// program ran, 0 if the invocation missed. The per-CPU base is TPIDR_EL1,
// as in the kernel's this_cpu addressing.
//
// Frame (64 bytes, 16-byte aligned):
//
//   entry SP => +---------+
//               | x23 x24 |  sp + 48
//               | x21 x22 |  sp + 32
//               | x19 x20 |  sp + 16
//   x29, SP  => | x29 x30 |  sp + 0    the program is entered with this SP
//
//   x19 context argument, then the return value     x22 &state (active at +0,
//   x20 per-CPU base (mrs tpidr_el1)                     misses at +8)
//   x21 rctx                                        x23 1 if the program ran
//   x24 (planted bugs only: an early decision, or the wrong exit byte)
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "jit/jit.h"
#include "jit/prog_pack.h"
#include "kernel/recursion.h"
#include "support/result.h"

namespace bpfdiff::jit {

// Bugs the emitter can be told to have, for negative controls (the registry
// in harness/planted/ is the only way to switch one on outside tests).
// Never set in normal use.
struct TrampolineBugs {
  // Exit updates active[rctx ^ 1] instead of active[rctx] (percontext, landed).
  bool exit_wrong_context = false;
  // The rawtp-style ordering: read the state and decide first, increment
  // afterwards, with the check outside any preempt-disabled section; a task
  // switch between the check and the increment lets two tasks pass.
  bool check_then_increment = false;
  // rctx tests SOFTIRQ_MASK (0xff00) where interrupt_context_level() tests
  // SOFTIRQ_OFFSET (0x100): a bh-disabled task counts as softirq.
  bool rctx_wrong_bits = false;
  // rctx leaves HARDIRQ_MASK out of its tests: a hardirq is counted as the
  // context it interrupted (task or softirq), and its exit decrements the
  // same wrong byte, so the bytes are right again once it returns.
  bool hardirq_as_interrupted = false;
  // No recursion check at all: the program always runs (what every
  // trampoline did before per-program recursion prevention).
  bool no_recursion_check = false;
};

struct TrampolineSpec {
  recursion::Policy policy = recursion::Policy::kAtomic;
  AtomicLowering atomics = AtomicLowering::kLse;  // the atomic counter, the misses counter
  uint64_t program_entry = 0;        // RX address of the attached program's image
  uint32_t preempt_count_offset = 0; // from the per-CPU base: u32 preempt_count
  uint32_t state_offset = 0;         // from the per-CPU base: u32 active; u32 pad; u64 misses
  TrampolineBugs bugs;
};

// Every instruction boundary is labelled with the recursion::Point
// (kernel/recursion.h) after the last instruction with an effect: the same
// values the model's path is made of.

// Positions a schedule can name without counting instructions: where an
// interrupt or a task switch hits the window of an update.
enum class TrampolineAnchor : uint8_t {
  kNone,
  kEnterWindow,  // inside the enter update: after the load of a non-atomic
                 // increment; before the LSE atomic; after the LL/SC load
  kExitWindow,   // the same for the exit update
  kExitStart,    // the first boundary of the exit path (where run and miss paths join)
};

// The label of the boundary before one instruction word.
struct BoundaryLabel {
  recursion::Point mark = recursion::Point::kStart;
  // A store-exclusive just before this boundary: `mark` holds if the W
  // register `status_reg` is 0 (the store committed), else `mark_if_failed`
  // (the loop will retry). -1: no condition.
  int8_t status_reg = -1;
  recursion::Point mark_if_failed = recursion::Point::kStart;
  TrampolineAnchor anchor = TrampolineAnchor::kNone;
};

struct TrampolineCode {
  std::vector<uint32_t> words;
  std::vector<BoundaryLabel> labels;  // labels[i]: the boundary before words[i]
  uint32_t call_word = 0;             // the blr to the program
};

inline constexpr uint32_t kTrampolineFrameBytes = 64;  // the program's entry SP = entry SP - 64

// Emits the trampoline. Fails on an operand that cannot be encoded (a
// kBreakFault word left in the code), never asserts.
Result<TrampolineCode> EmitTrampoline(const TrampolineSpec& spec);

// A trampoline installed in the prog pack (as arm64 places trampolines in
// bpf_prog_pack memory): RW buffer, copy to RX, cache flush.
class InstalledTrampoline {
 public:
  uint64_t entry() const { return allocation_->rx_image(); }
  const TrampolineCode& code() const { return code_; }
  // The label of the boundary at `pc`, nullptr when pc is not in this code.
  const BoundaryLabel* LabelAt(uint64_t pc) const;
  bool Contains(uint64_t pc) const { return pc >= entry() && pc < entry() + 4 * code_.words.size(); }

 private:
  friend Result<std::unique_ptr<InstalledTrampoline>> InstallTrampoline(ProgPack&, TrampolineCode);
  friend void ReleaseTrampoline(ProgPack&, std::unique_ptr<InstalledTrampoline>);
  std::unique_ptr<PackAllocation> allocation_;
  TrampolineCode code_;
};

Result<std::unique_ptr<InstalledTrampoline>> InstallTrampoline(ProgPack& pack, TrampolineCode code);
void ReleaseTrampoline(ProgPack& pack, std::unique_ptr<InstalledTrampoline> trampoline);

}  // namespace bpfdiff::jit
