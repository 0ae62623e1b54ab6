#include "report/report_inputs.h"

#include <algorithm>

#include <fmt/format.h>

#include "report/conformance_json.h"
#include "report/test_bpf_json.h"
#include "support/files.h"

namespace bpfdiff::report {
namespace {

Result<FuzzRun> FuzzRunFromJson(const Json& json, std::string_view where) {
  FuzzRun run;
  auto target = RequiredString(json, "target", where);
  if (!target) return target.error();
  run.target = *target;
  auto result = RequiredString(json, "result", where);
  if (!result) return result.error();
  if (*result != "clean" && *result != "finding" && *result != "error" && *result != "timeout" && *result != "oom") {
    return Fail("{}: result '{}' (clean, finding, error, timeout or oom)", where, *result);
  }
  run.result = *result;
  auto exit_code = OptionalExitStatus(json, "exit_code", where);
  if (!exit_code) return exit_code.error();
  run.exit_code = exit_code->value_or(0);
  auto timeouts = OptionalCount(json, "timeouts", where);
  if (!timeouts) return timeouts.error();
  run.timeouts = timeouts->value_or(0);
  auto ooms = OptionalCount(json, "ooms", where);
  if (!ooms) return ooms.error();
  run.ooms = ooms->value_or(0);
  auto seconds = OptionalNumber(json, "seconds", where);
  if (!seconds) return seconds.error();
  run.seconds = seconds->value_or(0);
  auto artifacts = OptionalString(json, "artifacts", where);
  if (!artifacts) return artifacts.error();
  run.artifacts = artifacts->value_or("");
  auto kind = OptionalString(json, "finding_kind", where);
  if (!kind) return kind.error();
  run.finding_kind = kind->value_or("");
  return run;
}

// An array file whose elements `parse` reads; `what` names it in messages.
template <typename T, typename Parse>
Result<std::vector<T>> LoadArray(const std::filesystem::path& path, std::string_view what, Parse parse) {
  auto json = ReadJsonFile(path);
  if (!json) return json.error();
  if (!json->is_array()) return Fail("{} {}: expected a JSON array", what, path.string());
  std::vector<T> items;
  for (size_t i = 0; i < json->size(); ++i) {
    auto item = parse((*json)[i], fmt::format("{} {}: entry {}", what, path.string(), i));
    if (!item) return item.error();
    items.push_back(std::move(item).value());
  }
  return items;
}

// Adds `more` to `into`, name by name, keeping the first-seen order.
void AddCounts(NamedCounts& into, const NamedCounts& more) {
  for (const auto& entry : more) {
    auto it = std::find_if(into.begin(), into.end(), [&](const auto& known) { return known.first == entry.first; });
    if (it == into.end()) {
      into.push_back(entry);
    } else {
      it->second += entry.second;
    }
  }
}

// Forms completed by any worker: those no worker left uncompleted.
FormCoverage MergeForms(const FormCoverage& a, const FormCoverage& b) {
  FormCoverage merged;
  merged.total = std::max(a.total, b.total);
  for (const auto& form : a.not_completed) {
    if (std::find(b.not_completed.begin(), b.not_completed.end(), form) != b.not_completed.end()) {
      merged.not_completed.push_back(form);
    }
  }
  merged.completed = merged.total - std::min<uint64_t>(merged.total, merged.not_completed.size());
  // The files name the forms not completed, not those generated: the
  // busiest worker's count is what can be said (a lower bound).
  merged.generated = std::max({a.generated, b.generated, merged.completed});
  return merged;
}

}  // namespace

FuzzStats MergeWorkerStats(const FuzzStats& a, const FuzzStats& b) {
  FuzzStats merged = a;
  merged.seconds = std::max(a.seconds, b.seconds);  // the workers ran side by side
  merged.inputs = a.inputs + b.inputs;
  AddCounts(merged.counters, b.counters);
  AddCounts(merged.not_comparable, b.not_comparable);
  merged.not_comparable = fuzz::MostFrequentFirst(std::move(merged.not_comparable));
  AddCounts(merged.rejected, b.rejected);
  merged.rejected = fuzz::MostFrequentFirst(std::move(merged.rejected));
  // Each worker reached its own states: the times add up, the largest
  // values do not.
  AddCounts(merged.states_reached, b.states_reached);
  for (const auto& entry : b.states_largest) {
    auto it = std::find_if(merged.states_largest.begin(), merged.states_largest.end(),
                           [&](const auto& known) { return known.first == entry.first; });
    if (it == merged.states_largest.end()) {
      merged.states_largest.push_back(entry);
    } else {
      it->second = std::max(it->second, entry.second);
    }
  }
  if (a.forms && b.forms) {
    merged.forms = MergeForms(*a.forms, *b.forms);
  } else if (b.forms) {
    merged.forms = b.forms;
  }
  return merged;
}

Result<ConformanceSummary> LoadConformance(const std::filesystem::path& path) {
  auto json = ReadJsonFile(path);
  if (!json) return json.error();
  return ConformanceFromJson(*json, fmt::format("conformance results {}", path.string()));
}

Result<TestBpfSummary> LoadTestBpf(const std::filesystem::path& path) {
  auto json = ReadJsonFile(path);
  if (!json) return json.error();
  return TestBpfFromJson(*json, fmt::format("test_bpf results {}", path.string()));
}

Result<FuzzStats> LoadFuzzStats(const std::filesystem::path& path) { return fuzz::ReadFuzzStatsFile(path); }

Result<std::vector<FuzzRun>> LoadFuzzRuns(const std::filesystem::path& path) {
  return LoadArray<FuzzRun>(path, "fuzz runs", FuzzRunFromJson);
}

Result<std::vector<FuzzTarget>> MergeFuzz(const std::vector<FuzzRun>& runs, const std::vector<FuzzStats>& stats) {
  std::vector<FuzzTarget> targets;
  auto find = [&](const std::string& name) {
    auto it = std::find_if(targets.begin(), targets.end(), [&](const FuzzTarget& t) { return t.target == name; });
    if (it == targets.end()) it = targets.insert(targets.end(), FuzzTarget{name, {}, {}});
    return it;
  };
  for (const auto& run : runs) {
    auto target = find(run.target);
    if (target->run) return Fail("fuzz runs: target '{}' appears twice", run.target);
    target->run = run;
  }
  for (const auto& s : stats) {
    auto target = find(s.target);
    target->stats = target->stats ? MergeWorkerStats(*target->stats, s) : s;
  }
  return targets;
}

Result<ReportModel> LoadReportInputs(const ReportInputs& inputs) {
  ReportModel model;
  auto conformance = LoadConformance(inputs.conformance);
  if (!conformance) return conformance.error();
  model.conformance = std::move(conformance).value();
  // The other parts are optional: one that does not load (a fuzz target
  // killed before it wrote its stats, a file edited by hand) is left out and
  // named, so that one bad part does not lose the whole night.
  const auto take = [&model](auto loaded) {
    if (!loaded) model.inputs_left_out.push_back(loaded.message());
    return loaded ? std::make_optional(std::move(loaded).value()) : std::nullopt;
  };
  std::vector<FuzzStats> stats;
  for (const auto& path : inputs.fuzz_stats) {
    if (auto loaded = take(LoadFuzzStats(path))) stats.push_back(std::move(*loaded));
  }
  std::vector<FuzzRun> runs;
  if (inputs.fuzz_runs) {
    if (auto loaded = take(LoadFuzzRuns(*inputs.fuzz_runs))) runs = std::move(*loaded);
  }
  auto fuzz = MergeFuzz(runs, stats);
  if (!fuzz) return fuzz.error();
  model.fuzz = std::move(fuzz).value();
  if (inputs.planted) {
    if (auto loaded = take(LoadPlanted(*inputs.planted))) model.planted = std::move(*loaded);
  }
  if (inputs.planted_gate) model.planted_gate = take(LoadPlantedGate(*inputs.planted_gate));
  if (inputs.test_bpf) model.test_bpf = take(LoadTestBpf(*inputs.test_bpf));
  for (const auto& directory : inputs.kernel_trees) {
    if (auto loaded = take(LoadKernelTreeRun(directory))) model.kernel_trees.push_back(std::move(*loaded));
  }
  if (inputs.known_findings_doc) {
    if (auto doc = take(ReadTextFile(*inputs.known_findings_doc))) {
      for (KernelTreeRun& tree : model.kernel_trees) {
        for (const std::string& name : tree.known_findings) {
          if (auto found = FindKnownFindingDoc(*doc, name)) tree.known_docs.push_back(std::move(*found));
        }
      }
    }
  }
  model.upstream_suite = inputs.upstream_suite;
  if (inputs.coverage) {
    model.source_coverage = take(LoadSourceCoverage(*inputs.coverage, inputs.checkout));
    if (model.source_coverage) model.source_coverage->html = inputs.coverage_html;
  }
  if (inputs.kernel_coverage) {
    // Reasons that do not load are named, and the night's measurement is
    // still shown, every function then without a reason.
    UncoveredReasons reasons;
    if (inputs.uncovered_reasons) {
      if (auto loaded = take(LoadUncoveredReasons(*inputs.uncovered_reasons))) reasons = std::move(*loaded);
    }
    model.kernel_coverage = take(LoadKernelCoverage(*inputs.kernel_coverage, inputs.kernel_tree, reasons));
    if (model.kernel_coverage) model.kernel_coverage->html = inputs.coverage_html;
  }
  return model;
}

}  // namespace bpfdiff::report
