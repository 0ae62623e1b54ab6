// One call of JIT'd code on one simulated CPU, run to the end at once or a
// few instructions at a time (for schedules that interleave CPUs).
//
// It turns what the machine reports into an Outcome the way the kernel
// would: a fault is resolved from the faulting program's exception table
// as it lies in RX memory; a fault with no entry is an unhandled kernel
// fault at the BPF instruction the pc maps to; a BRK is a trap; a return
// that does not give the caller back its callee-saved registers (x19..x29,
// sp) is a trap too, for the caller would crash. Tail calls are
// recognised by a block starting at a program's tail-call entry.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/machine/machine.h"
#include "isa/program.h"
#include "jit/jit.h"
#include "kernelsrc/kernel_loader.h"
#include "oracle/environment.h"
#include "oracle/outcome.h"

namespace bpfdiff {

// What differs between the JITs whose code a call can run, bpfdiff's model
// (jit/) and the kernel's own (kernelsrc/): how a faulting PROBE_MEM load
// is fixed up (ex_handler_bpf), where a tail call enters a program
// (PROLOGUE_OFFSET), and where the BPF frames are.
struct CodeConventions {
  using ExtableSearch = std::optional<jit::Fixup> (*)(const uint8_t* rx_extable, uint64_t rx_extable_address,
                                                     uint32_t entries, uint64_t pc);
  ExtableSearch search_extable = jit::SearchExtable;
  uint64_t tail_call_entry_offset = jit::TailCallEntryOffset();  // bytes from a program's entry
  StackGeometry geometry;  // r10 of every call depth, for a call entered at the stack top
  // The code builds call targets as kernel virtual addresses: the kernel's
  // emit_addr_mov_i64() fills only the low 48 bits and sets the top 16, as
  // every kernel text address has them. bpfdiff's guest is the kernel's
  // upper half with the top 16 bits dropped: a branch to
  // 0xffff'0000'0000'0000 | g goes to guest address g.
  bool kernel_virtual_calls = false;
  // A tail call restores the caller's r6..r9 from the stack and truncates
  // r3 (the kernel's emit_bpf_tail_call); the interpreter keeps them
  // (LoadedCase::read_at_tail_call_entry).
  bool tail_call_restores_registers = false;
  // The code is the kernel's, built with BTI: the pack's pages are guarded
  // (jit/a64/branch_targets.h), so an indirect branch into them, and the
  // call itself (bpf_prog_run's blr), must land on a landing pad that
  // accepts it. bpfdiff's model JIT emits none and is not held to it.
  bool guarded_pages = false;
  // The code is the kernel's, whose frames are linked by frame records
  // (x29, the AAPCS64 frame chain): at every call out of BPF code (a
  // helper, a trampoline's stub) the chain unwinds to the caller's, as
  // perf, bpf_get_stack and bpf_throw unwind it (arch/arm64/kernel/
  // stacktrace.c): each record 16-byte aligned, above the last, on the
  // CPU's stack, and each return address it holds in executable memory.
  bool frame_records = false;
  // The firmware the code calls (SMCCC, through `smc #0` or `hvc #0`): the
  // Spectre-BHB mitigation that every epilogue of a classic program makes
  // under an unprivileged loader on some CPUs (kernelsrc/kernel_loader.h).
  // The call of ARCH_WORKAROUND_3 returns success in x0 and changes x1..x3,
  // as SMCCC v1.1 lets the firmware do. Another function, another
  // instruction, or any call where none is due is a trap; so is a return
  // that made none, for the epilogue's mitigation was lost.
  kernelsrc::SmcccConduit firmware = kernelsrc::SmcccConduit::kNone;
  // The kernel runs at EL2 with VHE, its per-CPU offset in TPIDR_EL2: a
  // read of it (undefined at the guest's EL1) gives the CPU's per-CPU
  // area, as TPIDR_EL1 does otherwise. Without it such a read is a trap.
  bool per_cpu_in_tpidr_el2 = false;
};

// The model JIT's conventions (jit/jit.h, jit/frame.h).
CodeConventions ModelConventions();

// The programs a call may reach (itself and its tail-call targets), by
// program index; an index may be empty (nullptr).
struct CallPrograms {
  std::vector<const jit::CompiledProgram*> compiled;
  std::vector<const isa::Program*> programs;
  CodeConventions conventions = ModelConventions();
};

class JitCall final : private ExecutionObserver {
 public:
  JitCall(GuestEnvironment& env, Machine& machine, int cpu, CallPrograms programs);
  ~JitCall() override;
  JitCall(const JitCall&) = delete;
  JitCall& operator=(const JitCall&) = delete;

