// Small builders for the schedules the equivalence checks and the compare
// report write by hand (schedule.h has the format).
#pragma once

#include <string>

#include "harness/recursion/runner.h"
#include "harness/recursion/schedule.h"

namespace bpfdiff::recursion {

inline RunConfig Config(Policy policy, jit::AtomicLowering lowering, const jit::TrampolineBugs& bugs) {
  RunConfig config;
  config.policy = policy;
  config.lowering = lowering;
  config.bugs = bugs;
  return config;
}

// A task that fires program 0.
inline Event Task(std::string name) {
  Event e;
  e.kind = Event::Kind::kTask;
  e.task = std::move(name);
  e.programs = {0};
  return e;
}
inline Event Until(Anchor anchor) {
  Event e;
  e.kind = Event::Kind::kUntil;
  e.anchor = anchor;
  return e;
}
// An interrupt that fires program 0.
inline Event Irq(InterruptKind kind) {
  Event e;
  e.kind = Event::Kind::kInterrupt;
  e.interrupt = kind;
  e.programs = {0};
  return e;
}
inline Event Switch(std::string name) {
  Event e;
  e.kind = Event::Kind::kSwitch;
  e.task = std::move(name);
  return e;
}

// One CPU, one program that loops twice, no events yet.
inline Schedule BaseSchedule() {
  Schedule s;
  s.cpus = 1;
  s.programs = {ProgramSpec{2, {}}};
  return s;
}

}  // namespace bpfdiff::recursion
