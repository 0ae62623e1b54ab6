// Line info under constant blinding, as the tree's core.c leaves it for a
// program laid out by the verifier (kernelsrc/line_info.c; SHIMS.md, "Line
// info under blinding"). The program keeps the instructions it was loaded
// with; each function is blinded in a copy of its own. So the program's
// line info should still name the instructions it named at load.
//
// In 6.12.118 it does not once a program has more than one function:
// bpf_adj_linfo() moves the shared array by each function's rewrite,
// counted from that function's start, so every line past the rewrite's
// offset moves, whichever function it belongs to. These tests pin what the
// tree does; a tree that fixes it fails
// FunctionsMoveEachOthersLinesOn6_12, which is the signal to move the
// finding in SHIMS.md to fixed.
#include <gtest/gtest.h>

#include <vector>

#include "kernelsrc/kernel_jit.h"
#include "kernelsrc/kernel_loader.h"
#include "tests/kernelsrc/kernel_run.h"

namespace bpfdiff {
namespace {

// Two functions, each with one constant that blinding rewrites: a 64-bit
// mov of an immediate becomes three instructions (two more).
constexpr std::string_view kTwoFunctions = R"(
  mov %r0, 0x11111
  call local +1
  exit
  mov %r0, 0x2222
  exit
)";

constexpr std::string_view kOneFunction = R"(
  mov %r0, 0x11111
  exit
)";

std::vector<uint32_t> LinesAfterBlinding(std::string_view text, const kernelsrc::KernelLoader& loader) {
  CompiledUnderLoader compiled(text, kernelsrc::kRootLoader);
  EXPECT_TRUE(compiled.error.empty()) << compiled.error;
  if (!compiled.error.empty()) return {};
  EXPECT_TRUE(compiled.jit->Release(compiled.compiled).ok());
  auto lines = compiled.jit->BlindedLineInfo(compiled.loaded.programs[0].program, loader);
  EXPECT_TRUE(lines.ok()) << lines.message();
  return lines ? *lines : std::vector<uint32_t>{};
}

TEST(kernel_line_info, NothingMovesWithoutBlinding) {
  EXPECT_EQ(LinesAfterBlinding(kTwoFunctions, kernelsrc::kRootLoader), (std::vector<uint32_t>{0, 1, 2, 3, 4}));
}

// One function: the blinded copy takes the program's place
// (bpf_int_jit_compile() keeps it), and the lines follow its rewrite: the
// exit is at 3 in the blinded program.
TEST(kernel_line_info, OneFunctionsLinesFollowItsRewrite) {
  const kernelsrc::KernelLoader& harden2 = kernelsrc::HardenedLoaders()[0];
  ASSERT_TRUE(kernelsrc::BlindsConstants(harden2));
  EXPECT_EQ(LinesAfterBlinding(kOneFunction, harden2), (std::vector<uint32_t>{0, 3}));
}

// Two functions under bpf_jit_harden=2. Blinding function 0 moves
// function 1's lines by 2; blinding function 1 (its rewrite at its own
// instruction 0) moves every line after instruction 0 by 2 again,
// function 0's call and exit included. The program as loaded has 5
// instructions: lines 7 and 8 name none, and function 0's lines (at 5 and
// 6) are past its blinded copy's end (5 instructions), so
// bpf_prog_fill_jited_linfo() gives them no address.
TEST(kernel_line_info, FunctionsMoveEachOthersLinesOn6_12) {
  const kernelsrc::KernelLoader& harden2 = kernelsrc::HardenedLoaders()[0];
  ASSERT_TRUE(kernelsrc::BlindsConstants(harden2));
  const std::vector<uint32_t> lines = LinesAfterBlinding(kTwoFunctions, harden2);
  EXPECT_EQ(lines, (std::vector<uint32_t>{0, 5, 6, 7, 8}));
  // What the verifier's promise would be: the program's own instructions.
  EXPECT_NE(lines, (std::vector<uint32_t>{0, 1, 2, 3, 4}));
}

}  // namespace
}  // namespace bpfdiff
