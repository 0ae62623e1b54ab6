// The frames diff_fuzzer ends in when its two arm64 emulators disagree (see
// finding_frames.h), innermost first:
//
//   EmulatorsDisagree
//   EndInEmulatorFrames
//
// One crash state for every such finding: it is about the emulators (VIXL
// or Unicorn), never about a JIT, and ClusterFuzz must not file it with
// the JITs' divergences.
#pragma once

#include "fuzz/findings/finding_frames.h"

namespace bpfdiff::fuzz {

void EndInEmulatorFrames(FindingEnd end);

}  // namespace bpfdiff::fuzz
