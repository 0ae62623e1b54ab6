#include "fuzz/sweep/operand_sweep.h"

#include <algorithm>
#include <iterator>
#include <string_view>

#include <fmt/format.h>

#include "fuzz/generator/magnitudes.h"
#include "isa/insn.h"
#include "oracle/helpers.h"

namespace bpfdiff::fuzz {
namespace {

using isa::Insn;

constexpr size_t kCombosPerCase = 64;  // result slots r10-8 .. r10-512
constexpr size_t kMemoryCombosPerCase = 30;  // loads and atomics keep [r10-512, r10-256) for data
constexpr uint8_t kR0 = 0, kR1 = 1, kR2 = 2, kR3 = 3, kR6 = 6, kR7 = 7, kFp = isa::kFramePointer;
constexpr uint32_t kContextBytes = 4096;

Insn Make(uint8_t opcode, uint8_t dst = 0, uint8_t src = 0, int16_t offset = 0, int32_t imm = 0) {
  return Insn{opcode, dst, src, offset, imm};
}

uint8_t SizeCode(unsigned bytes) {
  switch (bytes) {
    case 1: return isa::kSizeB;
    case 2: return isa::kSizeH;
    case 4: return isa::kSizeW;
    default: return isa::kSizeDW;
  }
}

int16_t Slot(size_t combo) { return static_cast<int16_t>(-8 * static_cast<int>(combo + 1)); }

// One program being written, and the cases it becomes once full.
class Cases {
 public:
  Cases(std::string family, size_t per_case) : family_(std::move(family)), per_case_(per_case) {}

  std::vector<Insn>& code() { return code_; }
  size_t combo() const { return combos_.size(); }  // the index of the combination being written
  void Lddw(uint8_t dst, uint64_t value, uint8_t src = 0) {
    code_.push_back(Make(isa::kOpLddw, dst, src, 0, static_cast<int32_t>(static_cast<uint32_t>(value))));
    code_.push_back(Make(0, 0, 0, 0, static_cast<int32_t>(static_cast<uint32_t>(value >> 32))));
  }
  void Emit(Insn insn) { code_.push_back(insn); }
  // *(u64 *)(r10 - 8 * (combo + 1)) = reg
  void StoreResult(uint8_t reg) {
    Emit(Make(isa::kClassStx | isa::kModeMem | isa::kSizeDW, kFp, reg, Slot(combo())));
  }
  // The combination just written; a full program becomes a case.
  void EndCombo(std::string description) {
    combos_.push_back(std::move(description));
    if (combos_.size() == per_case_) Flush();
  }
  void set_prologue(std::vector<Insn> prologue) { prologue_ = std::move(prologue); }
  void set_memory(std::vector<uint8_t> memory) { memory_ = std::move(memory); }

  std::vector<SweepCase> Take() {
    Flush();
    return std::move(done_);
  }

 private:
  void Flush() {
    if (combos_.empty()) return;
    SweepCase c;
    c.name = fmt::format("{}, part {}", family_, done_.size() + 1);
    std::vector<Insn> program = prologue_;
    program.insert(program.end(), code_.begin(), code_.end());
    program.push_back(Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluMov, kR0));
    program.push_back(Make(isa::kOpExit));
    c.source.programs.push_back(std::move(program));
    c.source.memory = memory_;
    c.combos = std::move(combos_);
    done_.push_back(std::move(c));
    code_.clear();
    combos_.clear();
  }

