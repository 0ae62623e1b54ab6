// A machine with 1 to 4 CPUs over one set of prog packs, on which programs
// are loaded, run a few instructions at a time, freed and replaced, with
// every invariant of invariants.h checked after each operation.
//
// Freeing follows RCU: a program freed while some CPUs are running (inside
// a program) is invalidated only once each of them has passed a quiescent
// point (returned from its call). Every call's outcome is compared with the
// interpreter's. Programs run without input memory or value maps, so that
// calls on different CPUs cannot race on shared data; the world's own
// prog_array (fd 4, four entries) carries tail calls, started by four
// resident "tail caller" programs (ids 0..3, one per entry). When an entry
// changes while a call runs, the interpreter follows the values the call's
// tail calls read (tail_call_reads.h); what cannot be compared (among it a
// program's own loads of memory another operation changed while it ran)
// is counted by reason (not_comparable.h).
#pragma once

#include <array>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/diff/code_generator.h"
#include "harness/lifecycle/invariants.h"
#include "harness/lifecycle/tail_call_reads.h"
#include "harness/machine/jit_call.h"
#include "harness/machine/sandbox.h"
#include "harness/machine/text_patcher.h"
#include "harness/planted/planted_bugs.h"
#include "jit/jit.h"
#include "oracle/load.h"

namespace bpfdiff::lifecycle {

struct WorldOptions {
  int cpus = 2;
  uint64_t pack_seed = 1;
  PlantedBugs bugs;  // its pack, JIT (bpfdiff's JIT only) and lifecycle parts apply
  // The JIT engine whose code the world runs (harness/diff/engines.h):
  // jit, jit-llsc, kernel-jit or kernel-jit-llsc. The kernel's JIT uses the
  // pack as the kernel's does: bpf_jit_binary_pack_alloc, finalize, free.
  std::string jit_engine = "jit";
  // For a kernel engine: the pack is kernel/bpf/core.c's own, compiled
  // from the tree, over the world's pack regions (KernelPackSource::kCoreC);
  // false: bpfdiff's model of it. What core.c's pack does is checked from
  // outside, by the slots it hands out and the memory it maps and unmaps.
  // A bug planted in bpfdiff's pack (bugs.pack) is in bpfdiff's code, and
  // runs where that code does: a world with one uses bpfdiff's pack.
  bool kernel_pack = true;
  uint64_t call_budget = 200'000;
  UnicornFault unicorn_fault;  // a Unicorn call made to fail (tests of the failure path)
};

class World final : private TextListener, private ExecutionObserver {
 public:
  static constexpr int kTailEntries = 4;
  static constexpr int kMaxPrograms = 64;  // guest program objects

  // Fails when the world cannot be set up; `setup_violations`, when given,
  // gets the invariants broken on the way (a tail caller's compile whose
  // kernel code broke a promise): a finding, not the harness's failure.
  static Result<std::unique_ptr<World>> Create(const WorldOptions& options,
                                               std::vector<Violation>* setup_violations = nullptr);
  ~World() override;

