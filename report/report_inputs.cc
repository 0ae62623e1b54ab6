#include "report/report_inputs.h"

#include <algorithm>

#include <fmt/format.h>

#include "report/conformance_json.h"

namespace bpfdiff::report {
namespace {

// {"name": count, ...} in the writer's order; absent means empty.
Result<NamedCounts> CountsObject(const Json& parent, std::string_view key, std::string_view where) {
  NamedCounts counts;
  if (!parent.is_object() || !parent.contains(key) || parent[key].is_null()) return counts;
  const Json& object = parent[key];
  if (!object.is_object()) return Fail("{}: '{}' must be an object of name: count", where, key);
  for (const auto& [name, value] : object.items()) {
    if (!value.is_number_integer() || value.get<int64_t>() < 0) {
      return Fail("{}: {} '{}' must be a non-negative integer", where, key, name);
    }
    counts.emplace_back(name, value.get<int64_t>());
  }
  return counts;
}

Result<std::optional<FormCoverage>> FormsField(const Json& json, std::string_view where) {
  if (!json.contains("forms") || json["forms"].is_null()) return std::optional<FormCoverage>();
  const Json& forms = json["forms"];
  const std::string forms_where = fmt::format("{}: forms", where);
  FormCoverage coverage;
  auto total = RequiredCount(forms, "total", forms_where);
  if (!total) return total.error();
  auto generated = RequiredCount(forms, "generated", forms_where);
  if (!generated) return generated.error();
  auto completed = RequiredCount(forms, "completed", forms_where);
  if (!completed) return completed.error();
  coverage.total = *total;
  coverage.generated = *generated;
  coverage.completed = *completed;
  if (forms.contains("not_completed")) {
    const Json& list = forms["not_completed"];
    if (!list.is_array()) return Fail("{}: 'not_completed' must be an array of form names", forms_where);
    for (const auto& form : list) {
      if (!form.is_string()) return Fail("{}: 'not_completed' must be an array of form names", forms_where);
      coverage.not_completed.push_back(form.get<std::string>());
    }
  }
  return std::optional<FormCoverage>(std::move(coverage));
}

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

Result<PlantedCheck> PlantedFromJson(const Json& json, std::string_view where) {
  PlantedCheck check;
  auto bug = RequiredString(json, "bug", where);
  if (!bug) return bug.error();
  check.bug = *bug;
  auto target = RequiredString(json, "target", where);
  if (!target) return target.error();
  check.target = *target;
  auto detected = RequiredBool(json, "detected", where);
  if (!detected) return detected.error();
  check.detected = *detected;
  auto seconds = OptionalNumber(json, "seconds", where);
  if (!seconds) return seconds.error();
  check.seconds = seconds->value_or(0);
  auto limit = OptionalNumber(json, "limit_seconds", where);
  if (!limit) return limit.error();
  check.limit_seconds = *limit;
  auto artifacts = OptionalString(json, "artifacts", where);
  if (!artifacts) return artifacts.error();
  check.artifacts = artifacts->value_or("");
  return check;
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

Result<FuzzStats> FuzzStatsFromJson(const Json& json, std::string_view where) {
  if (!json.is_object()) return Fail("{}: expected a JSON object", where);
  FuzzStats stats;
  auto target = RequiredString(json, "target", where);
  if (!target) return target.error();
  stats.target = *target;
  auto seconds = RequiredNumber(json, "seconds", where);
  if (!seconds) return seconds.error();
  stats.seconds = *seconds;
  auto inputs = RequiredCount(json, "inputs", where);
  if (!inputs) return inputs.error();
  stats.inputs = *inputs;
  auto counters = CountsObject(json, "counters", where);
  if (!counters) return counters.error();
  stats.counters = std::move(counters).value();
  if (json.contains("reasons") && !json["reasons"].is_null()) {
    if (!json["reasons"].is_object()) return Fail("{}: 'reasons' must be an object", where);
    const std::string reasons_where = fmt::format("{}: reasons", where);
    auto poisoned = CountsObject(json["reasons"], "poisoned", reasons_where);
    if (!poisoned) return poisoned.error();
    stats.poisoned = std::move(poisoned).value();
    auto rejected = CountsObject(json["reasons"], "rejected", reasons_where);
    if (!rejected) return rejected.error();
    stats.rejected = std::move(rejected).value();
  }
  auto forms = FormsField(json, where);
  if (!forms) return forms.error();
  stats.forms = std::move(forms).value();
  return stats;
}

Result<FuzzStats> LoadFuzzStats(const std::filesystem::path& path) {
  auto json = ReadJsonFile(path);
  if (!json) return json.error();
  return FuzzStatsFromJson(*json, fmt::format("fuzz stats {}", path.string()));
}

Result<std::vector<FuzzRun>> LoadFuzzRuns(const std::filesystem::path& path) {
  return LoadArray<FuzzRun>(path, "fuzz runs", FuzzRunFromJson);
}

Result<std::vector<PlantedCheck>> LoadPlanted(const std::filesystem::path& path) {
  return LoadArray<PlantedCheck>(path, "planted-bug results", PlantedFromJson);
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
