// Which registers a BPF instruction reads and writes: the data-flow facts
// the load step's clobbered-read finder and the generator's register
// bookkeeping both need, written once.
#pragma once

#include <cstdint>

#include "isa/insn.h"
#include "isa/opcode_table.h"

namespace bpfdiff {

// Bit masks over r0..r10.
struct RegisterUse {
  uint16_t reads = 0;
  uint16_t writes = 0;
  bool clobbers_args = false;  // a call: r1..r5 hold no defined value after it
};

constexpr uint16_t RegisterBit(unsigned reg) { return static_cast<uint16_t>(1u << reg); }
constexpr uint16_t kArgRegisters =
    RegisterBit(1) | RegisterBit(2) | RegisterBit(3) | RegisterBit(4) | RegisterBit(5);

// `insn` of form `form` (its first slot, for an lddw). A helper call reads
// the arguments its helper takes (all five for an unknown id).
RegisterUse UseOf(const isa::Insn& insn, const isa::Form& form);

}  // namespace bpfdiff
