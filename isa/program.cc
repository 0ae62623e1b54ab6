#include "isa/program.h"

#include <algorithm>

#include "isa/syntax.h"

namespace bpfdiff::isa {
namespace {

// Whether the form writes its dst register (r10 may never be written).
bool WritesDst(Shape shape) {
  switch (shape) {
    case Shape::kAluImm:
    case Shape::kAluReg:
    case Shape::kAluUnary:
    case Shape::kEndian:
    case Shape::kMovSx:
    case Shape::kMovPerCpu:
    case Shape::kAddrSpaceCast:
    case Shape::kLddw:
    case Shape::kLddwMapFd:
    case Shape::kLddwMapValue:
    case Shape::kLddwFunc:
    case Shape::kLoad: return true;
    default: return false;
  }
}

Error At(size_t pc, const Form* form, std::string message) {
  if (form == nullptr) return Fail("instruction {}: {}", pc, message);
  return Fail("instruction {} ({}): {}", pc, form->name, message);
}

Status CheckFields(size_t pc, const Insn& insn, const Form& form) {
  // A field neither an operand nor the discriminating field must be zero.
  const FieldUse use = FieldsOf(form);
  if (!use.dst && insn.dst != 0) return At(pc, &form, fmt::format("reserved dst field is {}, must be 0", insn.dst));
  if (!use.src && insn.src != 0) {
    return At(pc, &form, fmt::format("reserved src field is {}, must be 0", insn.src));
  }
  if (!use.offset && insn.offset != 0) {
    return At(pc, &form, fmt::format("reserved offset field is {}, must be 0", insn.offset));
  }
  if (!use.imm && insn.imm != form.fixed_imm) {
    return At(pc, &form, fmt::format("{} imm field is {}, must be {}", form.fixed_imm == 0 ? "reserved" : "fixed",
                                     insn.imm, form.fixed_imm));
  }
  if (use.dst && insn.dst >= kNumRegs) return At(pc, &form, fmt::format("invalid register r{}", insn.dst));
  if (use.src && insn.src >= kNumRegs) return At(pc, &form, fmt::format("invalid register r{}", insn.src));
  if (use.dst && insn.dst == kFramePointer && WritesDst(form.shape)) {
    return At(pc, &form, "r10 is read-only");
  }
  if (form.shape == Shape::kAtomic && insn.src == kFramePointer &&
      (insn.imm & kAtomicFetch) != 0 && insn.imm != kAtomicCmpXchg) {
    return At(pc, &form, "r10 is read-only (fetch writes the source register)");
  }
  return {};
}

}  // namespace

std::string_view MapTypeName(MapType type) {
  switch (type) {
    case MapType::kArray: return "array";
    case MapType::kHash: return "hash";
    case MapType::kProgArray: return "prog_array";
  }
  return "?";
}

size_t Program::SubprogramOf(uint32_t pc) const {
  auto it = std::upper_bound(subprogram_starts.begin(), subprogram_starts.end(), pc);
  return static_cast<size_t>(it - subprogram_starts.begin()) - 1;
}

uint32_t Program::SubprogramEnd(size_t subprogram) const {
  return subprogram + 1 < subprogram_starts.size() ? subprogram_starts[subprogram + 1]
                                                    : static_cast<uint32_t>(insns.size());
}

const MapSpec* FindMap(std::span<const MapSpec> maps, int32_t fd) {
  for (const auto& map : maps) {
    if (map.fd == fd) return &map;
  }
  return nullptr;
}

namespace {

// Map declarations on their own: unique fds, entries, key and value sizes.
Status CheckMaps(std::span<const MapSpec> maps) {
  for (size_t i = 0; i < maps.size(); ++i) {
    const MapSpec& map = maps[i];
    for (size_t j = 0; j < i; ++j) {
      if (maps[j].fd == map.fd) return Fail("map fd {} is declared twice", map.fd);
    }
    if (map.max_entries == 0) return Fail("map {} has no entries", map.fd);
    if (map.type != MapType::kProgArray && (map.key_size == 0 || map.value_size == 0)) {
      return Fail("map {} needs a non-zero key and value size", map.fd);
    }
    if (map.type == MapType::kArray && map.key_size != 4) {
      return Fail("array map {} must have 4-byte keys", map.fd);
    }
  }
  return {};
}

// Why a slot that Classify() names no form is wrong.
Error Unclassified(size_t pc, const Insn& insn) {
  if (!IsKnownOpcode(insn.opcode)) return At(pc, nullptr, fmt::format("unknown opcode 0x{:02x}", insn.opcode));
  if (insn.opcode == kOpCall) {
    return At(pc, nullptr, fmt::format("unsupported call kind src={} (0 = helper, 1 = local, 2 = kfunc)", insn.src));
  }
  if (insn.opcode == kOpLddw) {
    return At(pc, nullptr,
              fmt::format("unsupported lddw source {} (0 = imm64, 1 = map fd, 2 = map value, 4 = function)", insn.src));
  }
  return At(pc, nullptr,
            fmt::format("opcode 0x{:02x} with offset {} and imm {} names no instruction", insn.opcode, insn.offset,
                        insn.imm));
}

// An lddw at `pc`: its second slot, and the map it names.
Status CheckWideSlot(std::span<const Insn> insns, size_t pc, const Form& form, std::span<const MapSpec> maps) {
  const Insn& insn = insns[pc];
  if (pc + 1 >= insns.size()) return At(pc, &form, "truncated: the second slot is missing");
  const Insn& next = insns[pc + 1];
  if (next.opcode != 0 || next.dst != 0 || next.src != 0 || next.offset != 0) {
    return At(pc + 1, nullptr, "second slot of lddw must have opcode, registers and offset 0");
  }
  // As the kernel (resolve_pseudo_ldimm64): a map fd load has nothing in
  // the second slot; only imm64 and map value loads use its imm.
  if ((form.shape == Shape::kLddwMapFd || form.shape == Shape::kLddwFunc) && next.imm != 0) {
    return At(pc + 1, nullptr, fmt::format("second slot of {} must have imm 0, not {}", form.name, next.imm));
  }
  if (form.shape != Shape::kLddwMapFd && form.shape != Shape::kLddwMapValue) return {};
  const MapSpec* map = FindMap(maps, insn.imm);
  if (map == nullptr) return At(pc, &form, fmt::format("map fd {} is not declared", insn.imm));
  if (form.shape != Shape::kLddwMapValue) return {};
  if (map->type == MapType::kProgArray) {
    return At(pc, &form, fmt::format("map {} is a prog_array and has no values", insn.imm));
  }
  const uint64_t limit = uint64_t{map->value_size} * map->max_entries;
  if (static_cast<uint32_t>(next.imm) >= limit) {
    return At(pc, &form, fmt::format("offset {} is outside map {}'s {} value bytes", static_cast<uint32_t>(next.imm),
                                     insn.imm, limit));
  }
  return {};
}

// Pass 1: the form of every slot, its fields, lddw pairs, and the
// subprogram starts (slot 0, every local call's target and every
// callback's, as the verifier's add_subprog_and_kfunc()), sorted.
Status ClassifySlots(std::span<const Insn> insns, std::span<const MapSpec> maps, std::vector<SlotInfo>& slots,
                     std::vector<uint32_t>& starts) {
  const size_t n = insns.size();
  slots.assign(n, SlotInfo{});
  starts = {0};
  for (size_t pc = 0; pc < n; ++pc) {
    const Insn& insn = insns[pc];
    if (slots[pc].second_slot) continue;
    auto id = Classify(insn);
    if (!id) return Unclassified(pc, insn);
    const Form& form = FormById(*id);
    slots[pc] = {*id, false};
    if (auto status = CheckFields(pc, insn, form); !status) return status;
    if (form.is_wide()) {
      if (auto status = CheckWideSlot(insns, pc, form, maps); !status) return status;
      slots[pc + 1] = {*id, true};
    }
    if (form.shape == Shape::kCallLocal || form.shape == Shape::kLddwFunc) {
      const int64_t target = BranchTarget(insn, form.shape, pc);
      if (target < 0 || target >= static_cast<int64_t>(n)) {
        return At(pc, &form, fmt::format("{} target {} is outside the program ({} slots)",
                                         form.shape == Shape::kCallLocal ? "call" : "function", target, n));
      }
      starts.push_back(static_cast<uint32_t>(target));
    }
  }
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  return {};
}

// Pass 2: every jump lands on a first slot inside its own subprogram.
Status CheckJumpTargets(const Program& program) {
  const size_t n = program.insns.size();
  for (size_t pc = 0; pc < n; ++pc) {
    const Insn& insn = program.insns[pc];
    // Only the jump classes branch (and call), and lddw_func names a slot.
    const uint8_t cls = ClassOf(insn.opcode);
    if ((cls != kClassJmp && cls != kClassJmp32 && insn.opcode != kOpLddw) || program.slots[pc].second_slot) continue;
    const Form& form = FormById(program.slots[pc].form);
    if (!IsBranchShape(form.shape) && form.shape != Shape::kLddwFunc) continue;
    const int64_t target = BranchTarget(insn, form.shape, pc);
    if (target < 0 || target >= static_cast<int64_t>(n)) {
      return At(pc, &form, fmt::format("jump target {} is outside the program ({} slots)", target, n));
    }
    if (program.slots[static_cast<size_t>(target)].second_slot) {
      return At(pc, &form, fmt::format("jump target {} is the second slot of an lddw", target));
    }
    if (IsJumpShape(form.shape) &&
        program.SubprogramOf(static_cast<uint32_t>(target)) != program.SubprogramOf(static_cast<uint32_t>(pc))) {
      return At(pc, &form, fmt::format("jump target {} is in another subprogram", target));
    }
  }
  return {};
}

// Whether any path from the first slot of subprogram `sub` reaches `slot`,
// taking every edge an instruction may take: both ways of a conditional
// jump, and the next slot after a call, a kfunc (bpf_throw included) and a
// tail call. Jumps stay in their subprogram (CheckJumpTargets).
bool ReachableInSubprogram(const Program& program, size_t sub, uint32_t slot) {
  const uint32_t first = program.subprogram_starts[sub];
  const uint32_t end = program.SubprogramEnd(sub);
  std::vector<bool> seen(end - first, false);
  std::vector<uint32_t> work{first};
  seen[0] = true;
  auto visit = [&](int64_t to) {
    if (to < first || to >= end || seen[static_cast<size_t>(to - first)]) return;
    seen[static_cast<size_t>(to - first)] = true;
    work.push_back(static_cast<uint32_t>(to));
  };
  while (!work.empty()) {
    const uint32_t pc = work.back();
    work.pop_back();
    if (pc == slot) return true;
    const Form& form = FormById(program.slots[pc].form);
    const Insn& insn = program.insns[pc];
    const int64_t next = pc + (form.is_wide() ? 2 : 1);
    switch (form.shape) {
      case Shape::kExit: break;
      case Shape::kJa:
      case Shape::kJa32: visit(BranchTarget(insn, form.shape, pc)); break;
      case Shape::kJumpImm:
      case Shape::kJumpReg:
        visit(BranchTarget(insn, form.shape, pc));
        visit(next);
        break;
      default: visit(next);
    }
  }
  return false;
}

// Control cannot run off the end of a subprogram: it ends in exit or an
// unconditional jump, or no path from its entry reaches its last
// instruction. The verifier refuses any unreachable code; test_bpf loads
// without it, and a few of its cases hold code after their last exit
// ("JMP_EXIT", "Short relative jump: offset=0".."4"), which every JIT
// compiles and nothing runs.
Status CheckSubprogramEnds(const Program& program) {
  for (size_t sub = 0; sub < program.subprogram_starts.size(); ++sub) {
    const uint32_t last = program.SubprogramEnd(sub) - 1;
    const uint32_t last_insn = program.slots[last].second_slot ? last - 1 : last;
    if (!ReachableInSubprogram(program, sub, last_insn)) continue;
    if (program.slots[last].second_slot) {
      return At(last, nullptr, "the last instruction of a subprogram must be exit or a jump, not lddw");
    }
    const Form& last_form = FormById(program.slots[last].form);
    const Shape shape = last_form.shape;
    if (shape != Shape::kExit && shape != Shape::kJa && shape != Shape::kJa32) {
      return At(last, &last_form,
                sub == 0 && program.subprogram_starts.size() == 1
                    ? "the program must end in exit or an unconditional jump"
                    : fmt::format("subprogram {} must end in exit or an unconditional jump", sub));
    }
  }
  return {};
}

}  // namespace

Result<Program> MakeProgram(std::vector<Insn> insns, std::span<const MapSpec> maps) {
  return MakeProgram(std::move(insns), maps, 0);
}

Result<Program> MakeProgram(std::vector<Insn> insns, std::span<const MapSpec> maps, uint32_t exception_callback) {
  const size_t n = insns.size();
  if (n == 0) return Fail("the program is empty");
  if (n > kMaxSlots) return Fail("the program has {} slots, more than the limit of {}", n, kMaxSlots);
  if (auto status = CheckMaps(maps); !status) return status.error();
  std::vector<SlotInfo> slots;
  std::vector<uint32_t> starts;
  if (auto status = ClassifySlots(insns, maps, slots, starts); !status) return status.error();
  if (exception_callback != 0) {
    if (exception_callback >= n || slots[exception_callback].second_slot) {
      return Fail("the exception callback at slot {} is not an instruction of the program ({} slots)",
                  exception_callback, n);
    }
    starts.insert(std::upper_bound(starts.begin(), starts.end(), exception_callback), exception_callback);
    starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  }
  Program program{std::move(insns), std::move(starts), std::move(slots), exception_callback};
  if (auto status = CheckJumpTargets(program); !status) return status.error();
  if (auto status = CheckSubprogramEnds(program); !status) return status.error();
  return program;
}

Result<Program> DecodeProgram(std::span<const uint8_t> bytes, std::span<const MapSpec> maps) {
  if (bytes.size() % kInsnSize != 0) {
    return Fail("{} bytes is not a whole number of 8-byte instructions", bytes.size());
  }
  std::vector<Insn> insns;
  insns.reserve(bytes.size() / kInsnSize);
  for (size_t i = 0; i < bytes.size(); i += kInsnSize) insns.push_back(Insn::FromBytes(&bytes[i]));
  return MakeProgram(std::move(insns), maps);
}


Requirements RequirementsOf(std::span<const Insn> insns) {
  Requirements req;
  for (size_t pc = 0; pc < insns.size(); ++pc) {
    if (auto id = Classify(insns[pc])) {
      const Form& form = FormById(*id);
      req.cpu = std::max(req.cpu, form.cpu);
      req.groups |= form.group;
    }
    if (insns[pc].opcode == kOpLddw) ++pc;
  }
  return req;
}

std::vector<uint8_t> ToBytes(std::span<const Insn> insns) {
  std::vector<uint8_t> bytes(insns.size() * kInsnSize);
  for (size_t i = 0; i < insns.size(); ++i) insns[i].ToBytes(&bytes[i * kInsnSize]);
  return bytes;
}

}  // namespace bpfdiff::isa
