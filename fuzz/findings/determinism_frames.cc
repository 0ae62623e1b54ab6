#include "fuzz/findings/determinism_frames.h"

namespace bpfdiff::fuzz {
namespace {

using BreakFrame = void (*)(FindingEnd end);

[[gnu::noinline]] void SecondCompileFails(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CompileAtOtherOffsetFails(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CodeDiffersBetweenCompiles(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void ExtableDiffersBetweenCompiles(FindingEnd end) { NoteFindingFrame(__func__); end(); }

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

void EndInDeterminismFrames(DeterminismBreak what, FindingEnd end) {
  StartFindingFrameTrail();
  NoteFindingFrame(__func__);
  FrameOf(what)(end);
}

}  // namespace bpfdiff::fuzz
