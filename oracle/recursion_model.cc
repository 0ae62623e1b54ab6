#include "oracle/recursion_model.h"

#include <algorithm>

#include <fmt/format.h>

namespace bpfdiff::recursion {
namespace {

using P = Point;

constexpr Point kAtomicEnter[] = {P::kStart, P::kEntered};
constexpr Point kPerContextEnter[] = {P::kStart, P::kActiveLoaded, P::kEntered};
constexpr Point kLandedEnter[] = {P::kStart,        P::kPreemptDisableLoaded, P::kPreemptDisabled,
                                  P::kActiveLoaded, P::kActiveStored,         P::kChecked,
                                  P::kPreemptEnableLoaded, P::kEntered};
constexpr Point kAtomicExit[] = {P::kExitBegin, P::kExited};
constexpr Point kPerContextExit[] = {P::kExitBegin, P::kExitLoaded, P::kExited};
constexpr Point kLandedExit[] = {P::kExitBegin,   P::kExitPreemptDisableLoaded, P::kExitPreemptDisabled,
                                 P::kExitLoaded,  P::kExitStored, P::kExitPreemptEnableLoaded,
                                 P::kExited};

constexpr bool OnRunPath(Point p) { return p == P::kInProgram || p == P::kProgramReturned; }

uint32_t WithByte(uint32_t word, int level, uint32_t byte) {
  const int shift = 8 * level;
  return (word & ~(uint32_t{0xff} << shift)) | ((byte & 0xff) << shift);
}

}  // namespace

std::string_view DecisionName(Decision decision) {
  switch (decision) {
    case Decision::kUndecided: return "undecided";
    case Decision::kRun: return "run";
    case Decision::kMiss: return "miss";
  }
  return "?";
}

std::span<const Point> EnterPath(Policy policy) {
  switch (policy) {
    case Policy::kAtomic: return kAtomicEnter;
    case Policy::kPerContext: return kPerContextEnter;
    case Policy::kLanded: return kLandedEnter;
  }
  return {};
}

std::span<const Point> ExitPath(Policy policy) {
  switch (policy) {
    case Policy::kAtomic: return kAtomicExit;
    case Policy::kPerContext: return kPerContextExit;
    case Policy::kLanded: return kLandedExit;
  }
  return {};
}

Model::Model(Policy policy, int cpus, int programs) : policy_(policy), programs_(programs) {
  cpus_.resize(static_cast<size_t>(cpus));
  for (auto& cpu : cpus_) {
    cpu.active.assign(static_cast<size_t>(programs), 0);
    cpu.misses.assign(static_cast<size_t>(programs), 0);
  }
}

void Model::AddPreemptCount(int cpu, int64_t delta) {
  auto& state = cpus_[static_cast<size_t>(cpu)];
  state.preempt_count = static_cast<uint32_t>(static_cast<int64_t>(state.preempt_count) + delta);
}

int Model::Begin(int cpu, int program) {
  Invocation inv;
  inv.cpu = cpu;
  inv.program = program;
  inv.level = InterruptContextLevel(cpus_[static_cast<size_t>(cpu)].preempt_count);
  inv.began = clock_++;
  invocations_.push_back(inv);
  return static_cast<int>(invocations_.size() - 1);
}

std::optional<Point> Model::Next(const Invocation& inv) const {
  const auto enter = EnterPath(policy_);
  const auto exit = ExitPath(policy_);
  if (auto it = std::find(enter.begin(), enter.end(), inv.point); it != enter.end()) {
    if (it + 1 != enter.end()) return *(it + 1);
    return inv.decision == Decision::kRun ? P::kInProgram : P::kMissCounted;
  }
  switch (inv.point) {
    case P::kInProgram: return P::kProgramReturned;
    case P::kProgramReturned:
    case P::kMissCounted: return exit.front();
    case P::kDone: return std::nullopt;
    default: break;
  }
  if (auto it = std::find(exit.begin(), exit.end(), inv.point); it != exit.end()) {
    if (it + 1 != exit.end()) return *(it + 1);
    return P::kDone;
  }
  return std::nullopt;
}

Status Model::Advance(int id, Point point) {
  Invocation& inv = invocations_[static_cast<size_t>(id)];
  auto where = [&] {
    return fmt::format("the code is at {}, the model at {} (decision {})", PointName(point),
                       PointName(inv.point), DecisionName(inv.decision));
  };
  while (inv.point != point) {
    // The run and miss paths exclude each other.
    if ((inv.decision == Decision::kMiss && OnRunPath(point)) ||
        (inv.decision == Decision::kRun && point == P::kMissCounted)) {
      return Fail("path differs: {}", where());
    }
    const auto next = Next(inv);
    if (!next) return Fail("not on the path: {}", where());
    Arrive(inv, *next);
  }
  return {};
}

void Model::Arrive(Invocation& inv, Point point) {
  CpuState& cpu = cpus_[static_cast<size_t>(inv.cpu)];
  uint32_t& active = cpu.active[static_cast<size_t>(inv.program)];
  const uint64_t now = clock_++;
  auto decide = [&](bool run) {
    inv.decision = run ? Decision::kRun : Decision::kMiss;
    inv.decided = now;
  };
  switch (point) {
    case P::kStart: break;
    case P::kPreemptDisableLoaded:
    case P::kPreemptEnableLoaded:
    case P::kExitPreemptDisableLoaded:
    case P::kExitPreemptEnableLoaded: inv.loaded_preempt = cpu.preempt_count; break;
    case P::kPreemptDisabled:
    case P::kExitPreemptDisabled: cpu.preempt_count = inv.loaded_preempt + kPreemptOffset; break;
    case P::kActiveLoaded:
    case P::kExitLoaded: inv.loaded = ActiveByte(active, inv.level); break;
    case P::kActiveStored:  // landed: the byte, decided later
      active = WithByte(active, inv.level, inv.loaded + 1);
      inv.active_from = now;
      break;
    case P::kChecked: decide(active == uint32_t{1} << (8 * inv.level)); break;
    case P::kEntered:
      switch (policy_) {
        case Policy::kAtomic:  // this_cpu_inc_return(*active) != 1
          active += 1;
          inv.active_from = now;
          decide(active == 1);
          break;
        case Policy::kPerContext:  // ++active[rctx] != 1, on the u8
          active = WithByte(active, inv.level, inv.loaded + 1);
          inv.active_from = now;
          decide(((inv.loaded + 1) & 0xff) == 1);
          break;
        case Policy::kLanded:  // preempt_enable()
          cpu.preempt_count = inv.loaded_preempt - kPreemptOffset;
          break;
      }
      break;
    case P::kInProgram: inv.program_from = now; break;
    case P::kProgramReturned: inv.program_to = now; break;
    case P::kMissCounted: cpu.misses[static_cast<size_t>(inv.program)] += 1; break;
    case P::kExitBegin: break;
    case P::kExitStored:  // landed
      active = WithByte(active, inv.level, inv.loaded - 1);
      inv.active_to = now;
      break;
    case P::kExited:
      switch (policy_) {
        case Policy::kAtomic:
          active -= 1;
          inv.active_to = now;
          break;
        case Policy::kPerContext:
          active = WithByte(active, inv.level, inv.loaded - 1);
          inv.active_to = now;
          break;
        case Policy::kLanded: cpu.preempt_count = inv.loaded_preempt - kPreemptOffset; break;
      }
      break;
    case P::kDone: inv.done = now; break;
  }
  if (inv.decided == now) {
    inv.active_at_decision = active;
    inv.preempt_at_decision = cpu.preempt_count;
    inv.misses_at_decision = cpu.misses[static_cast<size_t>(inv.program)];
  }
  inv.point = point;
}

}  // namespace bpfdiff::recursion
