// What the lifecycle world's tests share (world_test.cc, and the kernel's
// JIT's in tests/kernelsrc/kernel_world_test.cc): programs and the text
// of what a world recorded.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/lifecycle/world.h"
#include "isa/assembler.h"

namespace bpfdiff::lifecycle::world_testing {

inline std::vector<isa::Insn> Asm(std::string_view text) {
  auto insns = isa::Assemble(text);
  EXPECT_TRUE(insns) << insns.message();
  return insns ? *insns : std::vector<isa::Insn>{};
}

// Counts down from 100: long enough to stop inside it.
inline constexpr std::string_view kLoop = R"(
  mov %r0, 0
  mov %r2, 100
loop:
  add %r0, 3
  sub %r2, 1
  jne %r2, 0, loop
  exit
)";

// A PROBE_MEM load through the NULL page: it faults, the exception table
// zeroes r0 and the program goes on.
inline constexpr std::string_view kProbe = R"(
  mov %r1, 0
  mov %r0, 7
  probe ldxdw %r0, [%r1+8]
  add %r0, 5
  exit
)";

inline std::string Violations(const World& world) {
  std::string all;
  for (const auto& v : world.violations()) all += v.Describe() + "\n";
  return all.empty() ? "none" : all;
}

inline std::string Reasons(const World& world) {
  std::string all;
  for (const auto& [reason, count] : world.not_comparable_reasons()) all += fmt::format("{}: {}\n", reason, count);
  return all.empty() ? "none" : all;
}

}  // namespace bpfdiff::lifecycle::world_testing
