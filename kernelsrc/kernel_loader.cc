#include "kernelsrc/kernel_loader.h"

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

const KernelLoader& HardenedLoaderFor(uint64_t fingerprint) {
  return kHardenedLoaders[fingerprint % std::size(kHardenedLoaders)];
}

const KernelLoader& ClassicLoaderFor(uint64_t fingerprint) {
  return kClassicLoaders[fingerprint % std::size(kClassicLoaders)];
}

}  // namespace bpfdiff::kernelsrc
