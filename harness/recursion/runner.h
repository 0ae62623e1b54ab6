// Runs a schedule on the emitted trampolines in Unicorn, one Machine per CPU,
// with the recursion model following every step.
//
// The scheduler keeps, per CPU, the running task, the tasks it preempted
// (most recent last) and the interrupts taken on top of it (innermost last).
// Each of those is a job (the programs it fires, in order) whose current
// trampoline call is a frame; a same-context trigger pushes a frame on top
// of the caller's. Whatever runs on a CPU is the top frame of its innermost
// context; everything below it is a saved MachineContext.
//
//  - An interrupt (softirq, hardirq, NMI) is taken at the CPU's current
//    instruction boundary if the kernel could take it there: a softirq only
//    when !in_interrupt() (no softirq served, bottom halves enabled, no
//    hardirq, no NMI), a hardirq only outside hardirq and NMI context (arm64
//    runs handlers with IRQs masked), an NMI only outside NMI. Entering adds
//    SOFTIRQ_OFFSET, HARDIRQ_OFFSET or NMI_OFFSET + HARDIRQ_OFFSET to the
//    per-CPU preempt_count; returning subtracts it and restores the
//    interrupted registers.
//  - A task switch happens only where the kernel could preempt: at task
//    level with preempt_count 0 (so never while bottom halves or preemption
//    are disabled). The rest of the per-CPU state stays, as on a real CPU.
//  - A trigger helper call (programs.h) runs the target's trampoline on the
//    caller's stack, in its context, and then completes the call.
//
// After every stop of a machine the runner finds where the top frame is (its
// trampoline's boundary label, or inside the program) and advances the
// model's invocation there; then the per-CPU memory (preempt_count, every
// program's active state and misses counter) must equal the model's. With
// RunConfig::check_every_event the machines also stop after every
// trampoline instruction that has an effect and at every program entry, so
// that this comparison happens after each event, not only at the
// schedule's own stops: the per-CPU state changes only at those
// instructions (and when the runner enters or leaves an interrupt, where it
// compares too), so no boundary in between can show anything new. When a
// call returns, its run/miss result must be the model's decision, and a run
// must match the interpreter (r0, helper trace, end) and make the trigger
// calls its program makes.
#pragma once

#include <array>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "harness/machine/sandbox.h"
#include "harness/recursion/programs.h"
#include "harness/recursion/schedule.h"
#include "jit/trampoline.h"
#include "oracle/outcome.h"
#include "oracle/recursion_model.h"

namespace bpfdiff::recursion {

struct RunConfig {
  Policy policy = Policy::kAtomic;
  jit::AtomicLowering lowering = jit::AtomicLowering::kLse;
  jit::TrampolineBugs bugs;
  bool check_interpreter = true;
  bool count_atomics = false;
  uint64_t max_steps = 2'000'000;  // arm64 instructions per schedule
  // Compare the per-CPU state with the model after every event: each
  // trampoline instruction with an effect (a store, an atomic, the call of
  // the program and its return), each program entry, each interrupt taken
  // and each task started. Off: only where the machine stops anyway (the
  // schedule's own positions, trigger calls, returns), which misses a
  // counter that is wrong for a while and right again at the next stop;
  // kept to show that (tests) and to measure what the checks cost.
  bool check_every_event = true;
};
std::string ConfigName(const RunConfig& config);  // "landed/lse"

struct InvocationRecord {
  std::string id;      // structural: "A.1", "hardirq3.1", "A.1/t1"
  std::string origin;  // "task A", "hardirq", "trigger from A.1"
  int cpu = 0;
  int program = 0;
  int level = 0;
  uint64_t arg = 0;
  int model = -1;            // the model's invocation id
  int parent = -1;           // for triggers
  size_t event = 0;          // schedule event (1-based) that led to it
  uint64_t entry_sp = 0;
  bool finished = false;
  bool ran = false;          // the code's result (x1)
  uint64_t r0 = 0;
  bool program_observed = false;  // the program's first instruction executed
  // How far the call has got, as a position rank (runner.cc), the highest
  // seen at any stop; and the instructions its program has executed when
  // counted one by one (a `run` does not count them).
  uint64_t progress = 0;
  uint64_t program_steps = 0;
  uint64_t atomics = 0;      // atomic instructions executed by this call (not nested ones)
  std::vector<HelperCall> helper_calls;
  std::vector<int> triggers;  // targets of its trigger calls
};

struct TimelineRow {
  size_t event = 0;  // 1-based schedule event; 0: after the schedule (finish)
  int cpu = 0;
  int level = 0;
  std::string what;
  int invocation = -1;  // record index
  std::string result;   // "run", "miss" or ""
  uint32_t active = 0;  // of the invocation's program on this CPU, after
  uint64_t misses = 0;
  uint32_t preempt_count = 0;
};

struct Finding {
  enum class Kind : uint8_t {
    kModel,        // emitted code and model disagree
    kInvariant,    // a policy invariant does not hold
    kInterpreter,  // a program run differs from the interpreter
    kHarness,      // the run could not go on (a fault, a budget, nesting)
  };
  Kind kind = Kind::kModel;
  size_t event = 0;
  std::string invocation;
  std::string message;
  std::string Describe() const;
};
std::string_view FindingKindName(Finding::Kind kind);

struct RunResult {
  RunConfig config;
  std::vector<InvocationRecord> invocations;
  std::vector<TimelineRow> timeline;
  std::vector<Finding> findings;
  std::vector<std::string> notes;  // expected consequences of a known race, refused events
  std::optional<Model> model;
  // A task switch split a non-atomic update (between its load and store).
  bool split_by_preemption = false;
  uint64_t steps = 0;

