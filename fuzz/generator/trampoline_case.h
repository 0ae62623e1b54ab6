// Trampoline cases from fuzz bytes (trampoline_fuzzer): a traced program
// and up to three fentry, three fexit and three fmod_ret programs, each
// from a small grammar that is valid by construction, the traced
// function's argument count, the call's arguments, and whether the
// trampoline replaces a first one (oracle/trampoline.h); or, one input in
// eight each, a struct_ops trampoline of one program, called directly, or
// an extension program (freplace) that replaces the traced one. Half the
// trampolines and extensions lie more than 128 MiB from the traced
// program, so that the kernel attaches them through its PLT.
//
// Every byte string decodes (missing bytes read as 0), so libFuzzer's own
// mutations are enough. The programs read their context only inside the
// frame the trampoline builds (the arguments, the return value, the count
// and the ip), write what they compute into the one map value, call a
// helper, branch forward; they never read a register or a stack byte
// before writing it, which the kernel's verifier would refuse and which
// the engines hold differently by design.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "oracle/trampoline.h"

namespace bpfdiff::fuzz {

trampoline::TrampolineCase DecodeTrampolineInput(std::span<const uint8_t> data);

// The case in text: the attachment, the call's arguments, each program
// disassembled (what a finding prints and `bpfdiff trampoline --show`).
std::string DescribeTrampolineCase(const trampoline::TrampolineCase& c);

// The paths of the kernel's prepare_trampoline() and bpf_arch_text_poke()
// that running `c` takes, each named, in a fixed order (the same names for
// every case): trampoline_fuzzer's states, which a report lists with those
// never reached.
std::vector<std::pair<std::string_view, bool>> TrampolinePaths(const trampoline::TrampolineCase& c);

// The map the programs write into: fd 1, an array of one 64-byte value.
inline constexpr int32_t kTrampolineMapFd = 1;
inline constexpr uint32_t kTrampolineMapValueBytes = 64;

}  // namespace bpfdiff::fuzz
