// BTI's landing rules (jit/a64/branch_targets.h), on words llvm-mc-14
// encodes (-mattr=+bti,+pauth): each kind of indirect branch against each
// landing pad, and the branches that set no BTYPE.
#include "jit/a64/branch_targets.h"

#include <gtest/gtest.h>

namespace bpfdiff::a64 {
namespace {

constexpr uint32_t kBrX10 = 0xd61f0140, kBlrX10 = 0xd63f0140, kBrX16 = 0xd61f0200, kBrX17 = 0xd61f0220;
constexpr uint32_t kBraazX10 = 0xd61f095f, kBlraazX10 = 0xd63f095f;
constexpr uint32_t kRet = 0xd65f03c0, kRetX10 = 0xd65f0140, kB = 0x14000002, kBl = 0x94000002;
constexpr uint32_t kBtiC = 0xd503245f, kBtiJ = 0xd503249f, kBtiJc = 0xd50324df, kBti = 0xd503241f;
constexpr uint32_t kPaciasp = 0xd503233f, kPacibsp = 0xd503237f, kNop = 0xd503201f;
constexpr uint32_t kBrk = 0xd4207d00, kHlt = 0xd4400000, kMovX9Lr = 0xaa1e03e9;

TEST(a64_branch_targets, TheBranchTypeEachIndirectBranchSets) {
  EXPECT_EQ(BranchTypeOf(kBrX10), BranchType::kJump);
  EXPECT_EQ(BranchTypeOf(kBrX16), BranchType::kJumpIp);
  EXPECT_EQ(BranchTypeOf(kBrX17), BranchType::kJumpIp);
  EXPECT_EQ(BranchTypeOf(kBlrX10), BranchType::kCall);
  EXPECT_EQ(BranchTypeOf(kBraazX10), BranchType::kJump);
  EXPECT_EQ(BranchTypeOf(kBlraazX10), BranchType::kCall);
  for (const uint32_t none : {kRet, kRetX10, kB, kBl, kNop, kBtiJc}) EXPECT_EQ(BranchTypeOf(none), BranchType::kNone);
}

TEST(a64_branch_targets, WhatEachLandingPadAccepts) {
  struct Row {
    uint32_t pad;
    bool jump_ip, call, jump;
  };
  const Row rows[] = {
      {kBtiC, true, true, false},    {kBtiJ, true, false, true},     {kBtiJc, true, true, true},
      {kBti, false, false, false},   {kPaciasp, true, true, false},  {kPacibsp, true, true, false},
      {kNop, false, false, false},   {kMovX9Lr, false, false, false}, {kBrk, true, true, true},
      {kHlt, true, true, true},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(AcceptsBranch(row.pad, BranchType::kJumpIp), row.jump_ip) << std::hex << row.pad;
    EXPECT_EQ(AcceptsBranch(row.pad, BranchType::kCall), row.call) << std::hex << row.pad;
    EXPECT_EQ(AcceptsBranch(row.pad, BranchType::kJump), row.jump) << std::hex << row.pad;
    EXPECT_TRUE(AcceptsBranch(row.pad, BranchType::kNone)) << std::hex << row.pad;
  }
}

TEST(a64_branch_targets, AViolationNamesTheBranchAndTheLanding) {
  EXPECT_FALSE(BranchTargetViolation(kBrX10, 0x1000, kBtiJ, 0x2000));
  EXPECT_FALSE(BranchTargetViolation(kRet, 0x1000, kNop, 0x2000));
  const auto violation = BranchTargetViolation(kBrX10, 0x1000, kBtiC, 0x2000);
  ASSERT_TRUE(violation);
  EXPECT_NE(violation->find("br (BTYPE 11) at 0x1000"), std::string::npos) << *violation;
  EXPECT_NE(violation->find("landed on 0x2000 (0xd503245f)"), std::string::npos) << *violation;
}

}  // namespace
}  // namespace bpfdiff::a64