  std::string family_;
  size_t per_case_;
  std::vector<Insn> prologue_, code_;
  std::vector<uint8_t> memory_;
  std::vector<std::string> combos_;
  std::vector<SweepCase> done_;
};

void Append(std::vector<SweepCase>& all, std::vector<SweepCase> more) {
  all.insert(all.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
}

struct AluOp {
  std::string_view name;
  uint8_t op;
  int16_t offset;  // 1: signed div/mod
};
constexpr AluOp kBinaryOps[] = {
    {"add", isa::kAluAdd, 0}, {"sub", isa::kAluSub, 0},  {"mul", isa::kAluMul, 0},  {"div", isa::kAluDiv, 0},
    {"sdiv", isa::kAluDiv, 1}, {"mod", isa::kAluMod, 0}, {"smod", isa::kAluMod, 1}, {"or", isa::kAluOr, 0},
    {"and", isa::kAluAnd, 0}, {"xor", isa::kAluXor, 0},  {"lsh", isa::kAluLsh, 0},  {"rsh", isa::kAluRsh, 0},
    {"arsh", isa::kAluArsh, 0},
};

// dst (r2) = a; dst OP= imm | src (r3 = b); the result in the combination's slot.
std::vector<SweepCase> AluBinary() {
  std::vector<SweepCase> all;
  for (const bool is64 : {true, false}) {
    const uint8_t cls = is64 ? isa::kClassAlu64 : isa::kClassAlu;
    for (const AluOp& op : kBinaryOps) {
      const std::string width = is64 ? "alu64" : "alu32";
      Cases imm(fmt::format("{} {} imm", width, op.name), kCombosPerCase);
      for (uint64_t a : kMagnitudes64) {
        for (int32_t k : kMagnitudes32) {
          imm.Lddw(kR2, a);
          imm.Emit(Make(cls | isa::kSrcK | op.op, kR2, 0, op.offset, k));
          imm.StoreResult(kR2);
          imm.EndCombo(fmt::format("{} {} 0x{:x}, {}", width, op.name, a, k));
        }
      }
      Append(all, imm.Take());
      Cases reg(fmt::format("{} {} reg", width, op.name), kCombosPerCase);
      for (uint64_t a : kMagnitudes64) {
        for (uint64_t b : kMagnitudes64) {
          reg.Lddw(kR2, a);
          reg.Lddw(kR3, b);
          reg.Emit(Make(cls | isa::kSrcX | op.op, kR2, kR3, op.offset));
          reg.StoreResult(kR2);
          reg.EndCombo(fmt::format("{} {} 0x{:x}, 0x{:x}", width, op.name, a, b));
        }
      }
      Append(all, reg.Take());
    }
  }
  return all;
}

// The unary forms and the moves: neg, mov, movsx, le/be, bswap.
std::vector<SweepCase> AluUnary() {
  struct Form {
    std::string_view name;
    Insn insn;  // dst r2, src r3
  };
  const Form forms[] = {
      {"neg64", Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluNeg, kR2)},
      {"neg32", Make(isa::kClassAlu | isa::kSrcK | isa::kAluNeg, kR2)},
      {"mov64", Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, kR2, kR3)},
      {"mov32", Make(isa::kClassAlu | isa::kSrcX | isa::kAluMov, kR2, kR3)},
      {"movsx64 s8", Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, kR2, kR3, 8)},
      {"movsx64 s16", Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, kR2, kR3, 16)},
      {"movsx64 s32", Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, kR2, kR3, 32)},
      {"movsx32 s8", Make(isa::kClassAlu | isa::kSrcX | isa::kAluMov, kR2, kR3, 8)},
      {"movsx32 s16", Make(isa::kClassAlu | isa::kSrcX | isa::kAluMov, kR2, kR3, 16)},
      {"le16", Make(isa::kClassAlu | isa::kSrcK | isa::kAluEnd, kR2, 0, 0, 16)},
      {"le32", Make(isa::kClassAlu | isa::kSrcK | isa::kAluEnd, kR2, 0, 0, 32)},
      {"le64", Make(isa::kClassAlu | isa::kSrcK | isa::kAluEnd, kR2, 0, 0, 64)},
      {"be16", Make(isa::kClassAlu | isa::kSrcX | isa::kAluEnd, kR2, 0, 0, 16)},
      {"be32", Make(isa::kClassAlu | isa::kSrcX | isa::kAluEnd, kR2, 0, 0, 32)},
      {"be64", Make(isa::kClassAlu | isa::kSrcX | isa::kAluEnd, kR2, 0, 0, 64)},
      {"bswap16", Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluEnd, kR2, 0, 0, 16)},
      {"bswap32", Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluEnd, kR2, 0, 0, 32)},
      {"bswap64", Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluEnd, kR2, 0, 0, 64)},
  };
  Cases cases("alu unary and moves", kCombosPerCase);
  for (const Form& form : forms) {
    for (uint64_t a : kMagnitudes64) {
      // dst holds garbage, src the operand: the moves must not keep any of dst.
      cases.Lddw(kR2, a);
      cases.Lddw(kR3, ~a ^ 0x5a5a5a5a5a5a5a5aULL);
      if (form.insn.src == kR3) cases.Lddw(kR3, a);
      cases.Emit(form.insn);
      cases.StoreResult(kR2);
      cases.EndCombo(fmt::format("{} 0x{:x}", form.name, a));
    }
  }
  for (const bool is64 : {true, false}) {
    for (int32_t k : kMagnitudes32) {
      cases.Lddw(kR2, 0xdeadbeefdeadbeefULL);
      cases.Emit(Make((is64 ? isa::kClassAlu64 : isa::kClassAlu) | isa::kSrcK | isa::kAluMov, kR2, 0, 0, k));
      cases.StoreResult(kR2);
      cases.EndCombo(fmt::format("mov{} imm {}", is64 ? 64 : 32, k));
    }
  }
  return cases.Take();
}

