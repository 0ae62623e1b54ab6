#include "harness/recursion/schedule.h"

#include <charconv>
#include <map>
#include <set>

#include <fmt/format.h>

#include "harness/recursion/percpu_layout.h"
#include "support/hex.h"

namespace bpfdiff::recursion {
namespace {

constexpr size_t kMaxFired = 4;
constexpr size_t kMaxTriggers = 4;
constexpr uint32_t kMaxProgramOffset = 10'000;

std::vector<std::string_view> Tokens(std::string_view line) {
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
    if (j > i) tokens.push_back(line.substr(i, j - i));
    i = j;
  }
  return tokens;
}

bool ValidName(std::string_view name) {
  if (name.empty() || name.size() > 16) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

// A cursor over one line's tokens that produces errors naming the line.
class Line {
 public:
  Line(size_t number, std::vector<std::string_view> tokens) : number_(number), tokens_(std::move(tokens)) {}

  bool done() const { return next_ >= tokens_.size(); }
  std::string_view Peek() const { return done() ? std::string_view{} : tokens_[next_]; }
  std::string_view Take() { return done() ? std::string_view{} : tokens_[next_++]; }

  Result<uint64_t> TakeNumber(std::string_view what, uint64_t max) {
    const std::string_view token = Take();
    if (token.empty()) return Err(fmt::format("{} expected", what));
    auto value = ParseUnsigned(token);
    if (!value || *value > max) {
      return Err(fmt::format("{} '{}' is not a number in 0..{}", what, token, max));
    }
    return *value;
  }
  Status Expect(std::string_view word) {
    if (Take() != word) return Err(fmt::format("'{}' expected", word));
    return {};
  }
  Status End() {
    if (!done()) return Err(fmt::format("unexpected '{}'", Peek()));
    return {};
  }
  ::bpfdiff::Error Err(std::string message) const {
    return Fail("line {}: {}", number_, message);
  }

 private:
  size_t number_;
  std::vector<std::string_view> tokens_;
  size_t next_ = 0;
};

// `fire P... [arg V]` (the programs, then an optional arg).
Status ParseFire(Line& line, Event& event) {
  if (auto s = line.Expect("fire"); !s) return s;
  while (!line.done() && ParseUnsigned(line.Peek())) {
    auto p = line.TakeNumber("program", kMaxPrograms - 1);
    if (!p) return p.error();
    event.programs.push_back(static_cast<int>(*p));
  }
  if (event.programs.empty()) return line.Err("'fire' needs at least one program");
  if (line.Peek() == "arg") {
    line.Take();
    auto arg = line.TakeNumber("arg", ~uint64_t{0});
    if (!arg) return arg.error();
    event.arg = *arg;
  }
  return {};
}

Result<Event> ParseAnchor(Line& line, Event event) {
  const std::string_view where = line.Take();
  static const std::pair<std::string_view, Anchor> kAnchors[] = {
      {"loaded", Anchor::kLoaded}, {"entered", Anchor::kEntered}, {"program", Anchor::kProgram},
      {"trigger", Anchor::kTrigger}, {"exit", Anchor::kExit}, {"exit-loaded", Anchor::kExitLoaded},
      {"done", Anchor::kDone},
  };
  for (auto [name, anchor] : kAnchors) {
    if (where == name) {
      event.anchor = anchor;
      return event;
    }
  }
  if (where.starts_with("program+")) {
    auto offset = ParseUnsigned(where.substr(8));
    if (!offset || *offset > kMaxProgramOffset) {
      return line.Err(fmt::format("'{}': program+K takes K in 0..{}", where, kMaxProgramOffset));
    }
    event.anchor = Anchor::kProgram;
    event.offset = static_cast<uint32_t>(*offset);
    return event;
  }
  return line.Err(fmt::format(
      "'{}' is not a position (loaded, entered, program, program+K, trigger, exit, exit-loaded, done)",
      where));
}

Result<Event> ParseEvent(Line& line, std::string_view keyword) {
  Event event;
  if (keyword == "finish") {
    event.kind = Event::Kind::kFinish;
    return event;
  }
  auto cpu = line.TakeNumber("CPU", kMaxScheduleCpus - 1);
  if (!cpu) return cpu.error();
  event.cpu = static_cast<int>(*cpu);
  if (keyword == "task") {
    event.kind = Event::Kind::kTask;
    event.task = std::string(line.Take());
    if (!ValidName(event.task)) return line.Err("task name (letters, digits, _; up to 16) expected");
    if (auto s = ParseFire(line, event); !s) return s.error();
    if (line.Peek() == "bh") {
      line.Take();
      event.bh = true;
    }
    return event;
  }
  if (keyword == "switch") {
    event.kind = Event::Kind::kSwitch;
    event.task = std::string(line.Take());
    if (!ValidName(event.task)) return line.Err("task name expected");
    return event;
  }
  for (InterruptKind kind : {InterruptKind::kSoftirq, InterruptKind::kHardirq, InterruptKind::kNmi}) {
    if (keyword == InterruptKindName(kind)) {
      event.kind = Event::Kind::kInterrupt;
      event.interrupt = kind;
      if (auto s = ParseFire(line, event); !s) return s.error();
      return event;
    }
  }
  if (keyword == "run") {
    event.kind = Event::Kind::kRun;
    auto steps = line.TakeNumber("instruction count", kMaxRunSteps);
    if (!steps) return steps.error();
    event.steps = *steps;
    return event;
  }
  if (keyword == "until") {
    event.kind = Event::Kind::kUntil;
    return ParseAnchor(line, event);
  }
  return line.Err(fmt::format("unknown directive '{}'", keyword));
}

std::string FireText(const Event& e) {
  std::string text = "fire";
  for (int p : e.programs) text += fmt::format(" {}", p);
  if (e.arg) text += fmt::format(" arg {}", *e.arg);
  return text;
}

}  // namespace

std::string_view InterruptKindName(InterruptKind kind) {
  switch (kind) {
    case InterruptKind::kSoftirq: return "softirq";
    case InterruptKind::kHardirq: return "hardirq";
    case InterruptKind::kNmi: return "nmi";
  }
  return "?";
}

int InterruptLevel(InterruptKind kind) {
  switch (kind) {
    case InterruptKind::kSoftirq: return 1;
    case InterruptKind::kHardirq: return 2;
    case InterruptKind::kNmi: return 3;
  }
  return 0;
}

Result<Schedule> ParseSchedule(std::string_view text) {
  Schedule schedule;
  bool cpus_seen = false;
  size_t number = 0;
  while (!text.empty()) {
    ++number;
    const size_t eol = text.find('\n');
    std::string_view raw = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    if (const size_t hash = raw.find('#'); hash != std::string_view::npos) raw = raw.substr(0, hash);
    Line line(number, Tokens(raw));
    if (line.done()) continue;
    const std::string_view keyword = line.Take();
    if (keyword == "cpus") {
      if (cpus_seen || !schedule.events.empty()) return line.Err("'cpus' must come once, before any event");
      auto cpus = line.TakeNumber("CPU count", kMaxScheduleCpus);
      if (!cpus) return cpus.error();
      if (*cpus == 0) return line.Err("at least 1 CPU");
      schedule.cpus = static_cast<int>(*cpus);
      cpus_seen = true;
    } else if (keyword == "program") {
      auto index = line.TakeNumber("program", kMaxPrograms - 1);
      if (!index) return index.error();
      if (*index != schedule.programs.size()) {
        return line.Err(fmt::format("programs are declared in order: program {} expected",
                                      schedule.programs.size()));
      }
      ProgramSpec spec;
      if (auto s = line.Expect("loop"); !s) return s.error();
      auto loop = line.TakeNumber("loop count", kMaxLoop);
      if (!loop) return loop.error();
      spec.loop = static_cast<int>(*loop);
      while (!line.done()) {
        if (auto s = line.Expect("trigger"); !s) return s.error();
        auto target = line.TakeNumber("trigger target", kMaxPrograms - 1);
        if (!target) return target.error();
        if (auto s = line.Expect("at"); !s) return s.error();
        auto at = line.TakeNumber("iteration", static_cast<uint64_t>(spec.loop));
        if (!at) return at.error();
        spec.triggers.push_back({static_cast<int>(*target), static_cast<int>(*at)});
      }
      schedule.programs.push_back(std::move(spec));
    } else {
      auto event = ParseEvent(line, keyword);
      if (!event) return event.error();
      schedule.events.push_back(std::move(event).value());
    }
    if (auto s = line.End(); !s) return s.error();
  }
  if (auto s = ValidateSchedule(schedule); !s) return s.error();
  return schedule;
}

Status ValidateSchedule(const Schedule& s) {
  if (s.cpus < 1 || s.cpus > kMaxScheduleCpus) return Fail("cpus must be 1..{}", kMaxScheduleCpus);
  if (s.programs.empty()) return Fail("no program declared");
  if (s.programs.size() > kMaxPrograms) return Fail("at most {} programs", kMaxPrograms);
  const auto programs = static_cast<int>(s.programs.size());
  for (size_t p = 0; p < s.programs.size(); ++p) {
    const ProgramSpec& spec = s.programs[p];
    if (spec.loop < 0 || spec.loop > kMaxLoop) return Fail("program {}: loop must be 0..{}", p, kMaxLoop);
    if (spec.triggers.size() > kMaxTriggers) return Fail("program {}: at most {} triggers", p, kMaxTriggers);
    for (const auto& t : spec.triggers) {
      if (t.target < 0 || t.target >= programs) return Fail("program {}: trigger of undeclared program {}", p, t.target);
      if (t.at < 0 || t.at > spec.loop) return Fail("program {}: trigger at {} is outside 0..{}", p, t.at, spec.loop);
    }
  }
  if (s.events.size() > kMaxScheduleEvents) return Fail("at most {} events", kMaxScheduleEvents);
  std::map<std::string, int> task_cpu;
  std::vector<int> tasks_per_cpu(static_cast<size_t>(s.cpus), 0);
  for (size_t i = 0; i < s.events.size(); ++i) {
    const Event& e = s.events[i];
    auto where = [&] { return fmt::format("event {} ({})", i + 1, FormatEvent(e)); };
    if (e.kind != Event::Kind::kFinish && (e.cpu < 0 || e.cpu >= s.cpus)) {
      return Fail("{}: CPU {} is not one of the {} CPUs", where(), e.cpu, s.cpus);
    }
    if (e.kind == Event::Kind::kTask || e.kind == Event::Kind::kInterrupt) {
      if (e.programs.empty() || e.programs.size() > kMaxFired) {
        return Fail("{}: fire 1..{} programs", where(), kMaxFired);
      }
      for (int p : e.programs) {
        if (p < 0 || p >= programs) return Fail("{}: program {} is not declared", where(), p);
      }
    }
    if (e.kind == Event::Kind::kTask) {
      if (!ValidName(e.task)) return Fail("{}: bad task name", where());
      if (task_cpu.count(e.task)) return Fail("{}: task {} was started before", where(), e.task);
      if (++tasks_per_cpu[static_cast<size_t>(e.cpu)] > kMaxTasksPerCpu) {
        return Fail("{}: at most {} tasks per CPU", where(), kMaxTasksPerCpu);
      }
      task_cpu[e.task] = e.cpu;
    }
    if (e.kind == Event::Kind::kSwitch) {
      auto it = task_cpu.find(e.task);
      if (it == task_cpu.end() || it->second != e.cpu) {
        return Fail("{}: no task {} was started on CPU {} before", where(), e.task, e.cpu);
      }
    }
    if (e.kind == Event::Kind::kRun && (e.steps == 0 || e.steps > kMaxRunSteps)) {
      return Fail("{}: run 1..{} instructions", where(), kMaxRunSteps);
    }
    if (e.kind == Event::Kind::kUntil && e.anchor != Anchor::kProgram && e.offset != 0) {
      return Fail("{}: only program+K takes an offset", where());
    }
    if (e.kind == Event::Kind::kUntil && e.offset > kMaxProgramOffset) {
      return Fail("{}: program+K takes K up to {}", where(), kMaxProgramOffset);
    }
  }
  return {};
}

std::string FormatEvent(const Event& e) {
  switch (e.kind) {
    case Event::Kind::kTask:
      return fmt::format("task {} {} {}{}", e.cpu, e.task, FireText(e), e.bh ? " bh" : "");
    case Event::Kind::kSwitch: return fmt::format("switch {} {}", e.cpu, e.task);
    case Event::Kind::kInterrupt:
      return fmt::format("{} {} {}", InterruptKindName(e.interrupt), e.cpu, FireText(e));
    case Event::Kind::kRun: return fmt::format("run {} {}", e.cpu, e.steps);
    case Event::Kind::kUntil: {
      std::string where;
      switch (e.anchor) {
        case Anchor::kLoaded: where = "loaded"; break;
        case Anchor::kEntered: where = "entered"; break;
        case Anchor::kProgram:
          where = e.offset == 0 ? "program" : fmt::format("program+{}", e.offset);
          break;
        case Anchor::kTrigger: where = "trigger"; break;
        case Anchor::kExit: where = "exit"; break;
        case Anchor::kExitLoaded: where = "exit-loaded"; break;
        case Anchor::kDone: where = "done"; break;
      }
      return fmt::format("until {} {}", e.cpu, where);
    }
    case Event::Kind::kFinish: return "finish";
  }
  return "?";
}

std::string FormatSchedule(const Schedule& s) {
  std::string text = fmt::format("cpus {}\n", s.cpus);
  for (size_t p = 0; p < s.programs.size(); ++p) {
    text += fmt::format("program {} loop {}", p, s.programs[p].loop);
    for (const auto& t : s.programs[p].triggers) text += fmt::format(" trigger {} at {}", t.target, t.at);
    text += "\n";
  }
  for (const Event& e : s.events) text += FormatEvent(e) + "\n";
  return text;
}

bool InterruptOnly(const Schedule& s) {
  std::set<int> cpus_with_task;
  for (const Event& e : s.events) {
    if (e.kind == Event::Kind::kSwitch) return false;
    if (e.kind == Event::Kind::kTask && !cpus_with_task.insert(e.cpu).second) return false;
  }
  return true;
}

bool PolicyIndependent(const Schedule& s) {
  for (const Event& e : s.events) {
    if (e.kind == Event::Kind::kRun) return false;
  }
  return true;
}

}  // namespace bpfdiff::recursion
