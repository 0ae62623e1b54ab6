#include "fuzz/generator/far_branch.h"

#include <iterator>

namespace bpfdiff::fuzz {

namespace {

using isa::Insn;

constexpr int32_t kGetPrandomU32 = 7;

Insn Mov64Reg(uint8_t dst, uint8_t src) {
  return Insn{static_cast<uint8_t>(isa::kClassAlu64 | isa::kAluMov | isa::kSrcX), dst, src, 0, 0};
}
Insn Mov64Imm(uint8_t dst, int32_t imm) {
  return Insn{static_cast<uint8_t>(isa::kClassAlu64 | isa::kAluMov | isa::kSrcK), dst, 0, 0, imm};
}

}  // namespace

std::vector<Insn> FarBranchBlock(uint8_t choice, int32_t imm, bool define_arguments) {
  const uint32_t filler = kFarBranchFillers[choice % std::size(kFarBranchFillers)];
  std::vector<Insn> block;
  block.reserve(filler + 8);
  block.push_back(Mov64Reg(6, 1));
  block.push_back(Insn{isa::kOpCall, 0, 0, 0, kGetPrandomU32});
  block.push_back(Mov64Reg(1, 6));
  for (uint8_t reg = 2; define_arguments && reg <= 5; ++reg) block.push_back(Mov64Imm(reg, 0));
  block.push_back(Insn{static_cast<uint8_t>(isa::kClassJmp | isa::kJmpJne | isa::kSrcK), 0, 0,
                       static_cast<int16_t>(3 + filler), imm});
  block.push_back(Insn{static_cast<uint8_t>(isa::kClassSt | isa::kModeMem | isa::kSizeDW), 10, 0, -8, 0});
  block.push_back(Mov64Imm(0, 0));
  block.push_back(Mov64Imm(2, 0));
  const Insn cmpxchg{static_cast<uint8_t>(isa::kClassStx | isa::kModeAtomic | isa::kSizeDW), 10, 2, -8,
                     isa::kAtomicCmpXchg};
  block.insert(block.end(), filler, cmpxchg);
  return block;
}

}  // namespace bpfdiff::fuzz
