#include "harness/recursion/runner.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "harness/diff/compare.h"
#include "harness/recursion/percpu_layout.h"
#include "harness/recursion/timeline.h"
#include "jit/frame.h"
#include "oracle/guest_layout.h"
#include "oracle/interpreter.h"

namespace bpfdiff::recursion {
namespace {


constexpr int kMaxNesting = 24;  // frames per CPU: far more than any correct schedule needs
constexpr uint64_t kInterpreterBudget = 1'000'000;

// Position ranks: how far a call has got, in an order every policy shares,
// so that `until` means the same under each (a position already reached or
// passed is a no-op). Program positions count the program's instructions.
constexpr uint64_t kRankStart = 0;
constexpr uint64_t kRankLoaded = 10;       // the enter window
constexpr uint64_t kRankPastLoad = 11;     // the enter update stored
constexpr uint64_t kRankEntered = 20;      // the enter path complete
constexpr uint64_t kRankProgram = 100;     // + instructions of the program
constexpr uint64_t kRankPastProgram = 1'000'000;  // returned from it, or missed
constexpr uint64_t kRankExit = 1'000'010;         // the exit path's first boundary
constexpr uint64_t kRankInExit = 1'000'011;
constexpr uint64_t kRankExitLoaded = 1'000'020;   // the exit window
constexpr uint64_t kRankPastExitLoad = 1'000'021;
constexpr uint64_t kRankDone = 1'000'100;

uint64_t AnchorRank(Anchor anchor, uint32_t offset) {
  switch (anchor) {
    case Anchor::kLoaded: return kRankLoaded;
    case Anchor::kEntered: return kRankEntered;
    case Anchor::kProgram: return kRankProgram + offset;
    case Anchor::kExit: return kRankExit;
    case Anchor::kExitLoaded: return kRankExitLoaded;
    case Anchor::kTrigger:
    case Anchor::kDone: return kRankDone;
  }
  return kRankDone;
}

const std::array<bool, 256>& TrappedHelpers() {
  static const std::array<bool, 256> trapped = [] {
    std::array<bool, 256> t{};
    t[kTriggerHelper] = true;
    return t;
  }();
  return trapped;
}

uint32_t InterruptOffset(InterruptKind kind) {
  switch (kind) {
    case InterruptKind::kSoftirq: return kSoftirqOffset;
    case InterruptKind::kHardirq: return kHardirqOffset;
    case InterruptKind::kNmi: return kNmiOffset + kHardirqOffset;  // nmi_enter()
  }
  return 0;
}

// Why the kernel could not take `kind` with this preempt_count, or "".
std::string InterruptRefusal(InterruptKind kind, uint32_t pc) {
  switch (kind) {
    case InterruptKind::kSoftirq:
      if (pc & (kSoftirqMask | kHardirqMask | kNmiMask)) {
        return fmt::format("softirqs run only when !in_interrupt() (preempt_count 0x{:x}: {})", pc,
                           (pc & (kHardirqMask | kNmiMask))  ? "in hardirq/NMI"
                           : (pc & kSoftirqOffset)           ? "already serving a softirq"
                                                             : "bottom halves disabled");
      }
      return "";
    case InterruptKind::kHardirq:
      if (pc & (kHardirqMask | kNmiMask)) {
        return fmt::format("IRQs are masked in hardirq and NMI context (preempt_count 0x{:x})", pc);
      }
      return "";
    case InterruptKind::kNmi:
      if (pc & kNmiMask) return fmt::format("NMIs do not nest (preempt_count 0x{:x})", pc);
      return "";
  }
  return "";
}


// The runner of one schedule under one configuration.
class Runner final : private ExecutionObserver {
 public:
  Runner(Sandbox& sandbox, Attachment& attachment, const Schedule& schedule, const RunConfig& config,
         std::vector<const jit::InstalledTrampoline*> trampolines)
      : sandbox_(sandbox),
        attachment_(attachment),
        schedule_(schedule),
        config_(config),
        trampolines_(std::move(trampolines)),
        cpus_(static_cast<size_t>(schedule.cpus)) {
    result_.config = config;
    result_.model.emplace(config.policy, schedule.cpus, static_cast<int>(schedule.programs.size()));
    for (int c = 0; c < schedule.cpus; ++c) {
      helpers_.push_back(HelperContext{sandbox.env().memory(), sandbox.env().helper_state(c)});
    }
    if (config.check_every_event) event_boundaries_ = EventBoundaries();
  }

  RunResult Run();

 private:
  struct Frame {
    int record = -1;
    MachineContext below;  // a trigger frame: the caller's registers
    bool has_below = false;
  };
  // A task's or an interrupt's job on one CPU.
  struct Context {
    bool task = true;
    std::string name;  // task name, or "hardirq3"
    int level = 0;
    std::vector<int> programs;
    uint64_t arg_base = 0;
    size_t next = 0;  // the program being fired
    uint32_t preempt_added = 0;
    uint64_t stack_top = 0;
    std::vector<Frame> frames;
    MachineContext saved;  // an interrupt: what it interrupted; a task: its registers while preempted
    bool has_saved = false;
  };
  struct Cpu {
    std::vector<std::unique_ptr<Context>> tasks;  // index = stack slot
    Context* current = nullptr;
    std::vector<Context*> preempted;  // most recent last
    std::vector<std::unique_ptr<Context>> interrupts;  // innermost last
    uint64_t atomics_seen = 0;
  };

