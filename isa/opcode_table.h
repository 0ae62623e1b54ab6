// The opcode table: one row per instruction form.
//
// A form is an opcode plus, where the opcode alone is ambiguous, the value of
// one discriminating field (src for call and lddw, offset for sdiv/smod and
// movsx, imm for byte swaps and atomics). Everything that needs to know the
// instruction set reads this table: the decoder (which fields must be zero),
// the assembler and disassembler (mnemonic and operand shape), the
// conformance runner (CPU version and group), and the generator (which forms
// exist, so that a new form is added in one place and becomes reachable).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "isa/insn.h"

namespace bpfdiff::isa {

// bpf_conformance CPU versions: v1 base, v2 adds 64-bit jlt/jle/jslt/jsle,
// v3 adds JMP32, atomics and local calls, v4 adds sdiv/smod, movsx, ldxs*,
// bswap and ja32.
enum class CpuVersion : uint8_t { kV1 = 1, kV2 = 2, kV3 = 3, kV4 = 4 };

// bpf_conformance groups, with the same bit values as upstream.
enum Group : uint32_t {
  kGroupNone = 0,
  kGroupBase32 = 0x01,
  kGroupBase64 = 0x02,
  kGroupAtomic32 = 0x04,
  kGroupAtomic64 = 0x08,
  kGroupDivMul32 = 0x10,
  kGroupDivMul64 = 0x20,
  kGroupPacket = 0x40,
  kGroupCallx = 0x80,
  // What upstream's runner selects when no group option is given.
  kGroupsDefault = kGroupBase32 | kGroupBase64 | kGroupAtomic32 | kGroupAtomic64 |
                   kGroupDivMul32 | kGroupDivMul64,
  kGroupsAll = kGroupsDefault | kGroupPacket | kGroupCallx,
};

// Which field, besides the opcode, selects the form.
enum class Discriminant : uint8_t { kNone, kSrc, kOffset, kImm };

// The operand shape: which fields carry operands (the others must be zero)
// and how the assembler writes them.
enum class Shape : uint8_t {
  kAluImm,        // add32 %r0, 5            dst, imm
  kAluReg,        // add32 %r0, %r1          dst, src
  kAluUnary,      // neg %r0                 dst
  kEndian,        // be16 %r0                dst (width in imm)
  kMovSx,         // movsx832 %r0, %r1       dst, src (width in offset)
  kMovPerCpu,     // addr_percpu %r0, %r1    dst, src (offset BPF_ADDR_PERCPU)
  kAddrSpaceCast, // addr_space_cast %r0, %r1  dst, src (offset 1, imm 0x10000)
  kJa,            // ja +3                   offset
  kJa32,          // ja32 +3                 imm
  kJumpImm,       // jeq %r0, 5, +3          dst, imm, offset
  kJumpReg,       // jeq %r0, %r1, +3        dst, src, offset
  kCallHelper,    // call 5                  imm
  kCallLocal,     // call local +3           imm (pc-relative)
  kCallReg,       // call %r2                dst
  kCallKfunc,     // call kfunc 1            imm (a kernel function: bpfdiff knows bpf_throw, 1)
  kTailCall,      // tail_call               (r1 ctx, r2 prog array, r3 index)
  kExit,          // exit
  kLddw,          // lddw %r0, 0x1122334455667788     dst, imm64 (two slots)
  kLddwMapFd,     // lddw %r1, map:3                  dst, fd
  kLddwMapValue,  // lddw %r1, map_value:3+16         dst, fd, offset in slot 2
  kLddwFunc,      // lddw_func %r2, +3                dst, imm (pc-relative: a callback's entry)
  kLdAbs,         // ldabsw 0x10             imm (legacy packet access)
  kLdInd,         // ldindw %r1, 0x10        src, imm (legacy packet access)
  kLoad,          // ldxw %r0, [%r1+4]       dst, src, offset
  kStoreImm,      // stw [%r1+4], 5          dst, offset, imm
  kStoreReg,      // stxw [%r1+4], %r2       dst, offset, src
  kAtomic,        // lock add [%r1+4], %r2   dst, offset, src (op in imm)
};

// Jumps: the shapes that continue at a slot named by a distance from the
// next slot. Branches are jumps and local calls.
constexpr bool IsJumpShape(Shape shape) {
  return shape == Shape::kJa || shape == Shape::kJa32 || shape == Shape::kJumpImm || shape == Shape::kJumpReg;
}
constexpr bool IsBranchShape(Shape shape) { return IsJumpShape(shape) || shape == Shape::kCallLocal; }
// The shapes that name a slot by its distance: branches, and lddw_func
// (the callback whose address it loads).
constexpr bool NamesSlot(Shape shape) { return IsBranchShape(shape) || shape == Shape::kLddwFunc; }
// Where a branch keeps its distance: imm for ja32, call local and lddw_func,
// else offset.
constexpr bool DistanceInImm(Shape shape) {
  return shape == Shape::kJa32 || shape == Shape::kCallLocal || shape == Shape::kLddwFunc;
}
inline int64_t BranchDistance(const Insn& insn, Shape shape) {
  return DistanceInImm(shape) ? insn.imm : insn.offset;
}
// The slot a branch at `pc` names (may lie outside the program).
inline int64_t BranchTarget(const Insn& insn, Shape shape, size_t pc) {
  return static_cast<int64_t>(pc) + BranchDistance(insn, shape) + 1;
}

using FormId = uint16_t;

struct Form {
  FormId id;
  std::string name;      // unique, e.g. "add32 imm", "probe ldxw", "lddw map_fd"
  std::string mnemonic;  // what the assembler reads, e.g. "add32", "probe ldxw"
  uint8_t opcode;
  Discriminant discriminant;
  int32_t discriminant_value;
  Shape shape;
  CpuVersion cpu;
  Group group;
  bool kernel_internal;  // produced by the verifier, never by a compiler
  std::string semantics; // one line, e.g. "dst = (u32)(dst + imm)"
  // What imm must hold where it is not an operand: 0, but for the one
  // form whose imm is fixed (addr_space_cast's kCastUserImm).
  int32_t fixed_imm = 0;

  bool is_wide() const { return opcode == kOpLddw; }
};

// All forms, indexed by FormId.
std::span<const Form> AllForms();
const Form& FormById(FormId id);

// The form of `insn`, or nullopt when the opcode (or its discriminating
// field) names no form. Field validity beyond the discriminant is the
// decoder's job (see program.h).
std::optional<FormId> Classify(const Insn& insn);

// Forms whose assembler mnemonic is `mnemonic` (several for lddw, call).
std::span<const FormId> FormsWithMnemonic(std::string_view mnemonic);

// Whether some form has this opcode (to tell "unknown opcode" from "known
// opcode with a bad discriminating field").
bool IsKnownOpcode(uint8_t opcode);

std::string_view CpuVersionName(CpuVersion cpu);
std::optional<CpuVersion> ParseCpuVersion(std::string_view name);
std::string GroupNames(uint32_t groups);  // "base32|atomic64"
std::optional<Group> ParseGroup(std::string_view name);

}  // namespace bpfdiff::isa