  // Loads a program (whose lddw map: may name only fd 4, the world's
  // prog_array); returns its id. With `pad_slots`, the program starts by
  // jumping over that many slots of lddw: its code lies deep in its image,
  // and past about 262,000 slots the image needs an oversize allocation.
  Result<int> Load(const std::vector<isa::Insn>& insns, uint64_t pad_slots = 0);
  // A load whose compile has its `fail_call`-th call (from 1) of a kernel
  // service the JIT checks for failure fail (CodeGenerator::CompileFailing:
  // an allocation, the pack's, a callee's address in the extra pass), as
  // under memory pressure or past bpf_jit_limit. The kernel's JIT must
  // refuse the program and free all it holds, or load it whole. A promise
  // broken on the way is a jit-error-path violation, unless SHIMS.md
  // explains it (kernelsrc::KnownErrorPathBreach): that is counted here.
  // bpfdiff's model calls no such service; its load is a plain one.
  struct FailingLoad {
    Result<int> id = Error{"not loaded"};
    std::string injected;      // the service made to fail; "" when the compile made fewer calls
    std::string known_breach;  // the known finding its error path met, or ""
  };
  FailingLoad LoadFailing(const std::vector<isa::Insn>& insns, uint32_t fail_call);
  // Who loaded the last program compiled (a kernel engine whose loader
  // varies by program, kernel-jit-blind); nullptr for the others.
  const kernelsrc::KernelLoader* last_loader() const { return last_loader_; }
  // Frees program `id` (not a tail caller) once every CPU running now has
  // passed a quiescent point. Removes it from the prog_array first.
  void Free(int id);
  // Starts program `id` on `cpu` if it is idle, then runs up to `steps`
  // instructions on it.
  void Step(int cpu, int id, uint64_t steps);
  // Runs the CPU's current call to its end: in an interrupt, the
  // interrupt's call, after which the interrupted call is current again.
  void RunToCompletion(int cpu);
  // Interrupts the call running on `cpu` and starts program `id` in the
  // interrupt, on the CPU's interrupt stack, running up to `steps`
  // instructions of it. Step and RunToCompletion go on with the
  // interrupt's call; when it returns, the interrupted call resumes where
  // it stopped, with its registers and helper state as they were. The
  // return from an interrupt is not a quiescent point: the interrupted
  // call is still inside its program. False (nothing done) when the CPU
  // is idle, runs a freed entry, is in an interrupt already (arm64
  // hardirqs do not nest), or `id` is not a live program.
  bool Interrupt(int cpu, int id, uint64_t steps);
  // Calls the entry of a freed program whose slot nothing else uses now:
  // it must trap on its first instruction. False if the CPU is busy or no
  // such entry exists.
  bool CallStale(int cpu);
  // Points prog_array entry `entry` at program `id` (-1: empty).
  void SetTailTarget(int entry, int id);
  // Runs every CPU to the end of its call; every deferred free happens.
  void Synchronize();
  // Synchronizes, then frees every program but the tail callers: what is
  // left in the packs is theirs alone.
  void FreeAll();

  std::vector<int> LivePrograms() const;  // loadable by Step, tail callers included
  bool busy(int cpu) const { return cpus_[static_cast<size_t>(cpu)].call != nullptr; }
  bool in_interrupt(int cpu) const { return cpus_[static_cast<size_t>(cpu)].interrupted.has_value(); }
  int cpus() const { return static_cast<int>(cpus_.size()); }
  const std::vector<Violation>& violations() const { return violations_; }
  // A Unicorn call that failed on one of the world's CPUs (see
  // Sandbox::UnicornFailure): from then on, no outcome is the JIT's.
  std::optional<std::string> UnicornFailure() const { return sandbox_->UnicornFailure(); }
  uint64_t calls_compared() const { return calls_compared_; }
  uint64_t calls_not_comparable() const { return calls_not_comparable_; }
  // The calls not comparable, by reason (not_comparable.h); the counts add
  // up to calls_not_comparable().
  const std::map<std::string, uint64_t>& not_comparable_reasons() const { return not_comparable_reasons_; }
  // The calls compared with an interpreter run that followed prog_array
  // entries changed while they ran (a second run, with the slots as read).
  uint64_t calls_replayed() const { return calls_replayed_; }
  Sandbox& sandbox() { return *sandbox_; }
  // "program 5 at 0x10000840 (+0x200)"
  std::string SlotName(int id) const;
  // The CPUs a pending free of program `id` still waits for (empty when
  // the program is live or freed).
  std::vector<int> WaitingFor(int id) const;
  // The instructions program `id` was loaded with (nullptr if none).
  const std::vector<isa::Insn>* Source(int id) const;
  // The images program `id` was compiled into, live or pending free
  // (nullptr when it is freed or was never loaded): where the allocator
  // put them, for the fuzzers' state coverage.
  const jit::CompiledProgram* Compiled(int id) const;

  // A CPU whose pc lies in a program's images, and how it got there: by a
  // tail call (its call started in another program) or not, whether it is
  // in a subprogram (through a local call) or the main image, and whether
  // an interrupt is involved: the call inside was interrupted (its pc is
  // the one it will resume at) or runs in the interrupt.
  struct CpuInside {
    int cpu = 0;
    bool by_tail_call = false;
    bool in_subprogram = false;
    bool nested_in_interrupt = false;
  };
  // The CPUs inside program `id` now (stale calls are never inside a
  // program: their entry is freed); a CPU in an interrupt may be inside
  // by both of its calls.
  std::vector<CpuInside> CpusInside(int id) const;