constexpr struct {
  std::string_view name;
  uint8_t op;
} kConditions[] = {
    {"jeq", isa::kJmpJeq},   {"jne", isa::kJmpJne},   {"jgt", isa::kJmpJgt},   {"jge", isa::kJmpJge},
    {"jlt", isa::kJmpJlt},   {"jle", isa::kJmpJle},   {"jset", isa::kJmpJset}, {"jsgt", isa::kJmpJsgt},
    {"jsge", isa::kJmpJsge}, {"jslt", isa::kJmpJslt}, {"jsle", isa::kJmpJsle},
};

// Values compared with `a`: itself, its neighbours, and the boundaries.
std::vector<uint64_t> Neighbours(uint64_t a) {
  return {a, a + 1, a - 1, ~a, 0 - a, a ^ 0xffffffff00000000ULL, 0, 0x80000000, 0xffffffff, 0x8000000000000000ULL};
}

// if (a OP imm|b) goto +2: the slot gets 2 when taken, 1 when not, then
// both operands are xored in (a jump must leave them as they were).
std::vector<SweepCase> Jumps() {
  std::vector<SweepCase> all;
  for (const bool is64 : {true, false}) {
    const uint8_t cls = is64 ? isa::kClassJmp : isa::kClassJmp32;
    for (const auto& cond : kConditions) {
      const std::string name = fmt::format("{}{}", cond.name, is64 ? "" : "32");
      Cases cases(fmt::format("{} imm and reg", name), kCombosPerCase);
      auto body = [&](Insn jump, std::string description) {
        cases.Emit(jump);
        cases.Emit(Make(isa::kClassSt | isa::kModeMem | isa::kSizeDW, kFp, 0, Slot(cases.combo()), 1));
        cases.Emit(Make(isa::kClassJmp | isa::kJmpJa, 0, 0, 1));
        cases.Emit(Make(isa::kClassSt | isa::kModeMem | isa::kSizeDW, kFp, 0, Slot(cases.combo()), 2));
        cases.Emit(Make(isa::kClassLdx | isa::kModeMem | isa::kSizeDW, 4, kFp, Slot(cases.combo())));
        cases.Emit(Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluXor, 4, kR2));
        if (jump.opcode & isa::kSrcX) cases.Emit(Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluXor, 4, kR3));
        cases.StoreResult(4);
        cases.EndCombo(std::move(description));
      };
      for (uint64_t a : kMagnitudes64) {
        for (int32_t k : kMagnitudes32) {
          cases.Lddw(kR2, a);
          body(Make(cls | isa::kSrcK | cond.op, kR2, 0, 2, k), fmt::format("{} 0x{:x}, {}", name, a, k));
        }
        // imm equal to a's low word, and off by one: the bounds themselves.
        for (int64_t delta : {0, 1, -1}) {
          const auto k = static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(delta));
          cases.Lddw(kR2, a);
          body(Make(cls | isa::kSrcK | cond.op, kR2, 0, 2, k), fmt::format("{} 0x{:x}, {}", name, a, k));
        }
        for (uint64_t b : Neighbours(a)) {
          cases.Lddw(kR2, a);
          cases.Lddw(kR3, b);
          body(Make(cls | isa::kSrcX | cond.op, kR2, kR3, 2), fmt::format("{} 0x{:x}, 0x{:x}", name, a, b));
        }
      }
      Append(all, cases.Take());
    }
  }
  return all;
}

// Input memory whose bytes have their top bit set more often than not, so
// that a load that extends the wrong way shows.
std::vector<uint8_t> PatternMemory() {
  std::vector<uint8_t> memory(kContextBytes);
  for (size_t i = 0; i < memory.size(); ++i) memory[i] = static_cast<uint8_t>(0x80 | (i * 0x9d + 0x13));
  for (size_t i = 0; i < memory.size(); i += 7) memory[i] = static_cast<uint8_t>(i * 3);
  return memory;
}