  bool ok() const { return findings.empty(); }
  const InvocationRecord* Find(std::string_view id) const;
};

// Compiled attached programs and their trampolines (per policy, lowering and
// planted bug), in the sandbox's pack, keyed by (index, spec): a program's
// code depends on both, its trampoline also on the configuration. Kept
// across schedules so that Unicorn's translations of them stay warm; the
// least recently used entry is freed beyond `capacity`.
class ProgramCache {
 public:
  ProgramCache(Sandbox& sandbox, size_t capacity);
  ~ProgramCache();
  ProgramCache(const ProgramCache&) = delete;
  ProgramCache& operator=(const ProgramCache&) = delete;

  struct Entry;
  // The compiled program `program` (attached as `index` with `spec`).
  Result<Entry*> Get(int index, const ProgramSpec& spec, const isa::Program& program);
  static const jit::CompiledProgram& Compiled(const Entry& entry);
  Result<const jit::InstalledTrampoline*> Trampoline(Entry& entry, int index, const RunConfig& config);
  size_t size() const;

 private:
  Sandbox& sandbox_;
  jit::Jit jit_;
  size_t capacity_;
  std::list<std::unique_ptr<Entry>> entries_;  // most recently used last
  void Free(Entry& entry);
};

// The attached programs of one schedule: loaded for both engines, compiled,
// with their trampolines. Uses a shared ProgramCache, or a private one that
// dies with it.
class Attachment {
 public:
  static Result<std::unique_ptr<Attachment>> Create(Sandbox& sandbox, const std::vector<ProgramSpec>& specs,
                                                    ProgramCache* cache = nullptr);
  Attachment(const Attachment&) = delete;
  Attachment& operator=(const Attachment&) = delete;

  const std::vector<ProgramSpec>& specs() const { return specs_; }
  const AttachedPrograms& programs() const { return programs_; }
  const jit::CompiledProgram& compiled(int program) const {
    return ProgramCache::Compiled(*entries_[static_cast<size_t>(program)]);
  }
  Result<std::vector<const jit::InstalledTrampoline*>> Trampolines(const RunConfig& config);

 private:
  Attachment() = default;

  std::unique_ptr<ProgramCache> own_cache_;
  ProgramCache* cache_ = nullptr;
  std::vector<ProgramSpec> specs_;
  AttachedPrograms programs_;
  std::vector<ProgramCache::Entry*> entries_;
};

// Runs `schedule` (whose programs `attachment` holds) under `config`.
// Errors are for a schedule that cannot run at all (more CPUs than the
// sandbox has, programs that do not match); everything found while running
// is in the result.
Result<RunResult> RunSchedule(Sandbox& sandbox, Attachment& attachment, const Schedule& schedule,
                              const RunConfig& config);

// The same, compiling the schedule's programs first (and freeing them).
Result<RunResult> RunSchedule(Sandbox& sandbox, const Schedule& schedule, const RunConfig& config);

}  // namespace bpfdiff::recursion
