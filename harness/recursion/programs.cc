#include "harness/recursion/programs.h"

#include <algorithm>

#include <fmt/format.h>

#include "isa/assembler.h"
#include "isa/insn.h"
#include "oracle/helpers.h"

namespace bpfdiff::recursion {
namespace {

bool IsTriggerCall(const isa::Insn& insn) {
  return insn.opcode == isa::kOpCall && insn.src == 0 && insn.imm == kTriggerHelper;
}

// r0 = 0 (mov64 r0, 0): what the interpreter sees of a trigger call.
constexpr isa::Insn kTriggerAsMov{isa::kClassAlu64 | isa::kAluMov | isa::kSrcK, 0, 0, 0, 0};

// A helper call with the calling convention of the trigger (it clobbers
// r1..r5) that the load step knows, for the clobbered-read analysis.
constexpr isa::Insn kTriggerAsKnownCall{isa::kOpCall, 0, 0, 0, kHelperGetCurrentPidTgid};

std::vector<ProgramSpec::Trigger> InCallOrder(const ProgramSpec& spec) {
  auto triggers = spec.triggers;
  std::stable_sort(triggers.begin(), triggers.end(),
                   [](const auto& a, const auto& b) { return a.at < b.at; });
  return triggers;
}

}  // namespace

std::string ProgramAssembly(const ProgramSpec& spec, int index) {
  const uint32_t seed = (0x9e3779b1u * static_cast<uint32_t>(index + 1)) & 0x7fffffff;
  std::string text = fmt::format(
      "# attached program {}: loop {}\n"
      "        mov %r6, %r1          # the argument\n"
      "        mov %r7, 0            # i\n"
      "        mov %r8, {}\n"
      "        call 8                # get_smp_processor_id\n"
      "        add %r8, %r0\n"
      "loop:\n",
      index, spec.loop, seed);
  for (size_t k = 0; k < spec.triggers.size(); ++k) {
    const auto& t = spec.triggers[k];
    text += fmt::format(
        "        jne %r7, {}, skip{}\n"
        "        mov %r1, {}\n"
        "        mov %r2, %r8\n"
        "        call {}              # trigger program {}\n"
        "skip{}:\n",
        t.at, k, t.target, kTriggerHelper, t.target, k);
  }
  text += fmt::format(
      "        jge %r7, {}, done\n"
      "        mul %r8, 31\n"
      "        add %r8, %r6\n"
      "        xor %r8, %r7\n"
      "        stxdw [%r10-8], %r8\n"
      "        ldxdw %r8, [%r10-8]\n"
      "        add %r7, 1\n"
      "        ja loop\n"
      "done:\n"
      "        mov %r0, %r8\n"
      "        exit\n",
      spec.loop);
  return text;
}

Result<AttachedPrograms> LoadPrograms(const std::vector<ProgramSpec>& specs) {
  CaseSource interp_source, check_source;
  std::vector<std::vector<bool>> trigger_slots;
  AttachedPrograms programs;
  for (size_t p = 0; p < specs.size(); ++p) {
    auto insns = isa::Assemble(ProgramAssembly(specs[p], static_cast<int>(p)));
    if (!insns) return Fail("attached program {}: {}", p, insns.message());
    std::vector<bool> slots(insns->size(), false);
    auto as_interp = *insns;
    auto as_check = *insns;
    for (size_t i = 0; i < insns->size(); ++i) {
      if (!IsTriggerCall((*insns)[i])) continue;
      slots[i] = true;
      as_interp[i] = kTriggerAsMov;
      as_check[i] = kTriggerAsKnownCall;
    }
    trigger_slots.push_back(std::move(slots));
    interp_source.programs.push_back(std::move(as_interp));
    check_source.programs.push_back(std::move(as_check));
    std::vector<int> expected;
    for (const auto& t : InCallOrder(specs[p])) expected.push_back(t.target);
    programs.expected_triggers.push_back(std::move(expected));
  }
  auto checked = LoadCase(check_source);
  if (!checked) return Fail("attached programs: {}", checked.message());
  if (checked->clobbered_read) {
    return Fail("attached programs: {} (the trigger helper clobbers r1..r5)", *checked->clobbered_read);
  }
  auto interp = LoadCase(interp_source);
  if (!interp) return Fail("attached programs: {}", interp.message());
  programs.interp = std::move(interp).value();
  programs.jit = programs.interp;
  for (size_t p = 0; p < programs.jit.programs.size(); ++p) {
    LoadedProgram& loaded = programs.jit.programs[p];
    for (size_t slot = 0; slot < loaded.program.insns.size(); ++slot) {
      const uint32_t source = loaded.source_slot[slot];
      if (source < trigger_slots[p].size() && trigger_slots[p][source]) {
        loaded.program.insns[slot] = isa::Insn{isa::kOpCall, 0, 0, 0, kTriggerHelper};
      }
    }
  }
  return programs;
}

}  // namespace bpfdiff::recursion
