// The arm64 BPF JIT, shaped like the kernel's (arch/arm64/net/bpf_jit_comp.c
// with the prog pack series), writing its images into a ProgPack.
//
// For each subprogram, in order, as the kernel JITs each func[i]:
//   pass 1  sizing: emit with no image, recording the arm64 offset of every
//           BPF instruction and counting exception-table entries;
//   alloc   an RX slot and its RW buffer from the pack;
//   pass 2  emit into the RW buffer; the body must end on the epilogue
//           offset of pass 1, and the exception table follows the code;
//   validate: no AARCH64_BREAK_FAULT word left by an encoder that could not
//           encode an operand, and as many table entries as counted.
// For a program with subprograms, an extra pass per subprogram once every
// subprogram's RX address is known, which must not change the size; then
// every image is finalized (copied RW -> RX and flushed). Any failure frees
// every allocation made so far, RW buffers included.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "isa/program.h"
#include "jit/prog_pack.h"
#include "support/result.h"

namespace bpfdiff::jit {

enum class AtomicLowering : uint8_t {
  kLse,   // ldadd/ldclr/ldeor/ldset/swp/cas (FEAT_LSE)
  kLlSc,  // ldxr/stxr loops with the barriers the kernel uses
};

// Bugs the JIT can be told to have, for negative controls
// (harness/planted/planted_bugs.h). Never set in normal use.
struct JitBugs {
  bool alu32_add_no_zext = false;    // 32-bit add done as a 64-bit add
  bool extable_against_rw = false;   // extable offsets computed against the RW image
  bool extra_pass_grows = false;     // the extra pass emits one more word (a clean failure)
  // The LL/SC fetch/xchg/cmpxchg forms keep using dst as the address after
  // loading the old value into src (or r0) when that is the same register:
  // the pattern of the kernel's emit_ll_sc_atomic with off == 0.
  bool llsc_address_overwritten = false;
  bool tail_call_limit_34 = false;   // MAX_TAIL_CALL_CNT compared as 34: one tail call too many

  // ALU and encodings (alu.cc).
  bool bswap32_no_zext = false;          // ALU64 bswap32 as REV32 Xd: the upper word stays, swapped
  bool logical_imm32_all_ones = false;   // 32-bit and/or/xor/jset with -1 get the reserved encoding
  bool sdiv32_sign_extended = false;     // 32-bit sdiv/smod results sign-extended to 64 bits
  bool divmod_imm1_skipped = false;      // div and mod by the constant 1 emit nothing
  bool sub_imm_negated = false;          // dst -= imm done as dst += -imm in 32 bits (INT_MIN)
  bool shift_imm0_full_width = false;    // rsh/arsh by the constant 0 shift by the full width
  bool alu32_identity_no_zext = false;   // 32-bit ops with an identity constant emit nothing
  bool movsx32_no_zext = false;          // 32-bit movsx sign-extends into the upper half
  bool le_no_truncation = false;         // le16/le32 emit nothing
  bool mod32_zero_no_zext = false;       // 32-bit mod by a zero register skips the zero-extension
  // Loads (memory.cc).
  bool ldx_sign_extended = false;        // zero-extending loads done as sign-extending ones
  bool ldrsw_offset_as_register = false; // 32-bit sign-extending load, register-offset form: Rm = offset & 31
  // Jumps and calls (jump.cc).
  bool jmp32_jset_64bit = false;         // jmp32 jset with a register tests all 64 bits
  bool jset_clobbers_dst = false;        // jset done as dst &= src, then a compare with 0
  bool jsigned_imm_32bit = false;        // 64-bit signed jumps against a constant compare 32 bits
  bool jump_imm_zero_extended = false;   // 64-bit unsigned jumps zero-extend a negative constant
  bool tail_call_index_64bit = false;    // the tail-call index compared as 64 bits, not u32
  bool helper_return_sign_extended = false;  // r0 = (s32)x0 after a helper call
  // Frame (frame.cc).
  bool subprogram_fp_unset = false;      // subprograms do not set r10: it keeps the caller's frame
  // Exception table (extable.cc).
  bool extable_insn_after_load = false;  // an entry points at the instruction after its load
  bool extable_fixup_base_register = false;  // the fixup zeroes the base register, not dst
  // Atomics (atomic.cc).
  bool cmpxchg32_r0_upper_kept = false;  // 32-bit cmpxchg leaves r0's upper half as it was
  bool xchg_as_fetch_add = false;        // xchg lowered as an atomic fetch-add

  friend bool operator==(const JitBugs&, const JitBugs&) = default;
};

struct JitOptions {
  AtomicLowering atomics = AtomicLowering::kLse;
  JitBugs bugs;
};

// What the JIT must know of the world it runs in: where helpers are and
// the layout of the objects a tail call reads (the kernel's offsetof()s).
struct JitEnvironment {
  uint64_t helper_base = 0;      // helper id i lives at helper_base + i * helper_stride
  uint64_t helper_stride = 8;
  uint64_t max_helper_id = 255;  // callx beyond this goes to bad_callx_stub
  uint64_t bad_callx_stub = 0;
  uint32_t map_max_entries_offset = 0;  // struct bpf_array: map.max_entries (u32)
  uint32_t map_ptrs_offset = 0;         // struct bpf_array: ptrs[] (u64 each)
  uint32_t prog_bpf_func_offset = 0;    // struct bpf_prog: bpf_func (u64)
  // The arena (struct bpf_arena): its kernel mapping, which arena accesses
  // add to their register, and the user mapping, whose upper half the
  // cast to a user pointer puts on an offset.
  uint64_t arena_kern_vm_start = 0;
  uint64_t arena_user_vm_start = 0;
  // bpf_loop (helper 181), which calls BPF code: its own entry, not a
  // helper stub's (0: a world without one, where it is a stub like any).
  uint64_t loop_helper = 0;
  // bpf_throw, the one kfunc (oracle/helpers.h): its entry (0: a world
  // without one, where a call of it goes to helper 0's stub, which refuses).
  uint64_t throw_kfunc = 0;

