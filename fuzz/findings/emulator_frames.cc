#include "fuzz/findings/emulator_frames.h"

namespace bpfdiff::fuzz {
namespace {

[[gnu::noinline]] void EmulatorsDisagree(FindingEnd end) {
  NoteFindingFrame(__func__);
  end();
}

}  // namespace

void EndInEmulatorFrames(FindingEnd end) {
  StartFindingFrameTrail();
  NoteFindingFrame(__func__);
  EmulatorsDisagree(end);
}

}  // namespace bpfdiff::fuzz
