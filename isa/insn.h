// One BPF instruction slot (RFC 9669, section 3) and the opcode field names.
//
//   byte 0      byte 1            bytes 2-3      bytes 4-7
//   +--------+--------+--------+----------------+----------------------------+
//   | opcode | src:4  | dst:4  | offset (s16 LE)| imm (s32 LE)               |
//   +--------+--------+--------+----------------+----------------------------+
//
// A wide instruction (lddw) takes two slots; the second slot has opcode 0 and
// carries the upper 32 bits of the immediate.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace bpfdiff::isa {

inline constexpr size_t kInsnSize = 8;

// Instruction classes: opcode bits 0..2.
inline constexpr uint8_t kClassLd = 0x00;
inline constexpr uint8_t kClassLdx = 0x01;
inline constexpr uint8_t kClassSt = 0x02;
inline constexpr uint8_t kClassStx = 0x03;
inline constexpr uint8_t kClassAlu = 0x04;
inline constexpr uint8_t kClassJmp = 0x05;
inline constexpr uint8_t kClassJmp32 = 0x06;
inline constexpr uint8_t kClassAlu64 = 0x07;

// Arithmetic and jump instructions: bit 3 selects the source operand.
inline constexpr uint8_t kSrcK = 0x00;  // immediate
inline constexpr uint8_t kSrcX = 0x08;  // register

// ALU operation codes: opcode bits 4..7.
inline constexpr uint8_t kAluAdd = 0x00;
inline constexpr uint8_t kAluSub = 0x10;
inline constexpr uint8_t kAluMul = 0x20;
inline constexpr uint8_t kAluDiv = 0x30;
inline constexpr uint8_t kAluOr = 0x40;
inline constexpr uint8_t kAluAnd = 0x50;
inline constexpr uint8_t kAluLsh = 0x60;
inline constexpr uint8_t kAluRsh = 0x70;
inline constexpr uint8_t kAluNeg = 0x80;
inline constexpr uint8_t kAluMod = 0x90;
inline constexpr uint8_t kAluXor = 0xa0;
inline constexpr uint8_t kAluMov = 0xb0;
inline constexpr uint8_t kAluArsh = 0xc0;
inline constexpr uint8_t kAluEnd = 0xd0;

// Jump operation codes: opcode bits 4..7.
inline constexpr uint8_t kJmpJa = 0x00;
inline constexpr uint8_t kJmpJeq = 0x10;
inline constexpr uint8_t kJmpJgt = 0x20;
inline constexpr uint8_t kJmpJge = 0x30;
inline constexpr uint8_t kJmpJset = 0x40;
inline constexpr uint8_t kJmpJne = 0x50;
inline constexpr uint8_t kJmpJsgt = 0x60;
inline constexpr uint8_t kJmpJsge = 0x70;
inline constexpr uint8_t kJmpCall = 0x80;
inline constexpr uint8_t kJmpExit = 0x90;
inline constexpr uint8_t kJmpJlt = 0xa0;
inline constexpr uint8_t kJmpJle = 0xb0;
inline constexpr uint8_t kJmpJslt = 0xc0;
inline constexpr uint8_t kJmpJsle = 0xd0;
// Kernel-internal: the verifier rewrites `call bpf_tail_call` to this.
inline constexpr uint8_t kJmpTailCall = 0xf0;

// Load/store size: opcode bits 3..4.
inline constexpr uint8_t kSizeW = 0x00;
inline constexpr uint8_t kSizeH = 0x08;
inline constexpr uint8_t kSizeB = 0x10;
inline constexpr uint8_t kSizeDW = 0x18;

// Load/store mode: opcode bits 5..7.
inline constexpr uint8_t kModeImm = 0x00;         // lddw (with kSizeDW)
inline constexpr uint8_t kModeAbs = 0x20;         // class LD: legacy packet access
inline constexpr uint8_t kModeInd = 0x40;         // class LD: legacy packet access
inline constexpr uint8_t kModeProbeMem = 0x20;    // class LDX, kernel-internal: may fault
inline constexpr uint8_t kModeProbeMemSx = 0x40;  // class LDX, kernel-internal, sign-extending
inline constexpr uint8_t kModeMem = 0x60;
inline constexpr uint8_t kModeMemSx = 0x80;
inline constexpr uint8_t kModeAtomic = 0xc0;
// Arena accesses, kernel-internal (the verifier's rewrite of accesses
// through an arena pointer, a 32-bit offset into the arena): LDX, ST and
// STX add the arena's kernel address (kern_vm_start) and may fault; STX
// atomics likewise.
inline constexpr uint8_t kModeProbeMem32 = 0xa0;
inline constexpr uint8_t kModeProbeAtomic = 0xe0;

// Atomic operations: the imm field of a BPF_ATOMIC store.
inline constexpr int32_t kAtomicAdd = 0x00;
inline constexpr int32_t kAtomicOr = 0x40;
inline constexpr int32_t kAtomicAnd = 0x50;
inline constexpr int32_t kAtomicXor = 0xa0;
inline constexpr int32_t kAtomicFetch = 0x01;
inline constexpr int32_t kAtomicXchg = 0xe0 | kAtomicFetch;
inline constexpr int32_t kAtomicCmpXchg = 0xf0 | kAtomicFetch;

