#include "kernel/recursion.h"

namespace bpfdiff::recursion {

std::string_view PolicyName(Policy policy) {
  switch (policy) {
    case Policy::kAtomic: return "atomic";
    case Policy::kPerContext: return "percontext";
    case Policy::kLanded: return "landed";
  }
  return "?";
}

std::optional<Policy> ParsePolicy(std::string_view name) {
  for (Policy p : kPolicies) {
    if (PolicyName(p) == name) return p;
  }
  return std::nullopt;
}

int InterruptContextLevel(uint32_t pc) {
  return ((pc & kNmiMask) != 0 ? 1 : 0) + ((pc & (kNmiMask | kHardirqMask)) != 0 ? 1 : 0) +
         ((pc & (kNmiMask | kHardirqMask | kSoftirqOffset)) != 0 ? 1 : 0);
}

std::string_view LevelName(int level) {
  switch (level) {
    case 0: return "task";
    case 1: return "softirq";
    case 2: return "hardirq";
    case 3: return "nmi";
  }
  return "?";
}

std::string_view PointName(Point point) {
  using P = Point;
  switch (point) {
    case P::kStart: return "start";
    case P::kPreemptDisableLoaded: return "preempt-disable-loaded";
    case P::kPreemptDisabled: return "preempt-disabled";
    case P::kActiveLoaded: return "active-loaded";
    case P::kActiveStored: return "active-stored";
    case P::kChecked: return "checked";
    case P::kPreemptEnableLoaded: return "preempt-enable-loaded";
    case P::kEntered: return "entered";
    case P::kInProgram: return "in-program";
    case P::kProgramReturned: return "program-returned";
    case P::kMissCounted: return "miss-counted";
    case P::kExitBegin: return "exit-begin";
    case P::kExitPreemptDisableLoaded: return "exit-preempt-disable-loaded";
    case P::kExitPreemptDisabled: return "exit-preempt-disabled";
    case P::kExitLoaded: return "exit-loaded";
    case P::kExitStored: return "exit-stored";
    case P::kExitPreemptEnableLoaded: return "exit-preempt-enable-loaded";
    case P::kExited: return "exited";
    case P::kDone: return "done";
  }
  return "?";
}

}  // namespace bpfdiff::recursion
