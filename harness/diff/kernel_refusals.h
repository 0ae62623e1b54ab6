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

// A refusal that depends on the code, not the program: a branch whose
// offset the encoding cannot hold. The kernel's JIT says so itself
// (check_imm: "imm=N(0x..) out of range"); this takes that refusal as the
// kernel's when N is out of a conditional branch's range (+-2^18 words),
// and leaves any other (a range check too strict) a finding.
std::optional<KernelRefusal> KernelBranchOutOfRange(std::string_view refusal_message);

}  // namespace bpfdiff
