// What the machine tests share: a sandbox, code placed in a pack slot, and
// a call of it with fixed arguments.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <memory>
#include <vector>

#include "harness/machine/sandbox.h"
#include "jit/a64/encoder.h"
#include "oracle/guest_layout.h"

namespace bpfdiff {

// Argument registers of every call: x0 = the context region (RW), x1 = an
// unmapped address in the first megabyte, x2 = 3, x3 = a read-only map
// object, x4 = -2.
inline constexpr uint64_t kMapped = guest::kContextBase;
inline constexpr uint64_t kUnmapped = 0x8000;
inline constexpr uint64_t kReadOnly = guest::kMapObjectsBase;
inline constexpr std::array<uint64_t, 5> kArgs = {kMapped, kUnmapped, 3, kReadOnly, static_cast<uint64_t>(-2)};

inline std::unique_ptr<Sandbox> MakeSandbox(const SandboxOptions& options = {}) {
  auto sandbox = Sandbox::Create(options);
  EXPECT_TRUE(sandbox.ok()) << sandbox.message();
  if (!sandbox) return nullptr;
  return std::move(sandbox).value();
}

// `words` in a new pack slot, finalized; returns the allocation.
inline std::unique_ptr<jit::PackAllocation> Place(Sandbox& sandbox, const std::vector<uint32_t>& words) {
  for (uint32_t word : words) EXPECT_NE(word, a64::kBreakFault) << "an encoder refused an operand";
  auto allocation = sandbox.pack().Alloc(4 * words.size());
  EXPECT_TRUE(allocation.ok()) << allocation.message();
  if (!allocation) return nullptr;
  std::memcpy((*allocation)->rw_image(), words.data(), 4 * words.size());
  sandbox.pack().Finalize(**allocation);
  return std::move(allocation).value();
}

inline MachineStop Call(Machine& machine, uint64_t entry, const std::array<uint64_t, 5>& args = kArgs) {
  if (auto prepared = machine.PrepareCall(entry, args, guest::StackTop(0)); !prepared) {
    ADD_FAILURE() << prepared.message();
    return {};
  }
  return machine.Resume();
}

}  // namespace bpfdiff
