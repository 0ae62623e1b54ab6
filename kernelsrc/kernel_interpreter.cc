#include "kernelsrc/kernel_interpreter.h"

#include <array>
#include <vector>

#include <fmt/format.h>

#include "isa/opcode_table.h"
#include "kernelsrc/interpreter_bridge.h"

namespace bpfdiff::kernelsrc {

bool KernelInterpreterAvailable() { return true; }

namespace {

const bpfdiff_ktree_code& CodeOf(const KernelTree* tree) { return *TreeOrBuilt(tree)->code; }

}  // namespace

InterpreterEntry InterpreterEntryFor(uint32_t stack_depth, const KernelTree* tree) {
  return reinterpret_cast<InterpreterEntry>(CodeOf(tree).interp_entry_for(stack_depth));
}

std::jmp_buf& BeginInterpreterRun(const KernelTree* tree) {
  return *static_cast<std::jmp_buf*>(CodeOf(tree).interp_begin());
}

std::string EndInterpreterRun(const KernelTree* tree) {
  char message[320];
  CodeOf(tree).interp_end(message, sizeof(message));
  return message;
}

namespace {

bool IsArenaLoadOrStore(const isa::Insn& insn) {
  const uint8_t cls = isa::ClassOf(insn.opcode);
  const uint8_t mode = isa::ModeOf(insn.opcode);
  return ((cls == isa::kClassLdx || cls == isa::kClassSt || cls == isa::kClassStx) && mode == isa::kModeProbeMem32) ||
         (cls == isa::kClassStx && mode == isa::kModeProbeAtomic);
}

bool IsAddressSpaceCast(const isa::Insn& insn) {
  return insn.opcode == (isa::kClassAlu64 | isa::kAluMov | isa::kSrcX) && insn.offset == 1;
}

// The opcodes the interpreter's jump table has beyond the uAPI ones
// (core.c: BPF_TAIL_CALL, the PROBE_MEM loads the verifier writes, and
// BPF_CALL_ARGS, which only the fixups write).
bool InternalOpcode(uint8_t opcode) {
  if (opcode == isa::kOpTailCall) return true;
  if (isa::ClassOf(opcode) != isa::kClassLdx) return false;
  const uint8_t mode = isa::ModeOf(opcode);
  return mode == isa::kModeProbeMem || (mode == isa::kModeProbeMemSx && isa::SizeOf(opcode) != isa::kSizeDW);
}

// The atomic operations check_atomic() accepts, which the interpreter runs.
bool KnownAtomic(int32_t imm) {
  static constexpr std::array<int32_t, 10> kKnown = {
      isa::kAtomicAdd, isa::kAtomicAnd, isa::kAtomicOr, isa::kAtomicXor,
      isa::kAtomicAdd | isa::kAtomicFetch, isa::kAtomicAnd | isa::kAtomicFetch,
      isa::kAtomicOr | isa::kAtomicFetch, isa::kAtomicXor | isa::kAtomicFetch,
      isa::kAtomicXchg, isa::kAtomicCmpXchg};
  for (int32_t known : kKnown) {
    if (imm == known) return true;
  }
  return false;
}

}  // namespace

std::optional<std::string> InterpreterRefusal(const isa::Program& program, const KernelTree* tree) {
  bool tail_call = false;
  // A tree before the cpu v4 instructions: its verifier rejects them
  // ("unknown opcode", or "uses reserved fields" where v4 took an unused
  // field, as sdiv did div's offset), and its interpreter would run some
  // as their v3 namesakes.
  const bool cpu_v4 = TreeOrBuilt(tree)->features.cpu_v4;
  for (size_t pc = 0; pc < program.insns.size(); ++pc) {
    const isa::Insn& insn = program.insns[pc];
    if (pc > 0 && program.insns[pc - 1].opcode == isa::kOpLddw) continue;  // an lddw's second slot
    const uint8_t cls = isa::ClassOf(insn.opcode);
    const uint8_t op = isa::OpOf(insn.opcode);
    if (insn.opcode == isa::kOpCall && insn.src == isa::kPseudoKfuncCall) {
      return "calling kernel functions are not allowed in non-JITed programs";
    }
    if (insn.opcode == isa::kOpLddw && insn.src == isa::kPseudoFunc) {
      return "callbacks are not allowed in non-JITed programs";
    }
    if (IsArenaLoadOrStore(insn) || IsAddressSpaceCast(insn)) return "JIT is required to use arena";
    if ((cls == isa::kClassAlu || cls == isa::kClassAlu64) && op == isa::kAluMov && isa::SourceOf(insn.opcode) == isa::kSrcX &&
        insn.offset == -1) {
      return fmt::format("insn {}: BPF_ADDR_PERCPU is written by the verifier only for a JIT that supports it "
                         "(bpf_jit_supports_percpu_insn), never for the interpreter",
                         pc);
    }
    if (insn.opcode == isa::kOpTailCall) tail_call = true;
    if (!cpu_v4) {
      if (const auto form = isa::Classify(insn); form && isa::FormById(*form).cpu == isa::CpuVersion::kV4) {
        return fmt::format("insn {}: \"{}\" is a cpu v4 instruction, which the tree's verifier does not know", pc,
                           isa::FormById(*form).name);
      }
    }
    if (!CodeOf(tree).interp_opcode_known(insn.opcode) && !InternalOpcode(insn.opcode)) {
      return fmt::format("unknown opcode {:02x}", insn.opcode);
    }
    // In bpf_opcode_in_insntable() but rewritten before any engine runs
    // them (per program type, or for every program): not in the
    // interpreter's jump table.
    if (cls == isa::kClassLd && insn.opcode != isa::kOpLddw) {
      return fmt::format("insn {}: BPF_LD_[ABS|IND] is rewritten by the verifier per program type, "
                         "which bpfdiff does not model for the interpreter", pc);
    }
    if (cls == isa::kClassJmp && op == 0xe0) {
      return fmt::format("insn {}: may_goto is rewritten by the verifier, which bpfdiff does not model "
                         "for the interpreter", pc);
    }
    if (cls == isa::kClassStx && isa::ModeOf(insn.opcode) == isa::kModeAtomic && !KnownAtomic(insn.imm)) {
      return fmt::format("BPF_ATOMIC uses invalid atomic opcode {:02x}", insn.imm);
    }
    if ((cls == isa::kClassAlu || cls == isa::kClassAlu64) && isa::SourceOf(insn.opcode) == isa::kSrcK) {
      if ((op == isa::kAluDiv || op == isa::kAluMod) && insn.imm == 0) return "div by zero";
      const int64_t width = cls == isa::kClassAlu64 ? 64 : 32;
      if ((op == isa::kAluLsh || op == isa::kAluRsh || op == isa::kAluArsh) && (insn.imm < 0 || insn.imm >= width)) {
        return fmt::format("invalid shift {}", insn.imm);
      }
    }
  }
  if (tail_call && program.subprogram_starts.size() > 1) {
    return "tail_calls are not allowed in non-JITed programs with bpf-to-bpf calls";
  }
  return std::nullopt;
}

InterpreterProgram::~InterpreterProgram() { code_->interp_free(prog_); }

const void* InterpreterProgram::insns() const { return code_->interp_insns(prog_); }

namespace {

struct HelperTable {
  HostHelper (*helper)(int32_t id);
};

uint64_t HelperFunction(void* owner, int32_t id) {
  return reinterpret_cast<uint64_t>(static_cast<const HelperTable*>(owner)->helper(id));
}

}  // namespace

Result<std::unique_ptr<InterpreterProgram>> InterpreterProgram::Load(const isa::Program& program,
                                                                     uint32_t stack_depth,
                                                                     HostHelper (*helper)(int32_t id),
                                                                     const KernelTree* tree) {
  std::vector<bpfdiff_kjit_insn> insns(program.insns.size());
  for (size_t i = 0; i < insns.size(); ++i) {
    const isa::Insn& insn = program.insns[i];
    insns[i] = {insn.opcode, static_cast<uint8_t>(((insn.src & 0xf) << 4) | (insn.dst & 0xf)), insn.offset, insn.imm};
  }
  const bpfdiff_kjit_program request{insns.data(),
                                     static_cast<uint32_t>(insns.size()),
                                     program.subprogram_starts.data(),
                                     static_cast<uint32_t>(program.subprogram_starts.size()),
                                     stack_depth,
                                     0,
                                     0,
                                     0};
  HelperTable table{helper};
  const bpfdiff_kinterp_world world{&table, HelperFunction};
  char message[256];
  const bpfdiff_ktree_code& code = CodeOf(tree);
  void* prog = code.interp_load(&world, &request, message, sizeof(message));
  if (prog == nullptr) return Fail("the verifier's fixups for the kernel's interpreter: {}", message);
  return std::unique_ptr<InterpreterProgram>(new InterpreterProgram(prog, &code));
}

void SetProbeHook(const void* function, const KernelTree* tree) {
  CodeOf(tree).interp_set_probe_hook(const_cast<void*>(function));
}

}  // namespace bpfdiff::kernelsrc
