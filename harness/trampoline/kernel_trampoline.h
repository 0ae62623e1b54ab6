// BPF trampolines built by the kernel's own arch code (kernelsrc/:
// arch_prepare_bpf_trampoline, bpf_arch_text_poke), run against the oracle
// (oracle/trampoline.h).
//
// One case is a traced program and the fentry, fexit and fmod_ret programs
// attached to it, every one compiled by the kernel's JIT. Its run:
//   0. the traced program is called as it is, so that the CPU holds its
//      code (in Unicorn, its translation) when the entry is patched;
//   1. the trampoline is built into the pack (and, when asked, a first
//      one, attached, then replaced by it with one text poke and freed, as
//      bpf_trampoline_update() does when the links change);
//   2. it is attached at the traced program's entry (the fentry nop becomes
//      a bl), and the traced program is called: the outcome (r0, helper
//      trace, input memory, map values) and the stubs' log are compared
//      with the oracle's composition;
//   3. it is detached and freed (its slot invalidated), and the traced
//      program is called again: it must be itself, compared with the
//      interpreter's plain run.
// Each step's text writes go through the patcher, whose flushes drop the
// machines' translations: a poke that did not reach the CPU runs stale code.
//
// What a case's programs must not do, as the kernel's verifier forbids it
// (the generator's never do): read a stack byte they did not write (the
// trampoline's frame and the prologues of the programs before them lie
// there, which the interpreter does not hold), or write their context.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/diff/compare.h"
#include "harness/machine/sandbox.h"
#include "jit/jit.h"
#include "kernelsrc/kernel_jit.h"
#include "oracle/load.h"
#include "oracle/trampoline.h"
#include "support/result.h"

namespace bpfdiff::trampoline {

struct TrampolineVerdict {
  Verdict before;    // the traced program before anything is attached
  Verdict attached;  // the run through the trampoline
  Verdict detached;  // the traced program once the trampoline is gone
  // Where the trampoline was and what the kernel's code made of it, for
  // reports.
  uint64_t trampoline_entry = 0;
  uint32_t trampoline_words = 0;
  uint64_t trampoline_traced = 0;  // the traced program's entry
  // The kernel's refusal of the trampoline, as arm64's must refuse a
  // function of more than 8 argument registers (then nothing is attached
  // and `attached` and `detached` were not run); "" otherwise.
  std::string refused;
  // The kernel JIT's run through the trampoline, and its stubs' log.
  Outcome outcome;
  std::vector<uint64_t> log;
  bool match() const { return before.match() && attached.match() && detached.match(); }
  std::string Describe() const;
};

struct RunnerOptions {
  jit::AtomicLowering atomics = jit::AtomicLowering::kLse;
  MachineFactory machine_factory = nullptr;  // nullptr: Unicorn
  uint64_t budget = 100'000;  // guest instructions per call
  kernelsrc::ShimBugs shim_bugs;  // planted (harness/planted/), never set in normal use
  // Whose arch code builds the trampolines: one of
  // kernelsrc::LinkedKernelTrees(); nullptr, the build's own tree.
  const kernelsrc::KernelTree* tree = nullptr;
};

class KernelTrampolineRunner {
 public:
  // Fails when this build has no kernel JIT.
  static Result<std::unique_ptr<KernelTrampolineRunner>> Create(const RunnerOptions& options);
  ~KernelTrampolineRunner();

  // Runs one case. An error is a case the kernel would not load (the load
  // step or the kernel's JIT refused a program; the kernel refused the
  // trampoline or the poke, with its reason) or a machine that failed.
  Result<TrampolineVerdict> Run(const TrampolineCase& c);

  Sandbox& sandbox() { return *sandbox_; }

  struct State;

 private:
  KernelTrampolineRunner() = default;
  std::unique_ptr<Sandbox> sandbox_;
  std::unique_ptr<State> state_;
  RunnerOptions options_;
};

}  // namespace bpfdiff::trampoline
