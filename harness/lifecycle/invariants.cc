#include "harness/lifecycle/invariants.h"

#include <fmt/format.h>

namespace bpfdiff::lifecycle {

std::string_view InvariantName(Invariant invariant) {
  switch (invariant) {
    case Invariant::kFreedSlotInvalid: return "freed-slot-invalid";
    case Invariant::kOwnership: return "ownership";
    case Invariant::kNoOverwriteInUse: return "no-overwrite-in-use";
    case Invariant::kIcacheDiscipline: return "icache-discipline";
    case Invariant::kOneCacheOpPerRange: return "one-cache-op-per-range";
    case Invariant::kExtableStructure: return "extable-structure";
    case Invariant::kAccounting: return "accounting";
    case Invariant::kStaleEntryTraps: return "stale-entry-traps";
    case Invariant::kOutcome: return "outcome";
    case Invariant::kPackHolesInvalid: return "pack-holes-invalid";
    case Invariant::kSlotAsWritten: return "slot-as-written";
    case Invariant::kJitErrorPath: return "jit-error-path";
    case Invariant::kArchitectureRules: return "architecture-rules";
  }
  return "?";
}

std::string Violation::Describe() const {
  std::string where;
  if (cpu >= 0) where += fmt::format(" cpu {}", cpu);
  if (pc != 0) where += fmt::format(" pc 0x{:x}", pc);
  if (!slot.empty()) where += fmt::format(" slot {}", slot);
  return fmt::format("invariant {} broken:{} during {}: {}", InvariantName(invariant), where, operation, detail);
}

}  // namespace bpfdiff::lifecycle