// r6 = r1 + 2048 (the middle of the input memory), r7 = r10 - 512, and the
// stack from r10-512 to r10-264 filled with a pattern.
std::vector<Insn> MemoryPrologue() {
  std::vector<Insn> p;
  p.push_back(Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, kR6, kR1));
  p.push_back(Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluAdd, kR6, 0, 0, 2048));
  p.push_back(Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, kR7, kFp));
  p.push_back(Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluAdd, kR7, 0, 0, -512));
  for (int off = -512; off < -256; off += 8) {
    const uint64_t v = 0x8899aabbccddeeffULL ^ (static_cast<uint64_t>(-off) * 0x0101010101010101ULL);
    p.push_back(Make(isa::kOpLddw, kR2, 0, 0, static_cast<int32_t>(static_cast<uint32_t>(v))));
    p.push_back(Make(0, 0, 0, 0, static_cast<int32_t>(static_cast<uint32_t>(v >> 32))));
    p.push_back(Make(isa::kClassStx | isa::kModeMem | isa::kSizeDW, kFp, kR2, static_cast<int16_t>(off)));
  }
  return p;
}

// Each base register with the offsets that cross its addressing forms:
// scaled, unaligned (register offset), negative, and the field limits.
struct Base {
  uint8_t reg;
  std::string_view name;
  std::vector<int16_t> offsets;
  int32_t low, high;  // the offsets that stay in bounds: [low, high - size]
};
std::vector<Base> Bases() {
  return {
      {kR1, "ctx", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 255, 256, 257, 504, 510, 511, 512, 1020, 1021, 4088},
       0, static_cast<int32_t>(kContextBytes)},
      {kR6, "ctx+2048", {-1, -2, -3, -4, -5, -7, -8, -9, -255, -256, -257, -504, -512, -2048, 1, 3, 4, 6, 2040},
       -2048, 2048},
      {kFp, "r10", {-512, -511, -510, -509, -508, -505, -504, -500, -497, -300, -264}, -512, -256},
      {kR7, "r10-512", {0, 1, 2, 4, 7, 8, 100, 248, 252, 255}, 0, 256},
  };
}

std::vector<SweepCase> Loads() {
  Cases cases("loads", kMemoryCombosPerCase);
  cases.set_prologue(MemoryPrologue());
  cases.set_memory(PatternMemory());
  for (const Base& base : Bases()) {
    for (unsigned size : {1u, 2u, 4u, 8u}) {
      for (const uint8_t mode : {isa::kModeMem, isa::kModeMemSx}) {
        if (mode == isa::kModeMemSx && size == 8) continue;
        for (int16_t off : base.offsets) {
          if (off < base.low || off + static_cast<int32_t>(size) > base.high) continue;
          cases.Emit(Make(isa::kClassLdx | mode | SizeCode(size), kR2, base.reg, off));
          cases.StoreResult(kR2);
          cases.EndCombo(fmt::format("ldx{} u{} [{}{:+}]", mode == isa::kModeMemSx ? "sx" : "", 8 * size, base.name, off));
        }
      }
    }
  }
  return cases.Take();
}

// Stores into the input memory and the stack's data area (both compared):
// a register and a constant, each width, at every offset of the bases.
std::vector<SweepCase> Stores() {
  Cases cases("stores", kMemoryCombosPerCase);
  cases.set_prologue(MemoryPrologue());
  cases.set_memory(PatternMemory());
  size_t n = 0;
  for (const Base& base : Bases()) {
    for (unsigned size : {1u, 2u, 4u, 8u}) {
      for (int16_t off : base.offsets) {
        if (off < base.low || off + static_cast<int32_t>(size) > base.high) continue;
        const uint64_t value = kMagnitudes64[n % std::size(kMagnitudes64)];
        const int32_t imm = kMagnitudes32[n % std::size(kMagnitudes32)];
        ++n;
        // The constant goes one byte over (or the same place at a bound).
        const auto nearby = static_cast<int16_t>(off ^ 1);
        const bool fits = nearby >= base.low && nearby + static_cast<int32_t>(size) <= base.high;
        cases.Lddw(kR2, value);
        cases.Emit(Make(isa::kClassStx | isa::kModeMem | SizeCode(size), base.reg, kR2, off));
        cases.Emit(Make(isa::kClassSt | isa::kModeMem | SizeCode(size), base.reg, 0, fits ? nearby : off, imm));
        cases.EndCombo(fmt::format("stx/st u{} [{}{:+}] 0x{:x}, {}", 8 * size, base.name, off, value, imm));
      }
    }
  }
  return cases.Take();
}

