// A validated BPF program: instruction slots, subprogram boundaries, and the
// maps it declares.
//
// Validation rejects what the kernel rejects structurally, each with a
// message naming the instruction: unknown opcodes, non-zero reserved fields,
// registers out of range, writes to r10, jumps outside the program, across
// subprograms or into the second slot of an lddw, a truncated lddw, and a
// subprogram that does not end in exit or an unconditional jump. Local
// calls and lddw_func (a callback's address) name where subprograms start.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "isa/insn.h"
#include "isa/opcode_table.h"
#include "support/result.h"

namespace bpfdiff::isa {

inline constexpr int kNumRegs = 11;  // r0..r10
inline constexpr uint8_t kFramePointer = 10;
inline constexpr size_t kMaxSlots = 1 << 20;
inline constexpr int kMaxCallDepth = 8;  // MAX_CALL_FRAMES
inline constexpr int kStackSize = 512;   // MAX_BPF_STACK, per frame

enum class MapType : uint8_t { kArray, kHash, kProgArray };

struct MapSpec {
  int32_t fd = 0;  // what lddw map_fd / map_value name in imm
  MapType type = MapType::kArray;
  uint32_t key_size = 4;
  uint32_t value_size = 8;
  uint32_t max_entries = 1;
  // kArray / kHash: initial bytes of the values area (shorter is zero-filled).
  std::vector<uint8_t> initial_values;
  // kProgArray: program index per entry, -1 for an empty slot.
  std::vector<int32_t> programs;

  friend bool operator==(const MapSpec&, const MapSpec&) = default;
};

std::string_view MapTypeName(MapType type);

// Per-slot form of a validated program; the second slot of an lddw has the
// lddw's form too, and `second_slot` tells it apart.
struct SlotInfo {
  FormId form;
  bool second_slot;
};

struct Program {
  std::vector<Insn> insns;
  // Derived by MakeProgram: first slot of every subprogram (0, and every
  // local call's and lddw_func's target), sorted; [0] = 0.
  std::vector<uint32_t> subprogram_starts;
  // Derived by MakeProgram: the form of every slot.
  std::vector<SlotInfo> slots;
  // The first slot of the exception callback, which bpf_throw unwinds to,
  // in `subprogram_starts`; 0 when the program has none. The load step sets
  // it (oracle/load.h): no instruction names the callback.
  uint32_t exception_callback = 0;

  size_t size() const { return insns.size(); }
  // The subprogram containing slot `pc`.
  size_t SubprogramOf(uint32_t pc) const;
  uint32_t SubprogramEnd(size_t subprogram) const;
};

// The map declared with `fd`, or nullptr.
const MapSpec* FindMap(std::span<const MapSpec> maps, int32_t fd);

// Validates `insns` against the map declarations they reference (which the
// Program does not keep) into a Program.
Result<Program> MakeProgram(std::vector<Insn> insns, std::span<const MapSpec> maps = {});
// The same for a program whose loader names `exception_callback` (a slot,
// not 0) as its exception callback: a subprogram starts there too.
Result<Program> MakeProgram(std::vector<Insn> insns, std::span<const MapSpec> maps, uint32_t exception_callback);

// Decodes little-endian instruction bytes and validates them.
Result<Program> DecodeProgram(std::span<const uint8_t> bytes, std::span<const MapSpec> maps = {});

// The highest CPU version and the union of groups that the program's forms
// need (the upstream runner's selection rule).
struct Requirements {
  CpuVersion cpu = CpuVersion::kV1;
  uint32_t groups = kGroupNone;
};
Requirements RequirementsOf(std::span<const Insn> insns);

}  // namespace bpfdiff::isa
