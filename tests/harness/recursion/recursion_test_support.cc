#include "tests/harness/recursion/recursion_test_support.h"

#include <memory>

#include "harness/recursion/timeline.h"

namespace bpfdiff::recursion {

Sandbox& TestSandbox() {
  static std::unique_ptr<Sandbox> sandbox = [] {
    auto created = Sandbox::Create({.cpus = 4, .fast_machine = false});
    if (!created) ADD_FAILURE() << created.message();
    return std::move(created).value();
  }();
  return *sandbox;
}

RunConfig MakeConfig(Policy policy, jit::AtomicLowering lowering, jit::TrampolineBugs bugs) {
  RunConfig config;
  config.policy = policy;
  config.lowering = lowering;
  config.bugs = bugs;
  config.count_atomics = true;
  return config;
}

RunResult RunText(std::string_view text, const RunConfig& config) {
  auto schedule = ParseSchedule(text);
  if (!schedule) {
    ADD_FAILURE() << schedule.message();
    return {};
  }
  auto run = RunSchedule(TestSandbox(), *schedule, config);
  if (!run) {
    ADD_FAILURE() << run.message();
    return {};
  }
  return std::move(run).value();
}

std::string DecisionOf(const RunResult& run, std::string_view id) {
  const InvocationRecord* r = run.Find(id);
  if (r == nullptr || !r->finished) return "";
  return r->ran ? "run" : "miss";
}

bool Mentions(const RunResult& run, std::string_view text) {
  for (const auto& row : run.timeline) {
    if (row.what.find(text) != std::string::npos) return true;
  }
  for (const auto& note : run.notes) {
    if (note.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace bpfdiff::recursion
