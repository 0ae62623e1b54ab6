#include "fuzz/findings/pack_frames.h"

namespace bpfdiff::fuzz {
namespace {

using InvariantFrame = void (*)(FindingEnd end);

[[gnu::noinline]] void PackInvariantFreedSlotInvalid(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void PackInvariantOwnership(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void PackInvariantNoOverwriteInUse(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void PackInvariantIcacheDiscipline(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void PackInvariantOneCacheOpPerRange(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void PackInvariantExtableStructure(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void PackInvariantAccounting(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void PackInvariantStaleEntryTraps(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void PackInvariantOutcome(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void PackInvariantPackHolesInvalid(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void PackInvariantSlotAsWritten(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void PackInvariantJitErrorPath(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void PackInvariantArchitectureRules(FindingEnd end) { NoteFindingFrame(__func__); end(); }
// For an invariant this file does not know (the switch below makes that a
// compile error with -Wswitch; this is for a value out of range).
[[gnu::noinline]] void PackInvariantOther(FindingEnd end) { NoteFindingFrame(__func__); end(); }

InvariantFrame FrameOf(lifecycle::Invariant invariant) {
  using lifecycle::Invariant;
  switch (invariant) {
    case Invariant::kFreedSlotInvalid: return PackInvariantFreedSlotInvalid;
    case Invariant::kOwnership: return PackInvariantOwnership;
    case Invariant::kNoOverwriteInUse: return PackInvariantNoOverwriteInUse;
    case Invariant::kIcacheDiscipline: return PackInvariantIcacheDiscipline;
    case Invariant::kOneCacheOpPerRange: return PackInvariantOneCacheOpPerRange;
    case Invariant::kExtableStructure: return PackInvariantExtableStructure;
    case Invariant::kAccounting: return PackInvariantAccounting;
    case Invariant::kStaleEntryTraps: return PackInvariantStaleEntryTraps;
    case Invariant::kOutcome: return PackInvariantOutcome;
    case Invariant::kPackHolesInvalid: return PackInvariantPackHolesInvalid;
    case Invariant::kSlotAsWritten: return PackInvariantSlotAsWritten;
    case Invariant::kJitErrorPath: return PackInvariantJitErrorPath;
    case Invariant::kArchitectureRules: return PackInvariantArchitectureRules;
  }
  return PackInvariantOther;
}

}  // namespace

void EndInPackInvariantFrames(lifecycle::Invariant invariant, FindingEnd end) {
  StartFindingFrameTrail();
  NoteFindingFrame(__func__);
  FrameOf(invariant)(end);
}

}  // namespace bpfdiff::fuzz