 private:
  struct Program {
    enum class State : uint8_t { kLive, kPendingFree, kFreed };
    State state = State::kLive;
    std::vector<isa::Insn> source;
    LoadedProgram loaded;
    jit::CompiledProgram compiled;
    std::vector<std::pair<uint64_t, uint64_t>> slots;  // [begin, end) of each allocation
    uint64_t entry = 0;
    // A read of r3 or r6..r9 before it is written, were a tail call to
    // enter the program (LoadedCase::read_at_tail_call_entry).
    std::optional<std::string> read_at_tail_call_entry;
    std::set<int> waiting;  // CPUs still to pass a quiescent point
  };
  // A call on a CPU, and what it is compared with.
  struct Call {
    std::unique_ptr<JitCall> call;
    int program = -1;
    bool stale = false;  // a call of a freed entry: must trap
    uint64_t stale_entry = 0;
    uint64_t stack_top = 0;  // SP at its entry: the CPU's stack top, or its interrupt stack's
    std::array<uint64_t, 5> args{};
    std::optional<Outcome> expected;  // the interpreter's run, over the prog_array as the call started
    std::array<uint64_t, kTailEntries> array_at_start{};
    bool array_changed = false;  // an entry changed while the call ran
    bool images_changed = false;  // pack text or a program object was written while it ran
    TailCallReads tail_calls;  // what the JIT'd call's tail calls read
  };
  // A call an interrupt stopped, and the CPU as it was then.
  struct Interrupted {
    Call call;
    MachineContext registers;
    HelperState helpers;
    uint64_t pc = 0;  // where it resumes
  };
  // The CPU's current call (the interrupt's, when it is in one).
  struct Cpu : Call {
    std::optional<Interrupted> interrupted;
    std::vector<std::pair<uint64_t, uint64_t>> dirty;  // written since the last flush
  };
  // Every call in progress: each CPU's current one, and the one its
  // interrupt stopped.
  template <typename F>
  void ForEachCall(F&& visit) {
    for (size_t c = 0; c < cpus_.size(); ++c) {
      Cpu& cpu = cpus_[c];
      if (cpu.call != nullptr) visit(static_cast<int>(c), static_cast<Call&>(cpu));
      if (cpu.interrupted) visit(static_cast<int>(c), cpu.interrupted->call);
    }
  }

