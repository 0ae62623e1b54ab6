// Progress counters beside libFuzzer's own: compared runs per second,
// runs not comparable by reason, and coverage of the opcode table (forms
// generated, and forms executed to completion on every engine with
// agreement).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/stats/stats_file.h"
#include "fuzz/stats/tail_call_states.h"
#include "harness/diff/differential.h"
#include "harness/diff/run_cost.h"
#include "isa/opcode_table.h"
#include "isa/program.h"

namespace bpfdiff::fuzz {

// The wall time inside the target's callback, and the parts of it spent
// outside the runner's phases that the target tells apart.
struct TargetNanos {
  uint64_t total = 0;
  uint64_t localization = 0;
  uint64_t emulator_check = 0;
};

class FuzzStats {
 public:
  explicit FuzzStats(std::string target);

  void NotOurs() { ++not_ours_; }
  // The input about to be counted is new: a mutator made it, where the
  // others are the corpus replayed (each -fork job replays its slice).
  void NewInput() { ++new_inputs_; }
  // One case through the runner: each not-comparable reason counts once per case.
  // `executed` is the interpreter's executed
  // slots (program, slot) for the reference run. Forms count as written in
  // `source`, before the load step's rewrites.
  void Record(const CaseSource& source, const CaseRun& run,
              const std::vector<std::vector<uint8_t>>& executed);
  // Runs of the same compiled code on more input memories.
  void ExtraRuns(size_t runs) { extra_runs_ += runs; }
  // A divergence that is a known finding of the kernel's JIT
  // (fuzz/findings/known_kernel_findings.h): counted by name, not reported.
  void KnownFinding(std::string_view name) { ++known_findings_[std::string(name)]; }
  // The fast executor's runs checked on the other (diff_fuzzer on VIXL:
  // every divergence, and a sample of agreements, run again on Unicorn).
  void EmulatorCheck() { ++emulator_checks_; }
  void set_executor(std::string executor) { executor_ = std::move(executor); }

  // Prints a summary line when `interval` has passed since the last one.
  void MaybePrint(std::chrono::seconds interval = std::chrono::seconds(10));
  // One line of counters, then the most frequent reasons not comparable
  // and rejected (kReasonsShown of each, with counts; the stats file keeps
  // every one).
  void Print() const;
  static constexpr size_t kReasonsShown = 10;
  // Print(), then where the time went (DescribeCost) when a cost is set:
  // what a target prints at its end.
  void PrintFinal() const;

  // The cost model: the runner's phases (kept by the runner, which outlives
  // the stats' last print), and the wall time spent inside the target's
  // callback and inside its mutators, as the target measures them.
  void set_cost(const RunCost* cost) { cost_ = cost; }
  void AddTargetNanos(uint64_t ns) { target_nanos_.total += ns; }
  void AddMutationNanos(uint64_t ns) { mutation_nanos_ += ns; }
  // Parts of the target's time outside the runner's phases: stepping the
  // engines again to locate a divergence's culprit, and running an input
  // again on the second emulator.
  void AddLocalizationNanos(uint64_t ns) { target_nanos_.localization += ns; }
  void AddEmulatorCheckNanos(uint64_t ns) { target_nanos_.emulator_check += ns; }
  // The counters as the nightly report reads them (fuzz/stats/stats_file.h).
  FuzzStatsFile ToFile() const;

  size_t forms_total() const { return isa::AllForms().size(); }
  size_t forms_generated() const;
  size_t forms_completed() const;
  std::vector<std::string> MissingForms() const;
  const std::vector<bool>& completed() const { return completed_; }
  const TailCallStates& tail_call_states() const { return tail_call_states_; }

 private:
  std::string target_;
  std::chrono::steady_clock::time_point start_, last_print_;
  double Seconds() const;

  uint64_t inputs_ = 0, not_ours_ = 0, new_inputs_ = 0, compared_ = 0, matched_ = 0, not_comparable_ = 0,
           extra_runs_ = 0;
  std::map<std::string, uint64_t> rejected_reasons_;
  std::map<std::string, uint64_t> not_comparable_reasons_;
  std::map<std::string, uint64_t> ends_;
  std::map<std::string, uint64_t> known_findings_;
  // By the version of the Linux tree whose kernel engines compared a case
  // ("6.1.192"): a campaign of several trees counts each.
  std::map<std::string, uint64_t> compared_by_tree_;
  std::string executor_ = "unicorn";
  uint64_t emulator_checks_ = 0;
  std::vector<bool> generated_;
  std::vector<bool> completed_;
  TailCallStates tail_call_states_;
  // Cases with a conditional jump over a filler as long as the far-branch
  // block's (fuzz/generator/far_branch.h): compiled by every engine, or
  // refused by one as the kernel's JIT refuses a branch beyond its range.
  uint64_t far_branch_within_range_ = 0, far_branch_beyond_range_ = 0;
  // Runs of a classic case by the state of its loader and CPU
  // (kernelsrc::KernelLoader::state): kept once an engine that varies its
  // loader ran (kernel-jit-cbpf), each state of the table listed then.
  std::map<std::string_view, uint64_t> loader_states_;
  // Of those, runs of a case with a per-CPU move on a kernel at EL2 (VHE:
  // the move reads TPIDR_EL2).
  uint64_t per_cpu_move_at_el2_ = 0;
  // Cases every engine completed in which bpf_throw ran, in the program's
  // own function or in a subprogram (its callee's frames unwound too).
  uint64_t thrown_by_the_program_ = 0, thrown_by_a_subprogram_ = 0;
  void CountThrow(const isa::Program& program, const std::vector<uint8_t>& executed);
  const RunCost* cost_ = nullptr;
  TargetNanos target_nanos_;
  uint64_t mutation_nanos_ = 0;
};

// Two lines: the tail-call states reached (runs each) and the longest chain,
// then those never reached ("none" when all were).
std::string StateLines(const TailCallStates& states);

// Where `wall_seconds` of fuzzing went, phase by phase (run_cost.h): each
// phase's share of the wall time and its µs per compared program, the
// emulator's first runs split into translation (estimated as
// RunCost::EstimatedTranslationNanos says) and execution; what the target
// did outside the runner (locating culprits, the second emulator's runs,
// the rest); our mutators; and libFuzzer's own work (the rest of the wall
// time). Then the guest instructions executed and translated per compared
// program.
std::string DescribeCost(const RunCost& cost, uint64_t compared, double wall_seconds, const TargetNanos& target,
                         uint64_t mutation_nanos);

// A not-comparable or rejection reason with its numbers taken out, so that reasons
// that differ only in an instruction index or address count together.
std::string ReasonCategory(const std::string& reason);

}  // namespace bpfdiff::fuzz