  // Starts program `index` with r1..r5 = args on this CPU's stack, entered
  // with SP = `sp` (0: the stack top; a call nested in an interrupt runs
  // on a stack of its own, and programs.conventions.geometry says where
  // its frames are).
  void Start(size_t index, const std::array<uint64_t, 5>& args, uint64_t budget, uint64_t sp = 0);
  // Starts the code at `entry`, which need not be a live program's (the
  // lifecycle checks call freed entries; they must trap).
  void StartAt(uint64_t entry, const std::array<uint64_t, 5>& args, uint64_t budget, uint64_t sp = 0);

  // Runs at most `max_steps` more instructions (precise machines; a fast
  // machine runs to the end). The call takes the machine's helper calls,
  // executed blocks and budget back first: another call may have run on
  // this CPU since (an interrupt's, with the machine's context saved).
  // Returns the outcome once the call has ended, nullopt while it is still
  // running, and sets imprecise() (and ends) when a fast machine could not
  // pin a fault to one instruction.
  std::optional<Outcome> Step(uint64_t max_steps = ~uint64_t{0});

  bool imprecise() const { return imprecise_; }
  // The helper calls the call made so far.
  const std::vector<HelperCall>& helper_calls() const { return outcome_.helper_calls; }
  // The program whose code the CPU runs now (changes on a tail call).
  size_t current_program() const { return current_program_; }

  // The programs the call may reach changed (one was loaded or freed while
  // the call ran).
  void set_programs(CallPrograms programs) { programs_ = std::move(programs); }

  // Another observer to forward executed blocks to (the lifecycle checks).
  void set_observer(ExecutionObserver* observer) { forward_ = observer; }

 private:
  struct Location {
    size_t program;
    const jit::CompiledSubprogram* subprogram;
  };
  std::optional<Location> Locate(uint64_t pc) const;
  // At a return: which callee-saved register (x19..x29, sp) the code did
  // not give back as the call found it, if any. The kernel would crash in
  // the caller; here the call ends in a trap that says so.
  std::optional<std::string> CalleeSavedChanged() const;
  // Receives the machine's helper calls and executed blocks, and sets its
  // budget; Detach stops receiving them.
  void Attach();
  void Detach();
  void OnBlock(int cpu, uint64_t address, uint32_t size) override;
  // On guarded pages: records the first landing at `target` (a block that
  // does not follow on from the last one) that BTI forbids.
  void CheckBranchTarget(uint64_t target);
  // At a call out of BPF code, to `callee`: CodeConventions::frame_records.
  void CheckFrameChain(uint64_t callee);
  Outcome Finish();
  Outcome Unhandled(const MachineStop& stop);
  // For code that calls kernel virtual addresses (CodeConventions): the
  // guest code address a fetch fault at one of them means, if any.
  std::optional<uint64_t> GuestCodeOfKernelAddress(const MachineStop& stop) const;
  // Ends the call without an outcome: the machine could not say exactly
  // where it stopped (a fast machine; the caller runs it again precisely).
  Outcome MarkImprecise();
  // Whether a CPU exception reported at `pc` is where it happened: a BRK,
  // or the memory access of an atomic (alignment).
  bool ExceptionPcIsExact(uint64_t pc) const;
  bool IsBreakFault(uint64_t pc) const;
  // Whether the word at `pc` is the firmware call the conventions allow.
  bool IsFirmwareCall(uint64_t pc) const;
  // Performs the SMCCC call at `pc` and moves past it; the trap's message
  // when it asks for a function the kernel's code never calls.
  std::optional<std::string> CallFirmware(uint64_t pc);
  // Reads TPIDR_EL2 for the `mrs` at `pc` when the conventions say the
  // kernel runs at EL2; false when the word is no such read.
  bool ReadTpidrEl2(uint64_t pc);
  // The kernel's fixup of a fault at `pc`: when the exception table of the
  // code there has an entry for it, clears its register and resumes where
  // it says; false when it has none.
  bool ApplyFixup(uint64_t pc);

  GuestEnvironment& env_;
  Machine& machine_;
  int cpu_;
  CallPrograms programs_;
  HelperContext helpers_;
  Outcome outcome_;
  uint64_t budget_ = 0;
  bool running_ = false;
  bool imprecise_ = false;
  size_t current_program_ = 0;
  uint64_t previous_block_end_ = 0;
  // The first indirect branch that landed where BTI forbids (guarded
  // pages): the call ends in a trap that says so.
  std::string branch_target_violation_;
  std::string frame_chain_violation_;  // the first, or ""
  uint64_t firmware_calls_ = 0;
  uint64_t resume_pc_ = 0;  // where the machine resumes, 0 once a block ran
  uint64_t entry_sp_ = 0;   // the SP the call was entered with
  std::string start_error_;  // the machine could not start the call
  ExecutionObserver* forward_ = nullptr;
};

}  // namespace bpfdiff
