// Emits one function (a subprogram) of a generated program, one construct
// per record, keeping the register state that makes every construct valid.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "fuzz/generator/interesting_values.h"
#include "fuzz/generator/record_reader.h"
#include "fuzz/generator/register_state.h"
#include "isa/insn.h"
#include "isa/program.h"

namespace bpfdiff::fuzz {

struct MapInfo {
  int32_t fd;
  isa::MapType type;
  uint32_t key_size, value_size, entries;
  uint8_t index;  // in the case's map list
};

// A subprogram's calling convention: how many scalar arguments it takes,
// and whether r1 points into the caller's frame (64 bytes) instead. A
// callback (format version 7) may also be bpf_loop's: it takes at most
// two scalars (the iteration and the context), reads no r0 before it sets
// it, and returns 0 or 1, as the verifier wants of a callback.
struct Signature {
  int args = 0;
  bool caller_stack = false;
  bool callback = false;
  // Version 8: the program's exception callback (the cookie in r1), which
  // bpf_throw alone calls.
  bool exception_callback = false;
};

struct CaseLayout {
  uint8_t version = kFormatVersion;  // of the input (fuzz_format.h)
  // Version 3, header byte 15 bit 0: operands from the magnitude classes.
  bool magnitudes = false;
  // Version 4, header byte 15 bits 1, 2, 6; 4; 5 (with tail-call targets):
  // the main entry and each target end with a tail call, into the target's
  // own slot or the next target's, with an upper half or not.
  bool tail_call_chain = false;
  bool chain_to_next = false;
  bool chain_upper_garbage = false;  // bit 5: the chain's indexes carry an upper half
  // Version 4, header byte 15 bit 3: tail-call indexes around max_entries,
  // the JSET relation, offsets beyond every area (fuzz_format.h).
  bool bounds = false;
  // Format version 2 (fuzz_format.h): each function stores the registers
  // it wrote below frame_low before it exits; constructs use [frame_low, 0);
  // no legacy packet access (its record kind is an ALU operation); the
  // table of untrusted addresses leaves out program 0's bpf_func.
  bool observe_registers = false;
  int32_t frame_low = -static_cast<int32_t>(isa::kStackSize);
  bool legacy_packet_access = true;
  std::span<const uint64_t> interesting_addresses = kInterestingAddressesV1;
  uint32_t context_length = 0;
  std::vector<MapInfo> value_maps;        // array and hash maps
  std::optional<MapInfo> prog_array;      // with tail-call targets
  std::vector<Signature> signatures;      // per function of the main program
  // Version 8: per function of the main program, whether it may throw
  // (bpf_throw in it or in a function it calls), set as each is built
  // (callees before their callers): no callback calls one.
  std::vector<bool> throws;
  // Version 8: the first slot of the main program's exception callback
  // (the last function, header byte 2 bit 7), 0 for none; set when built.
  uint32_t exception_callback_start = 0;
};

class FunctionBuilder {
 public:
  enum class Role : uint8_t { kMainEntry, kSubprogram, kTailTarget };

  // `function` is the function's index in the main program; for a
  // tail-call target, its prog_array slot.
  FunctionBuilder(const CaseLayout& layout, Role role, size_t function, size_t functions);

  // Emits constructs until the records say the function ends (or it is
  // long enough), then closes every open region and returns with exit.
  void Build(RecordReader& records);

  // Before Build() of the main entry: functions no one else calls, which
  // the main entry calls at its end so that every function is a subprogram.
  void set_uncalled(std::vector<size_t> uncalled) { uncalled_ = std::move(uncalled); }

  std::vector<isa::Insn>& code() { return code_; }
  // (slot, callee function) of every local call and lddw_func, to patch
  // after layout (both name the callee by its distance in imm).
  const std::vector<std::pair<size_t, size_t>>& local_calls() const { return local_calls_; }
  // Whether the function calls bpf_throw, itself or through a callee.
  bool throws() const { return throws_; }

 private:
  struct Region {
    enum class Kind : uint8_t { kIf, kDead, kLoop, kGuarded } kind;
    size_t jump_slot;       // the forward jump to patch at the end (not loops)
    size_t loop_head;       // loops: the first slot of the body
    uint8_t counter;        // loops: the counter register
    MachineState before;    // the state where the region began
    int constructs = 0;
  };

  using RegKind = RegState::Kind;

  void Construct(const Record& r);
  // Appends `insn`, noting the registers it writes.
  void Emit(isa::Insn insn);
  // The exit of the function, with the observations of version 2 first.
  void EmitExit();
  void EmitObservations();
  void EmitLddw(uint8_t dst, uint8_t src, uint64_t imm64);
  void EmitMovImm(uint8_t dst, uint64_t value);

