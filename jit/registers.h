// The BPF -> A64 register map, as the kernel's bpf2a64[].
//
//   r0 -> x7        return value
//   r1..r5 -> x0..x4  arguments (the AAPCS argument registers)
//   r6..r9 -> x19..x22  callee saved
//   r10 -> x25      frame pointer (read only)
//   x9  BPF_REG_AX, x10..x12 temporaries, x26 tail-call count,
//   x27, x28 saved with the frame (kept for the kernel's layout)
#pragma once

#include "isa/program.h"
#include "jit/a64/operands.h"

namespace bpfdiff::jit {

inline constexpr a64::Reg kBpfToA64[isa::kNumRegs] = {
    a64::Reg::kX7,  a64::Reg::kX0,  a64::Reg::kX1,  a64::Reg::kX2,
    a64::Reg::kX3,  a64::Reg::kX4,  a64::Reg::kX19, a64::Reg::kX20,
    a64::Reg::kX21, a64::Reg::kX22, a64::Reg::kX25,
};

inline constexpr a64::Reg kTmp1 = a64::Reg::kX10;
inline constexpr a64::Reg kTmp2 = a64::Reg::kX11;
inline constexpr a64::Reg kTmp3 = a64::Reg::kX12;
inline constexpr a64::Reg kAux = a64::Reg::kX9;  // BPF_REG_AX
inline constexpr a64::Reg kTailCallCount = a64::Reg::kX26;
inline constexpr a64::Reg kFramePointer = a64::Reg::kX25;

constexpr a64::Reg Map(unsigned bpf_register) { return kBpfToA64[bpf_register]; }

}  // namespace bpfdiff::jit
