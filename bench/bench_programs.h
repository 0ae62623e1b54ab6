// Programs the benchmarks share, as BPF assembly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "isa/assembler.h"
#include "isa/insn.h"

namespace bpfdiff::bench {

// An ALU and branch loop: 7 instructions per iteration.
inline std::string AluLoop(int iterations) {
  return fmt::format(R"(
    mov %r0, 0
    mov %r1, 0
  loop:
    add %r0, %r1
    xor %r0, 0x55
    lsh %r0, 3
    rsh %r0, 1
    add32 %r2, %r0
    add %r1, 1
    jlt %r1, {}, loop
    exit
  )", iterations);
}

// A load/store loop over the stack: 8 instructions per iteration, 4 of
// them memory accesses.
inline std::string MemoryLoop(int iterations) {
  return fmt::format(R"(
    mov %r0, 0
    mov %r1, 0
    stdw [%r10-16], 7
  loop:
    stxdw [%r10-8], %r1
    ldxdw %r2, [%r10-8]
    ldxw %r3, [%r10-16]
    add %r0, %r2
    stxw [%r10-16], %r0
    add %r0, %r3
    add %r1, 1
    jlt %r1, {}, loop
    exit
  )", iterations);
}

// A straight-line program of about `length` instructions mixing every
// class the JIT lowers (the compile-time benchmark's input).
inline std::string MixedProgram(int length) {
  std::string text = "mov %r0, 0\nmov %r1, 1\nmov %r2, 2\nstdw [%r10-8], 0\n";
  const char* body[] = {
      "add %r0, %r1",        "mul32 %r2, 0x12345",  "and %r1, 0xff00ff",     "ldxdw %r3, [%r10-8]",
      "stxdw [%r10-8], %r0", "lsh %r0, 7",          "jgt %r0, 100000, +1",   "xor %r0, -1",
      "mod %r2, 7",          "lddw %r4, 0x1122334455667788", "arsh32 %r2, 3", "sub %r0, %r2",
  };
  int emitted = 4;
  for (int i = 0; emitted < length - 1; ++i) {
    text += body[i % 12];
    text += '\n';
    emitted += body[i % 12][1] == 'd' && body[i % 12][2] == 'd' && body[i % 12][3] == 'w' ? 2 : 1;
  }
  return text + "exit\n";
}

inline std::vector<isa::Insn> MustAssemble(const std::string& text) {
  auto insns = isa::Assemble(text);
  if (!insns) {
    fmt::print(stderr, "benchmark program does not assemble: {}\n", insns.message());
    std::abort();
  }
  return std::move(insns).value();
}

}  // namespace bpfdiff::bench
