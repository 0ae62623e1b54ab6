// What broke in a jit_determinism_fuzzer finding, and the frames the target
// ends in for it (see finding_frames.h), innermost first:
//
//   <WhatBroke>               SecondCompileFails, CodeDiffersBetweenCompiles, ...
//   EndInDeterminismFrames
#pragma once

#include <cstdint>

#include "fuzz/findings/finding_frames.h"

namespace bpfdiff::fuzz {

enum class DeterminismBreak : uint8_t {
  kSecondCompileFails,         // the same program, compiled again, is refused
  kCompileAtOtherOffsetFails,  // ... compiled at another pack offset, is refused
  kCodeDiffers,                // the code differs beyond the address words
  kExtableDiffers,             // the exception table's targets differ
};

// Goes through the frames of `what` and calls `end` in the innermost.
void EndInDeterminismFrames(DeterminismBreak what, FindingEnd end);

}  // namespace bpfdiff::fuzz
