// The pass driver: sizing, allocation, emission, validation, the extra pass
// for programs with subprograms, and finalization.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "jit/context.h"
#include "jit/frame.h"

namespace bpfdiff::jit {
namespace {

Status EmitInsn(JitContext& ctx, uint32_t slot, const isa::Insn* insns) {
  const isa::Insn& insn = insns[slot];
  switch (isa::ClassOf(insn.opcode)) {
    case isa::kClassAlu:
    case isa::kClassAlu64: return EmitAlu(ctx, slot, insn);
    case isa::kClassJmp:
    case isa::kClassJmp32: return EmitJump(ctx, slot, insn);
    case isa::kClassLd:
      if (insn.opcode == isa::kOpLddw) return EmitLoadImm64(ctx, slot, insn, insns[slot + 1]);
      return Fail("instruction {}: legacy packet access (ldabs/ldind) is rewritten by the kernel's "
                  "verifier before the JIT and is not supported here",
                  slot);
    case isa::kClassLdx:
    case isa::kClassSt: return EmitLoadStore(ctx, slot, insn);
    default:
      if (isa::ModeOf(insn.opcode) == isa::kModeAtomic || isa::ModeOf(insn.opcode) == isa::kModeProbeAtomic) {
        return EmitAtomic(ctx, slot, insn);
      }
      return EmitLoadStore(ctx, slot, insn);
  }
}

// The body: fills the offset table, one BPF slot at a time.
Status BuildBody(JitContext& ctx) {
  const isa::Insn* insns = ctx.program.insns.data();
  for (uint32_t slot = ctx.first_slot; slot < ctx.end_slot; ++slot) {
    ctx.offsets[slot - ctx.first_slot] = ctx.idx;
    if (auto status = EmitInsn(ctx, slot, insns); !status) return status;
    if (insns[slot].opcode == isa::kOpLddw) {
      ++slot;
      ctx.offsets[slot - ctx.first_slot] = ctx.idx;
    }
  }
  ctx.offsets[ctx.end_slot - ctx.first_slot] = ctx.idx;
  return {};
}

// One complete pass: prologue, body, epilogue. In the writing pass the body
// must end where the sizing pass said the epilogue starts.
Status BuildImage(JitContext& ctx) {
  ctx.idx = 0;
  ctx.exentry_idx = 0;
  ctx.address_words.clear();
  EmitPrologue(ctx);
  if (auto status = BuildBody(ctx); !status) return status;
  if (ctx.writing() && ctx.idx != ctx.epilogue_offset) {
    return Fail("the body ended at word {}, but the sizing pass put the epilogue at {}", ctx.idx,
                ctx.epilogue_offset);
  }
  ctx.epilogue_offset = ctx.idx;
  EmitEpilogue(ctx);
  return {};
}

// The BPF slot whose code holds arm64 word `word`: the last slot (of those
// from `first_slot`, whose offsets these are, plus the end) whose code
// starts at or before it.
uint32_t SlotOfWord(const std::vector<uint32_t>& offsets, uint32_t first_slot, uint32_t word) {
  auto it = std::upper_bound(offsets.begin(), offsets.end() - 1, word);
  if (it == offsets.begin()) return first_slot;
  return first_slot + static_cast<uint32_t>(it - offsets.begin()) - 1;
}

// No word may be AARCH64_BREAK_FAULT: an encoder could not encode an operand.
Status Validate(const JitContext& ctx, uint32_t expected_entries) {
  for (uint32_t i = 0; i < ctx.idx; ++i) {
    if (ctx.image[i] != a64::kBreakFault) continue;
    return Fail("instruction {}: the JIT could not encode an operand (word {} is "
                "AARCH64_BREAK_FAULT)",
                SlotOfWord(ctx.offsets, ctx.first_slot, i), i);
  }
  if (ctx.exentry_idx != expected_entries) {
    return Fail("emitted {} exception-table entries, expected {}", ctx.exentry_idx, expected_entries);
  }
  return {};
}

struct Unit {
  JitContext ctx;
  uint32_t code_words = 0;
  uint32_t extable_entries = 0;
  uint64_t extable_offset = 0;  // bytes from the image start
  std::unique_ptr<PackAllocation> allocation;
};

// Points the context at the unit's RW and RX images.
void AttachImage(Unit& unit) {
  JitContext& ctx = unit.ctx;
  ctx.image = reinterpret_cast<uint32_t*>(unit.allocation->rw_image());
  ctx.ro_image = unit.allocation->rx_image();
  ctx.rw_extable = unit.allocation->rw_image() + unit.extable_offset;
  ctx.ro_extable = ctx.ro_image + unit.extable_offset;
}

}  // namespace

uint32_t CompiledSubprogram::SlotAt(uint64_t pc) const {
  return SlotOfWord(offsets, first_slot, static_cast<uint32_t>((pc - rx_image) / 4));
}

const CompiledSubprogram* CompiledProgram::SubprogramAt(uint64_t pc) const {
  for (const auto& sub : subprograms) {
    if (sub.ContainsCode(pc)) return &sub;
  }
  return nullptr;
}

JitContext Jit::MakeContext(const isa::Program& program, uint32_t first, uint32_t end,
                            bool is_main) const {
  JitContext ctx{.program = program, .env = env_, .options = options_,
                 .first_slot = first, .end_slot = end, .is_main = is_main,
                 .is_exception_callback = program.exception_callback != 0 && first == program.exception_callback};
  return ctx;
}

Result<CompiledProgram> Jit::Compile(const isa::Program& program) {
  const size_t count = program.subprogram_starts.size();
  std::vector<uint64_t> entries(count, 0);
  std::vector<std::unique_ptr<Unit>> units;
  units.reserve(count);

  auto fail = [&](size_t sub, const Error& error) -> Error {
    // Every failure path frees what was allocated, RW buffers included.
    for (auto& unit : units) pack_.Free(std::move(unit->allocation));
    if (count == 1) return error;
    return Fail("subprogram {}: {}", sub, error.message);
  };

  for (size_t sub = 0; sub < count; ++sub) {
    const uint32_t first = program.subprogram_starts[sub];
    const uint32_t end = program.SubprogramEnd(sub);
    units.push_back(std::make_unique<Unit>(Unit{MakeContext(program, first, end, sub == 0), 0, 0, 0, nullptr}));
    Unit& unit = *units.back();
    JitContext& ctx = unit.ctx;
    ctx.offsets.assign(end - first + 1, 0);
    ctx.subprogram_entries = &entries;

    // Pass 1: sizes, offsets, and the number of exception-table entries.
    if (auto status = BuildImage(ctx); !status) return fail(sub, status.error());
    unit.code_words = ctx.idx;
    unit.extable_entries = ctx.exentry_idx;
    unit.extable_offset = uint64_t{unit.code_words} * 4;  // 4-byte aligned, right after the code
    const uint64_t image_bytes = unit.extable_offset + uint64_t{unit.extable_entries} * kExtableEntrySize;

    auto allocation = pack_.Alloc(image_bytes);
    if (!allocation) return fail(sub, allocation.error());
    unit.allocation = std::move(allocation).value();
    entries[sub] = unit.allocation->rx_image();

    // Pass 2: the image, into the RW buffer.
    AttachImage(unit);
    if (auto status = BuildImage(ctx); !status) return fail(sub, status.error());
    if (auto status = Validate(ctx, unit.extable_entries); !status) return fail(sub, status.error());
  }

  // The extra pass: now every subprogram's address is known. The size must
  // not change, or the offsets and the table placement would be wrong.
  if (count > 1) {
    for (size_t sub = 0; sub < count; ++sub) {
      Unit& unit = *units[sub];
      JitContext& ctx = unit.ctx;
      if (auto status = BuildImage(ctx); !status) return fail(sub, status.error());
      if (options_.bugs.extra_pass_grows) ctx.Emit(a64::Nop());
      if (ctx.idx != unit.code_words) {
        return fail(sub, Fail("the extra pass changed the image from {} to {} words",
                              unit.code_words, ctx.idx));
      }
      if (auto status = Validate(ctx, unit.extable_entries); !status) return fail(sub, status.error());
    }
  }

  CompiledProgram compiled;
  for (auto& unit : units) {
    CompiledSubprogram out;
    out.first_slot = unit->ctx.first_slot;
    out.end_slot = unit->ctx.end_slot;
    out.rx_image = unit->allocation->rx_image();
    out.code_words = unit->code_words;
    out.rx_extable = out.rx_image + unit->extable_offset;
    out.extable_entries = unit->extable_entries;
    out.offsets = std::move(unit->ctx.offsets);
    out.words.assign(unit->ctx.image, unit->ctx.image + unit->code_words);
    out.address_words = std::move(unit->ctx.address_words);
    pack_.Finalize(*unit->allocation);
    out.allocation = std::move(unit->allocation);
    compiled.subprograms.push_back(std::move(out));
  }
  return compiled;
}

void Jit::Release(CompiledProgram& program) {
  for (auto& sub : program.subprograms) pack_.Free(std::move(sub.allocation));
  program.subprograms.clear();
}

}  // namespace bpfdiff::jit
