// A recursion schedule: the attached programs, and what happens on each CPU
// and when. The same schedule runs under every policy; the runner executes
// it on the emitted trampolines and the model follows.
//
// Text format (one directive per line, '#' starts a comment, blank lines are
// ignored; numbers are decimal or 0x hex). Stable: documented in
// docs/recursion.md, and anything else is an error naming the line.
//
//   cpus N                              CPUs 1..4 (default 1); before events
//   program P loop N [trigger T at I]...
//                                       attached program P (0..7, declared in
//                                       order): a loop of N iterations (0..64)
//                                       that calls the trigger helper for
//                                       program T when iteration I starts
//                                       (I = N: after the loop)
//   task C NAME fire P... [arg V] [bh]  on CPU C start task NAME, which fires
//                                       programs P... in order; if a task runs
//                                       on C it is preempted (refused unless
//                                       preemptible). bh: with bottom halves
//                                       disabled (local_bh_disable)
//   switch C NAME                       preempt the running task on C and
//                                       resume the preempted task NAME
//   softirq C fire P... [arg V]         take an interrupt on C now; its
//   hardirq C fire P... [arg V]         handler fires P... (refused where the
//   nmi C fire P... [arg V]             kernel cannot nest it)
//   run C N                             C executes N instructions
//   until C WHERE                       C runs until its current invocation
//                                       reaches WHERE: loaded | entered |
//                                       program | program+K | trigger | exit |
//                                       exit-loaded | done
//   finish                              every CPU runs until idle (implied at
//                                       the end)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/result.h"

namespace bpfdiff::recursion {

inline constexpr int kMaxScheduleCpus = 4;
inline constexpr int kMaxLoop = 64;
inline constexpr uint64_t kMaxRunSteps = 100'000;
inline constexpr size_t kMaxScheduleEvents = 512;

struct ProgramSpec {
  struct Trigger {
    int target = 0;
    int at = 0;  // iteration 0..loop
    friend bool operator==(const Trigger&, const Trigger&) = default;
  };
  int loop = 4;
  std::vector<Trigger> triggers;
  friend bool operator==(const ProgramSpec&, const ProgramSpec&) = default;
};

enum class InterruptKind : uint8_t { kSoftirq, kHardirq, kNmi };
std::string_view InterruptKindName(InterruptKind kind);
int InterruptLevel(InterruptKind kind);  // 1, 2, 3

enum class Anchor : uint8_t {
  kLoaded,      // inside the enter update (between the load and the store)
  kEntered,     // the enter path complete
  kProgram,     // the program's first instruction (+ offset instructions of it)
  kTrigger,     // the program called the trigger helper: the nested call begins
  kExit,        // the exit path starts
  kExitLoaded,  // inside the exit update
  kDone,        // the invocation returned
};

struct Event {
  enum class Kind : uint8_t { kTask, kSwitch, kInterrupt, kRun, kUntil, kFinish };
  Kind kind = Kind::kRun;
  int cpu = 0;
  std::string task;                 // kTask, kSwitch
  InterruptKind interrupt = InterruptKind::kHardirq;
  std::vector<int> programs;        // kTask, kInterrupt
  std::optional<uint64_t> arg;      // kTask, kInterrupt
  bool bh = false;                  // kTask
  uint64_t steps = 0;               // kRun
  Anchor anchor = Anchor::kDone;    // kUntil
  uint32_t offset = 0;              // kUntil kProgram: instructions past the entry

  friend bool operator==(const Event&, const Event&) = default;
};

struct Schedule {
  int cpus = 1;
  std::vector<ProgramSpec> programs;
  std::vector<Event> events;
  friend bool operator==(const Schedule&, const Schedule&) = default;
};

Result<Schedule> ParseSchedule(std::string_view text);
std::string FormatSchedule(const Schedule& schedule);
std::string FormatEvent(const Event& event);
// Range and consistency checks (ParseSchedule applies them too).
Status ValidateSchedule(const Schedule& schedule);

// No task preemption: no switch, and at most one task per CPU.
bool InterruptOnly(const Schedule& schedule);
// Every position is named (until), none counted in instructions (run), so
// the schedule means the same under every policy.
bool PolicyIndependent(const Schedule& schedule);

}  // namespace bpfdiff::recursion
