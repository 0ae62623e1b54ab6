#include "harness/diff/run_cost.h"

namespace bpfdiff {

std::string_view PhaseName(RunPhase phase) {
  switch (phase) {
    case RunPhase::kDecode: return "decode and generate";
    case RunPhase::kLoad: return "load";
    case RunPhase::kInterpreter: return "interpreter";
    case RunPhase::kJitCompile: return "JIT compile";
    case RunPhase::kPackText: return "pack write and flush";
    case RunPhase::kEmulatorFirst: return "emulator, first run";
    case RunPhase::kEmulatorLater: return "emulator, later runs";
    case RunPhase::kCompare: return "compare";
    case RunPhase::kRelease: return "release";
    case RunPhase::kCount: break;
  }
  return "?";
}

uint64_t RunCost::TotalNanos() const {
  uint64_t total = 0;
  for (uint64_t ns : nanos) total += ns;
  return total;
}

uint64_t RunCost::EstimatedTranslationNanos() const {
  if (later_runs == 0 || first_runs == 0) return 0;
  const double later_mean = static_cast<double>(Nanos(RunPhase::kEmulatorLater)) / static_cast<double>(later_runs);
  const double execution = later_mean * static_cast<double>(first_runs);
  const double first = static_cast<double>(Nanos(RunPhase::kEmulatorFirst));
  return first > execution ? static_cast<uint64_t>(first - execution) : 0;
}

}  // namespace bpfdiff
