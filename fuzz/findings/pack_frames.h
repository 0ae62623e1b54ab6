// The frames pack_fuzzer ends in when a pack lifecycle invariant breaks
// (see finding_frames.h), innermost first:
//
//   PackInvariant<Name>       the invariant (harness/lifecycle/invariants.h)
//   EndInPackInvariantFrames
//
// e.g. bpfdiff::fuzz::PackInvariantIcacheDiscipline. Where in the pack it
// broke (CPU, pc, slot) is the input's, so it is no part of the state.
#pragma once

#include "fuzz/findings/finding_frames.h"
#include "harness/lifecycle/invariants.h"

namespace bpfdiff::fuzz {

// Goes through the frames of `invariant` and calls `end` in the innermost.
void EndInPackInvariantFrames(lifecycle::Invariant invariant, FindingEnd end);

}  // namespace bpfdiff::fuzz