  explicit World(const WorldOptions& options) : options_(options) {}
  Status Initialize();
  // Loads `insns` as program `operation`; `failing` (LoadFailing's) has
  // the compile fail its `fail_call`-th failable service call and is told
  // what the error path did. Every compile's error path is checked.
  Result<int> Install(std::vector<isa::Insn> insns, std::string_view operation, uint32_t fail_call = 0,
                      FailingLoad* failing = nullptr);
  void DoFree(int id, std::string operation);
  void Complete(int cpu, Outcome outcome);
  // The outcome of a call against the interpreter's, along the prog_array
  // slots its tail calls read.
  void CompareCall(int cpu, const Outcome& outcome, const std::string& operation);
  // The interpreter's run of the call on `cpu` with the prog_array slots
  // set to `slots` (the others as they are now), which stay as they were.
  Outcome Replay(int cpu, const std::map<uint32_t, uint64_t>& slots);
  // Whether a program of the call on `cpu` may itself have loaded bytes of
  // the prog_array (not through a tail call), replayed with `slots`.
  bool MayHaveLoadedTheArray(int cpu, const std::map<uint32_t, uint64_t>& slots);
  // Replay()'s read_engine_private with only the regions `names` marked
  // engine-private: whether the run's loads (and helpers) touched them,
  // or stack bytes outside the BPF frames (which every such run counts).
  bool ReplayReads(int cpu, const std::map<uint32_t, uint64_t>& slots, std::initializer_list<std::string_view> names);
  void CountNotComparable(std::string_view reason);
  // Why a divergence between `expected` and the JIT's `outcome` of the call
  // on `cpu` (replayed with `slots`) is not comparable beyond what
  // Compare() says, if it is not: the call read what engines hold
  // otherwise by design.
  std::optional<std::string_view> DivergenceNotComparable(int cpu, const Outcome& expected, const Outcome& outcome,
                                                          const std::map<uint32_t, uint64_t>& slots);
  // Where the BPF frames of `call` on `cpu` are (r10 of each function).
  StackGeometry GeometryOf(int cpu, const Call& call) const {
    return conventions_.geometry.EnteredAt(cpu, call.stack_top);
  }
  // conventions_ for the programs loaded now (their prologues, with the
  // kernel's JIT).
  void RefreshConventions();
  // Tail-call tracking for the block starting at `address` on `cpu`, in
  // program `owner`'s slot (-1: none).
  void TrackTailCall(int cpu, uint64_t address, int owner);
  // The first address of the tail call whose arm64 code holds `address`
  // in program `p`, if it is one's.
  static std::optional<uint64_t> TailCallSiteAt(const Program& p, uint64_t address);
  // The call on `cpu` stopped (Step's limit) and is still running.
  void Stopped(int cpu);
  uint64_t ArraySlot(uint32_t slot) const;  // prog_array->ptrs[slot] in guest memory
  std::string SlotValueName(uint64_t value) const;  // "empty", "program 5"
  void Quiescent(int cpu);
  // Starts program `id` on `cpu`, entered with SP = `stack_top`.
  void Start(int cpu, int id, uint64_t stack_top);
  // The interrupted call on `cpu` is current again.
  void ReturnFromInterrupt(int cpu);
  // The programs a call may reach, its frames where `geometry` says.
  CallPrograms Callable(const StackGeometry& geometry) const;
  void RefreshCalls();  // running calls see the programs loaded and freed since they started
  void CheckAccounting(const std::string& operation);
  // Whenever the allocator made a pack since the last look: every chunk no
  // program holds holds AARCH64_BREAK_FAULT (a whole-pack scan, so only
  // then; freed slots are checked as they are freed).
  void CheckPackHoles(const std::string& operation);
  uint64_t packs_checked_ = 0;  // packs_created when CheckPackHoles last looked
  void CheckExtable(int id, const std::string& operation);
  // After program `id`'s finalize, each of its slots holds what the JIT
  // wrote into the RW buffer: the header (the slot's size), BRK in the
  // hole, the code words (and the data after them) as emitted, and BRK after the code and its
  // exception table. Checked at once, not when some call runs into it.
  void CheckSlotAsWritten(int id, const std::string& operation);
  int ProgramAt(uint64_t address, bool freed) const;
  void Report(Invariant invariant, int cpu, uint64_t pc, int id, const std::string& operation, std::string detail);

  // TextListener
  void OnWrite(uint64_t begin, uint64_t end, jit::TextOrigin origin) override;
  void OnFlush(uint64_t begin, uint64_t end, jit::TextOrigin origin) override;
  // ExecutionObserver
  void OnBlock(int cpu, uint64_t address, uint32_t size) override;

  WorldOptions options_;
  std::unique_ptr<Sandbox> sandbox_;
  std::unique_ptr<CodeGenerator> generator_;
  CodeConventions conventions_ = ModelConventions();
  std::optional<std::string> conventions_error_;  // why conventions_ could not be read
  // The kernel's JIT: its frames differ by function, and it compiles only
  // what the kernel's verifier passes.
  bool kernel_jit_ = false;
  // The tree whose JIT that is (the engine's: harness/diff/engines.h).
  const kernelsrc::KernelTree* kernel_tree_ = nullptr;
  // The pack is kernel/bpf/core.c's (WorldOptions::kernel_pack): it frees
  // an image larger than a pack by unmapping its memory, not by
  // invalidating it.
  bool core_c_pack_ = false;
  const kernelsrc::KernelLoader* last_loader_ = nullptr;
  LoadedCase world_case_;  // what the interpreter sees: programs by id, the prog_array
  std::vector<std::unique_ptr<Program>> programs_;  // by id
  std::vector<std::unique_ptr<Program>> retired_;   // freed programs whose id was reused
  std::vector<Cpu> cpus_;
  std::vector<int> tail_targets_ = std::vector<int>(kTailEntries, -1);
  std::vector<Violation> violations_;
  std::string operation_;  // the operation in progress, for reports
  // Text operations of the operation in progress, by origin.
  std::array<uint64_t, 4> copies_{}, fills_{}, flushes_{};
  uint64_t calls_compared_ = 0, calls_not_comparable_ = 0, calls_replayed_ = 0;
  std::map<std::string, uint64_t> not_comparable_reasons_;
};

}  // namespace bpfdiff::lifecycle