  // Where helper id i's stub is: what callx reaches (ids are checked at load).
  uint64_t HelperAddress(int32_t id) const { return helper_base + helper_stride * static_cast<uint32_t>(id); }
  // Where a direct call of helper `id` goes, as the verifier's fixup
  // points it at the helper's function.
  uint64_t CallTarget(int32_t id) const {
    return id == kLoopHelperId && loop_helper != 0 ? loop_helper : HelperAddress(id);
  }
  // Where a call of kfunc `id` goes, as the verifier's fixup_kfunc_call()
  // points it at the function.
  uint64_t KfuncTarget(int32_t id) const {
    return id == kThrowKfuncId && throw_kfunc != 0 ? throw_kfunc : HelperAddress(0);
  }
  static constexpr int32_t kLoopHelperId = 181;  // BPF_FUNC_loop
  static constexpr int32_t kThrowKfuncId = 1;    // bpfdiff's id of bpf_throw
};

// The frame the prologue builds (see frame.h): where r10 is relative to the
// stack pointer a program is entered with, and the stack one call takes.
struct FrameGeometry {
  uint64_t fp_below_entry_sp;
  uint64_t call_frame_bytes;
};
FrameGeometry Geometry();

// struct exception_table_entry, as arm64 lays it out (12 bytes).
struct ExtableEntry {
  int32_t insn;   // offset from this field to the faulting instruction
  int32_t fixup;  // bits 31..27: register to zero; 26..0: offset from this field back to the resume pc
  int16_t type;
  int16_t data;
};
inline constexpr uint32_t kExtableEntrySize = 12;
inline constexpr int16_t kExTypeBpf = 1;  // EX_TYPE_BPF

struct CompiledSubprogram {
  uint32_t first_slot = 0;  // BPF slots [first_slot, end_slot)
  uint32_t end_slot = 0;
  std::unique_ptr<PackAllocation> allocation;
  uint64_t rx_image = 0;
  uint32_t code_words = 0;  // prologue + body + epilogue
  uint64_t rx_extable = 0;
  uint32_t extable_entries = 0;
  // offsets[i] = word index of the first arm64 instruction of BPF slot
  // first_slot + i; offsets[end - first] = the epilogue.
  std::vector<uint32_t> offsets;
  std::vector<uint32_t> words;  // the code as emitted (the RW buffer is gone after finalize)
  // What the image holds between the code and its exception table, as
  // written: the kernel's PLT target (build_plt(): 8 bytes, the address of
  // dummy_tramp); bpfdiff's JIT writes none.
  std::vector<uint32_t> data_words;
  // Word indices that encode the RX address of another subprogram (they
  // differ when the same program lands at another pack offset): every word
  // of each movz/movk/movk sequence.
  std::vector<uint32_t> address_words;

  bool ContainsCode(uint64_t pc) const { return pc >= rx_image && pc < rx_image + 4ull * code_words; }
  // The BPF slot whose code contains `pc` (the prologue maps to the first
  // slot, the epilogue to the last).
  uint32_t SlotAt(uint64_t pc) const;
};

struct CompiledProgram {
  std::vector<CompiledSubprogram> subprograms;
  uint64_t entry() const { return subprograms.front().rx_image; }
  const CompiledSubprogram* SubprogramAt(uint64_t pc) const;
};

// Where a tail call lands in a program: past the prologue part that pushes
// the frame and initialises the tail-call count (PROLOGUE_OFFSET).
uint64_t TailCallEntryOffset();

struct JitContext;

class Jit {
 public:
  Jit(ProgPack& pack, const JitEnvironment& environment, const JitOptions& options)
      : pack_(pack), env_(environment), options_(options) {}

  // Compiles `program` into the pack. On success every image is finalized.
  Result<CompiledProgram> Compile(const isa::Program& program);

  // Frees every image of `program` (invalidating its slots).
  void Release(CompiledProgram& program);

 private:
  JitContext MakeContext(const isa::Program& program, uint32_t first, uint32_t end,
                         bool is_main) const;

  ProgPack& pack_;
  JitEnvironment env_;
  JitOptions options_;
};

// One exception-table entry, read from its 12 bytes at `entry_address` as
// the kernel reads it: the instruction it covers, where ex_handler_bpf
// resumes, and the register it zeroes (31 = none).
struct DecodedExtableEntry {
  uint64_t target;
  uint64_t resume_pc;
  int reg;
};
DecodedExtableEntry DecodeExtableEntry(const uint8_t* bytes, uint64_t entry_address);

// Reads the exception table of `subprogram` from RX memory (what the kernel
// would search) and returns the resume pc and the register to zero (31 = none)
// for a fault at `pc`, as ex_handler_bpf computes them.
struct Fixup {
  uint64_t resume_pc;
  int reg;
};
std::optional<Fixup> SearchExtable(const uint8_t* rx_extable, uint64_t rx_extable_address,
                                   uint32_t entries, uint64_t pc);

}  // namespace bpfdiff::jit
