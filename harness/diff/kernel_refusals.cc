#include "harness/diff/kernel_refusals.h"

#include "isa/insn.h"

namespace bpfdiff {
namespace {

constexpr KernelRefusal kLegacyPacketAccess{
    "legacy packet access",
    "ldabs/ldind: the kernel's verifier rewrites them into native loads before the JIT runs "
    "(do_misc_fixups, gen_ld_abs), so the arm64 JIT has no code for them; bpfdiff's load step does "
    "not model that rewrite"};

constexpr KernelRefusal kRefusals[] = {kLegacyPacketAccess};

bool HasLegacyPacketAccess(const LoadedCase& loaded) {
  for (const auto& program : loaded.programs) {
    for (const auto& insn : program.program.insns) {
      const uint8_t mode = isa::ModeOf(insn.opcode);
      if (isa::ClassOf(insn.opcode) == isa::kClassLd && (mode == isa::kModeAbs || mode == isa::kModeInd)) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

std::span<const KernelRefusal> KernelRefusals() { return kRefusals; }

std::optional<KernelRefusal> KernelAlsoRefuses(const LoadedCase& loaded) {
  if (HasLegacyPacketAccess(loaded)) return kLegacyPacketAccess;
  return std::nullopt;
}

}  // namespace bpfdiff
