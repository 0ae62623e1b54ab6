#include "kernelsrc/kernel_loader.h"

namespace bpfdiff::kernelsrc {
namespace {

constexpr SmcccConduit kSmc = SmcccConduit::kSmc;
constexpr SmcccConduit kHvc = SmcccConduit::kHvc;

// name, state, classic, capable, mitigations off, v2 vulnerable, CLRBHB,
// loop k, firmware, conduit. The first three get no mitigation on CPUs
// that need one (a loop and the firmware): code that ignored what rules
// them out would call firmware where none is due, and trap.
constexpr KernelLoader kClassicLoaders[] = {
    {"root, classic BPF, on a CPU that needs loop k=32 and firmware via SMC", "cbpf_capable_loader", true, true,
     false, false, false, 32, true, kSmc},
    {"unprivileged, mitigations=off, on a CPU that needs firmware via HVC", "cbpf_mitigations_off", true, false, true,
     false, false, 0, true, kHvc},
    {"unprivileged, Spectre-v2 vulnerable CPU with loop k=8 and firmware via SMC", "cbpf_spectre_v2_vulnerable", true,
     false, false, true, false, 8, true, kSmc},
    // FEAT_CLRBHB: the hint alone, whatever else the CPU has.
    {"unprivileged, CPU with FEAT_CLRBHB (and firmware via HVC)", "bhb_clearbhb", true, false, false, false, true, 0,
     true, kHvc},
    {"unprivileged, loop k=8", "bhb_loop", true, false, false, false, false, 8},
    {"unprivileged, loop k=11", "bhb_loop", true, false, false, false, false, 11},
    {"unprivileged, loop k=24, firmware via HVC", "bhb_loop_and_firmware_hvc", true, false, false, false, false, 24,
     true, kHvc},
    {"unprivileged, loop k=32, firmware via SMC", "bhb_loop_and_firmware_smc", true, false, false, false, false, 32,
     true, kSmc},
    {"unprivileged, loop k=38", "bhb_loop", true, false, false, false, false, 38},
    {"unprivileged, loop k=132", "bhb_loop", true, false, false, false, false, 132},
    {"unprivileged, firmware via HVC", "bhb_firmware_hvc", true, false, false, false, false, 0, true, kHvc},
    {"unprivileged, firmware via SMC", "bhb_firmware_smc", true, false, false, false, false, 0, true, kSmc},
};

}  // namespace

std::span<const KernelLoader> ClassicLoaders() { return kClassicLoaders; }

const KernelLoader& ClassicLoaderFor(uint64_t fingerprint) {
  return kClassicLoaders[fingerprint % std::size(kClassicLoaders)];
}

}  // namespace bpfdiff::kernelsrc
