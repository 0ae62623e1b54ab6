#include "report/report_inputs.h"

#include <algorithm>

#include <fmt/format.h>

#include "report/conformance_json.h"

namespace bpfdiff::report {
namespace {

Result<FuzzRun> FuzzRunFromJson(const Json& json, std::string_view where) {
  FuzzRun run;
  auto target = RequiredString(json, "target", where);
  if (!target) return target.error();
  run.target = *target;
  auto result = RequiredString(json, "result", where);
  if (!result) return result.error();
  if (*result != "clean" && *result != "finding" && *result != "error") {
    return Fail("{}: result '{}' (clean, finding or error)", where, *result);
  }
  run.result = *result;
  auto exit_code = OptionalNumber(json, "exit_code", where);
  if (!exit_code) return exit_code.error();
  run.exit_code = static_cast<int64_t>(exit_code->value_or(0));
  auto seconds = OptionalNumber(json, "seconds", where);
  if (!seconds) return seconds.error();
  run.seconds = seconds->value_or(0);
  auto artifacts = OptionalString(json, "artifacts", where);
  if (!artifacts) return artifacts.error();
  run.artifacts = artifacts->value_or("");
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

}  // namespace

Result<ConformanceSummary> LoadConformance(const std::filesystem::path& path) {
  auto json = ReadJsonFile(path);
  if (!json) return json.error();
  return ConformanceFromJson(*json, fmt::format("conformance results {}", path.string()));
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
    if (target->stats) return Fail("fuzz stats: two files for target '{}'", s.target);
    target->stats = s;
  }
  return targets;
}

Result<ReportModel> LoadReportInputs(const ReportInputs& inputs) {
  ReportModel model;
  auto conformance = LoadConformance(inputs.conformance);
  if (!conformance) return conformance.error();
  model.conformance = std::move(conformance).value();
  std::vector<FuzzStats> stats;
  for (const auto& path : inputs.fuzz_stats) {
    auto loaded = LoadFuzzStats(path);
    if (!loaded) return loaded.error();
    stats.push_back(std::move(loaded).value());
  }
  std::vector<FuzzRun> runs;
  if (inputs.fuzz_runs) {
    auto loaded = LoadFuzzRuns(*inputs.fuzz_runs);
    if (!loaded) return loaded.error();
    runs = std::move(loaded).value();
  }
  auto fuzz = MergeFuzz(runs, stats);
  if (!fuzz) return fuzz.error();
  model.fuzz = std::move(fuzz).value();
  if (inputs.planted) {
    auto planted = LoadPlanted(*inputs.planted);
    if (!planted) return planted.error();
    model.planted = std::move(planted).value();
  }
  return model;
}

}  // namespace bpfdiff::report
