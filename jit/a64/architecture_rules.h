// The Arm ARM's CONSTRAINED UNPREDICTABLE register combinations, checked on
// words a JIT emitted. Such a word may do one of several things the
// architecture allows (undefined, a NOP, an unknown value, the access or
// not), so each CPU and each emulator may run it otherwise: Unicorn and VIXL
// happen to agree or not, and a divergence between them would be blamed on
// the emulators. A JIT must never emit one; bpfdiff's encoders refuse them
// (encoder.h), the kernel's insn.c does not check.
//
// The cases checked are those of the classes a BPF JIT emits (DDI 0487,
// "CONSTRAINED UNPREDICTABLE behavior", and each instruction's decode):
//   - load/store register, immediate pre- or post-indexed (general registers):
//     writeback with Rn == Rt, Rn not SP;
//   - load/store pair, general registers: a load with Rt == Rt2; writeback
//     with Rn == Rt or Rn == Rt2, Rn not SP;
//   - store exclusive (STXR, STLXR and their B/H forms): Rs == Rt, or
//     Rs == Rn with Rn not SP; store exclusive pair: also Rs == Rt2; load
//     exclusive pair: Rt == Rt2.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace bpfdiff::a64 {

// The rule `word` breaks, or nullopt when it breaks none of the above (or is
// of another class).
std::optional<std::string_view> ConstrainedUnpredictable(uint32_t word);

}  // namespace bpfdiff::a64