constexpr struct {
  std::string_view name;
  int32_t op;
} kAtomics[] = {
    {"add", isa::kAtomicAdd},
    {"or", isa::kAtomicOr},
    {"and", isa::kAtomicAnd},
    {"xor", isa::kAtomicXor},
    {"fetch_add", isa::kAtomicAdd | isa::kAtomicFetch},
    {"fetch_or", isa::kAtomicOr | isa::kAtomicFetch},
    {"fetch_and", isa::kAtomicAnd | isa::kAtomicFetch},
    {"fetch_xor", isa::kAtomicXor | isa::kAtomicFetch},
    {"xchg", isa::kAtomicXchg},
    {"cmpxchg", isa::kAtomicCmpXchg},
};

// The memory word at r10 - 264 - 8 * i holds a; the atomic applies b (and,
// for cmpxchg, r0 = a, a ^ 1, or a with garbage in the upper half); the
// fetched value (or r0) goes to the result slot. The address register is
// r10, r7 (r10 - 512) or r8 (the word's own address), in turn.
std::vector<SweepCase> Atomics() {
  constexpr uint64_t kValues[] = {0, 1, 0xffffffffffffffffULL, 0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ULL,
                                  0x8000000000000000ULL, 0xdeadbeef00000001ULL, 0x00000000000000ffULL,
                                  0x5555555555555555ULL, 0xfedcba9880000000ULL};
  std::vector<SweepCase> all;
  for (const bool is64 : {true, false}) {
    for (const auto& atomic : kAtomics) {
      Cases cases(fmt::format("atomic{} {}", is64 ? 64 : 32, atomic.name), kMemoryCombosPerCase);
      cases.set_prologue(MemoryPrologue());
      size_t n = 0;
      for (uint64_t a : kValues) {
        for (uint64_t b : kValues) {
          const int16_t word = static_cast<int16_t>(-264 - 8 * static_cast<int>(cases.combo()));
          cases.Lddw(kR2, a);
          cases.Emit(Make(isa::kClassStx | isa::kModeMem | isa::kSizeDW, kFp, kR2, word));
          cases.Lddw(kR3, b);
          if (atomic.op == isa::kAtomicCmpXchg) {
            const uint64_t expected = n % 3 == 0 ? a : n % 3 == 1 ? a ^ 1 : (a & 0xffffffff) | 0xabcd000000000000ULL;
            cases.Lddw(kR0, expected);
          }
          uint8_t base = kFp;
          int16_t off = word;
          if (n % 3 == 1) {
            base = kR7;
            off = static_cast<int16_t>(word + 512);
          } else if (n % 3 == 2) {
            cases.Emit(Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, 8, kFp));
            cases.Emit(Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluAdd, 8, 0, 0, word));
            base = 8;
            off = 0;
          }
          cases.Emit(Make(isa::kClassStx | isa::kModeAtomic | (is64 ? isa::kSizeDW : isa::kSizeW), base, kR3, off,
                          atomic.op));
          cases.StoreResult(atomic.op == isa::kAtomicCmpXchg ? kR0 : kR3);
          cases.EndCombo(fmt::format("atomic{} {} [0x{:x}] 0x{:x}", is64 ? 64 : 32, atomic.name, a, b));
          ++n;
        }
      }
      Append(all, cases.Take());
    }
  }
  return all;
}

// The offset classes the JIT tells apart that no base above reaches: the
// largest immediates (+-4095 for an atomic's address, 4095 * size for a
// scaled load or store), the first offsets that need a register (+-4096,
// +-4097, 4096 * size), larger ones, and the field's limits. The address
// register r8 is r6 (the middle of the input memory) moved by the opposite
// amount, so that every access lands inside the input memory.
std::vector<int32_t> FarOffsets(unsigned size) {
  const auto s = static_cast<int32_t>(size);
  std::vector<int32_t> offsets = {1,     -1,    4095,   -4095,  4096,   -4096,  4097,  -4097, 4095 * s,
                                  8191,  -8192, 16384,  -16384, 32760,  -32760, 32767, -32767, -32768};
  if (4096 * s <= 32767) offsets.push_back(4096 * s);
  return offsets;
}

