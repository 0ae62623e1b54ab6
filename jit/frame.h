// The stack frame the JIT's prologue builds, as the kernel's arm64 JIT does
// (with a fixed 512-byte BPF stack per frame):
//
//   entry SP =>  +--------+  high addresses
//                | x29 x30|  frame record (stp x29, x30, [sp, #-16]!)
//   x29      =>  +--------+
//                | x19 x20|  callee-saved: r6, r7
//                | x21 x22|  r8, r9
//                | x25 x26|  r10, tail-call count
//                | x27 x28|
//   r10 (x25) => +--------+  <= entry SP - 80
//                |        |
//                |  BPF   |  512 bytes, r10 - 512 .. r10 - 1
//                | stack  |
//                |        |
//   SP       =>  +--------+  <= r10 - 512: a callee's entry SP
//
// A tail call enters the target at PROLOGUE_OFFSET, after the pushes and the
// tail-call count initialisation, so the target reuses the caller's frame.
#pragma once

#include <cstdint>

namespace bpfdiff::jit {

inline constexpr uint32_t kSavedRegisterBytes = 80;  // 5 pairs
inline constexpr uint32_t kBpfStackBytes = 512;
inline constexpr uint32_t kPrologueOffsetWords = 10;  // PROLOGUE_OFFSET

}  // namespace bpfdiff::jit