  bool in_region() const { return !regions_.empty(); }
  bool reserved(uint8_t reg) const { return (reserved_ >> reg) & 1; }
  // A register this construct may overwrite (with a scalar), or -1.
  int PickWritable(uint8_t choice, bool callee_saved_only = false) const;
  // A register holding any value, or -1.
  int PickReadable(uint8_t choice) const;
  // A readable register, made readable with a constant if none is.
  uint8_t ScalarOperand(uint8_t choice);
  // A register pointing into memory the function may access with `size`
  // bytes, and an offset from it that stays inside the area.
  struct Access {
    uint8_t base;
    int16_t offset;
  };
  std::optional<Access> PickAccess(const Record& r, unsigned size, bool aligned);
  // A register that is not a stack pointer and may be overwritten, whose
  // own address (offset 0) fits `size` aligned bytes of its area.
  std::optional<Access> OwnAddressAccess(uint8_t choice, unsigned size) const;
  // dst = r10 + offset (mov, add): an address in the frame.
  void EmitFrameAddress(uint8_t dst, int32_t offset);
  // call local to `callee` (patched when the layout is known); r1..r5 are
  // then undefined and r0 a scalar.
  void EmitLocalCall(size_t callee);
  // bpf_loop(n, callee, ctx = r3, flags) with `lddw_func r2, callee` just
  // before the call (patched as a local call is); r1..r5 are then
  // undefined and r0 a scalar.
  void EmitLoopCall(size_t callee, uint8_t choice);
  void SetScalar(uint8_t reg) { state_.regs[reg] = RegState::Scalar(); }
  void ClobberCallerSaved();

  int32_t Immediate(const Record& r, size_t byte) const;
  uint64_t Immediate64(const Record& r) const;
  // Operand-magnitude mode (fuzz_format.h): a 64-bit class value (class,
  // parameter), a 32-bit one, and a value related to `a`.
  uint64_t Magnitude64(const Record& r, uint8_t cls, uint8_t param) const;
  int32_t Magnitude32(const Record& r, uint8_t cls, uint8_t param) const;
  // A register set to a value related to `a` (held in `a_reg`) by record
  // byte p3; may be a_reg itself.
  uint8_t RelatedOperand(const Record& r, uint8_t a_reg, uint64_t a);
  // An offset from a pointer at `from` where an addressing form changes,
  // inside [low, high - size], aligned if asked; nullopt when none fits.
  std::optional<int32_t> BoundaryOffset(uint8_t choice, int32_t from, int32_t low, int32_t high, unsigned size,
                                        bool aligned) const;
  // The bounds mode: an offset no area is large enough for (fuzz_format.h), from
  // a copy of `base` moved so that the access lands in [low, high - size].
  std::optional<Access> DisplacedAccess(const Record& r, uint8_t base, int32_t low, int32_t high, unsigned size,
                                        bool aligned);
  // The bounds mode: the tail-call index of a record, by its relation to
  // max_entries (fuzz_format.h).
  uint64_t TailCallIndex(const Record& r) const;
  // The tail-call chain (version 4): whether this function is in it, and
  // the tail call it ends with.
  bool InChain() const;
  void EmitChainTailCall();
  // r1 = ctx (from `context`), r2 = &prog_array, r3 = index; tail call
  // (the helper form when `helper_form`).
  void EmitTailCall(uint8_t context, uint64_t index, bool helper_form);

  // Constructs.
  void Alu(const Record& r);
  void MovImm(const Record& r);
  void LoadImm64(const Record& r);
  void Load(const Record& r);
  void Store(const Record& r);
  void AtomicOp(const Record& r);
  void ProbeLoad(const Record& r);
  void UntrustedPointer(const Record& r);
  void PerCpuPointer(const Record& r);
  void ArenaAccess(const Record& r);
  void ArenaAccessBody(const Record& r);
  void PointerSetup(const Record& r);
  void BeginIf(const Record& r);
  void BeginDead(const Record& r);
  void BeginLoop(const Record& r);
  void EndRegion();
  void HelperCall(const Record& r);
  void SetUpHelperArgs(const Record& r, int32_t helper);
  void LocalCall(const Record& r);
  void Callx(const Record& r);
  void TailCall(const Record& r);
  void EarlyExit(const Record& r);
  void Throw(const Record& r);
  // A callback of bpf_loop may not throw, nor call what throws.
  bool IsCallback() const {
    return role_ == Role::kSubprogram &&
           (layout_.signatures[function_].callback || layout_.signatures[function_].exception_callback);
  }
  void DeliberateFault(const Record& r);
  void LegacyPacket(const Record& r);

  const CaseLayout& layout_;
  Role role_;
  size_t function_;
  size_t functions_;
  std::vector<isa::Insn> code_;
  MachineState state_;
  std::vector<Region> regions_;
  uint16_t reserved_ = 0;  // loop counters
  uint16_t written_ = 0;   // registers some emitted instruction writes
  int loops_ = 0;
  std::vector<std::pair<size_t, size_t>> local_calls_;
  bool throws_ = false;
  std::vector<size_t> uncalled_;
};

}  // namespace bpfdiff::fuzz