  // ---- access -------------------------------------------------------------
  Machine& machine(int cpu) { return sandbox_.machine(cpu); }
  Model& model() { return *result_.model; }
  Context* TopContext(int cpu) {
    Cpu& c = cpus_[static_cast<size_t>(cpu)];
    if (!c.interrupts.empty()) return c.interrupts.back().get();
    return c.current;
  }
  Frame* TopFrame(int cpu) {
    Context* ctx = TopContext(cpu);
    return ctx == nullptr || ctx->frames.empty() ? nullptr : &ctx->frames.back();
  }
  bool Idle(int cpu) { return TopContext(cpu) == nullptr; }
  InvocationRecord& record(int index) { return result_.invocations[static_cast<size_t>(index)]; }
  template <typename T>
  T Read(uint64_t address) {
    T value{};
    if (const uint8_t* p = sandbox_.env().memory().HostPointer(address, sizeof(T))) std::memcpy(&value, p, sizeof(T));
    return value;
  }
  uint32_t Read32(uint64_t address) { return Read<uint32_t>(address); }
  uint64_t Read64(uint64_t address) { return Read<uint64_t>(address); }
  int FrameCount(int cpu) {
    Cpu& c = cpus_[static_cast<size_t>(cpu)];
    size_t n = 0;
    for (auto& t : c.tasks) n += t->frames.size();
    for (auto& i : c.interrupts) n += i->frames.size();
    return static_cast<int>(n);
  }

  // ---- findings and rows ---------------------------------------------------
  void Report(Finding::Kind kind, int rec, std::string message) {
    Finding f{kind, event_, rec >= 0 ? record(rec).id : std::string{}, std::move(message)};
    result_.findings.push_back(std::move(f));
    if (kind == Finding::Kind::kModel || kind == Finding::Kind::kHarness) aborted_ = true;
  }
  void Note(std::string note) {
    if (std::find(result_.notes.begin(), result_.notes.end(), note) == result_.notes.end()) {
      result_.notes.push_back(std::move(note));
    }
  }
  void Row(int cpu, int level, std::string what, int rec = -1, std::string result = {}) {
    TimelineRow row;
    row.event = event_;
    row.cpu = cpu;
    row.level = level;
    row.what = std::move(what);
    row.invocation = rec;
    row.result = std::move(result);
    row.preempt_count = Read32(PreemptCountAddress(cpu));
    if (rec >= 0) {
      row.active = Read32(ActiveAddress(cpu, record(rec).program));
      row.misses = Read64(MissesAddress(cpu, record(rec).program));
    }
    result_.timeline.push_back(std::move(row));
  }

  // ---- the per-CPU state, code against model -------------------------------
  void AddPreemptCount(int cpu, int64_t delta) {
    GuestMemory& memory = sandbox_.env().memory();
    const uint64_t address = PreemptCountAddress(cpu);
    memory.Store<uint32_t>(address, static_cast<uint32_t>(static_cast<int64_t>(Read32(address)) + delta));
    model().AddPreemptCount(cpu, delta);
  }
  void CompareMemory(int cpu, int rec) {
    const CpuState& state = model().cpu(cpu);
    const uint32_t pc = Read32(PreemptCountAddress(cpu));
    if (pc != state.preempt_count) {
      Report(Finding::Kind::kModel, rec,
             fmt::format("CPU {}: preempt_count is 0x{:x}, the model says 0x{:x}", cpu, pc, state.preempt_count));
      return;
    }
    for (int p = 0; p < static_cast<int>(schedule_.programs.size()); ++p) {
      const uint32_t active = Read32(ActiveAddress(cpu, p));
      const uint64_t misses = Read64(MissesAddress(cpu, p));
      if (active != state.active[static_cast<size_t>(p)]) {
        Report(Finding::Kind::kModel, rec,
               fmt::format("CPU {}: program {} active is [{}], the model says [{}]", cpu, p,
                           FormatActive(config_.policy, active),
                           FormatActive(config_.policy, state.active[static_cast<size_t>(p)])));
        return;
      }
      if (misses != state.misses[static_cast<size_t>(p)]) {
        Report(Finding::Kind::kModel, rec,
               fmt::format("CPU {}: program {} misses is {}, the model says {}", cpu, p, misses,
                           state.misses[static_cast<size_t>(p)]));
        return;
      }
    }
  }

  // Where the top frame of `cpu` is, as a model point.
  std::optional<Point> Locate(int cpu, int rec) {
    Machine& m = machine(cpu);
    const uint64_t pc = m.ReadPc();
    const InvocationRecord& r = record(rec);
    const jit::InstalledTrampoline& t = *trampolines_[static_cast<size_t>(r.program)];
    if (const jit::BoundaryLabel* label = t.LabelAt(pc)) {
      Point mark = label->mark;
      if (label->status_reg >= 0 && static_cast<uint32_t>(m.ReadX(label->status_reg)) != 0) {
        mark = label->mark_if_failed;
      }
      return mark;
    }
    if (InProgram(r, pc)) return Point::kInProgram;
    Report(Finding::Kind::kHarness, rec,
           fmt::format("CPU {} stopped at 0x{:x}, in neither the trampoline nor the program", cpu, pc));
    return std::nullopt;
  }