constexpr uint8_t kR8 = 8;

// r8 = r6 + (target - offset): [r8 + offset] is r6 + target. Targets move
// through [-2048, 2048) with the combination, aligned to `size`.
int32_t FarTarget(size_t n, unsigned size) {
  const auto target = static_cast<int32_t>((n * 328) % 3968) - 2048;
  return static_cast<int32_t>(static_cast<uint32_t>(target) & ~(size - 1));  // rounded down
}

void EmitFarBase(Cases& cases, int32_t target, int32_t offset) {
  cases.Emit(Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, kR8, kR6));
  cases.Emit(Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluAdd, kR8, 0, 0, target - offset));
}

std::vector<Insn> FarPrologue() {
  return {Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, kR6, kR1),
          Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluAdd, kR6, 0, 0, 2048)};
}

std::vector<SweepCase> FarLoadsAndStores() {
  std::vector<SweepCase> all;
  Cases loads("far loads", kCombosPerCase);
  loads.set_prologue(FarPrologue());
  loads.set_memory(PatternMemory());
  Cases stores("far stores", kCombosPerCase);
  stores.set_prologue(FarPrologue());
  stores.set_memory(PatternMemory());
  size_t n = 0;
  for (unsigned size : {1u, 2u, 4u, 8u}) {
    for (const int32_t off : FarOffsets(size)) {
      for (const uint8_t mode : {isa::kModeMem, isa::kModeMemSx}) {
        if (mode == isa::kModeMemSx && size == 8) continue;
        const int32_t target = FarTarget(n++, size);
        EmitFarBase(loads, target, off);
        loads.Emit(Make(isa::kClassLdx | mode | SizeCode(size), kR2, kR8, static_cast<int16_t>(off)));
        loads.StoreResult(kR2);
        loads.EndCombo(fmt::format("ldx{} u{} [ctx+2048{:+}{:+}]", mode == isa::kModeMemSx ? "sx" : "", 8 * size,
                                   target - off, off));
      }
      // A register and a constant, one after the other at the same place.
      const int32_t target = FarTarget(n++, size);
      const uint64_t value = kMagnitudes64[n % std::size(kMagnitudes64)];
      const int32_t imm = kMagnitudes32[n % std::size(kMagnitudes32)];
      EmitFarBase(stores, target, off);
      stores.Lddw(kR2, value);
      stores.Emit(Make(isa::kClassStx | isa::kModeMem | SizeCode(size), kR8, kR2, static_cast<int16_t>(off)));
      EmitFarBase(stores, FarTarget(n++, size), off);
      stores.Emit(Make(isa::kClassSt | isa::kModeMem | SizeCode(size), kR8, 0, static_cast<int16_t>(off), imm));
      stores.EndCombo(fmt::format("stx/st u{} [r8{:+}] 0x{:x}, {}", 8 * size, off, value, imm));
    }
  }
  Append(all, loads.Take());
  Append(all, stores.Take());
  return all;
}

// Every atomic at every far offset: the word at r6 + target holds a; the
// atomic applies b through r8 + offset; the fetched value (or r0) goes to
// the result slot, the word itself stays in the compared input memory.
std::vector<SweepCase> FarAtomics() {
  std::vector<SweepCase> all;
  for (const bool is64 : {true, false}) {
    const unsigned size = is64 ? 8 : 4;
    Cases cases(fmt::format("atomic{} far offsets", is64 ? 64 : 32), kCombosPerCase);
    cases.set_prologue(FarPrologue());
    cases.set_memory(PatternMemory());
    size_t n = 0;
    for (const auto& atomic : kAtomics) {
      for (const int32_t off : FarOffsets(size)) {
        const int32_t target = FarTarget(n, size);
        const uint64_t a = kMagnitudes64[n % std::size(kMagnitudes64)];
        const uint64_t b = kMagnitudes64[(n * 7 + 3) % std::size(kMagnitudes64)];
        ++n;
        cases.Lddw(kR2, a);
        cases.Emit(Make(isa::kClassStx | isa::kModeMem | isa::kSizeDW, kR6, kR2, static_cast<int16_t>(target)));
        cases.Lddw(kR3, b);
        if (atomic.op == isa::kAtomicCmpXchg) cases.Lddw(kR0, n % 2 == 0 ? a : a ^ 1);
        EmitFarBase(cases, target, off);
        cases.Emit(Make(isa::kClassStx | isa::kModeAtomic | (is64 ? isa::kSizeDW : isa::kSizeW), kR8, kR3,
                        static_cast<int16_t>(off), atomic.op));
        cases.StoreResult(atomic.op == isa::kAtomicCmpXchg ? kR0 : kR3);
        cases.EndCombo(fmt::format("atomic{} {} [r8{:+}] [0x{:x}] 0x{:x}", is64 ? 64 : 32, atomic.name, off, a, b));
      }
    }
    Append(all, cases.Take());
  }
  return all;
}

