// Programs our JIT refuses for the same reason the kernel's arm64 JIT
// would, so that a refusal of them is not a finding.
//
// Any other refusal of a program the load step accepted is a divergence
// ("jit refused: <reason>"): the kernel's JIT compiles every program its
// verifier accepts, and a JIT that gives up on one has a bug (or bpfdiff's
// load step accepts something the verifier would not, which is also worth
// knowing).
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "oracle/load.h"

namespace bpfdiff {

struct KernelRefusal {
  std::string_view name;
  std::string_view why;  // why the kernel does not JIT such a program either
};

// Every documented refusal (a test checks that each says why).
std::span<const KernelRefusal> KernelRefusals();

// The documented refusal that covers `loaded`, if any.
std::optional<KernelRefusal> KernelAlsoRefuses(const LoadedCase& loaded);

}  // namespace bpfdiff
