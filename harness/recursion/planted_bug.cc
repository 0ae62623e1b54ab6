#include "harness/recursion/planted_bug.h"

#include "harness/planted/planted_bugs.h"

#include <string>

#include <fmt/format.h>

namespace bpfdiff::recursion {
namespace {

constexpr PlantedBugInfo kBugs[] = {
    {"recursion-exit-wrong-context",
     "the exit path decrements active[rctx ^ 1] instead of active[rctx] (percontext, landed)",
     &jit::TrampolineBugs::exit_wrong_context},
    {"recursion-check-then-increment",
     "the enter path reads and decides first and increments afterwards, outside any "
     "preempt-disabled section (a task switch in between lets two tasks run)",
     &jit::TrampolineBugs::check_then_increment},
    {"recursion-rctx-wrong-bits",
     "rctx tests SOFTIRQ_MASK instead of SOFTIRQ_OFFSET: a bh-disabled task counts as softirq",
     &jit::TrampolineBugs::rctx_wrong_bits},
};

}  // namespace

std::span<const PlantedBugInfo> PlantedBugList() { return kBugs; }

Result<jit::TrampolineBugs> PlantedBugByName(std::string_view name) {
  jit::TrampolineBugs bugs;
  std::string names;
  for (const auto& bug : kBugs) {
    if (bug.name == name) {
      bugs.*bug.field = true;
      return bugs;
    }
    names += fmt::format("{}{}", names.empty() ? "" : ", ", bug.name);
  }
  return Fail("'{}' is not a recursion planted bug (known: {})", name, names);
}

Result<jit::TrampolineBugs> PlantedBugFromEnvironment() {
  // The project-wide switch validates the name and prints the banner.
  auto planted = PlantedBugsFromEnvironment();
  if (!planted) return Fail("BPFDIFF_PLANTED_BUG: {}", planted.message());
  if (planted->name.empty()) return jit::TrampolineBugs{};
  std::string names;
  for (const auto& bug : kBugs) names += fmt::format("{}{}", names.empty() ? "" : ", ", bug.name);
  if (planted->recursion.empty()) {
    return Fail("BPFDIFF_PLANTED_BUG={} is not a recursion bug; the recursion checks plant only {}",
                planted->name, names);
  }
  auto bugs = PlantedBugByName(planted->recursion);
  if (!bugs) return bugs.error();
  for (const auto& bug : kBugs) {
    if (bug.name == planted->recursion) {
      fmt::print(stderr, "* recursion planted bug: {}\n\n", bug.description);
    }
  }
  return bugs;
}

bool AnyBug(const jit::TrampolineBugs& bugs) {
  for (const auto& bug : kBugs) {
    if (bugs.*bug.field) return true;
  }
  return false;
}

}  // namespace bpfdiff::recursion
