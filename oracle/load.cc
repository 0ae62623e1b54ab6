#include "oracle/load.h"

#include <algorithm>
#include <deque>

#include <fmt/format.h>

#include "oracle/guest_layout.h"
#include "oracle/helpers.h"
#include "oracle/register_use.h"

namespace bpfdiff {
namespace {

using isa::Form;
using isa::FormById;
using isa::Insn;
using isa::Shape;

// Whether a branch of `program` names slot `target`.
bool IsNamedBySomeBranch(const isa::Program& program, size_t target) {
  for (size_t pc = 0; pc < program.size(); ++pc) {
    if (program.slots[pc].second_slot) continue;
    const Insn& insn = program.insns[pc];
    const Shape shape = FormById(program.slots[pc].form).shape;
    if (isa::NamesSlot(shape) && isa::BranchTarget(insn, shape, pc) == static_cast<int64_t>(target)) return true;
  }
  return false;
}

// bpf_loop needs a function in r2, which the verifier proves by following
// r2's type; bpfdiff's stand-in: the call follows `lddw_func r2` and no
// branch lands between them.
bool CallbackInR2(const isa::Program& program, size_t call) {
  if (call < 2 || !program.slots[call - 1].second_slot) return false;
  const Insn& load = program.insns[call - 2];
  return FormById(program.slots[call - 2].form).shape == Shape::kLddwFunc && load.dst == 2 &&
         !IsNamedBySomeBranch(program, call);
}

// By the fields alone (an lddw's second slot has opcode 0): every program
// of every case is scanned, and few throw.
bool IsThrow(const Insn& insn) {
  return insn.opcode == isa::kOpCall && insn.src == isa::kPseudoKfuncCall && insn.imm == kKfuncThrow;
}

bool Throws(const isa::Program& program) { return std::any_of(program.insns.begin(), program.insns.end(), IsThrow); }

// bpf_throw unwinds to the program's frame through BPF frames only: the
// verifier refuses it in a callback and in whatever a callback calls
// (check_max_stack_depth_subprog: "bpf_throw kfunc cannot be called from
// callback subprog"), since bpf_loop's frame would stop the unwind.
Status CheckThrows(const isa::Program& program, size_t index, const std::vector<std::vector<size_t>>& callees) {
  if (!Throws(program)) return {};
  const size_t subprograms = program.subprogram_starts.size();
  std::vector<bool> under_callback(subprograms, false);
  std::vector<size_t> work;
  // The exception callback is a callback too (mark_subprog_exc_cb: is_cb).
  if (program.exception_callback != 0) work.push_back(program.SubprogramOf(program.exception_callback));
  for (size_t pc = 0; pc < program.size(); ++pc) {
    if (program.slots[pc].second_slot || FormById(program.slots[pc].form).shape != Shape::kLddwFunc) continue;
    const auto target = static_cast<uint32_t>(isa::BranchTarget(program.insns[pc], Shape::kLddwFunc, pc));
    work.push_back(program.SubprogramOf(target));
  }
  while (!work.empty()) {
    const size_t sub = work.back();
    work.pop_back();
    if (under_callback[sub]) continue;
    under_callback[sub] = true;
    for (size_t callee : callees[sub]) work.push_back(callee);
  }
  for (size_t pc = 0; pc < program.size(); ++pc) {
    if (!IsThrow(program.insns[pc])) continue;
    const size_t sub = program.SubprogramOf(static_cast<uint32_t>(pc));
    if (under_callback[sub]) {
      return Fail("program {}, instruction {} (call kfunc): bpf_throw cannot be called from a callback or what a "
                  "callback calls (subprogram {})",
                  index, pc, sub);
    }
  }
  return {};
}

// As the verifier's do_misc_fixups(): a program that calls bpf_throw and
// names no exception callback gets one, a hidden subprogram appended to it
// that returns the cookie (`r0 = r1; exit`). Its slots map to the source's
// last.
Status AddExceptionCallback(LoadedProgram& loaded, size_t index) {
  isa::Program& program = loaded.program;
  if (program.exception_callback != 0 || !Throws(program)) return {};  // the loader named one, or none is needed
  const auto start = static_cast<uint32_t>(program.size());
  std::vector<Insn> insns = program.insns;
  insns.push_back(Insn{isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, 0, 1, 0, 0});
  insns.push_back(Insn{isa::kOpExit, 0, 0, 0, 0});
  // The rewrites are made: no map is named any more.
  auto with_callback = isa::MakeProgram(std::move(insns), {}, start);
  if (!with_callback) return Fail("program {}: the exception callback: {}", index, with_callback.message());
  program = std::move(with_callback).value();
  const uint32_t last = loaded.source_slot.empty() ? 0 : loaded.source_slot.back();
  loaded.source_slot.push_back(last);
  loaded.source_slot.push_back(last);
  return {};
}

// Verifier-lite checks that do not depend on data flow.
Status CheckProgram(const isa::Program& program, size_t index) {
  const auto& slots = program.slots;
  const size_t subprograms = program.subprogram_starts.size();
  std::vector<std::vector<size_t>> callees(subprograms);
  for (size_t pc = 0; pc < program.size(); ++pc) {
    const Insn& insn = program.insns[pc];
    // Nothing below concerns ALU instructions (most of any program).
    const uint8_t cls = isa::ClassOf(insn.opcode);
    if (slots[pc].second_slot || cls == isa::kClassAlu || cls == isa::kClassAlu64) continue;
    const Form& form = FormById(slots[pc].form);
    auto where = [&] { return fmt::format("program {}, instruction {} ({})", index, pc, form.name); };
    if (form.shape == Shape::kCallHelper && insn.imm != kHelperTailCall &&
        FindHelper(insn.imm) == nullptr) {
      return Fail("{}: unknown helper {}", where(), insn.imm);
    }
    if (form.shape == Shape::kCallHelper && insn.imm == kHelperLoop && !CallbackInR2(program, pc)) {
      return Fail("{}: bpf_loop's callback (r2) must be the function `lddw_func r2` loads just before the call",
                  where());
    }
    if (form.shape == Shape::kCallKfunc && insn.imm != kKfuncThrow) {
      return Fail("{}: unknown kfunc {} (bpfdiff knows bpf_throw, {})", where(), insn.imm, int{kKfuncThrow});
    }
    if ((form.shape == Shape::kTailCall ||
         (form.shape == Shape::kCallHelper && insn.imm == kHelperTailCall)) &&
        program.SubprogramOf(static_cast<uint32_t>(pc)) != 0) {
      return Fail("{}: tail calls from subprograms are not modelled", where());
    }
    // A callback runs a frame deeper than the function that passes it
    // (bpf_loop calls it), as the verifier counts it; it is a static
    // function, never the main one (check_ld_imm).
    if (form.shape == Shape::kLddwFunc && isa::BranchTarget(insn, form.shape, pc) == 0) {
      return Fail("{}: a callback must be a subprogram, not the program's entry", where());
    }
    if ((form.shape == Shape::kCallLocal || form.shape == Shape::kLddwFunc) && program.exception_callback != 0 &&
        isa::BranchTarget(insn, form.shape, pc) == program.exception_callback) {
      // check_max_stack_depth_subprog: "cannot call exception cb directly".
      return Fail("{}: the exception callback is called by bpf_throw alone", where());
    }
    if (form.shape == Shape::kCallLocal || form.shape == Shape::kLddwFunc) {
      const auto target = static_cast<uint32_t>(isa::BranchTarget(insn, form.shape, pc));
      callees[program.SubprogramOf(static_cast<uint32_t>(pc))].push_back(program.SubprogramOf(target));
    }
    // r10-relative accesses must stay inside the frame [r10 - 512, r10).
    int base = -1;
    if (form.shape == Shape::kLoad) base = insn.src;
    if (form.shape == Shape::kStoreImm || form.shape == Shape::kStoreReg || form.shape == Shape::kAtomic) {
      base = insn.dst;
    }
    if (base == isa::kFramePointer) {
      const int size = static_cast<int>(isa::SizeBytes(insn.opcode));
      if (insn.offset < -isa::kStackSize || insn.offset + size > 0) {
        return Fail("{}: stack access at r10{:+} ({} bytes) is outside the {}-byte frame", where(),
                    insn.offset, size, isa::kStackSize);
      }
    }
  }
  // The call graph must be acyclic and at most kMaxCallDepth frames deep.
  std::vector<int> depth(subprograms, 0);  // 0 = unvisited, -1 = on the stack
  std::vector<int> longest(subprograms, 1);
  auto visit = [&](auto&& self, size_t sub) -> Status {
    depth[sub] = -1;
    for (size_t callee : callees[sub]) {
      if (depth[callee] == -1) {
        return Fail("program {}: subprogram {} calls itself recursively (through subprogram {})",
                    index, callee, sub);
      }
      if (depth[callee] == 0) {
        if (auto status = self(self, callee); !status) return status;
      }
      longest[sub] = std::max(longest[sub], longest[callee] + 1);
    }
    depth[sub] = 1;
    return {};
  };
  if (auto status = visit(visit, 0); !status) return status;
  if (longest[0] > isa::kMaxCallDepth) {
    return Fail("program {}: calls nest {} frames deep, more than the limit of {}", index,
                longest[0], isa::kMaxCallDepth);
  }
  return CheckThrows(program, index, callees);
}

// Finds the first read of a register that a call left undefined.
// What a program entered by a tail call may not read before it writes,
// because the engines hold it differently by design: the kernel's JIT
// restores the caller's r6..r9 from the stack before it jumps and leaves
// only the low half of r3 (the index), where the interpreter keeps the tail
// caller's registers. (The verifier allows only r1 and r10; r0, r2, r4 and
// r5 are the caller's in every engine, so reading them says nothing.)
constexpr uint16_t kUndefinedAtTailCallEntry =
    RegisterBit(3) | RegisterBit(6) | RegisterBit(7) | RegisterBit(8) | RegisterBit(9);
constexpr int64_t kAtEntry = -2;  // clobbered_by: undefined since the program's entry

// Where the registers undefined since the entry (`undefined_at_entry`) are
// so, for the finding's words.
struct EntryRule {
  uint16_t undefined_at_entry = 0;
  std::string_view where;  // "where a tail call enters the program"
  // Undefined where a bpf-to-bpf call enters a function (0: the caller's,
  // as in every JIT and in bpfdiff's interpreter).
  uint16_t undefined_at_callee_entry = 0;
  // Whether a call's clobbering of r1..r5 counts too.
  bool calls_clobber = true;
};
constexpr EntryRule kTailCallEntry{kUndefinedAtTailCallEntry, "where a tail call enters the program"};
constexpr int64_t kAtExceptionCallback = -3;  // clobbered_by: undefined since the exception callback's entry

std::optional<std::string> FindClobberedRead(const isa::Program& program, size_t index, const EntryRule& entry) {
  const bool undefined_at_entry = entry.undefined_at_entry != 0;
  const auto& slots = program.slots;
  const size_t n = program.size();
  // Only a call leaves registers undefined: a program without one (the
  // common case, and every test_tag program) needs no data flow.
  bool has_call = false;
  for (size_t pc = 0; pc < n && !has_call; ++pc) {
    const uint8_t cls = isa::ClassOf(program.insns[pc].opcode);
    if (slots[pc].second_slot || (cls != isa::kClassJmp && cls != isa::kClassJmp32 && cls != isa::kClassLd)) continue;
    const Shape shape = FormById(slots[pc].form).shape;
    has_call = shape == Shape::kCallHelper || shape == Shape::kCallLocal || shape == Shape::kCallReg ||
               shape == Shape::kCallKfunc || shape == Shape::kTailCall || shape == Shape::kLdAbs || shape == Shape::kLdInd;
  }
  if (!has_call && !undefined_at_entry) return std::nullopt;
  // Per slot: registers that may be clobbered on entry, and by which call.
  std::vector<uint16_t> in(n, 0);
  std::vector<bool> seen(n, false);
  std::vector<int64_t> clobbered_by(n, -1);
  std::deque<size_t> work;
  for (uint32_t start : program.subprogram_starts) {
    seen[start] = true;
    work.push_back(start);
  }
  if (undefined_at_entry && n != 0) {
    in[0] = entry.undefined_at_entry;
    clobbered_by[0] = kAtEntry;
  }
  // An exception callback takes one argument, the cookie in r1; bpf_throw's
  // r2..r5 are no values of the program's (the JITs' r3 is a frame record).
  if (program.exception_callback != 0) {
    in[program.exception_callback] = kArgRegisters & static_cast<uint16_t>(~RegisterBit(1));
    clobbered_by[program.exception_callback] = kAtExceptionCallback;
  }
  std::optional<std::string> finding;
  auto flow = [&](size_t to, uint16_t state, int64_t call) {
    if (to >= n) return;
    const auto merged = static_cast<uint16_t>(in[to] | state);
    if (seen[to] && merged == in[to]) return;
    in[to] = merged;
    if (call != -1) clobbered_by[to] = call;  // a call, or kAtEntry
    seen[to] = true;
    work.push_back(to);
  };
  while (!work.empty()) {
    const size_t pc = work.front();
    work.pop_front();
    const Insn& insn = program.insns[pc];
    const Form& form = FormById(slots[pc].form);
    const RegisterUse use = UseOf(insn, form);
    if ((use.reads & in[pc]) != 0 && !finding) {
      unsigned reg = 0;
      while (!((use.reads & in[pc]) & RegisterBit(reg))) ++reg;
      // A call leaves only r1..r5 undefined: r6..r9 are so since the entry.
      const bool since_entry = clobbered_by[pc] == kAtEntry || (RegisterBit(reg) & kArgRegisters) == 0;
      finding = clobbered_by[pc] == kAtExceptionCallback
                    ? fmt::format("program {}, instruction {} ({}) reads r{}, which the exception callback is not "
                                  "given (it takes the cookie, r1)",
                                  index, pc, form.name, reg)
                : since_entry
                    ? fmt::format("program {}, instruction {} ({}) reads r{}, which is undefined {}", index, pc,
                                  form.name, reg, entry.where)
                    : fmt::format("program {}, instruction {} ({}) reads r{}, which the call at instruction {} "
                                  "left undefined",
                                  index, pc, form.name, reg, clobbered_by[pc]);
    }
    uint16_t out = static_cast<uint16_t>(in[pc] & ~use.writes);
    int64_t call = clobbered_by[pc];
    if (use.clobbers_args && entry.calls_clobber) {
      out |= kArgRegisters;
      call = static_cast<int64_t>(pc);
    }
    const size_t next = pc + (form.is_wide() ? 2 : 1);
    switch (form.shape) {
      case Shape::kExit: break;
      case Shape::kCallKfunc:
        // bpf_throw does not return; the exception callback's entry (a
        // subprogram start) has only r1, the cookie, of r1..r5.
        if (insn.imm != kKfuncThrow) flow(next, out, call);
        break;
      case Shape::kJa:
      case Shape::kJa32: flow(static_cast<size_t>(isa::BranchTarget(insn, form.shape, pc)), out, call); break;
      case Shape::kJumpImm:
      case Shape::kJumpReg:
        flow(static_cast<size_t>(isa::BranchTarget(insn, form.shape, pc)), out, call);
        flow(next, out, call);
        break;
      case Shape::kCallLocal: {
        // The callee's arguments are the caller's r1..r5 at the call: one
        // that an earlier call left undefined is undefined in the callee.
        const auto passed = static_cast<uint16_t>((in[pc] & kArgRegisters) | entry.undefined_at_callee_entry);
        flow(static_cast<size_t>(isa::BranchTarget(insn, form.shape, pc)), passed,
             passed != 0 ? clobbered_by[pc] : -1);
        flow(next, out, call);
        break;
      }
      case Shape::kLddwFunc:
        // The callback's entry: bpf_loop passes it r1..r5, every one set.
        flow(static_cast<size_t>(isa::BranchTarget(insn, form.shape, pc)), 0, -1);
        flow(next, out, call);
        break;
      default: flow(next, out, call);
    }
  }
  return finding;
}

// Rebuilds a program where slot i of `source` became `replacement[i]` (one
// or more slots), retargeting every branch to the first slot of the
// replacement of its old target.
Result<LoadedProgram> Rewrite(const isa::Program& source,
                              const std::vector<std::vector<Insn>>& replacement,
                              const std::vector<isa::MapSpec>& maps) {
  const size_t n = source.size();
  std::vector<uint32_t> new_index(n + 1);
  uint32_t next = 0;
  for (size_t i = 0; i < n; ++i) {
    new_index[i] = next;
    next += static_cast<uint32_t>(replacement[i].size());
  }
  new_index[n] = next;
  LoadedProgram out;
  out.source_slot.reserve(next);
  std::vector<Insn> insns;
  insns.reserve(next);
  const auto& slots = source.slots;
  for (size_t i = 0; i < n; ++i) {
    for (Insn insn : replacement[i]) {
      if (!slots[i].second_slot && replacement[i].size() == 1) {
        const Shape shape = FormById(slots[i].form).shape;
        if (isa::NamesSlot(shape)) {
          const auto old_target = static_cast<size_t>(isa::BranchTarget(insn, shape, i));
          const int64_t delta = static_cast<int64_t>(new_index[old_target]) -
                                static_cast<int64_t>(new_index[i]) - 1;
          if (isa::DistanceInImm(shape)) {
            insn.imm = static_cast<int32_t>(delta);
          } else {
            if (delta < INT16_MIN || delta > INT16_MAX) {
              return Fail("instruction {}: after inlining, the jump offset {} no longer fits in 16 bits", i, delta);
            }
            insn.offset = static_cast<int16_t>(delta);
          }
        }
      }
      insns.push_back(insn);
      out.source_slot.push_back(static_cast<uint32_t>(i));
    }
  }
  auto program = isa::MakeProgram(std::move(insns), maps,
                                  source.exception_callback != 0 ? new_index[source.exception_callback] : 0);
  if (!program) return Fail("rewritten program is invalid: {}", program.message());
  out.program = std::move(program).value();
  return out;
}

Result<LoadedProgram> LoadProgram(isa::Program program, size_t index, const std::vector<isa::MapSpec>& maps,
                                  const std::vector<uint64_t>& value_addresses, const LoadOptions& options) {
  if (auto status = CheckProgram(program, index); !status) return status.error();
  const auto& slots = program.slots;
  // Most rewrites replace one slot by one of the same width and no branch
  // (a map load becomes a plain lddw, a tail-call helper call the tail-call
  // instruction): those patch the program in place and reclassify the
  // slot, which keeps every structural check MakeProgram made. Only an
  // inlined helper call grows a slot into several, which needs Rewrite to
  // move every branch.
  // `program` is ours: patches go straight into it (each slot is read
  // before it is patched; the second slot of an lddw after its first).
  std::vector<size_t> patched_slots;
  std::vector<std::pair<size_t, std::vector<Insn>>> expansions;
  auto patch = [&](size_t pc, const Insn& insn) {
    program.insns[pc] = insn;
    patched_slots.push_back(pc);
  };
  for (size_t pc = 0; pc < program.size(); ++pc) {
    Insn insn = program.insns[pc];
    // Only lddw (class LD) and calls (class JMP) are rewritten.
    const uint8_t cls = isa::ClassOf(insn.opcode);
    if (slots[pc].second_slot || (cls != isa::kClassLd && cls != isa::kClassJmp)) continue;
    const Shape shape = FormById(slots[pc].form).shape;
    if (shape == Shape::kLddwMapFd || shape == Shape::kLddwMapValue) {
      const auto map_index = static_cast<size_t>(isa::FindMap(maps, insn.imm) - maps.data());  // validated
      uint64_t address = guest::MapObjectAddress(map_index);
      if (shape == Shape::kLddwMapValue) {
        address = value_addresses[map_index] + static_cast<uint32_t>(program.insns[pc + 1].imm);
      }
      insn.src = 0;
      insn.imm = static_cast<int32_t>(static_cast<uint32_t>(address));
      patch(pc, insn);
      Insn second = program.insns[pc + 1];
      second.imm = static_cast<int32_t>(static_cast<uint32_t>(address >> 32));
      patch(pc + 1, second);
    } else if (shape == Shape::kCallHelper && insn.imm == kHelperTailCall) {
      patch(pc, Insn{isa::kOpTailCall, 0, 0, 0, 0});
    } else if (shape == Shape::kCallHelper && insn.imm == kHelperKptrXchg && options.inline_kptr_xchg) {
      // r0 = r2; r0 = xchg(*(u64 *)(r1 + 0), r0)
      expansions.emplace_back(pc, std::vector<Insn>{
                                      Insn{isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, 0, 2, 0, 0},
                                      Insn{isa::kClassStx | isa::kModeAtomic | isa::kSizeDW, 1, 0, 0,
                                           isa::kAtomicXchg}});
    }
  }

  if (expansions.empty()) {
    LoadedProgram out;
    out.source_slot.resize(program.size());
    for (uint32_t i = 0; i < out.source_slot.size(); ++i) out.source_slot[i] = i;
    for (size_t pc : patched_slots) {
      if (program.slots[pc].second_slot) continue;
      const auto form = isa::Classify(program.insns[pc]);
      if (!form) return Fail("program {}: instruction {} was rewritten into no instruction", index, pc);
      program.slots[pc].form = *form;
      if (FormById(*form).is_wide()) program.slots[pc + 1].form = *form;
    }
    out.program = std::move(program);
    return out;
  }
  std::vector<std::vector<Insn>> replacement(program.size());
  for (size_t pc = 0; pc < program.size(); ++pc) replacement[pc] = {program.insns[pc]};
  for (auto& [pc, insns] : expansions) replacement[pc] = std::move(insns);
  return WithContext(Rewrite(program, replacement, maps), fmt::format("program {}", index));
}

}  // namespace

uint64_t MapValuesBytes(const isa::MapSpec& map) {
  switch (map.type) {
    case isa::MapType::kArray: return uint64_t{map.max_entries} * guest::ArrayValueStride(map.value_size);
    case isa::MapType::kHash:
      return uint64_t{map.max_entries} * guest::HashSlotSize(map.key_size, map.value_size);
    case isa::MapType::kProgArray: return 0;
  }
  return 0;
}

std::vector<uint64_t> MapValueAddresses(const std::vector<isa::MapSpec>& maps) {
  std::vector<uint64_t> addresses;
  uint64_t next = guest::kMapValuesBase;
  for (const auto& map : maps) {
    addresses.push_back(next);
    next += guest::RoundUp(MapValuesBytes(map), 64);
  }
  return addresses;
}

std::span<const int32_t> LoadOptions::JitInlinedHelpers() const {
  static constexpr int32_t kKptrXchg[] = {kHelperKptrXchg};
  if (inline_kptr_xchg) return kKptrXchg;
  return {};
}

std::optional<std::string> FindReadAtTailCallEntry(const isa::Program& program, size_t index) {
  return FindClobberedRead(program, index, kTailCallEntry);
}

std::optional<std::string> FindReadOfUndefinedAtEntry(const isa::Program& program, size_t index, uint16_t undefined,
                                                      std::string_view where) {
  return FindClobberedRead(program, index, EntryRule{undefined, where});
}

std::optional<std::string> FindReadOfUndefinedAtCalleeEntry(const isa::Program& program, size_t index) {
  constexpr uint16_t kFreshInACallee =
      RegisterBit(0) | RegisterBit(6) | RegisterBit(7) | RegisterBit(8) | RegisterBit(9);
  return FindClobberedRead(program, index,
                           EntryRule{0, "where a bpf-to-bpf call enters the function", kFreshInACallee, false});
}

Result<LoadedCase> LoadCase(const CaseSource& source) { return LoadCase(source, source.options); }

namespace {

// The offset from r10 of the memory `insn` (of `form`) accesses, when r10
// is its base register; nullopt for any other instruction.
std::optional<int16_t> FramePointerBaseOffset(const Insn& insn, const Form& form) {
  switch (form.shape) {
    case Shape::kLoad: return insn.src == isa::kFramePointer ? std::optional<int16_t>(insn.offset) : std::nullopt;
    case Shape::kStoreImm:
    case Shape::kStoreReg:
    case Shape::kAtomic: return insn.dst == isa::kFramePointer ? std::optional<int16_t>(insn.offset) : std::nullopt;
    default: return std::nullopt;
  }
}

// A stack depth a case names must hold every access its program makes
// through r10 itself (the verifier computes the depth from them): a JIT
// reserves only that much below r10, and an access past it would write
// where an interrupt may. An access through a copy of r10 is not checked.
Status CheckStackDepth(const isa::Program& program, uint32_t depth) {
  for (size_t pc = 0; pc < program.insns.size(); ++pc) {
    if (program.slots[pc].second_slot) continue;
    const Insn& insn = program.insns[pc];
    const Form& form = FormById(program.slots[pc].form);
    const std::optional<int16_t> offset = FramePointerBaseOffset(insn, form);
    if (offset && int64_t{*offset} < -int64_t{depth}) {
      return Fail("instruction {} ({}) accesses r10{}, past the stack depth of {} bytes", pc, form.name, *offset,
                  depth);
    }
  }
  return {};
}

// The deepest byte below r10 that `program` reaches through r10 itself, or
// nullopt when it reads r10 otherwise (copies it, or stores its value).
std::optional<uint32_t> DirectStackDepth(const isa::Program& program) {
  uint32_t depth = 0;
  for (size_t pc = 0; pc < program.insns.size(); ++pc) {
    if (program.slots[pc].second_slot) continue;
    const Insn& insn = program.insns[pc];
    const Form& form = FormById(program.slots[pc].form);
    if ((UseOf(insn, form).reads & RegisterBit(isa::kFramePointer)) == 0) continue;
    const std::optional<int16_t> offset = FramePointerBaseOffset(insn, form);
    const bool stores_r10 =
        (form.shape == Shape::kStoreReg || form.shape == Shape::kAtomic) && insn.src == isa::kFramePointer;
    if (!offset || stores_r10) return std::nullopt;
    if (*offset < 0) depth = std::max(depth, static_cast<uint32_t>(-int32_t{*offset}));
  }
  return std::min(depth, static_cast<uint32_t>(isa::kStackSize));
}

}  // namespace

std::vector<uint32_t> VerifierStackDepths(const std::vector<const isa::Program*>& programs) {
  const auto most = static_cast<uint32_t>(isa::kStackSize);
  uint32_t depth = 0;
  for (const isa::Program* program : programs) {
    const std::optional<uint32_t> direct = DirectStackDepth(*program);
    depth = program->subprogram_starts.size() > 1 || !direct ? most : std::max(depth, *direct);
    if (depth == most) break;
  }
  return std::vector<uint32_t>(programs.size(), depth);
}

Result<LoadedCase> LoadCase(const CaseSource& source, const LoadOptions& options) {
  if (source.programs.empty()) return Fail("the case has no program");
  if (source.programs.size() > guest::kMaxPrograms) {
    return Fail("the case has {} programs, more than the limit of {}", source.programs.size(),
                guest::kMaxPrograms);
  }
  if (source.maps.size() > guest::kMaxMaps) {
    return Fail("the case declares {} maps, more than the limit of {}", source.maps.size(), guest::kMaxMaps);
  }
  if (source.memory.size() > guest::kContextSize) {
    return Fail("input memory of {} bytes is larger than the {}-byte context region",
                source.memory.size(), guest::kContextSize);
  }
  if (options.null_context && !source.memory.empty()) {
    return Fail("a case with no context (r1 NULL) has no input memory; this one has {} bytes", source.memory.size());
  }
  uint64_t values_end = guest::kMapValuesBase;
  for (const auto& map : source.maps) values_end += guest::RoundUp(MapValuesBytes(map), 64);
  if (values_end > guest::kMapValuesBase + guest::kMapValuesSize) {
    return Fail("the maps' values need {} bytes, more than the {}-byte map region",
                values_end - guest::kMapValuesBase, guest::kMapValuesSize);
  }
  for (const auto& map : source.maps) {
    if (map.type == isa::MapType::kProgArray) {
      if (map.max_entries > guest::kMaxProgArrayEntries) {
        return Fail("prog_array map {} has {} entries, more than the limit of {}", map.fd,
                    map.max_entries, guest::kMaxProgArrayEntries);
      }
      for (int32_t target : map.programs) {
        if (target < -1 || target >= static_cast<int32_t>(source.programs.size())) {
          return Fail("prog_array map {} names program {}, but the case has {} programs", map.fd,
                      target, source.programs.size());
        }
      }
      if (map.programs.size() > map.max_entries) {
        return Fail("prog_array map {} lists {} programs for {} entries", map.fd, map.programs.size(), map.max_entries);
      }
    } else if (map.type == isa::MapType::kHash && !map.initial_values.empty()) {
      return Fail("hash map {} cannot have initial values (fill it with map_update_elem)", map.fd);
    } else if (map.initial_values.size() > uint64_t{map.value_size} * map.max_entries) {
      return Fail("map {} has {} bytes of initial values, more than its {} values of {} bytes", map.fd,
                  map.initial_values.size(), map.max_entries, map.value_size);
    }
  }

  LoadedCase loaded;
  loaded.maps = source.maps;
  loaded.memory = source.memory;
  loaded.options = options;
  const auto value_addresses = MapValueAddresses(source.maps);
  for (size_t i = 0; i < source.programs.size(); ++i) {
    const uint32_t named_callback = i < source.exception_callbacks.size() ? source.exception_callbacks[i] : 0;
    auto program = isa::MakeProgram(source.programs[i], source.maps, named_callback);
    if (!program) return Fail("program {}: {}", i, program.message());
    auto loaded_program = LoadProgram(std::move(program).value(), i, source.maps, value_addresses, options);
    if (!loaded_program) return loaded_program.error();
    if (auto status = AddExceptionCallback(*loaded_program, i); !status) return status.error();
    if (i < source.stack_depths.size()) {
      if (source.stack_depths[i] > static_cast<uint32_t>(isa::kStackSize)) {
        return Fail("program {}: a stack depth of {} bytes is more than the {} the verifier allows", i,
                    source.stack_depths[i], isa::kStackSize);
      }
      if (auto status = CheckStackDepth(loaded_program->program, source.stack_depths[i]); !status) {
        return Fail("program {}: {}", i, status.message());
      }
      loaded_program->stack_depth = source.stack_depths[i];
    }
    if (!loaded.clobbered_read) {
      loaded.clobbered_read = FindClobberedRead(loaded_program->program, i, EntryRule{});
    }
    // Programs after the first are entered only by tail calls, through a prog_array.
    const bool tail_call_target =
        i > 0 && std::any_of(source.maps.begin(), source.maps.end(),
                             [](const isa::MapSpec& map) { return map.type == isa::MapType::kProgArray; });
    if (tail_call_target && !loaded.read_at_tail_call_entry) {
      loaded.read_at_tail_call_entry = FindClobberedRead(loaded_program->program, i, kTailCallEntry);
    }
    loaded.programs.push_back(std::move(loaded_program).value());
  }
  std::vector<const isa::Program*> programs;
  for (const LoadedProgram& p : loaded.programs) programs.push_back(&p.program);
  const std::vector<uint32_t> computed = VerifierStackDepths(programs);
  for (size_t i = source.stack_depths.size(); i < loaded.programs.size(); ++i) {
    loaded.programs[i].stack_depth = computed[i];
  }
  return loaded;
}

}  // namespace bpfdiff
