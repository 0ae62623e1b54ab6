// Progress counters beside libFuzzer's own: compared runs per second,
// runs not comparable by reason, and coverage of the opcode table (forms
// generated, and forms executed to completion on every engine with
// agreement).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fuzz/stats/stats_file.h"
#include "harness/diff/differential.h"
#include "isa/opcode_table.h"

namespace bpfdiff::fuzz {

class FuzzStats {
 public:
  explicit FuzzStats(std::string target);

  void NotOurs() { ++not_ours_; }
  // One case through the runner: each not-comparable reason counts once per case.
  // `executed` is the interpreter's executed
  // slots (program, slot) for the reference run. Forms count as written in
  // `source`, before the load step's rewrites.
  void Record(const CaseSource& source, const CaseRun& run,
              const std::vector<std::vector<uint8_t>>& executed);
  // Runs of the same compiled code on more input memories.
  void ExtraRuns(size_t runs) { extra_runs_ += runs; }

  // Prints a summary line when `interval` has passed since the last one.
  void MaybePrint(std::chrono::seconds interval = std::chrono::seconds(10));
  // One line of counters, then the most frequent reasons not comparable
  // and rejected (kReasonsShown of each, with counts; the stats file keeps
  // every one).
  void Print() const;
  static constexpr size_t kReasonsShown = 10;
  // The counters as the nightly report reads them (fuzz/stats/stats_file.h).
  FuzzStatsFile ToFile() const;

  size_t forms_total() const { return isa::AllForms().size(); }
  size_t forms_generated() const;
  size_t forms_completed() const;
  std::vector<std::string> MissingForms() const;
  const std::vector<bool>& completed() const { return completed_; }

 private:
  std::string target_;
  std::chrono::steady_clock::time_point start_, last_print_;
  double Seconds() const;

  uint64_t inputs_ = 0, not_ours_ = 0, compared_ = 0, matched_ = 0, not_comparable_ = 0, extra_runs_ = 0;
  std::map<std::string, uint64_t> rejected_reasons_;
  std::map<std::string, uint64_t> not_comparable_reasons_;
  std::map<std::string, uint64_t> ends_;
  std::vector<bool> generated_;
  std::vector<bool> completed_;
};

// A not-comparable or rejection reason with its numbers taken out, so that reasons
// that differ only in an instruction index or address count together.
std::string ReasonCategory(const std::string& reason);

}  // namespace bpfdiff::fuzz