  // Brings the model's invocation of the top frame to where the code is.
  void Sync(int cpu) {
    Frame* f = TopFrame(cpu);
    if (f == nullptr) return;
    const int rec = f->record;
    const auto point = Locate(cpu, rec);
    if (!point) return;
    Advance(cpu, rec, *point);
    if (aborted_) return;
    InvocationRecord& r = record(rec);
    r.progress = std::max(r.progress, Rank(cpu, rec, *point));
  }
  // The rank of the top frame's current boundary (after Sync).
  uint64_t Rank(int cpu, int rec, Point point) {
    const InvocationRecord& r = record(rec);
    if (point == Point::kInProgram) return kRankProgram + r.program_steps;
    const jit::BoundaryLabel* label =
        trampolines_[static_cast<size_t>(r.program)]->LabelAt(machine(cpu).ReadPc());
    if (label != nullptr) {
      switch (label->anchor) {
        case jit::TrampolineAnchor::kEnterWindow: return kRankLoaded;
        case jit::TrampolineAnchor::kExitStart: return kRankExit;
        case jit::TrampolineAnchor::kExitWindow: return kRankExitLoaded;
        case jit::TrampolineAnchor::kNone: break;
      }
    }
    const Invocation& inv = model().invocation(r.model);
    if (point < Point::kEntered) return inv.active_from != kNever ? kRankPastLoad : kRankStart;
    if (point == Point::kEntered) return kRankEntered;
    if (point < Point::kExitBegin) return kRankPastProgram;
    if (point == Point::kDone) return kRankDone;
    return inv.active_to != kNever ? kRankPastExitLoad : kRankInExit;
  }
  // In the attached program's code, or in a helper it called.
  bool InProgram(const InvocationRecord& r, uint64_t pc) {
    return attachment_.compiled(r.program).SubprogramAt(pc) != nullptr ||
           (pc >= guest::kHelperBase && pc < guest::kHelperBase + guest::kHelperRegionSize);
  }
  void Advance(int cpu, int rec, Point point) {
    const int id = record(rec).model;
    const Decision before = model().invocation(id).decision;
    if (auto status = model().Advance(id, point); !status) {
      Report(Finding::Kind::kModel, rec, status.message());
      return;
    }
    const Invocation& inv = model().invocation(id);
    if (before != inv.decision) {
      // The state at the decision itself (the code's equals it at every
      // step the runner observes).
      Row(cpu, record(rec).level, fmt::format("{} decides", record(rec).id), rec,
          std::string(DecisionName(inv.decision)));
      result_.timeline.back().active = inv.active_at_decision;
      result_.timeline.back().misses = inv.misses_at_decision;
      result_.timeline.back().preempt_count = inv.preempt_at_decision;
    }
    CompareMemory(cpu, rec);
  }

  // ---- starting and finishing calls ---------------------------------------
  int NewRecord(int cpu, int program, std::string id, std::string origin, uint64_t arg, int parent,
                uint64_t sp) {
    InvocationRecord r;
    r.id = std::move(id);
    r.origin = std::move(origin);
    r.cpu = cpu;
    r.program = program;
    r.arg = arg;
    r.parent = parent;
    r.event = event_;
    r.entry_sp = sp;
    r.model = model().Begin(cpu, program);
    r.level = model().invocation(r.model).level;
    result_.invocations.push_back(std::move(r));
    return static_cast<int>(result_.invocations.size() - 1);
  }
  void Call(int cpu, int rec) {
    const InvocationRecord& r = record(rec);
    Machine& m = machine(cpu);
    if (auto prepared = m.PrepareCall(trampolines_[static_cast<size_t>(r.program)]->entry(),
                                      {r.arg, 0, 0, 0, 0}, r.entry_sp);
        !prepared) {
      Report(Finding::Kind::kHarness, rec, prepared.message());
    }
    cpus_[static_cast<size_t>(cpu)].atomics_seen = 0;
  }
  // The job's next program.
  void StartJobCall(int cpu, Context& ctx) {
    const int program = ctx.programs[ctx.next];
    const std::string id = fmt::format("{}.{}", ctx.name, ctx.next + 1);
    const int rec = NewRecord(cpu, program, id, ctx.task ? fmt::format("task {}", ctx.name) : ctx.name,
                              ctx.arg_base + ctx.next, -1, ctx.stack_top);
    ctx.frames.push_back(Frame{rec, {}, false});
    Call(cpu, rec);
    Row(cpu, record(rec).level, fmt::format("{} fires program {}", ctx.task ? "task " + ctx.name : ctx.name,
                                            program), rec);
  }
  void RestoreSaved(int cpu, const MachineContext& saved) {
    machine(cpu).RestoreContext(saved);
    cpus_[static_cast<size_t>(cpu)].atomics_seen = machine(cpu).atomic_instructions();
  }

  void Complete(int cpu);
  void EndContext(int cpu, Context& ctx);
  void Trigger(int cpu);
  void CheckRun(int cpu, int rec);
  void CheckIdle(int cpu);

  // ---- executing -----------------------------------------------------------
  uint64_t Step(int cpu, uint64_t max_steps);
  void RunSteps(int cpu, uint64_t steps);
  void Until(int cpu, Anchor anchor, uint32_t offset);
  void Finish();

  // ---- events ----------------------------------------------------------
  void Apply(const Event& e);
  std::string NotPreemptible(int cpu);
  void SwitchOut(int cpu, Context& task);

  void OnBlock(int cpu, uint64_t address, uint32_t) override {
    if (cpu >= schedule_.cpus) return;
    Frame* f = TopFrame(cpu);
    if (f == nullptr) return;
    InvocationRecord& r = record(f->record);
    if (address == attachment_.compiled(r.program).entry()) r.program_observed = true;
  }

