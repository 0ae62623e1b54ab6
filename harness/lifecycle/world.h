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
// resident "tail caller" programs (ids 0..3, one per entry).
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/lifecycle/invariants.h"
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
  PlantedBugs bugs;  // its pack, JIT and lifecycle parts apply
  uint64_t call_budget = 200'000;
};

class World final : private TextListener, private ExecutionObserver {
 public:
  static constexpr int kTailEntries = 4;
  static constexpr int kMaxPrograms = 64;  // guest program objects

  static Result<std::unique_ptr<World>> Create(const WorldOptions& options);
  ~World() override;

  // Loads a program (whose lddw map: may name only fd 4, the world's
  // prog_array); returns its id. With `pad_slots`, the program starts by
  // jumping over that many slots of lddw: its code lies deep in its image,
  // and past about 262,000 slots the image needs an oversize allocation.
  Result<int> Load(const std::vector<isa::Insn>& insns, uint64_t pad_slots = 0);
  // Frees program `id` (not a tail caller) once every CPU running now has
  // passed a quiescent point. Removes it from the prog_array first.
  void Free(int id);
  // Starts program `id` on `cpu` if it is idle, then runs up to `steps`
  // instructions on it.
  void Step(int cpu, int id, uint64_t steps);
  void RunToCompletion(int cpu);
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
  int cpus() const { return static_cast<int>(cpus_.size()); }
  const std::vector<Violation>& violations() const { return violations_; }
  uint64_t calls_compared() const { return calls_compared_; }
  uint64_t calls_not_comparable() const { return calls_not_comparable_; }
  Sandbox& sandbox() { return *sandbox_; }
  // "program 5 at 0x10000840 (+0x200)"
  std::string SlotName(int id) const;
  // The CPUs a pending free of program `id` still waits for (empty when
  // the program is live or freed).
  std::vector<int> WaitingFor(int id) const;
  // The instructions program `id` was loaded with (nullptr if none).
  const std::vector<isa::Insn>* Source(int id) const;

 private:
  struct Program {
    enum class State : uint8_t { kLive, kPendingFree, kFreed };
    State state = State::kLive;
    std::vector<isa::Insn> source;
    LoadedProgram loaded;
    jit::CompiledProgram compiled;
    std::vector<std::pair<uint64_t, uint64_t>> slots;  // [begin, end) of each allocation
    uint64_t entry = 0;
    std::set<int> waiting;  // CPUs still to pass a quiescent point
  };
  struct Cpu {
    std::unique_ptr<JitCall> call;
    int program = -1;
    bool stale = false;  // a call of a freed entry: must trap
    uint64_t stale_entry = 0;
    std::optional<Outcome> expected;
    uint64_t generation = 0;  // of the prog_array when the call started
    std::vector<std::pair<uint64_t, uint64_t>> dirty;  // written since the last flush
  };

  explicit World(const WorldOptions& options) : options_(options) {}
  Status Initialize();
  Result<int> Install(std::vector<isa::Insn> insns, std::string_view operation);
  void DoFree(int id, std::string operation);
  void Complete(int cpu, Outcome outcome);
  void Quiescent(int cpu);
  void Start(int cpu, int id);
  CallPrograms Callable() const;
  void RefreshCalls();  // running calls see the programs loaded and freed since they started
  void CheckAccounting(const std::string& operation);
  // Whenever the allocator made a pack since the last look: every chunk no
  // program holds holds AARCH64_BREAK_FAULT (a whole-pack scan, so only
  // then; freed slots are checked as they are freed).
  void CheckPackHoles(const std::string& operation);
  uint64_t packs_checked_ = 0;  // packs_created when CheckPackHoles last looked
  void CheckExtable(int id, const std::string& operation);
  int ProgramAt(uint64_t address, bool freed) const;
  void Report(Invariant invariant, int cpu, uint64_t pc, int id, const std::string& operation, std::string detail);

  // TextListener
  void OnWrite(uint64_t begin, uint64_t end, jit::TextOrigin origin) override;
  void OnFlush(uint64_t begin, uint64_t end, jit::TextOrigin origin) override;
  // ExecutionObserver
  void OnBlock(int cpu, uint64_t address, uint32_t size) override;

  WorldOptions options_;
  std::unique_ptr<Sandbox> sandbox_;
  std::unique_ptr<jit::Jit> jit_;
  LoadedCase world_case_;  // what the interpreter sees: programs by id, the prog_array
  std::vector<std::unique_ptr<Program>> programs_;  // by id
  std::vector<std::unique_ptr<Program>> retired_;   // freed programs whose id was reused
  std::vector<Cpu> cpus_;
  std::vector<int> tail_targets_ = std::vector<int>(kTailEntries, -1);
  uint64_t generation_ = 0;
  std::vector<Violation> violations_;
  std::string operation_;  // the operation in progress, for reports
  // Text operations of the operation in progress, by origin.
  std::array<uint64_t, 4> copies_{}, fills_{}, flushes_{};
  uint64_t calls_compared_ = 0, calls_not_comparable_ = 0;
};

}  // namespace bpfdiff::lifecycle
