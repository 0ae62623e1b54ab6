// Branch target identification (FEAT_BTI, Arm ARM D8.4 "Branch Target
// Identification"): on a guarded page, an indirect branch must land on an
// instruction that accepts the kind of branch it was, or the CPU takes a
// Branch Target exception. The kernel is built with BTI
// (CONFIG_ARM64_BTI_KERNEL, Debian's arm64 configuration) and maps BPF
// code on guarded pages, which is why its JIT emits landing pads: `bti jc`
// at every function's entry, `bti j` where a tail call lands, `bti jc` at a
// trampoline's.
//
// The kinds (PSTATE.BTYPE after the branch, on a guarded page):
//   BR X16 or X17 -> 01; any other BR -> 11; BLR -> 10; B, BL, RET -> 00
//   (no check). The authenticated forms (BRAA, BLRAA, ...) set the same.
// What accepts them:
//   BTI c: 01, 10;  BTI j: 01, 11;  BTI jc: all;  BTI (no target): none;
//   PACIASP, PACIBSP: 01, 10 (SCTLR_EL1.BT1 is set by the kernel, so they
//   do not accept 11); BRK and HLT take their own exception first.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace bpfdiff::a64 {

enum class BranchType : uint8_t {
  kNone = 0,         // not an indirect branch: nothing to check
  kJumpIp = 1,       // BR X16/X17
  kCall = 2,         // BLR
  kJump = 3,         // BR, any other register
};

// The BTYPE the branch `word` sets.
BranchType BranchTypeOf(uint32_t word);

// Whether `target_word` may be the first instruction run after an
// indirect branch of kind `type` onto a guarded page.
bool AcceptsBranch(uint32_t target_word, BranchType type);

// For a branch `branch_word` at `branch_pc` that landed on `target_word` at
// `target_pc` on a guarded page: what the Branch Target exception says, or
// nullopt when the landing is allowed.
std::optional<std::string> BranchTargetViolation(uint32_t branch_word, uint64_t branch_pc, uint32_t target_word,
                                                 uint64_t target_pc);

}  // namespace bpfdiff::a64