// Helper calls whose results have their upper bits (or bit 31) set, and
// callx with ids that only their low bits make valid.
std::vector<SweepCase> Calls() {
  std::vector<SweepCase> all;
  Cases results("helper results", kCombosPerCase);
  for (int i = 0; i < 48; ++i) {
    constexpr int32_t kHelpers[] = {kHelperGetPrandomU32, kHelperGetCurrentPidTgid, kHelperGetSmpProcessorId};
    const int32_t helper = kHelpers[i % 3];
    results.Emit(Make(isa::kOpCall, 0, 0, 0, helper));
    results.StoreResult(kR0);
    results.EndCombo(fmt::format("call {}", helper));
  }
  Append(all, results.Take());
  constexpr uint64_t kIds[] = {kHelperGetPrandomU32, kHelperGetCurrentPidTgid, 0x100000007ULL,
                               0x8000000000000008ULL, 0xffffffffffffffffULL, 0xffffffff00000007ULL, 255, 256};
  for (uint64_t id : kIds) {
    Cases callx(fmt::format("callx id 0x{:x}", id), 1);
    callx.Lddw(kR6, id);
    callx.Emit(Make(isa::kOpCallX, kR6));
    callx.StoreResult(kR0);
    callx.EndCombo(fmt::format("callx 0x{:x}", id));
    Append(all, callx.Take());
  }
  // Tail calls through a prog_array of two programs, with an index whose
  // upper half must not count: r0 = 42 when the call is taken.
  constexpr uint64_t kIndexes[] = {0, 1, 2, 0x100000000ULL, 0xffffffff00000001ULL, 0xffffffff};
  for (uint64_t index : kIndexes) {
    SweepCase c;
    c.name = fmt::format("tail call index 0x{:x}", index);
    c.source.maps.push_back(isa::MapSpec{4, isa::MapType::kProgArray, 4, 8, 2, {}, {1, -1}});
    c.source.programs.push_back({Make(isa::kOpLddw, kR2, isa::kPseudoMapFd, 0, 4), Make(0),
                                 Make(isa::kOpLddw, kR3, 0, 0, static_cast<int32_t>(static_cast<uint32_t>(index))),
                                 Make(0, 0, 0, 0, static_cast<int32_t>(static_cast<uint32_t>(index >> 32))),
                                 Make(isa::kOpTailCall), Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluMov, kR0, 0, 0, 7),
                                 Make(isa::kOpExit)});
    c.source.programs.push_back({Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluMov, kR0, 0, 0, 42), Make(isa::kOpExit)});
    c.combos = {fmt::format("tail call index 0x{:x}", index)};
    all.push_back(std::move(c));
  }
  return all;
}

// PROBE_MEM loads through untrusted pointers (unmapped, guard gaps, the
// edges of regions): the exception table must zero dst and leave the base
// as it was. Both go to the result slots.
std::vector<SweepCase> ProbeLoads() {
  constexpr uint64_t kAddresses[] = {0, 8, 0xfff, 0x1000, 0x00fffff8, 0x01000000, 0x0100fff8, 0x01010000,
                                     0x02000000, 0x0000fffffffff000ULL, 0xfffffffffffffff8ULL, 0xdead0000ULL};
  Cases cases("probe loads", 32);
  cases.set_memory(PatternMemory());
  for (uint64_t address : kAddresses) {
    for (unsigned size : {1u, 2u, 4u, 8u}) {
      for (const uint8_t mode : {isa::kModeProbeMem, isa::kModeProbeMemSx}) {
        if (mode == isa::kModeProbeMemSx && size == 8) continue;
        for (int16_t off : {int16_t{0}, int16_t{3}, int16_t{-8}}) {
          cases.Lddw(kR2, 0x1111111111111111ULL);  // dst holds something before the load
          cases.Lddw(kR3, address);
          cases.Emit(Make(isa::kClassLdx | mode | SizeCode(size), kR2, kR3, off));
          cases.Emit(Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluXor, kR2, kR3));
          cases.StoreResult(kR2);
          cases.EndCombo(fmt::format("probe{} u{} [0x{:x}{:+}]", mode == isa::kModeProbeMemSx ? "sx" : "", 8 * size,
                                     address, off));
        }
      }
    }
  }
  return cases.Take();
}

