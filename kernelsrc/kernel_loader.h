// Who loads a program into the kernel, and on what CPU, as far as the
// arm64 JIT asks: build_bhb_mitigation() emits a Spectre-BHB mitigation at
// the epilogue of a program converted from classic BPF (a socket filter,
// seccomp) when its loader is not CAP_SYS_ADMIN and the CPU needs one
// (arch/arm64/kernel/proton-pack.c). Every other question of the JIT has
// the same answer for every loader.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "isa/program.h"

namespace bpfdiff::kernelsrc {

// How the kernel calls its firmware (arm_smccc_1_1_get_conduit()): the
// instruction of an SMCCC call, `smc #0` or `hvc #0`.
enum class SmcccConduit : uint8_t { kNone, kSmc, kHvc };

// SMCCC's ARCH_WORKAROUND_3: the firmware's Spectre-BHB mitigation, the one
// function the JIT's code calls (include/linux/arm-smccc.h).
inline constexpr uint32_t kSmcccArchWorkaround3 = 0x80003fff;

struct KernelLoader {
  std::string_view name;               // for reports: "unprivileged, loop k=24, firmware via HVC"
  std::string_view state;              // the fuzzers' state counter it reaches: "bhb_loop", ...
  bool classic = false;                // bpf_prog_was_classic(): converted from classic BPF
  bool capable = true;                 // ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN)
  bool mitigations_off = false;        // cpu_mitigations_off(): booted with mitigations=off
  bool spectre_v2_vulnerable = false;  // arm64_get_spectre_v2_state() == SPECTRE_VULNERABLE
  bool clearbhb = false;               // supports_clearbhb(SCOPE_SYSTEM): FEAT_CLRBHB
  uint8_t bhb_loop_k = 0;              // get_spectre_bhb_loop_value(): branches to flush
  bool bhb_firmware = false;           // is_spectre_bhb_fw_mitigated(): ARCH_WORKAROUND_3
  SmcccConduit conduit = SmcccConduit::kNone;  // arm_smccc_1_1_get_conduit()
  // cpus_have_cap(ARM64_HAS_VIRT_HOST_EXTN): the kernel runs at EL2 with
  // VHE, as on most servers, and per-CPU offsets are in TPIDR_EL2.
  bool vhe = false;
  // The sysctl net.core.bpf_jit_harden: 0 off, 1 constants blinded for
  // loaders without CAP_BPF, 2 for every loader. kernel/bpf/core.c's
  // bpf_jit_blind_constants() then rewrites the program before the JIT
  // sees it (bpf_jit_blinding_enabled()).
  uint8_t jit_harden = 0;
};

// A privileged loader of eBPF on an unaffected CPU: what bpfdiff's other
// kernel engines are.
inline constexpr KernelLoader kRootLoader{"root, eBPF", "", false, true};

// Classic programs loaded on the machines the kernel meets, one row each:
// a capable loader, mitigations off, a CPU whose Spectre-v2 state is
// vulnerable (the JIT emits nothing for those three), FEAT_CLRBHB, each
// loop count proton-pack.c's spectre_bhb_loop_affected() gives (8, 11, 24,
// 32, 38, 132), and the firmware call through either conduit, alone or
// after a loop (a system whose cores need both: max_bhb_k comes from one,
// the firmware from another). Every other row runs its kernel at EL2 (VHE).
std::span<const KernelLoader> ClassicLoaders();

// The row of ClassicLoaders() a case runs under: chosen by `fingerprint`
// (a hash of the case's main program), so that the fuzz input picks it
// and a replay gets the same one.
const KernelLoader& ClassicLoaderFor(uint64_t fingerprint);

// Loaders of eBPF with the JIT hardened, one row each: bpf_jit_harden 2
// (every program blinded), 1 with a loader without CAP_BPF (blinded), and 1
// with a capable loader (not blinded: the rule that rules it out is tested
// too).
std::span<const KernelLoader> HardenedLoaders();

// The row of HardenedLoaders() a case runs under, chosen as
// ClassicLoaderFor() chooses.
const KernelLoader& HardenedLoaderFor(uint64_t fingerprint);

// Why 6.12's verifier refuses `program` from a loader without CAP_BPF, for
// what it can see without data flow; nullopt when nothing rules it out.
// The rules: no bpf-to-bpf calls ("loading/calling other bpf or kernel
// functions are allowed for CAP_BPF and CAP_SYS_ADMIN",
// add_subprog_and_kfunc), no back-edges (check_cfg: bounded loops are for
// bpf_capable), no arena ("CAP_BPF and CAP_PERFMON are required to use
// arena"), no PROBE_MEM loads (only BTF pointers of tracing programs,
// which need CAP_BPF and CAP_PERFMON), and only the helpers
// bpf_base_func_proto() gives before its bpf_token_capable(CAP_BPF) check
// (of bpfdiff's: the map operations, get_prandom_u32,
// get_smp_processor_id, tail_call). Pointer leaks and the other checks of
// the data flow are not looked at.
std::optional<std::string> UnprivilegedRefusal(const isa::Program& program);

// Whether core.c blinds the constants of a program under `loader`
// (bpf_jit_blinding_enabled(), for a program whose JIT is requested).
constexpr bool BlindsConstants(const KernelLoader& loader) {
  return loader.jit_harden >= 2 || (loader.jit_harden == 1 && !loader.capable);
}

// The firmware call the epilogue makes under `loader`, or kNone.
constexpr SmcccConduit FirmwareCallOf(const KernelLoader& loader) {
  const bool mitigates = loader.classic && !loader.capable && !loader.mitigations_off &&
                         !loader.spectre_v2_vulnerable && !loader.clearbhb;
  return mitigates && loader.bhb_firmware ? loader.conduit : SmcccConduit::kNone;
}

}  // namespace bpfdiff::kernelsrc
