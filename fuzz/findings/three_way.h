// The three-way reading of a divergence, where the kernel's interpreter
// (kernel-interp) ran beside bpfdiff's: which of the two interpreters each
// side agrees with, so that a report says whether a JIT is wrong or one of
// the interpreters is.
#pragma once

#include <optional>
#include <string>

#include "harness/diff/differential.h"

namespace bpfdiff::fuzz {

// One line on `diverged` (a run of `run`) against both interpreters, or
// nullopt when kernel-interp did not run beside it:
//  - kernel-interp itself diverged: the two interpreters disagree; which
//    JITs agree with bpfdiff's (matched it), and which end as the
//    kernel's does;
//  - a JIT diverged and kernel-interp matched bpfdiff's interpreter: the
//    JIT differs from both, a JIT finding;
//  - a JIT diverged and kernel-interp did not match either: whether the
//    JIT ends as the kernel's interpreter does.
// How a run ends (Outcome::Summary: the end, r0, the fault) is what is
// compared across the two: their frames lie apart, so their stacks are
// not comparable byte for byte.
std::optional<std::string> ThreeWayVerdict(const CaseRun& run, const EngineRun& diverged);

// One line on `diverged`, a kernel engine of one tree, against the same
// engine of every other tree that ran beside it (kernel-jit against
// kernel-jit@6.1.192: harness/diff/engines.h), or nullopt when none did:
// the trees whose engine agrees with the reference and those whose engine
// does not, and so which tree is wrong. Where exactly one of two trees is,
// the line says whether that is a regression (the newer tree wrong) or a
// fix the newer tree has (the older wrong).
std::optional<std::string> TreeVerdict(const CaseRun& run, const EngineRun& diverged);

}  // namespace bpfdiff::fuzz
