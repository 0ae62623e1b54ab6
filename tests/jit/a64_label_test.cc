// a64::Label (jit/a64/label.h): forward branches are patched when the label
// is bound, backward branches are encoded at once, and a label that is full
// leaves kBreakFault, which validation rejects, in every build.
#include "jit/a64/label.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace bpfdiff::a64 {
namespace {

// Emits into `words` the way the JIT's writing pass does.
struct Code {
  std::vector<uint32_t> words;
  void Branch(Label& label, const BranchShape& shape) {
    words.push_back(label.BranchFrom(static_cast<uint32_t>(words.size()), shape));
  }
  void Bind(Label& label) {
    label.Bind(static_cast<uint32_t>(words.size()), [this](uint32_t idx, uint32_t word) { words[idx] = word; });
  }
};

TEST(a64_label, ForwardBranchesArePatchedWhenBound) {
  Code code;
  Label out;
  code.Branch(out, BranchIf(Cond::kHs));
  code.Branch(out, BranchIfZero(Width::kX, Reg::kX3));
  code.words.push_back(Nop());
  code.Branch(out, BranchAlways());
  EXPECT_EQ(code.words[0], Nop()) << "a placeholder of the branch's size until the label is bound";
  code.Bind(out);  // at word 4
  EXPECT_EQ(code.words[0], ConditionalBranchImmediate(Cond::kHs, 16));
  EXPECT_EQ(code.words[1], CompareAndBranchImmediate(CompareBranchOp::kCbz, Width::kX, Reg::kX3, 12));
  EXPECT_EQ(code.words[3], B(4));
}

TEST(a64_label, ABranchToABoundLabelIsEncodedAtOnce) {
  Code code;
  Label loop;
  code.Bind(loop);
  code.words.push_back(Nop());
  code.Branch(loop, BranchIfNonZero(Width::kW, Reg::kX12));
  EXPECT_EQ(code.words[1], CompareAndBranchImmediate(CompareBranchOp::kCbnz, Width::kW, Reg::kX12, -4));
}

TEST(a64_label, OneForwardBranchMoreThanALabelHoldsIsABreakFault) {
  Code code;
  Label out;
  for (size_t i = 0; i < Label::kMaxForwardBranches; ++i) code.Branch(out, BranchAlways());
  code.Branch(out, BranchAlways());
  EXPECT_EQ(code.words.back(), kBreakFault);
  code.Bind(out);
  for (size_t i = 0; i < Label::kMaxForwardBranches; ++i) {
    EXPECT_EQ(code.words[i], B(static_cast<int64_t>(code.words.size() - i) * 4)) << i;
  }
  EXPECT_EQ(code.words.back(), kBreakFault) << "binding does not touch the branch it could not record";
}

TEST(a64_label, AnOffsetOutOfRangeIsABreakFault) {
  EXPECT_EQ(EncodeBranch(BranchIf(Cond::kEq), int64_t{1} << 22), kBreakFault);
  EXPECT_EQ(EncodeBranch(BranchAlways(), int64_t{1} << 29), kBreakFault);
}

}  // namespace
}  // namespace bpfdiff::a64
