#include "fuzz/findings/determinism_frames.h"

#include "fuzz/findings/culprit_frames.h"

namespace bpfdiff::fuzz {
namespace {

using BreakFrame = void (*)(CulpritFrame culprit, FindingEnd end);

// The culprit's frame when there is one, else the end.
[[gnu::always_inline]] inline void Inner(CulpritFrame culprit, FindingEnd end) {
  if (culprit != nullptr) return culprit(end);
  end();
}

[[gnu::noinline]] void SecondCompileFails(CulpritFrame culprit, FindingEnd end) {
  NoteFindingFrame(__func__);
  Inner(culprit, end);
}
[[gnu::noinline]] void CompileAtOtherOffsetFails(CulpritFrame culprit, FindingEnd end) {
  NoteFindingFrame(__func__);
  Inner(culprit, end);
}
[[gnu::noinline]] void CodeDiffersBetweenCompiles(CulpritFrame culprit, FindingEnd end) {
  NoteFindingFrame(__func__);
  Inner(culprit, end);
}
[[gnu::noinline]] void ExtableDiffersBetweenCompiles(CulpritFrame culprit, FindingEnd end) {
  NoteFindingFrame(__func__);
  Inner(culprit, end);
}

BreakFrame FrameOf(DeterminismBreak what) {
  switch (what) {
    case DeterminismBreak::kSecondCompileFails: return SecondCompileFails;
    case DeterminismBreak::kCompileAtOtherOffsetFails: return CompileAtOtherOffsetFails;
    case DeterminismBreak::kCodeDiffers: return CodeDiffersBetweenCompiles;
    case DeterminismBreak::kExtableDiffers: return ExtableDiffersBetweenCompiles;
  }
  return CodeDiffersBetweenCompiles;
}

}  // namespace

void EndInDeterminismFrames(DeterminismBreak what, FindingEnd end, std::string_view culprit) {
  StartFindingFrameTrail();
  NoteFindingFrame(__func__);
  FrameOf(what)(culprit.empty() ? nullptr : CulpritFrameOf(culprit), end);
}

}  // namespace bpfdiff::fuzz