// Pseudo sources of lddw (src field) and of call.
inline constexpr uint8_t kPseudoMapFd = 1;     // imm = map fd -> address of the map
inline constexpr uint8_t kPseudoMapValue = 2;  // imm = map fd, next imm = offset
inline constexpr uint8_t kPseudoFunc = 4;      // imm = pc-relative first slot of a callback -> its address
inline constexpr uint8_t kPseudoCall = 1;      // call: imm = pc-relative target
inline constexpr uint8_t kPseudoKfuncCall = 2; // call: imm = a kernel function (BTF id; bpfdiff's kKfunc ids)

inline constexpr uint8_t kOpLddw = kClassLd | kModeImm | kSizeDW;  // 0x18
inline constexpr uint8_t kOpExit = kClassJmp | kJmpExit;           // 0x95
inline constexpr uint8_t kOpCall = kClassJmp | kJmpCall;           // 0x85
inline constexpr uint8_t kOpCallX = kClassJmp | kJmpCall | kSrcX;  // 0x8d
inline constexpr uint8_t kOpTailCall = kClassJmp | kJmpTailCall;   // 0xf5

constexpr uint8_t ClassOf(uint8_t opcode) { return opcode & 0x07; }
constexpr uint8_t SourceOf(uint8_t opcode) { return opcode & 0x08; }
constexpr uint8_t OpOf(uint8_t opcode) { return opcode & 0xf0; }
constexpr uint8_t SizeOf(uint8_t opcode) { return opcode & 0x18; }
constexpr uint8_t ModeOf(uint8_t opcode) { return opcode & 0xe0; }

constexpr unsigned SizeBytes(uint8_t opcode) {
  switch (SizeOf(opcode)) {
    case kSizeB: return 1;
    case kSizeH: return 2;
    case kSizeW: return 4;
    default: return 8;
  }
}

// The offset of a mov64 that makes a per-CPU pointer this CPU's address
// (include/linux/filter.h, BPF_ADDR_PERCPU): dst = src + this CPU's offset.
inline constexpr int16_t kAddrPerCpu = -1;
// The offset of a mov64 that casts between address spaces (BPF_ADDR_SPACE_
// CAST), and the imm of the one cast that reaches the JIT, from the arena
// to a user address (as(0) to as(1): insn_is_cast_user); the verifier
// makes the other direction a 32-bit mov.
inline constexpr int16_t kAddrSpaceCastOffset = 1;
inline constexpr int32_t kCastUserImm = 1 << 16;

struct Insn {
  uint8_t opcode = 0;
  uint8_t dst = 0;  // 0..15 as encoded; validity is checked by the decoder
  uint8_t src = 0;
  int16_t offset = 0;
  int32_t imm = 0;

  friend bool operator==(const Insn&, const Insn&) = default;

  static Insn FromBytes(const uint8_t* bytes) {
    Insn insn;
    insn.opcode = bytes[0];
    insn.dst = bytes[1] & 0x0f;
    insn.src = bytes[1] >> 4;
    insn.offset = static_cast<int16_t>(bytes[2] | bytes[3] << 8);
    insn.imm = static_cast<int32_t>(static_cast<uint32_t>(bytes[4]) |
                                    static_cast<uint32_t>(bytes[5]) << 8 |
                                    static_cast<uint32_t>(bytes[6]) << 16 |
                                    static_cast<uint32_t>(bytes[7]) << 24);
    return insn;
  }

  void ToBytes(uint8_t* bytes) const {
    bytes[0] = opcode;
    bytes[1] = static_cast<uint8_t>((src & 0x0f) << 4 | (dst & 0x0f));
    bytes[2] = static_cast<uint8_t>(offset);
    bytes[3] = static_cast<uint8_t>(static_cast<uint16_t>(offset) >> 8);
    auto u = static_cast<uint32_t>(imm);
    for (int i = 0; i < 4; ++i) bytes[4 + i] = static_cast<uint8_t>(u >> (8 * i));
  }

  // The slot as the little-endian 64-bit word the `-- raw` section uses.
  uint64_t ToWord() const {
    uint8_t bytes[kInsnSize];
    ToBytes(bytes);
    uint64_t word = 0;
    for (int i = 7; i >= 0; --i) word = word << 8 | bytes[i];
    return word;
  }
  static Insn FromWord(uint64_t word) {
    uint8_t bytes[kInsnSize];
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(word >> (8 * i));
    return FromBytes(bytes);
  }
};

// The kernel-internal register moves that are not moves (mov64 with a
// reserved offset): dst = src + this CPU's per-CPU offset, and dst = the
// arena pointer src as a user address.
constexpr bool IsPerCpuAddressMove(const Insn& insn) {
  return insn.opcode == (kClassAlu64 | kSrcX | kAluMov) && insn.offset == kAddrPerCpu;
}
constexpr bool IsAddrSpaceCast(const Insn& insn) {
  return insn.opcode == (kClassAlu64 | kSrcX | kAluMov) && insn.offset == kAddrSpaceCastOffset;
}

// The 64-bit immediate of an lddw whose first slot is at `slots[0]`.
inline uint64_t Imm64(const Insn& first, const Insn& second) {
  return static_cast<uint64_t>(static_cast<uint32_t>(first.imm)) |
         static_cast<uint64_t>(static_cast<uint32_t>(second.imm)) << 32;
}

std::vector<uint8_t> ToBytes(std::span<const Insn> insns);

}  // namespace bpfdiff::isa
