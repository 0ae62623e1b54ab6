#include "kernelsrc/kernel_loader.h"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

namespace bpfdiff::kernelsrc {
namespace {

constexpr SmcccConduit kSmc = SmcccConduit::kSmc;
constexpr SmcccConduit kHvc = SmcccConduit::kHvc;

// The first three get no mitigation on CPUs that need one (a loop and the
// firmware): code that ignored what rules them out would call firmware
// where none is due, and trap. Every other row's kernel runs at EL2 (VHE).
constexpr KernelLoader kClassicLoaders[] = {
    {.name = "root, classic BPF, on a CPU that needs loop k=32 and firmware via SMC",
     .state = "cbpf_capable_loader", .classic = true, .capable = true, .bhb_loop_k = 32, .bhb_firmware = true,
     .conduit = kSmc, .vhe = true},
    {.name = "unprivileged, mitigations=off, on a CPU that needs firmware via HVC",
     .state = "cbpf_mitigations_off", .classic = true, .capable = false, .mitigations_off = true,
     .bhb_firmware = true, .conduit = kHvc},
    {.name = "unprivileged, Spectre-v2 vulnerable CPU with loop k=8 and firmware via SMC",
     .state = "cbpf_spectre_v2_vulnerable", .classic = true, .capable = false, .spectre_v2_vulnerable = true,
     .bhb_loop_k = 8, .bhb_firmware = true, .conduit = kSmc, .vhe = true},
    // FEAT_CLRBHB: the hint alone, whatever else the CPU has.
    {.name = "unprivileged, CPU with FEAT_CLRBHB (and firmware via HVC)", .state = "bhb_clearbhb",
     .classic = true, .capable = false, .clearbhb = true, .bhb_firmware = true, .conduit = kHvc},
    {.name = "unprivileged, loop k=8", .state = "bhb_loop", .classic = true, .capable = false, .bhb_loop_k = 8,
     .vhe = true},
    {.name = "unprivileged, loop k=11", .state = "bhb_loop", .classic = true, .capable = false, .bhb_loop_k = 11},
    {.name = "unprivileged, loop k=24, firmware via HVC", .state = "bhb_loop_and_firmware_hvc", .classic = true,
     .capable = false, .bhb_loop_k = 24, .bhb_firmware = true, .conduit = kHvc, .vhe = true},
    {.name = "unprivileged, loop k=32, firmware via SMC", .state = "bhb_loop_and_firmware_smc", .classic = true,
     .capable = false, .bhb_loop_k = 32, .bhb_firmware = true, .conduit = kSmc},
    {.name = "unprivileged, loop k=38", .state = "bhb_loop", .classic = true, .capable = false, .bhb_loop_k = 38,
     .vhe = true},
    {.name = "unprivileged, loop k=132", .state = "bhb_loop", .classic = true, .capable = false, .bhb_loop_k = 132},
    {.name = "unprivileged, firmware via HVC", .state = "bhb_firmware_hvc", .classic = true, .capable = false,
     .bhb_firmware = true, .conduit = kHvc, .vhe = true},
    {.name = "unprivileged, firmware via SMC", .state = "bhb_firmware_smc", .classic = true, .capable = false,
     .bhb_firmware = true, .conduit = kSmc},
};

constexpr KernelLoader kHardenedLoaders[] = {
    {.name = "root, bpf_jit_harden=2", .state = "blinded_harden_2", .capable = true, .jit_harden = 2},
    {.name = "unprivileged, bpf_jit_harden=1", .state = "blinded_harden_1_unprivileged", .capable = false,
     .jit_harden = 1},
    {.name = "root, bpf_jit_harden=1 (not blinded)", .state = "not_blinded_harden_1_root", .capable = true,
     .jit_harden = 1},
};

}  // namespace

std::span<const KernelLoader> ClassicLoaders() { return kClassicLoaders; }

std::span<const KernelLoader> HardenedLoaders() { return kHardenedLoaders; }

std::optional<std::string> UnprivilegedRefusal(const isa::Program& program) {
  // bpf_base_func_proto()'s helpers for any loader, by the kernel's ids.
  constexpr int32_t kUnprivilegedHelpers[] = {1, 2, 3, 7, 8, 12};
  // bpfdiff's "unwind" (5, the bpf_conformance convention) is no kernel
  // helper: the harness's, under every loader.
  constexpr int32_t kHarnessUnwind = 5;
  for (size_t pc = 0; pc < program.size(); ++pc) {
    if (program.slots[pc].second_slot) continue;
    const isa::Insn& insn = program.insns[pc];
    const isa::Shape shape = isa::FormById(program.slots[pc].form).shape;
    const uint8_t cls = isa::ClassOf(insn.opcode);
    const uint8_t mode = isa::ModeOf(insn.opcode);
    if (shape == isa::Shape::kCallLocal) {
      return fmt::format("slot {}: a call of a BPF function, which needs CAP_BPF", pc);
    }
    if (shape == isa::Shape::kCallKfunc) {
      return fmt::format("slot {}: a call of a kernel function (a kfunc), which needs CAP_BPF", pc);
    }
    if (shape == isa::Shape::kLddwFunc) {
      return fmt::format("slot {}: the address of a BPF function (a callback), which needs CAP_BPF", pc);
    }
    if (isa::IsJumpShape(shape) && isa::BranchTarget(insn, shape, pc) <= static_cast<int64_t>(pc)) {
      return fmt::format("slot {}: a back-edge (a loop), which needs CAP_BPF", pc);
    }
    const bool probe_load = cls == isa::kClassLdx && (mode == isa::kModeProbeMem || mode == isa::kModeProbeMemSx);
    const bool arena = ((cls == isa::kClassLdx || cls == isa::kClassSt || cls == isa::kClassStx) &&
                        mode == isa::kModeProbeMem32) ||
                       (cls == isa::kClassStx && mode == isa::kModeProbeAtomic) || isa::IsAddrSpaceCast(insn);
    if (probe_load || arena) {
      return fmt::format("slot {}: {}, which needs CAP_BPF and CAP_PERFMON", pc,
                         arena ? "an arena access" : "a PROBE_MEM load");
    }
    if (shape == isa::Shape::kCallHelper && insn.imm != kHarnessUnwind &&
        std::find(std::begin(kUnprivilegedHelpers), std::end(kUnprivilegedHelpers), insn.imm) ==
            std::end(kUnprivilegedHelpers)) {
      return fmt::format("slot {}: helper {}, which bpf_base_func_proto() gives only to CAP_BPF", pc, insn.imm);
    }
    if (shape == isa::Shape::kCallReg) return fmt::format("slot {}: callx, which no kernel verifier takes", pc);
  }
  return std::nullopt;
}

const KernelLoader& HardenedLoaderFor(uint64_t fingerprint) {
  return kHardenedLoaders[fingerprint % std::size(kHardenedLoaders)];
}

const KernelLoader& ClassicLoaderFor(uint64_t fingerprint) {
  return kClassicLoaders[fingerprint % std::size(kClassicLoaders)];
}

}  // namespace bpfdiff::kernelsrc
