// Lockstep localization: the first BPF instruction after which a JIT and
// the interpreter part.
//
// A divergent case is run again on the interpreter and on the JIT that
// diverged, each recording its BPF-visible state at every instruction
// boundary (oracle/boundary_trace.h): the interpreter before each
// instruction, the JIT where its offset table says an instruction's code
// starts (the kernel's ctx->offset), on the precise machine. The two
// traces are walked together; the first boundary at which they differ (in
// where they are, in a register that holds a defined value, in the helper
// calls made, or in the bytes of the stack frames, input memory or map
// values) follows the culprit: the instruction run between it and the
// boundary before. When the traces agree to where one run ends, the
// culprit is the last instruction both ran.
//
// Both engines run the case as the JITs run it (with the JIT-only
// rewrites, such as the inlined kptr_xchg), so that their slots line up;
// the culprit also names its slot in the case as written.
//
// Only for divergent cases: the JIT side stops at every boundary.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/diff/differential.h"
#include "oracle/boundary_trace.h"
#include "support/result.h"

namespace bpfdiff {

struct Culprit {
  // The runs part before the first instruction: in the entry code the JIT
  // runs before it (the prologue). `program` is the program entered.
  bool prologue = false;
  uint32_t program = 0;      // 0 = main, k = tail-call target k
  uint32_t slot = 0;         // as the JITs ran the case (CaseRun::loaded)
  uint32_t source_slot = 0;  // the same instruction in the case as written
  // The arm64 code the JIT emitted for it (the prologue's for a prologue).
  uint64_t code_address = 0;
  std::vector<uint32_t> code_words;
};

struct Localization {
  std::string engine;              // the JIT localized against the interpreter
  std::optional<Culprit> culprit;  // nullopt: `why_not` says why none could be named
  std::string why_not;
  size_t agreeing_boundaries = 0;  // boundaries alike before the runs part
  // The state both runs had before the culprit ran (nullopt for a prologue).
  std::optional<BoundaryState> before;
  // Each run's next state after it; nullopt where that run ended instead
  // (its outcome's summary is in interp_end / jit_end).
  std::optional<BoundaryState> interp_after, jit_after;
  std::string interp_end, jit_end;
  // What differs, one item each: "r3: interp 0x1, jit 0x2", "stack frame 0
  // at r10-512..r10", "interp goes on at slot 5, jit at slot 7", ...
  std::vector<std::string> differences;
};

// A case prepared again as a run prepared it: the pack in the state the run
// started from, the case installed (on the input memory of the run that
// diverged), and every engine up to the one that diverged prepared in the
// run's order, so that the JIT's code lands where it did (the code depends
// on its addresses). Releases what it prepared when it goes.
class PreparedAgain {
 public:
  // Error when `diverged` is not a JIT compared with the interpreter, or an
  // engine that must be prepared no longer prepares.
  static Result<std::unique_ptr<PreparedAgain>> For(DifferentialRunner& runner, const CaseRun& run,
                                                    const EngineRun& diverged);
  ~PreparedAgain();
  PreparedAgain(const PreparedAgain&) = delete;
  PreparedAgain& operator=(const PreparedAgain&) = delete;

  Engine& interp() { return *engines_[0]; }
  Engine& jit() { return *engines_[index_]; }

 private:
  PreparedAgain(std::vector<std::unique_ptr<Engine>>& engines, size_t index) : engines_(engines), index_(index) {}
  std::vector<std::unique_ptr<Engine>>& engines_;
  size_t index_;
  std::vector<size_t> prepared_;
};

// The first divergence of `run` (CaseRun::FirstDivergence), localized by
// running the case again on `runner`'s interpreter (its first engine) and
// the JIT that diverged, from the state the case ran from. `limit` bounds
// the boundaries recorded per run.
Localization LocalizeFirstDivergence(DifferentialRunner& runner, const CaseRun& run,
                                     const RunOptions& options, size_t limit = 200'000);

// Compares two traces of one case (the interpreter's and a JIT's, the
// latter's boundaries only where HasBoundary holds): the work of
// LocalizeFirstDivergence once both ran. Exposed for tests.
// `tail_call_restores_registers`: the JIT's tail call restores the caller's
// r6..r9 (the kernel's, CodeConventions), which are then no difference
// until the target writes them (a target that reads them first is not
// comparable, and never localized).
Localization CompareTraces(const LoadedCase& loaded, const std::vector<jit::CompiledProgram>& compiled,
                           const BoundaryTrace& interp, const Outcome& interp_outcome, const BoundaryTrace& jit,
                           const Outcome& jit_outcome, bool tail_call_restores_registers = false);

// Several lines: the culprit (its instruction, both slots), the state
// before, what differs after, the arm64 words in hex (cli/ disassembles
// them), or why no culprit could be named.
std::string DescribeLocalization(const Localization& localization, const LoadedCase& loaded);

}  // namespace bpfdiff
