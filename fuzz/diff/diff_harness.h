// What the differential fuzz targets do with one input, outside libFuzzer's
// entry points so that the CLI (replay, minimize) runs exactly the same.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fuzz/generator/kernel_forms.h"
#include "fuzz/stats/fuzz_stats.h"
#include "harness/diff/differential.h"
#include "harness/diff/interp_engine.h"
#include "harness/diff/localize.h"
#include "harness/machine/sandbox.h"
#include "harness/planted/planted_bugs.h"

namespace bpfdiff::fuzz {

// The sandbox and the three engines (interpreter, JIT with LSE atomics, JIT
// with LL/SC atomics), created once per process. `unicorn_fault` makes a
// Unicorn call fail on purpose (BPFDIFF_UNICORN_FAULT, read by the mains);
// sandbox().UnicornFailure() tells when one failed.
class DiffHarness {
 public:
  // `engines`: "all" (the interpreter and bpfdiff's JIT in both lowerings)
  // or "kernel" (the interpreter and the kernel's JIT in both lowerings),
  // "kernel@<version>" (those of a tree linked beside the build's) or
  // "trees" (those of every tree linked: harness/diff/engines.h).
  // With the kernel's, inputs are first brought to the forms the kernel's
  // verifier accepts (ToKernelVerifierForms); one that cannot be is not
  // ours. `machine_factory`: the machines' executor (SandboxOptions;
  // nullptr: Unicorn).
  static Result<std::unique_ptr<DiffHarness>> Create(const PlantedBugs& bugs, UnicornFault unicorn_fault = {},
                                                     std::string_view engines = "all",
                                                     MachineFactory machine_factory = nullptr);

  // The input memories beyond an input's own that diff_fuzzer runs each
  // input's compiled code on (and so `bpfdiff emulators` and the bench).
  static constexpr size_t kInputVariants = 4;

  struct InputRun {
    std::optional<CaseSource> source;  // nullopt: not an input of ours
    CaseRun run;
  };
  // Decodes and runs one input (and `variants` more input memories for the
  // same compiled code, derived from the input).
  InputRun RunInput(std::span<const uint8_t> input, size_t variants = 0);
  // Brings a case to the forms this harness's engines run, as RunInput
  // does with a fuzz input (ToKernelVerifierForms, for the kernel's
  // engines); a case that cannot be is left as it is. For a case from a
  // file (an artifact to replay or minimize).
  void ToEngineForms(CaseSource& source) const {
    if (kernel_verifier_forms_) ToKernelVerifierForms(source);
  }
  // Runs a case directly.
  CaseRun RunCase(const CaseSource& source, size_t variants = 0);
  // The first instruction after which the engines of `run`'s first
  // divergence part (harness/diff/localize.h): steps the case again, so
  // only for divergent cases.
  Localization Localize(const CaseRun& run);

  const std::vector<std::vector<uint8_t>>& executed() const { return executed_; }
  DifferentialRunner& runner() { return *runner_; }
  Sandbox& sandbox() { return *sandbox_; }

 private:
  DiffHarness() = default;
  // The budgets and engines of a case, and `variants` more input memories.
  RunOptions OptionsFor(const CaseSource& source, size_t variants) const;
  std::unique_ptr<Sandbox> sandbox_;
  std::unique_ptr<DifferentialRunner> runner_;
  std::vector<std::vector<uint8_t>> executed_;
  bool kernel_verifier_forms_ = false;  // see ToKernelVerifierForms
  size_t kernel_trees_ = 0;  // the trees whose kernel engines run (one kernel-interp each)
};

// Whether any program of the case has an atomic instruction (only then do
// the two JIT lowerings differ).
bool HasAtomics(const CaseSource& source);

// Whether a kernel campaign runs the case on kernel-jit-cbpf too when it
// has no atomics: one case in four, chosen by a hash of its first program
// (the upper half of ProgramFingerprint, whose value modulo 12 chooses the
// loader, so that every loader is met). Its code differs from kernel-jit's only in the
// epilogue and the tail-call landing pad.
bool SampledForClassicLoader(const CaseSource& source);

// Whether a kernel campaign runs the case on kernel-jit-blind too (without
// atomics; with them every kernel engine runs): one case in two, by another
// bit of the same hash, and every case sampled for kernel-jit-cbpf, which
// comes after it in the order of the engines.
bool SampledForBlinding(const CaseSource& source);

// A human-readable account of a divergence: the programs, every engine's
// outcome, the first difference, the culprit when `localization` is given,
// and the case as a `.data` file.
std::string DescribeDivergence(const CaseSource& source, const CaseRun& run,
                               const Localization* localization = nullptr);

}  // namespace bpfdiff::fuzz