  void FinalChecks();

  // The boundaries right after each trampoline instruction with an effect
  // (where its label's point changes, or a store-exclusive's status
  // decides it), and each attached program's first instruction: sorted,
  // for Machine::set_stop_before.
  std::vector<uint64_t> EventBoundaries() const {
    std::vector<uint64_t> out;
    for (size_t p = 0; p < trampolines_.size(); ++p) {
      const jit::InstalledTrampoline& t = *trampolines_[p];
      const auto& labels = t.code().labels;
      for (size_t i = 1; i < labels.size(); ++i) {
        if (labels[i].mark != labels[i - 1].mark || labels[i].status_reg >= 0) out.push_back(t.entry() + 4 * i);
      }
      out.push_back(attachment_.compiled(static_cast<int>(p)).entry());
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  // After the runner itself changed the state (an interrupt taken, a task
  // started): the comparison every other event gets at its boundary.
  void CompareAfterEvent(int cpu) {
    if (config_.check_every_event && !aborted_) CompareMemory(cpu, -1);
  }

  Sandbox& sandbox_;
  Attachment& attachment_;
  const Schedule& schedule_;
  RunConfig config_;
  std::vector<const jit::InstalledTrampoline*> trampolines_;
  std::vector<Cpu> cpus_;
  std::vector<HelperContext> helpers_;
  RunResult result_;
  std::vector<uint64_t> event_boundaries_;
  size_t event_ = 0;
  bool aborted_ = false;
};

uint64_t Runner::Step(int cpu, uint64_t max_steps) {
  Frame* f = TopFrame(cpu);
  if (f == nullptr) return 0;
  InvocationRecord& r = record(f->record);
  Machine& m = machine(cpu);
  Cpu& c = cpus_[static_cast<size_t>(cpu)];
  m.set_helper_context(&helpers_[static_cast<size_t>(cpu)], &r.helper_calls);
  const bool counting = max_steps == 1 && InProgram(r, machine(cpu).ReadPc());
  const uint64_t before = m.steps();
  const MachineStop stop = m.Resume(max_steps);
  const uint64_t executed = m.steps() - before;
  result_.steps += executed;
  if (counting) r.program_steps += executed;
  if (config_.count_atomics) {
    r.atomics += m.atomic_instructions() - c.atomics_seen;
    c.atomics_seen = m.atomic_instructions();
  }
  if (result_.steps > config_.max_steps) {
    Report(Finding::Kind::kHarness, f->record,
           fmt::format("the schedule ran more than {} instructions", config_.max_steps));
    return executed;
  }
  switch (stop.kind) {
    case MachineStop::Kind::kStep: Sync(cpu); break;
    case MachineStop::Kind::kHelperTrap:
      if (stop.helper_id == kTriggerHelper) {
        Trigger(cpu);
      } else {
        Report(Finding::Kind::kHarness, f->record, fmt::format("unexpected trapped helper {}", stop.helper_id));
      }
      break;
    case MachineStop::Kind::kReturned: Complete(cpu); break;
    case MachineStop::Kind::kFault:
      Report(Finding::Kind::kHarness, f->record,
             fmt::format("{} of 0x{:x} at pc 0x{:x}", AccessKindName(stop.access), stop.address, stop.pc));
      break;
    case MachineStop::Kind::kException:
      Report(Finding::Kind::kHarness, f->record, fmt::format("CPU exception at pc 0x{:x}", stop.pc));
      break;
    case MachineStop::Kind::kImpreciseFault:  // fast machines only; these are precise
      Report(Finding::Kind::kHarness, f->record, stop.message);
      break;
    case MachineStop::Kind::kHelper:
      Report(Finding::Kind::kHarness, f->record, fmt::format("helper stopped the program: {}",
                                                             stop.helper.error.empty() ? "unwind" : stop.helper.error));
      break;
    case MachineStop::Kind::kBudget:
      Report(Finding::Kind::kHarness, f->record, "a call ran out of its instruction budget");
      break;
    case MachineStop::Kind::kError: Report(Finding::Kind::kHarness, f->record, stop.message); break;
  }
  return executed;
}

void Runner::RunSteps(int cpu, uint64_t steps) {
  uint64_t remaining = steps;
  while (remaining > 0 && !Idle(cpu) && !aborted_) {
    const uint64_t executed = Step(cpu, remaining);
    remaining -= std::min(executed, remaining);
  }
}

void Runner::Until(int cpu, Anchor anchor, uint32_t offset) {
  Frame* top = TopFrame(cpu);
  if (top == nullptr) {
    Note(fmt::format("event {}: CPU {} is idle; nothing to run", event_, cpu));
    return;
  }
  const int target = top->record;
  const size_t triggers_before = record(target).triggers.size();
  const uint64_t goal = AnchorRank(anchor, offset);
  while (!aborted_) {
    if (record(target).finished) {
      if (anchor != Anchor::kDone) {
        Note(fmt::format("event {}: {} returned before reaching the position", event_, record(target).id));
      }
      return;
    }
    if (anchor == Anchor::kTrigger ? record(target).triggers.size() > triggers_before
                                   : record(target).progress >= goal) {
      return;
    }
    Step(cpu, 1);
  }
}

void Runner::Finish() {
  for (int cpu = 0; cpu < schedule_.cpus && !aborted_; ++cpu) {
    while (!Idle(cpu) && !aborted_) Step(cpu, 100'000);
  }
}

void Runner::Complete(int cpu) {
  Context* ctx = TopContext(cpu);
  Frame frame = std::move(ctx->frames.back());
  ctx->frames.pop_back();
  const int rec = frame.record;
  Machine& m = machine(cpu);
  {
    InvocationRecord& r = record(rec);
    r.finished = true;
    r.progress = kRankDone;
    r.ran = (m.ReadX(1) & 1) != 0;
    r.r0 = m.ReadX(0);
  }
  Advance(cpu, rec, Point::kDone);
  if (aborted_) return;
  const InvocationRecord& r = record(rec);
  const Decision decision = model().invocation(r.model).decision;
  if (r.ran != (decision == Decision::kRun)) {
    Report(Finding::Kind::kModel, rec,
           fmt::format("the trampoline returned {}, the model says {}", r.ran ? "run" : "miss",
                       DecisionName(decision)));
    return;
  }
  if (!r.ran && (r.program_observed || !r.helper_calls.empty() || !r.triggers.empty())) {
    Report(Finding::Kind::kInvariant, rec, "a miss ran the program");
  }
  if (r.ran) CheckRun(cpu, rec);
  Row(cpu, r.level, fmt::format("{} returns", r.id), rec, r.ran ? "run" : "miss");

  if (frame.has_below) {  // a trigger: back into the caller, which gets r0 = 0
    RestoreSaved(cpu, frame.below);
    m.WriteX(0, 0);
    m.WritePc(m.ReadX(30));
    return;
  }
  ++ctx->next;
  if (ctx->next < ctx->programs.size()) {
    StartJobCall(cpu, *ctx);
    return;
  }
  EndContext(cpu, *ctx);
}

void Runner::EndContext(int cpu, Context& ctx) {
  Cpu& c = cpus_[static_cast<size_t>(cpu)];
  if (ctx.preempt_added != 0) AddPreemptCount(cpu, -static_cast<int64_t>(ctx.preempt_added));
  if (!ctx.task) {
    std::unique_ptr<Context> done = std::move(c.interrupts.back());
    c.interrupts.pop_back();
    if (done->has_saved) RestoreSaved(cpu, done->saved);
    Row(cpu, done->level, fmt::format("{} returns from the interrupt", done->name));
  } else {
    c.current = nullptr;
    Row(cpu, 0, fmt::format("task {} ends", ctx.name));
    if (!c.preempted.empty()) {
      c.current = c.preempted.back();
      c.preempted.pop_back();
      RestoreSaved(cpu, c.current->saved);
      c.current->has_saved = false;
      Row(cpu, 0, fmt::format("task {} resumes", c.current->name));
    }
  }
  CompareMemory(cpu, -1);
  if (Idle(cpu)) CheckIdle(cpu);
}

void Runner::Trigger(int cpu) {
  Sync(cpu);
  if (aborted_) return;
  Machine& m = machine(cpu);
  Frame* caller = TopFrame(cpu);
  const int parent = caller->record;
  const uint64_t target = m.ReadX(0);
  const uint64_t arg = m.ReadX(1);
  record(parent).triggers.push_back(static_cast<int>(std::min<uint64_t>(target, 0x7fffffff)));
  if (target >= schedule_.programs.size()) {
    Report(Finding::Kind::kHarness, parent, fmt::format("trigger of program {}, which is not attached", target));
    return;
  }
  if (FrameCount(cpu) >= kMaxNesting) {
    Report(Finding::Kind::kHarness, parent,
           fmt::format("CPU {}: more than {} nested trampoline calls", cpu, kMaxNesting));
    return;
  }
  // On the caller's stack, below its frame (the stub has not moved SP).
  const uint64_t sp = (m.ReadSp() - 64) & ~uint64_t{15};
  const std::string id = fmt::format("{}/t{}", record(parent).id, record(parent).triggers.size());
  Frame frame;
  frame.below = m.SaveContext();
  frame.has_below = true;
  const int rec = NewRecord(cpu, static_cast<int>(target), id, fmt::format("trigger from {}", record(parent).id),
                            arg, parent, sp);
  frame.record = rec;
  TopContext(cpu)->frames.push_back(std::move(frame));
  Call(cpu, rec);
  Row(cpu, record(rec).level, fmt::format("{} triggers program {}", record(parent).id, target), rec);
}

void Runner::CheckRun(int cpu, int rec) {
  const InvocationRecord& r = record(rec);
  const auto& expected = attachment_.programs().expected_triggers[static_cast<size_t>(r.program)];
  if (r.triggers != expected) {
    Report(Finding::Kind::kInterpreter, rec,
           fmt::format("program {} made {} trigger calls, its code makes {}", r.program, r.triggers.size(),
                       expected.size()));
  }
  if (!config_.check_interpreter) return;
  // The interpreter's r10 must be the JIT's: the program was entered with
  // SP = entry_sp - the trampoline's frame.
  const uint64_t program_sp = r.entry_sp - jit::kTrampolineFrameBytes;
  const StackGeometry geometry = Sandbox::Geometry().EnteredAt(cpu, program_sp);
  Interpreter interpreter(sandbox_.env(), attachment_.programs().interp,
                          InterpreterOptions{kInterpreterBudget, cpu, geometry});
  const Outcome reference = interpreter.RunProgram(static_cast<size_t>(r.program), {r.arg, 0, 0, 0, 0});
  Outcome candidate;
  candidate.end = EndKind::kExit;
  candidate.r0 = r.r0;
  candidate.helper_calls = r.helper_calls;
  const Verdict verdict = Compare(reference, candidate, "interp", "trampoline");
  if (!verdict.match()) {
    Report(Finding::Kind::kInterpreter, rec, fmt::format("program {}: {}", r.program, verdict.Describe()));
  }
}

// Counters return to zero when the CPU is idle.
void Runner::CheckIdle(int cpu) {
  const CpuState& state = model().cpu(cpu);
  for (size_t p = 0; p < state.active.size(); ++p) {
    if (state.active[p] == 0) continue;
    const std::string what = fmt::format("CPU {} is idle and program {} active is [{}]", cpu, p,
                                         FormatActive(config_.policy, state.active[p]));
    if (config_.policy == Policy::kPerContext && result_.split_by_preemption) {
      Note(what + " (the lost update of a preempted non-atomic increment)");
    } else {
      Report(Finding::Kind::kInvariant, -1, what);
    }
  }
  if (state.preempt_count != 0) {
    Report(Finding::Kind::kInvariant, -1,
           fmt::format("CPU {} is idle with preempt_count 0x{:x}", cpu, state.preempt_count));
  }
}

std::string Runner::NotPreemptible(int cpu) {
  Cpu& c = cpus_[static_cast<size_t>(cpu)];
  if (!c.interrupts.empty()) return fmt::format("CPU {} is in {}", cpu, c.interrupts.back()->name);
  const uint32_t pc = Read32(PreemptCountAddress(cpu));
  if (pc != 0) {
    return fmt::format("preemption is disabled (preempt_count 0x{:x}{})", pc,
                       (pc & kSoftirqMask) ? ", bottom halves disabled" : "");
  }
  return "";
}

void Runner::SwitchOut(int cpu, Context& task) {
  Cpu& c = cpus_[static_cast<size_t>(cpu)];
  if (Frame* f = TopFrame(cpu)) {
    const Point at = model().invocation(record(f->record).model).point;
    if (at == Point::kActiveLoaded || at == Point::kExitLoaded) {
      result_.split_by_preemption = true;
      Note(fmt::format("event {}: task {} is preempted between the load and the store of "
                                          "{}'s {} update",
                                          event_, task.name, record(f->record).id,
                                          at == Point::kActiveLoaded ? "enter" : "exit"));
    }
  }
  task.saved = machine(cpu).SaveContext();
  task.has_saved = true;
  c.preempted.push_back(&task);
  c.current = nullptr;
}

// Long because it is one case per schedule event kind (task, interrupt,
// switch, until, steps, finish), each the few steps that kind takes.
void Runner::Apply(const Event& e) {
  const int cpu = e.cpu;
  switch (e.kind) {
    case Event::Kind::kTask: {
      Cpu& c = cpus_[static_cast<size_t>(cpu)];
      std::string preempting;
      if (!Idle(cpu)) {
        if (const std::string why = NotPreemptible(cpu); !why.empty()) {
          Row(cpu, TopContext(cpu)->level, fmt::format("task {} refused: {}", e.task, why));
          Note(fmt::format("event {} ({}) refused: {}", event_, FormatEvent(e), why));
          return;
        }
        preempting = c.current->name;
        SwitchOut(cpu, *c.current);
      }
      auto task = std::make_unique<Context>();
      task->task = true;
      task->name = e.task;
      task->programs = e.programs;
      task->arg_base = e.arg.value_or(0x1000 * event_);
      task->stack_top = TaskStackTop(cpu, static_cast<int>(c.tasks.size()));
      c.current = task.get();
      c.tasks.push_back(std::move(task));
      Row(cpu, 0, preempting.empty() ? fmt::format("task {} starts{}", e.task, e.bh ? " (bh disabled)" : "")
                                     : fmt::format("task {} preempts task {}{}", e.task, preempting,
                                                   e.bh ? " (bh disabled)" : ""));
      if (e.bh) {
        AddPreemptCount(cpu, kSoftirqDisableOffset);
        c.current->preempt_added = kSoftirqDisableOffset;
      }
      StartJobCall(cpu, *c.current);
      CompareAfterEvent(cpu);
      return;
    }
    case Event::Kind::kSwitch: {
      Cpu& c = cpus_[static_cast<size_t>(cpu)];
      auto it = std::find_if(c.preempted.begin(), c.preempted.end(),
                             [&](Context* t) { return t->name == e.task; });
      std::string why;
      if (it == c.preempted.end()) {
        why = c.current != nullptr && c.current->name == e.task ? "it is running" : "it is not preempted";
      } else if (c.current == nullptr) {
        why = "no task is running";
      } else {
        why = NotPreemptible(cpu);
      }
      if (!why.empty()) {
        Row(cpu, Idle(cpu) ? 0 : TopContext(cpu)->level, fmt::format("switch to {} refused: {}", e.task, why));
        Note(fmt::format("event {} ({}) refused: {}", event_, FormatEvent(e), why));
        return;
      }
      Context* next = *it;
      c.preempted.erase(it);
      const std::string from = c.current->name;
      SwitchOut(cpu, *c.current);
      c.current = next;
      RestoreSaved(cpu, next->saved);
      next->has_saved = false;
      Row(cpu, 0, fmt::format("task {} preempted, task {} resumes", from, e.task));
      CompareMemory(cpu, -1);
      return;
    }
    case Event::Kind::kInterrupt: {
      Cpu& c = cpus_[static_cast<size_t>(cpu)];
      const uint32_t pc = Read32(PreemptCountAddress(cpu));
      const std::string name = fmt::format("{}{}", InterruptKindName(e.interrupt), event_);
      if (const std::string why = InterruptRefusal(e.interrupt, pc); !why.empty()) {
        Row(cpu, InterruptContextLevel(pc), fmt::format("{} refused: {}", name, why));
        Note(fmt::format("event {} ({}) refused: {}", event_, FormatEvent(e), why));
        return;
      }
      auto irq = std::make_unique<Context>();
      irq->task = false;
      irq->name = name;
      irq->level = InterruptLevel(e.interrupt);
      irq->programs = e.programs;
      irq->arg_base = e.arg.value_or(0x1000 * event_);
      irq->stack_top = InterruptStackTop(cpu, irq->level);
      if (!Idle(cpu)) {
        irq->saved = machine(cpu).SaveContext();
        irq->has_saved = true;
      }
      irq->preempt_added = InterruptOffset(e.interrupt);
      AddPreemptCount(cpu, irq->preempt_added);
      Context& ctx = *irq;
      c.interrupts.push_back(std::move(irq));
      Row(cpu, ctx.level, fmt::format("{} taken", name));
      StartJobCall(cpu, ctx);
      CompareAfterEvent(cpu);
      return;
    }
    case Event::Kind::kRun: RunSteps(cpu, e.steps); return;
    case Event::Kind::kUntil: Until(cpu, e.anchor, e.offset); return;
    case Event::Kind::kFinish: Finish(); return;
  }
}

void Runner::FinalChecks() {
  for (size_t i = 0; i < result_.invocations.size(); ++i) {
    if (!result_.invocations[i].finished) {
      Report(Finding::Kind::kHarness, static_cast<int>(i), "did not return by the end of the schedule");
      return;
    }
  }
  // Two invocations of one program running at once on one CPU: never for
  // atomic and landed; never at one context level for percontext.
  const auto& invs = model().invocations();
  for (size_t i = 0; i < invs.size(); ++i) {
    for (size_t j = i + 1; j < invs.size(); ++j) {
      const Invocation& a = invs[i];
      const Invocation& b = invs[j];
      if (a.cpu != b.cpu || a.program != b.program) continue;
      if (!ProgramsOverlap(a, b)) continue;
      if (config_.policy == Policy::kPerContext && a.level != b.level) continue;  // allowed by design
      const std::string what =
          fmt::format("{} and {} run program {} at the same time on CPU {} (levels {}, {})",
                      result_.invocations[i].id, result_.invocations[j].id, a.program, a.cpu,
                      LevelName(a.level), LevelName(b.level));
      if (config_.policy == Policy::kPerContext && result_.split_by_preemption) {
        Note(what + " (the lost update of a preempted non-atomic increment)");
      } else {
        Report(Finding::Kind::kInvariant, static_cast<int>(j), what);
      }
    }
  }
}

RunResult Runner::Run() {
  // A clean per-CPU page: preempt_count 0, every program's state 0.
  for (int cpu = 0; cpu < schedule_.cpus; ++cpu) {
    std::memset(sandbox_.env().memory().HostPointer(guest::PerCpuArea(cpu), guest::kPerCpuStride), 0,
                guest::kPerCpuStride);
  }
  sandbox_.env().Install(attachment_.programs().interp);  // resets every CPU's stack and helper state
  for (int cpu = 0; cpu < schedule_.cpus; ++cpu) {
    Machine& m = machine(cpu);
    m.set_trapped_helpers(&TrappedHelpers());
    m.set_observer(this);
    m.set_count_atomics(config_.count_atomics);
    m.set_budget(config_.max_steps);
    m.set_stop_before(config_.check_every_event ? &event_boundaries_ : nullptr);
  }
  for (size_t i = 0; i < schedule_.events.size() && !aborted_; ++i) {
    event_ = i + 1;
    Apply(schedule_.events[i]);
  }
  event_ = 0;
  if (!aborted_) Finish();
  if (!aborted_) FinalChecks();
  for (int cpu = 0; cpu < schedule_.cpus; ++cpu) {
    Machine& m = machine(cpu);
    m.set_trapped_helpers(nullptr);
    m.set_observer(nullptr);
    m.set_count_atomics(false);
    m.set_stop_before(nullptr);
    m.set_helper_context(nullptr, nullptr);
  }
  return std::move(result_);
}

}  // namespace

std::string ConfigName(const RunConfig& config) {
  return fmt::format("{}/{}", PolicyName(config.policy),
                     config.lowering == jit::AtomicLowering::kLse ? "lse" : "llsc");
}

std::string_view FindingKindName(Finding::Kind kind) {
  switch (kind) {
    case Finding::Kind::kModel: return "code/model";
    case Finding::Kind::kInvariant: return "invariant";
    case Finding::Kind::kInterpreter: return "interpreter";
    case Finding::Kind::kHarness: return "harness";
  }
  return "?";
}

std::string Finding::Describe() const {
  return fmt::format("[{}] {}{}{}", FindingKindName(kind), event == 0 ? std::string("at the end")
                                                                       : fmt::format("event {}", event),
                     invocation.empty() ? "" : fmt::format(", {}", invocation), ": " + message);
}

const InvocationRecord* RunResult::Find(std::string_view id) const {
  for (const auto& r : invocations) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

struct ProgramCache::Entry {
  int index = 0;
  ProgramSpec spec;
  jit::CompiledProgram compiled;
  using Key = std::tuple<Policy, jit::AtomicLowering, bool, bool, bool, bool>;
  std::map<Key, std::unique_ptr<jit::InstalledTrampoline>> trampolines;
};

ProgramCache::ProgramCache(Sandbox& sandbox, size_t capacity)
    : sandbox_(sandbox), jit_(sandbox.pack(), Sandbox::JitEnvironment(), jit::JitOptions{}),
      capacity_(std::max<size_t>(capacity, kMaxPrograms)) {}

ProgramCache::~ProgramCache() {
  for (auto& entry : entries_) Free(*entry);
}

void ProgramCache::Free(Entry& entry) {
  for (auto& [key, t] : entry.trampolines) jit::ReleaseTrampoline(sandbox_.pack(), std::move(t));
  entry.trampolines.clear();
  jit_.Release(entry.compiled);
}

size_t ProgramCache::size() const { return entries_.size(); }

const jit::CompiledProgram& ProgramCache::Compiled(const Entry& entry) { return entry.compiled; }

Result<ProgramCache::Entry*> ProgramCache::Get(int index, const ProgramSpec& spec, const isa::Program& program) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if ((*it)->index == index && (*it)->spec == spec) {
      entries_.splice(entries_.end(), entries_, it);  // most recently used
      return entries_.back().get();
    }
  }
  // Evict the least recently used; the entries of the schedule being
  // attached are the most recent ones, and capacity >= kMaxPrograms.
  while (entries_.size() >= capacity_) {
    Free(*entries_.front());
    entries_.pop_front();
  }
  auto compiled = jit_.Compile(program);
  if (!compiled) return Fail("attached program {}: {}", index, compiled.message());
  auto entry = std::make_unique<Entry>();
  entry->index = index;
  entry->spec = spec;
  entry->compiled = std::move(compiled).value();
  entries_.push_back(std::move(entry));
  return entries_.back().get();
}

Result<const jit::InstalledTrampoline*> ProgramCache::Trampoline(Entry& entry, int index, const RunConfig& config) {
  const Entry::Key key{config.policy, config.lowering, config.bugs.exit_wrong_context,
                       config.bugs.check_then_increment, config.bugs.rctx_wrong_bits,
                       config.bugs.hardirq_as_interrupted};
  auto& slot = entry.trampolines[key];
  if (!slot) {
    jit::TrampolineSpec spec;
    spec.policy = config.policy;
    spec.atomics = config.lowering;
    spec.program_entry = entry.compiled.entry();
    spec.preempt_count_offset = static_cast<uint32_t>(guest::kPreemptCountOffset);
    spec.state_offset = static_cast<uint32_t>(StateOffset(index));
    spec.bugs = config.bugs;
    auto code = jit::EmitTrampoline(spec);
    if (!code) return code.error();
    auto installed = jit::InstallTrampoline(sandbox_.pack(), std::move(code).value());
    if (!installed) return installed.error();
    slot = std::move(installed).value();
  }
  return slot.get();
}

Result<std::unique_ptr<Attachment>> Attachment::Create(Sandbox& sandbox, const std::vector<ProgramSpec>& specs,
                                                       ProgramCache* cache) {
  std::unique_ptr<Attachment> attachment(new Attachment());
  attachment->specs_ = specs;
  if (cache == nullptr) {
    attachment->own_cache_ = std::make_unique<ProgramCache>(sandbox, specs.size());
    cache = attachment->own_cache_.get();
  }
  attachment->cache_ = cache;
  auto programs = LoadPrograms(specs);
  if (!programs) return programs.error();
  attachment->programs_ = std::move(programs).value();
  for (size_t p = 0; p < specs.size(); ++p) {
    auto entry = cache->Get(static_cast<int>(p), specs[p], attachment->programs_.jit.programs[p].program);
    if (!entry) return entry.error();
    attachment->entries_.push_back(*entry);
  }
  return attachment;
}

Result<std::vector<const jit::InstalledTrampoline*>> Attachment::Trampolines(const RunConfig& config) {
  std::vector<const jit::InstalledTrampoline*> out;
  for (size_t p = 0; p < entries_.size(); ++p) {
    auto t = cache_->Trampoline(*entries_[p], static_cast<int>(p), config);
    if (!t) return t.error();
    out.push_back(*t);
  }
  return out;
}

Result<RunResult> RunSchedule(Sandbox& sandbox, Attachment& attachment, const Schedule& schedule,
                              const RunConfig& config) {
  if (schedule.cpus > sandbox.cpus()) {
    return Fail("the schedule needs {} CPUs; the sandbox has {}", schedule.cpus, sandbox.cpus());
  }
  if (attachment.specs() != schedule.programs) return Fail("the attachment holds other programs");
  auto trampolines = attachment.Trampolines(config);
  if (!trampolines) return trampolines.error();
  Runner runner(sandbox, attachment, schedule, config, std::move(trampolines).value());
  return runner.Run();
}

Result<RunResult> RunSchedule(Sandbox& sandbox, const Schedule& schedule, const RunConfig& config) {
  auto attachment = Attachment::Create(sandbox, schedule.programs);
  if (!attachment) return attachment.error();
  return RunSchedule(sandbox, **attachment, schedule, config);
}

}  // namespace bpfdiff::recursion
