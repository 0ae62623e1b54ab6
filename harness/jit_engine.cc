#include "harness/jit_engine.h"

#include <cstring>

#include <fmt/format.h>

#include "harness/a64_access.h"
#include "oracle/guest_layout.h"

namespace bpfdiff {
namespace {

constexpr uint32_t kBreakFault = 0xd4202000;  // AARCH64_BREAK_FAULT
constexpr int kZeroRegister = 31;

class MachineRegisterView final : public RegisterReader {
 public:
  explicit MachineRegisterView(const Machine& machine) : machine_(machine) {}
  uint64_t X(int reg) const override { return machine_.ReadX(reg); }
  uint64_t Sp() const override { return machine_.ReadSp(); }

 private:
  const Machine& machine_;
};

bool IsAtomic(const isa::Insn& insn) {
  return isa::ClassOf(insn.opcode) == isa::kClassStx && isa::ModeOf(insn.opcode) == isa::kModeAtomic;
}

}  // namespace

JitEngine::JitEngine(Sandbox& sandbox, const jit::JitOptions& options, std::string name, int cpu)
    : sandbox_(sandbox),
      jit_(sandbox.pack(), Sandbox::JitEnvironment(), options),
      name_(std::move(name)),
      cpu_(cpu) {}

JitEngine::~JitEngine() { Release(); }

Status JitEngine::Prepare(const LoadedCase& loaded) {
  Release();
  loaded_ = &loaded;
  for (size_t i = 0; i < loaded.programs.size(); ++i) {
    auto compiled = jit_.Compile(loaded.programs[i].program);
    if (!compiled) {
      Release();
      return loaded.programs.size() == 1 ? compiled.error()
                                         : Fail("program {}: {}", i, compiled.message());
    }
    compiled_.push_back(std::move(compiled).value());
  }
  return {};
}

void JitEngine::Release() {
  for (auto& program : compiled_) jit_.Release(program);
  compiled_.clear();
  loaded_ = nullptr;
}

std::optional<JitEngine::Location> JitEngine::Locate(uint64_t pc) const {
  for (size_t p = 0; p < compiled_.size(); ++p) {
    if (const auto* sub = compiled_[p].SubprogramAt(pc)) return Location{p, sub};
  }
  return std::nullopt;
}

void JitEngine::OnBlock(int cpu, uint64_t address, uint32_t size) {
  // A block that starts at a program's tail-call entry, other than by
  // running on from the prologue (Unicorn ends a block at a page boundary),
  // is a tail call into it: nothing else branches past a prologue.
  const bool fell_through = address == previous_block_end_;
  previous_block_end_ = address + size;
  if (!fell_through) {
    for (size_t p = 0; p < compiled_.size(); ++p) {
      if (address == compiled_[p].entry() + jit::TailCallEntryOffset()) {
        tail_calls_.push_back(static_cast<uint32_t>(p));
      }
    }
  }
  if (forward_ != nullptr) forward_->OnBlock(cpu, address, size);
}

Outcome JitEngine::Finish(Outcome outcome) {
  Machine& machine = *machine_;
  outcome.steps = machine.steps();
  outcome.tail_calls = tail_calls_;
  outcome.memory = sandbox_.env().Capture(cpu_, Sandbox::Geometry());
  machine.set_helper_context(nullptr, nullptr);
  machine.set_observer(nullptr);
  return outcome;
}

Outcome JitEngine::Unhandled(Outcome outcome, const MachineStop& stop) {
  Machine& machine = *machine_;
  GuestMemory& memory = sandbox_.env().memory();
  uint32_t word = 0;
  if (const uint8_t* p = memory.HostPointer(stop.pc, 4)) std::memcpy(&word, p, 4);
  const auto location = Locate(stop.pc);

  if (stop.kind == MachineStop::Kind::kException && word == kBreakFault) {
    outcome.end = EndKind::kTrap;
    outcome.message = fmt::format("executed AARCH64_BREAK_FAULT at 0x{:x}{}", stop.pc,
                                  location ? "" : " (not in any live program)");
    return Finish(std::move(outcome));
  }
  if (!location) {
    outcome.end = EndKind::kTrap;
    outcome.message =
        stop.kind == MachineStop::Kind::kFault
            ? fmt::format("{} of 0x{:x} at pc 0x{:x}, outside any program", AccessKindName(stop.access),
                          stop.address, stop.pc)
            : fmt::format("CPU exception at pc 0x{:x} (word 0x{:08x}), outside any program", stop.pc, word);
    return Finish(std::move(outcome));
  }
  const uint32_t slot = location->subprogram->SlotAt(stop.pc);
  const isa::Insn& insn = loaded_->programs[location->program].program.insns[slot];
  FaultInfo fault{slot, static_cast<uint32_t>(location->program), stop.address, stop.access, false};
  if (stop.kind == MachineStop::Kind::kFault && IsAtomic(insn)) {
    // The architecture checks alignment before translation (the Arm ARM's
    // AArch64.CheckAlignment comes before AArch64.TranslateAddress);
    // Unicorn reports the translation fault of a misaligned atomic first.
    const MachineRegisterView registers(machine);
    if (auto range = MemoryAccessOf(word, stop.pc, registers)) {
      const uint64_t bytes = isa::SizeBytes(insn.opcode);
      if (range->begin % bytes != 0) {
        fault.kind = AccessKind::kMisaligned;
        fault.address = range->begin;
      }
    }
  }
  if (stop.kind == MachineStop::Kind::kException) {
    if (!IsAtomic(insn)) {
      outcome.end = EndKind::kTrap;
      outcome.message = fmt::format("CPU exception at pc 0x{:x} (word 0x{:08x}) in instruction {}",
                                    stop.pc, word, slot);
      return Finish(std::move(outcome));
    }
    // An alignment fault of an atomic: its address register is Rn.
    const int rn = static_cast<int>((word >> 5) & 31);
    fault.kind = AccessKind::kMisaligned;
    fault.address = rn == 31 ? 0 : machine.ReadX(rn);
  }
  outcome.end = EndKind::kFault;
  outcome.fault = fault;
  return Finish(std::move(outcome));
}

Outcome JitEngine::Run(uint64_t budget) {
  if (compiled_.empty()) {
    Outcome outcome;
    outcome.end = EndKind::kHarnessError;
    outcome.message = "nothing compiled";
    return outcome;
  }
  // The fast machine first; a fault it cannot pin to one instruction means
  // running the call again, from the same initial state, on a precise one.
  if (Machine* fast = sandbox_.fast_cpu(); fast != nullptr && cpu_ == 0) {
    if (auto outcome = RunOn(*fast, budget)) return std::move(*outcome);
    ++precise_reruns_;
    sandbox_.env().Reset();
  }
  auto outcome = RunOn(sandbox_.cpu(cpu_), budget);
  return std::move(*outcome);
}

std::optional<Outcome> JitEngine::RunOn(Machine& machine, uint64_t budget) {
  machine_ = &machine;
  Outcome outcome;
  GuestEnvironment& env = sandbox_.env();
  HelperContext helpers{env.memory(), env.helper_state(cpu_)};
  machine.set_helper_context(&helpers, &outcome.helper_calls);
  machine.set_observer(this);
  machine.set_budget(budget);
  tail_calls_.clear();
  previous_block_end_ = 0;
  // The program objects a tail call reads point at this engine's images
  // (other engines prepared for the same case have their own).
  for (size_t i = 0; i < compiled_.size(); ++i) env.SetProgramEntry(i, compiled_[i].entry());
  machine.PrepareCall(compiled_[0].entry(), {env.context_address(), env.context_length(), 0, 0, 0},
                      guest::StackTop(cpu_));
  for (;;) {
    const MachineStop stop = machine.Resume();
    switch (stop.kind) {
      case MachineStop::Kind::kReturned:
        outcome.end = EndKind::kExit;
        outcome.r0 = machine.ReadX(0);
        return Finish(std::move(outcome));
      case MachineStop::Kind::kFault: {
        // What the kernel does: search the faulting program's exception
        // table, as it lies in RX memory, for the faulting pc.
        if (auto location = Locate(stop.pc)) {
          const jit::CompiledSubprogram& sub = *location->subprogram;
          const uint8_t* table = env.memory().HostPointer(
              sub.rx_extable, uint64_t{sub.extable_entries} * jit::kExtableEntrySize);
          if (table != nullptr) {
            if (auto fixup = jit::SearchExtable(table, sub.rx_extable, sub.extable_entries, stop.pc)) {
              if (fixup->reg != kZeroRegister) machine.WriteX(fixup->reg, 0);
              machine.WritePc(fixup->resume_pc);
              continue;
            }
          }
        }
        return Unhandled(std::move(outcome), stop);
      }
      case MachineStop::Kind::kException: return Unhandled(std::move(outcome), stop);
      case MachineStop::Kind::kHelper:
        if (stop.helper.kind == HelperResult::Kind::kUnwind) {
          outcome.end = EndKind::kUnwind;
          outcome.r0 = 0;
        } else {
          outcome.end = EndKind::kHelperError;
          outcome.message = stop.helper.error;
        }
        return Finish(std::move(outcome));
      case MachineStop::Kind::kBudget:
        outcome.end = EndKind::kBudget;
        outcome.message = fmt::format("{} arm64 instructions", budget);
        return Finish(std::move(outcome));
      case MachineStop::Kind::kImpreciseFault:
        machine.set_helper_context(nullptr, nullptr);
        machine.set_observer(nullptr);
        return std::nullopt;
      case MachineStop::Kind::kStep:
      case MachineStop::Kind::kHelperTrap:  // the engine traps no helper
      case MachineStop::Kind::kError:
        outcome.end = EndKind::kHarnessError;
        outcome.message = stop.message.empty() ? "unexpected step stop" : stop.message;
        return Finish(std::move(outcome));
    }
  }
}

}  // namespace bpfdiff
