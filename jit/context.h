// The state of one pass over one subprogram, and the emitters of each
// instruction class (one file each: alu.cc, jump.cc, memory.cc, atomic.cc,
// frame.cc). Internal to the JIT.
//
// As in the kernel, one emit routine serves the sizing and the writing pass:
// Emit() always advances `idx` and writes only when an image exists.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "isa/insn.h"
#include "isa/program.h"
#include "jit/a64/aliases.h"
#include "jit/a64/encoder.h"
#include "jit/a64/label.h"
#include "jit/a64/move_immediate.h"
#include "jit/jit.h"
#include "jit/registers.h"
#include "support/result.h"

namespace bpfdiff::jit {

struct JitContext {
  const isa::Program& program;
  const JitEnvironment& env;
  const JitOptions& options;
  uint32_t first_slot;  // the subprogram: BPF slots [first_slot, end_slot)
  uint32_t end_slot;
  bool is_main;         // subprogram 0: initialises the tail-call count
  // The program's exception callback: it takes the frame of the program's
  // function that bpf_throw hands it, and pushes nothing.
  bool is_exception_callback = false;

  uint32_t* image = nullptr;  // RW words; nullptr in the sizing pass
  uint64_t ro_image = 0;      // RX address of word 0 (0 in the sizing pass)
  uint32_t idx = 0;           // next word
  std::vector<uint32_t> offsets;  // per slot of the subprogram, + the epilogue
  uint32_t epilogue_offset = 0;

  uint32_t exentry_idx = 0;   // exception-table entries emitted so far
  uint8_t* rw_extable = nullptr;
  uint64_t ro_extable = 0;

  const std::vector<uint64_t>* subprogram_entries = nullptr;  // RX entry per subprogram, 0 = unknown
  std::vector<uint32_t> address_words;

  bool writing() const { return image != nullptr; }

  void Emit(uint32_t word) {
    if (image != nullptr) image[idx] = word;
    ++idx;
  }
  void Emit(const a64::MoveSequence& sequence) {
    for (uint32_t word : sequence) Emit(word);
  }

  // Byte offset from the current instruction to the first instruction of
  // BPF slot `slot` (valid in the writing pass, where offsets are known).
  int64_t BytesToSlot(uint32_t slot) const {
    return (static_cast<int64_t>(offsets[slot - first_slot]) - static_cast<int64_t>(idx)) * 4;
  }
  int64_t BytesToEpilogue() const {
    return (static_cast<int64_t>(epilogue_offset) - static_cast<int64_t>(idx)) * 4;
  }
};

// A branch inside one lowering to `label` (jit/a64/label.h): encoded when
// the label is bound, else a placeholder that BindLabel() patches in the
// writing pass.
void EmitBranch(JitContext& ctx, a64::Label& label, const a64::BranchShape& shape);
// Binds `label` to the next word.
void BindLabel(JitContext& ctx, a64::Label& label);

// rd = value, shortest MOVZ/MOVN/MOVK sequence (emit_a64_mov_i64).
void EmitMovImm(JitContext& ctx, a64::Width width, a64::Reg rd, uint64_t value);
// rd = rn OP imm, OP one of add, adds, sub, subs (emit_a64_add_i; with
// rd = ZR and adds/subs: cmn/cmp): the immediate form when imm or -imm
// fits in 12 bits (optionally shifted by 12), else through kTmp1 holding
// imm (sign-extended for 64-bit operations).
void EmitAddSubImm(JitContext& ctx, a64::AddSubOp op, a64::Width width, a64::Reg rd, a64::Reg rn, int32_t imm);
// rd = address in a fixed three-word sequence (movz, movk, movk), so that
// the size never depends on the address (emit_addr_mov_i64 for our layout,
// whose addresses fit in 48 bits).
void EmitAddressMov(JitContext& ctx, a64::Reg rd, uint64_t address);
// The logical-immediate word for rd = rn OP value (kBreakFault when value
// is not a bitmask immediate), as and/orr/eor/tst share it; with the
// planted logical_imm32_all_ones bug, the reserved encoding for a 32-bit -1.
uint32_t LogicalImmediateWord(const JitContext& ctx, a64::LogicalImmOp op, a64::Width width, a64::Reg rd,
                              a64::Reg rn, uint64_t value);
// blr to an absolute address through kTmp1.
void EmitCall(JitContext& ctx, uint64_t target);

void EmitPrologue(JitContext& ctx);
void EmitEpilogue(JitContext& ctx);

// The emitters of each instruction class. `slot` is the BPF slot index.
Status EmitAlu(JitContext& ctx, uint32_t slot, const isa::Insn& insn);
Status EmitJump(JitContext& ctx, uint32_t slot, const isa::Insn& insn);
Status EmitLoadImm64(JitContext& ctx, uint32_t slot, const isa::Insn& insn, const isa::Insn& next);
Status EmitLoadStore(JitContext& ctx, uint32_t slot, const isa::Insn& insn);
Status EmitAtomic(JitContext& ctx, uint32_t slot, const isa::Insn& insn);

// Records an exception-table entry for the load just emitted (the word at
// idx - 1) whose destination is `dst` and address register `base`
// (add_exception_handler).
Status AddExceptionHandler(JitContext& ctx, uint32_t slot, a64::Reg dst, a64::Reg base);

}  // namespace bpfdiff::jit
