#include "harness/recursion/schedule_generator.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "harness/recursion/percpu_layout.h"

namespace bpfdiff::recursion {

uint32_t ChoiceSource::Below(uint32_t n) {
  if (n <= 1) return 0;
  uint32_t value = Byte();
  if (n > 256) value = value << 8 | Byte();
  return value % n;
}

uint8_t SeededSource::Byte() {
  state_ ^= state_ << 13;  // xorshift64
  state_ ^= state_ >> 7;
  state_ ^= state_ << 17;
  return static_cast<uint8_t>(state_ >> 24);
}

namespace {

std::vector<int> Fire(ChoiceSource& source, int programs) {
  std::vector<int> fire{static_cast<int>(source.Below(static_cast<uint32_t>(programs)))};
  if (source.Below(4) == 0) fire.push_back(static_cast<int>(source.Below(static_cast<uint32_t>(programs))));
  return fire;
}

Event Position(ChoiceSource& source, int cpu) {
  Event e;
  e.kind = Event::Kind::kUntil;
  e.cpu = cpu;
  static constexpr Anchor kAnchors[] = {Anchor::kLoaded, Anchor::kEntered, Anchor::kProgram, Anchor::kProgram,
                                        Anchor::kProgram, Anchor::kTrigger, Anchor::kExit, Anchor::kExitLoaded,
                                        Anchor::kDone};
  e.anchor = kAnchors[source.Below(std::size(kAnchors))];
  if (e.anchor == Anchor::kProgram) e.offset = source.Below(48);
  return e;
}

}  // namespace

Schedule GenerateSchedule(ChoiceSource& source, const GeneratorOptions& options) {
  Schedule s;
  s.cpus = 1 + static_cast<int>(source.Below(static_cast<uint32_t>(std::clamp(options.max_cpus, 1, kMaxScheduleCpus))));
  const int max_programs = std::clamp(options.max_programs, 1, kMaxPrograms);
  const int programs = 1 + static_cast<int>(source.Below(static_cast<uint32_t>(max_programs)));
  const int max_loop = std::clamp(options.max_loop, 0, kMaxLoop);
  for (int p = 0; p < programs; ++p) {
    ProgramSpec spec;
    spec.loop = static_cast<int>(source.Below(static_cast<uint32_t>(max_loop + 1)));
    const uint32_t triggers = source.Below(4) == 0 ? 2 : source.Below(2);
    for (uint32_t t = 0; t < triggers; ++t) {
      spec.triggers.push_back({static_cast<int>(source.Below(static_cast<uint32_t>(programs))),
                               static_cast<int>(source.Below(static_cast<uint32_t>(spec.loop + 1)))});
    }
    s.programs.push_back(std::move(spec));
  }
  std::vector<int> tasks_on(static_cast<size_t>(s.cpus), 0);
  std::vector<std::vector<std::string>> names(static_cast<size_t>(s.cpus));
  int next_task = 0;
  auto new_task = [&](int cpu) {
    Event e;
    e.kind = Event::Kind::kTask;
    e.cpu = cpu;
    e.task = std::string(1, static_cast<char>('A' + next_task++));
    e.programs = Fire(source, programs);
    e.bh = options.bh && source.Below(4) == 0;
    ++tasks_on[static_cast<size_t>(cpu)];
    names[static_cast<size_t>(cpu)].push_back(e.task);
    return e;
  };
  // Every CPU starts a task, so that positions have something to name.
  for (int cpu = 0; cpu < s.cpus; ++cpu) s.events.push_back(new_task(cpu));
  const size_t events = 2 + source.Below(static_cast<uint32_t>(std::max<size_t>(options.max_events, 3) - 1));
  auto run = [&](int cpu) {
    // Mostly short: the windows worth hitting are a few instructions wide.
    Event e;
    e.kind = Event::Kind::kRun;
    e.cpu = cpu;
    e.steps = 1 + (source.Below(4) != 0 ? source.Below(32) : source.Below(128));
    return e;
  };
  auto switch_back = [&](int cpu) {
    // Mostly to the task the last one preempted.
    const auto& on = names[static_cast<size_t>(cpu)];
    Event e;
    e.kind = Event::Kind::kSwitch;
    e.cpu = cpu;
    e.task = source.Below(4) != 0 ? on[on.size() - 2] : on[source.Below(static_cast<uint32_t>(on.size()))];
    return e;
  };
  auto can_start_task = [&](int cpu) {
    return options.preemption && tasks_on[static_cast<size_t>(cpu)] < kMaxTasksPerCpu && next_task < 26;
  };
  // A step adds up to three events (a preemption that comes back).
  for (size_t i = 0; i < events && !source.exhausted() && s.events.size() + 3 <= kMaxScheduleEvents; ++i) {
    const int cpu = static_cast<int>(source.Below(static_cast<uint32_t>(s.cpus)));
    const uint32_t kind = source.Below(16);
    if (kind < 5) {
      s.events.push_back(Position(source, cpu));
    } else if (kind < 8 && options.raw_steps) {
      s.events.push_back(run(cpu));
    } else if (kind < 12) {
      Event e;
      e.kind = Event::Kind::kInterrupt;
      e.cpu = cpu;
      e.interrupt = static_cast<InterruptKind>(source.Below(3));
      e.programs = Fire(source, programs);
      s.events.push_back(e);
    } else if (kind == 12 && can_start_task(cpu)) {
      s.events.push_back(new_task(cpu));
    } else if (kind == 13 && can_start_task(cpu)) {
      // A preemption that comes back: another task runs for a while, then
      // the preempted one resumes.
      s.events.push_back(new_task(cpu));
      s.events.push_back(options.raw_steps && source.Below(2) == 0 ? run(cpu) : Position(source, cpu));
      s.events.push_back(switch_back(cpu));
    } else if (options.preemption && kind >= 14 && names[static_cast<size_t>(cpu)].size() >= 2) {
      s.events.push_back(switch_back(cpu));
    } else {
      s.events.push_back(Position(source, cpu));
    }
  }
  return s;
}

}  // namespace bpfdiff::recursion
