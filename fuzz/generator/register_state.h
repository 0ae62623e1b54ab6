// What the generator knows about each register at the point it is emitting.
#pragma once

#include <array>
#include <cstdint>

#include "isa/program.h"

namespace bpfdiff::fuzz {

// Where a pointer points. Offsets are relative to the start of the area,
// except kStack, whose offsets are relative to r10 (so they are negative).
enum class Area : uint8_t {
  kStack,        // this frame: [-512, 0)
  kCallerStack,  // an argument pointing into the caller's frame: [0, 64)
  kContext,      // the input memory: [0, length)
  kMapValue,     // one map's value: [0, value size), or its whole values area
  kPerCpu,       // this CPU's per-CPU variable (addr_percpu): [0, kPerCpuScratchSize)
};

struct RegState {
  enum class Kind : uint8_t { kUninit, kScalar, kPointer };
  Kind kind = Kind::kUninit;
  Area area = Area::kStack;
  uint8_t map = 0;     // for kMapValue: index into the case's maps
  int32_t offset = 0;  // the pointer's offset in its area
  int32_t limit = 0;   // the area's size (kMapValue: bytes reachable from offset 0)
  // The value may be (derived from) an address on a stack. Such a value is
  // never stored to memory and never used as an untrusted pointer: the JIT
  // keeps saved registers next to the BPF frames, which the interpreter does
  // not model, so those bytes may differ by design.
  bool stack_derived = false;

  static RegState Scalar(bool stack_derived = false) { return {Kind::kScalar, Area::kStack, 0, 0, 0, stack_derived}; }
  static RegState Pointer(Area area, int32_t offset, int32_t limit, uint8_t map = 0) {
    const bool stack = area == Area::kStack || area == Area::kCallerStack;
    return {Kind::kPointer, area, map, offset, limit, stack};
  }
  bool readable() const { return kind != Kind::kUninit; }
  bool pointer() const { return kind == Kind::kPointer; }

  friend bool operator==(const RegState&, const RegState&) = default;
};

struct MachineState {
  std::array<RegState, isa::kNumRegs> regs;
  bool reachable = true;

  // The state where two paths meet: what both agree on; anything else may
  // not be read afterwards.
  static MachineState Merge(const MachineState& a, const MachineState& b) {
    if (!a.reachable) return b;
    if (!b.reachable) return a;
    MachineState merged = a;
    for (size_t r = 0; r < merged.regs.size(); ++r) {
      if (!(a.regs[r] == b.regs[r])) merged.regs[r] = RegState{};
    }
    return merged;
  }
};

}  // namespace bpfdiff::fuzz
