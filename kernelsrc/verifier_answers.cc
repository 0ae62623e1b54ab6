#include "kernelsrc/verifier_answers.h"

#include <fmt/format.h>

#include "isa/opcode_table.h"

namespace bpfdiff::kernelsrc {

bool IsArenaAccess(const isa::Insn& insn) {
  const uint8_t cls = isa::ClassOf(insn.opcode);
  const uint8_t mode = isa::ModeOf(insn.opcode);
  return ((cls == isa::kClassLdx || cls == isa::kClassSt || cls == isa::kClassStx) && mode == isa::kModeProbeMem32) ||
         (cls == isa::kClassStx && mode == isa::kModeProbeAtomic) ||
         isa::IsAddrSpaceCast(insn);
}

std::optional<std::string> VerifierRefusal(const VerifierAnswers& answers, const isa::Program& program) {
  std::optional<size_t> tail_call;
  for (size_t pc = 0; pc < program.insns.size(); ++pc) {
    if (!program.slots.empty() && program.slots[pc].second_slot) continue;
    const isa::Insn& insn = program.insns[pc];
    if (!answers.percpu_insn && isa::IsPerCpuAddressMove(insn)) {
      return fmt::format("the verifier refuses the per-CPU address move at slot {} (\"invalid BPF_ALU "
                         "opcode\"): its JIT does not support BPF_ADDR_PERCPU (bpf_jit_supports_percpu_insn)",
                         pc);
    }
    if (!answers.cpu_v4) {
      if (const auto form = isa::Classify(insn); form && isa::FormById(*form).cpu == isa::CpuVersion::kV4) {
        return fmt::format("the verifier refuses \"{}\" at slot {}: the tree predates the cpu v4 instructions "
                           "(its verifier and JIT know none)",
                           isa::FormById(*form).name, pc);
      }
    }
    if (IsArenaAccess(insn) && !answers.arena) {
      return fmt::format("the verifier refuses the arena access at slot {}: its JIT has no arena "
                         "(bpf_jit_supports_arena)",
                         pc);
    }
    if (IsArenaAccess(insn) && isa::ModeOf(insn.opcode) == isa::kModeProbeAtomic && !answers.arena_atomics) {
      return fmt::format("the verifier refuses the arena atomic at slot {} (\"unsupported atomic "
                         "instruction in arena\"): its JIT takes none with this CPU's atomics "
                         "(bpf_jit_supports_insn)",
                         pc);
    }
    if (insn.opcode == isa::kOpCall && insn.src == isa::kPseudoKfuncCall && !answers.exceptions) {
      // bpfdiff's one kernel function is bpf_throw (isa/opcode_table.h).
      return fmt::format("the verifier refuses the call of bpf_throw at slot {}: its JIT does not support "
                         "exceptions (bpf_jit_supports_exceptions)",
                         pc);
    }
    if (insn.opcode == isa::kOpTailCall && !tail_call) tail_call = pc;
  }
  if (tail_call && program.subprogram_starts.size() > 1 && !answers.subprog_tailcalls) {
    return fmt::format("the verifier refuses the tail call at slot {} in a program of {} functions "
                       "(\"tail_calls are not allowed in non-JITed programs with bpf-to-bpf calls\"): its "
                       "JIT cannot mix them (bpf_jit_supports_subprog_tailcalls)",
                       *tail_call, program.subprogram_starts.size());
  }
  return std::nullopt;
}

}  // namespace bpfdiff::kernelsrc
