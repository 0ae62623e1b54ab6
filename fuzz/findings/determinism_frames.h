// What broke in a jit_determinism_fuzzer finding, and the frames the target
// ends in for it (see finding_frames.h), innermost first:
//
//   CulpritIs<Form>           for code or exception tables that differ: the
//                             form of the BPF instruction whose code (or
//                             whose entry) differs first (culprit_frames.h)
//   <WhatBroke>               SecondCompileFails, CodeDiffersBetweenCompiles, ...
//   EndInDeterminismFrames
#pragma once

#include <cstdint>
#include <string_view>

#include "fuzz/findings/finding_frames.h"

namespace bpfdiff::fuzz {

enum class DeterminismBreak : uint8_t {
  kSecondCompileFails,         // the same program, compiled again, is refused
  kCompileAtOtherOffsetFails,  // ... compiled at another pack offset, is refused
  kCodeDiffers,                // the code differs beyond the address words
  kExtableDiffers,             // the exception table's targets differ
};

// Goes through the frames of `what` (and of culprit form `culprit`, when
// not empty) and calls `end` in the innermost.
void EndInDeterminismFrames(DeterminismBreak what, FindingEnd end, std::string_view culprit = {});

}  // namespace bpfdiff::fuzz
