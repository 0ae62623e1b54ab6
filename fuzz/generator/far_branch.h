// The far-branch block (format version 6, header byte 15 bit 7, for the
// inputs the hash chooses: fuzz_format.h): a
// conditional jump whose arm64 code spans the range of a conditional
// branch (imm19: +-1 MiB), as upstream's fixes to check_imm
// (1dd8be4ec722) and to B.cond's range (48d83d94930e) are about.
//
// A BPF conditional jump reaches at most 32767 instructions; only an
// instruction that takes several arm64 words can carry it over 1 MiB. A
// 64-bit cmpxchg on the stack takes nine under the LL/SC lowering (the
// offset's mov and add, then mov, ldxr, eor, cbnz, stlxr, cbnz, dmb), so
// about 29,000 of them put the jump at the limit. Under LSE they take
// three, and the jump stays within range: the same program tests the
// other side.
//
// The block goes first in the main entry, and leaves r1 as the entry got
// it:
//
//   r6 = r1; call bpf_get_prandom_u32; r1 = r6
//   if r0 != IMM goto +(3 + N)      the far jump, almost always taken
//   *(u64 *)(r10 - 8) = 0; r0 = 0; r2 = 0
//   N x  r0 = cmpxchg64(r10 - 8, r0, r2)
//
// The condition is a helper's result, so that a verifier cannot prune
// either path; the filler runs only when the helper returns IMM.
#pragma once

#include <cstdint>
#include <vector>

#include "isa/insn.h"

namespace bpfdiff::fuzz {

// The filler lengths, chosen by header byte 14 bits 1..3: around the
// LL/SC lowering's imm19 limit (2^18 words: 29,127 cmpxchgs and the
// block's own words), well past it, and at the BPF field's own limit.
// Measured on 6.12 (kernel_jit.AConditionalJumpOverMoreThanOneMiBIsRefused):
// under LL/SC the jump's offset is 262,139 words with 29,126 and 262,148
// with 29,127, on either side of 2^18.
inline constexpr uint32_t kFarBranchFillers[] = {29100, 29125, 29126, 29127, 29128, 29200, 30000, 32760};

// The block, its filler the `choice`-th length (modulo the table), the
// jump comparing with `imm`. With `define_arguments` (format version 7),
// r2..r5, which its helper call leaves undefined and the main entry may
// read as the scalars it was entered with, are set to 0 after the call.
std::vector<isa::Insn> FarBranchBlock(uint8_t choice, int32_t imm, bool define_arguments = false);

}  // namespace bpfdiff::fuzz
