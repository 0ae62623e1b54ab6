#include "jit/a64/branch_targets.h"

#include <fmt/format.h>

namespace bpfdiff::a64 {
namespace {

// Unconditional branch (register): 1101011 opc op2=11111 op3 Rn op4.
//   BR 0xd61f0000, BLR 0xd63f0000 (op3 = op4 = 0); the authenticated
//   BRAA/BRAB/BRAAZ/BRABZ (opc 0000/1000, op3 00001x) and
//   BLRAA/BLRAB/BLRAAZ/BLRABZ (opc 0001/1001).
constexpr uint32_t kBranchRegisterMask = 0xfe1ff000;  // keeps opc's low bits apart below
constexpr uint32_t kBranchRegisterBits = 0xd61f0000;

bool IsCallForm(uint32_t word) { return ((word >> 21) & 0xf) == 0x1 || ((word >> 21) & 0xf) == 0x9; }
bool IsJumpForm(uint32_t word) { return ((word >> 21) & 0xf) == 0x0 || ((word >> 21) & 0xf) == 0x8; }

// Hint space: 1101 0101 0000 0011 0010 CRm op2 11111.
constexpr uint32_t kHintMask = 0xfffff01f;
constexpr uint32_t kHintBits = 0xd503201f;
uint32_t HintNumber(uint32_t word) { return (word >> 5) & 0x7f; }
constexpr uint32_t kHintBti = 32, kHintBtiC = 34, kHintBtiJ = 36, kHintBtiJc = 38;
constexpr uint32_t kHintPaciasp = 25, kHintPacibsp = 27;

// Exception generation: BRK (0xd4200000) and HLT (0xd4400000), imm16 in 5..20.
bool IsBrkOrHlt(uint32_t word) {
  const uint32_t top = word & 0xffe0001f;
  return top == 0xd4200000 || top == 0xd4400000;
}

const char* TypeName(BranchType type) {
  switch (type) {
    case BranchType::kJumpIp: return "br x16/x17 (BTYPE 01)";
    case BranchType::kCall: return "blr (BTYPE 10)";
    case BranchType::kJump: return "br (BTYPE 11)";
    case BranchType::kNone: break;
  }
  return "no indirect branch";
}

}  // namespace

BranchType BranchTypeOf(uint32_t word) {
  if ((word & kBranchRegisterMask) != kBranchRegisterBits) return BranchType::kNone;
  const uint32_t op3 = (word >> 10) & 0x3f;
  const uint32_t op4 = word & 0x1f;
  const bool plain = op3 == 0 && op4 == 0;
  const bool authenticated = op3 == 2 || op3 == 3;
  if (!plain && !authenticated) return BranchType::kNone;
  if (IsCallForm(word)) return BranchType::kCall;
  if (!IsJumpForm(word)) return BranchType::kNone;  // RET, ERET, DRPS and their forms
  const uint32_t rn = (word >> 5) & 0x1f;
  return rn == 16 || rn == 17 ? BranchType::kJumpIp : BranchType::kJump;
}

bool AcceptsBranch(uint32_t target_word, BranchType type) {
  if (type == BranchType::kNone || IsBrkOrHlt(target_word)) return true;
  if ((target_word & kHintMask) != kHintBits) return false;
  switch (HintNumber(target_word)) {
    case kHintBtiC: return type == BranchType::kJumpIp || type == BranchType::kCall;
    case kHintBtiJ: return type == BranchType::kJumpIp || type == BranchType::kJump;
    case kHintBtiJc: return true;
    case kHintPaciasp:
    case kHintPacibsp: return type == BranchType::kJumpIp || type == BranchType::kCall;
    case kHintBti:
    default: return false;
  }
}

std::optional<std::string> BranchTargetViolation(uint32_t branch_word, uint64_t branch_pc, uint32_t target_word,
                                                 uint64_t target_pc) {
  const BranchType type = BranchTypeOf(branch_word);
  if (AcceptsBranch(target_word, type)) return std::nullopt;
  return fmt::format("Branch Target exception: the {} at 0x{:x} (0x{:08x}) landed on 0x{:x} (0x{:08x}), which "
                     "is no landing pad for it on a guarded page (BTI)",
                     TypeName(type), branch_pc, branch_word, target_pc, target_word);
}

}  // namespace bpfdiff::a64