// Subprograms that use their own frame through a copy of r10 and return
// what they read back: each frame must be its own.
std::vector<SweepCase> SubprogramFrames() {
  std::vector<SweepCase> all;
  for (int depth = 1; depth < isa::kMaxCallDepth; ++depth) {
    SweepCase c;
    c.name = fmt::format("subprogram frames, depth {}", depth);
    // Function f stores f + 1 at r10 - 8 (through r6 = r10 - 8), calls f + 1
    // (the last one does not), reads its slot back and adds it to r0.
    std::vector<Insn> program;
    std::vector<size_t> calls;
    for (int f = 0; f <= depth; ++f) {
      program.push_back(Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, kR6, kFp));
      program.push_back(Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluAdd, kR6, 0, 0, -8));
      program.push_back(Make(isa::kClassSt | isa::kModeMem | isa::kSizeDW, kR6, 0, 0, 100 * (f + 1)));
      program.push_back(Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluMov, kR0, 0, 0, 0));
      if (f < depth) {
        calls.push_back(program.size());
        program.push_back(Make(isa::kOpCall, 0, isa::kPseudoCall));
      }
      program.push_back(Make(isa::kClassLdx | isa::kModeMem | isa::kSizeDW, kR7, kFp, -8));
      program.push_back(Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluAdd, kR0, kR7));
      program.push_back(Make(isa::kOpExit));
    }
    // Each call goes to the start of the next function.
    size_t next_start = 0;
    for (size_t i = 0; i < calls.size(); ++i) {
      next_start = calls[i] + 4;  // past ldx, add, exit of this function: the next one's first slot
      program[calls[i]].imm = static_cast<int32_t>(next_start - calls[i] - 1);
    }
    c.source.programs.push_back(std::move(program));
    c.combos = {c.name};
    all.push_back(std::move(c));
  }
  return all;
}

// The combination a divergence in "stack frame 0 at r10-N" belongs to.
std::string ComboOf(const SweepCase& c, const std::string& field) {
  constexpr std::string_view kPrefix = "stack frame 0 at r10-";
  if (!field.starts_with(kPrefix)) return "";
  const size_t below = std::stoul(field.substr(kPrefix.size()));
  const size_t combo = (below - 1) / 8;
  return combo < c.combos.size() ? c.combos[combo] : "";
}

}  // namespace

std::vector<SweepCase> OperandSweep() {
  std::vector<SweepCase> all;
  Append(all, AluBinary());
  Append(all, AluUnary());
  Append(all, Jumps());
  Append(all, Loads());
  Append(all, Stores());
  Append(all, Atomics());
  Append(all, FarLoadsAndStores());
  Append(all, FarAtomics());
  Append(all, ProbeLoads());
  Append(all, Calls());
  Append(all, SubprogramFrames());
  return all;
}

SweepResult RunSweep(DiffHarness& harness, const std::vector<SweepCase>& cases, size_t keep) {
  SweepResult result;
  for (const SweepCase& c : cases) {
    ++result.cases;
    result.combos += c.combos.size();
    const CaseRun run = harness.RunCase(c.source);
    if (run.load_error) {
      ++result.divergent_cases;
      if (result.divergences.size() < keep) {
        result.divergences.push_back({c.name, "", "the sweep's case does not load: " + *run.load_error});
      }
      continue;
    }
    if (!run.NotComparableReasons().empty()) ++result.not_comparable;
    const EngineRun* diverged = run.FirstDivergence();
    if (diverged == nullptr) continue;
    ++result.divergent_cases;
    if (result.divergences.size() < keep) {
      result.divergences.push_back(
          {c.name, ComboOf(c, diverged->verdict.field), fmt::format("{}: {}", diverged->engine, diverged->verdict.Describe())});
    }
  }
  return result;
}

}  // namespace bpfdiff::fuzz
