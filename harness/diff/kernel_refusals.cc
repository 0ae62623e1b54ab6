#include "harness/diff/kernel_refusals.h"

#include "isa/insn.h"

namespace bpfdiff {
namespace {

constexpr KernelRefusal kLegacyPacketAccess{
    "legacy packet access",
    "ldabs/ldind: the kernel's verifier rewrites them into native loads before the JIT runs "
    "(do_misc_fixups, gen_ld_abs), so the arm64 JIT has no code for them; bpfdiff's load step does "
    "not model that rewrite"};

// The two below are programs the kernel's verifier rejects, which bpfdiff's
// load step accepts because the conformance suites run them (RFC 9669 gives
// them a meaning). bpfdiff's model JIT compiles them; the kernel's JIT, which
// relies on the verifier, refuses them (kernel-jit engines).
constexpr KernelRefusal kOutOfRangeShift{
    "shift by an out-of-range constant",
    "lsh/rsh/arsh by a constant outside [0, width): the kernel's verifier rejects it (check_alu_op: "
    "\"invalid shift\"), and the arm64 JIT, which relies on that, cannot encode it "
    "(aarch64_insn_gen_bitfield: invalid immr/imms encoding)"};

constexpr KernelRefusal kCallx{
    "callx",
    "call with a register operand (BPF_CALL | BPF_X): the kernel's verifier rejects it (do_check: "
    "\"BPF_CALL uses reserved fields\"), and the arm64 JIT has no case for it (\"unknown opcode 8d\")"};

constexpr KernelRefusal kBranchOutOfRange{
    "branch beyond its encoding's range",
    "a conditional jump whose code spans more than 1 MiB (b.cond, cbz and cbnz hold +-2^18 words): the "
    "kernel's verifier accepts it, and the arm64 JIT refuses it (check_imm19: \"imm=N out of range\", "
    "-EINVAL), rather than emit an offset that wraps (1dd8be4ec722, 48d83d94930e)"};

constexpr KernelRefusal kRefusals[] = {kLegacyPacketAccess, kOutOfRangeShift, kCallx, kBranchOutOfRange};

template <typename Predicate>
bool AnyInsn(const LoadedCase& loaded, Predicate predicate) {
  for (const auto& program : loaded.programs) {
    for (const auto& insn : program.program.insns) {
      if (predicate(insn)) return true;
    }
  }
  return false;
}

bool IsOutOfRangeShift(const isa::Insn& insn) {
  const uint8_t cls = isa::ClassOf(insn.opcode);
  if (cls != isa::kClassAlu && cls != isa::kClassAlu64) return false;
  if (isa::SourceOf(insn.opcode) != isa::kSrcK) return false;
  const uint8_t op = isa::OpOf(insn.opcode);
  if (op != isa::kAluLsh && op != isa::kAluRsh && op != isa::kAluArsh) return false;
  const int32_t width = cls == isa::kClassAlu64 ? 64 : 32;
  return insn.imm < 0 || insn.imm >= width;
}

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

std::optional<KernelRefusal> KernelBranchOutOfRange(std::string_view refusal_message) {
  constexpr std::string_view kImm = "imm=", kOutOfRange = ") out of range";
  const size_t at = refusal_message.find(kImm);
  if (at == std::string_view::npos || refusal_message.find(kOutOfRange, at) == std::string_view::npos) {
    return std::nullopt;
  }
  std::string_view digits = refusal_message.substr(at + kImm.size());
  const bool negative = !digits.empty() && digits.front() == '-';
  if (negative) digits.remove_prefix(1);
  int64_t magnitude = 0;
  size_t n = 0;
  for (; n < digits.size() && n < 11 && digits[n] >= '0' && digits[n] <= '9'; ++n) {
    magnitude = magnitude * 10 + (digits[n] - '0');
  }
  if (n == 0 || n >= digits.size() || digits[n] != '(') return std::nullopt;
  // imm19 holds [-2^18, 2^18): a positive offset from 2^18, a negative one
  // below -2^18, is out of its range.
  constexpr int64_t kLimit = int64_t{1} << 18;
  const bool out = negative ? magnitude > kLimit : magnitude >= kLimit;
  return out ? std::optional<KernelRefusal>(kBranchOutOfRange) : std::nullopt;
}

std::optional<KernelRefusal> KernelAlsoRefuses(const LoadedCase& loaded) {
  if (HasLegacyPacketAccess(loaded)) return kLegacyPacketAccess;
  if (AnyInsn(loaded, IsOutOfRangeShift)) return kOutOfRangeShift;
  if (AnyInsn(loaded, [](const isa::Insn& insn) { return insn.opcode == isa::kOpCallX; })) return kCallx;
  return std::nullopt;
}

}  // namespace bpfdiff
