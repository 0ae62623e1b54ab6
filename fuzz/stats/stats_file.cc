#include "fuzz/stats/stats_file.h"

#include <algorithm>

#include <fmt/format.h>

#include "support/files.h"

namespace bpfdiff::fuzz {
namespace {

Json CountsToJson(const NamedCounts& counts) {
  Json object = Json::object();
  for (const auto& [name, count] : counts) object[name] = count;
  return object;
}

// {"name": count, ...} in the writer's order; absent means empty.
Result<NamedCounts> CountsObject(const Json& parent, std::string_view key, std::string_view where) {
  NamedCounts counts;
  if (!parent.is_object() || !parent.contains(key) || parent[key].is_null()) return counts;
  const Json& object = parent[key];
  if (!object.is_object()) return Fail("{}: '{}' must be an object of name: count", where, key);
  for (const auto& [name, value] : object.items()) {
    if (!value.is_number_unsigned()) return Fail("{}: {} '{}' must be a non-negative integer", where, key, name);
    counts.emplace_back(name, value.get<uint64_t>());
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
  coverage.total = static_cast<uint64_t>(*total);
  coverage.generated = static_cast<uint64_t>(*generated);
  coverage.completed = static_cast<uint64_t>(*completed);
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

}  // namespace

NamedCounts MostFrequentFirst(NamedCounts counts) {
  std::sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  return counts;
}

Json FuzzStatsToJson(const FuzzStatsFile& stats) {
  Json json;
  json["target"] = stats.target;
  json["seconds"] = stats.seconds;
  json["inputs"] = stats.inputs;
  json["counters"] = CountsToJson(stats.counters);
  json["reasons"]["not_comparable"] = CountsToJson(stats.not_comparable);
  json["reasons"]["rejected"] = CountsToJson(stats.rejected);
  if (stats.forms) {
    json["forms"]["total"] = stats.forms->total;
    json["forms"]["generated"] = stats.forms->generated;
    json["forms"]["completed"] = stats.forms->completed;
    json["forms"]["not_completed"] = stats.forms->not_completed;
  }
  if (!stats.states_reached.empty() || !stats.states_largest.empty()) {
    json["states"]["reached"] = CountsToJson(stats.states_reached);
    json["states"]["largest"] = CountsToJson(stats.states_largest);
  }
  return json;
}

std::string FuzzStatsJson(const FuzzStatsFile& stats) { return DumpJson(FuzzStatsToJson(stats), 1); }

Result<FuzzStatsFile> FuzzStatsFromJson(const Json& json, std::string_view where) {
  if (!json.is_object()) return Fail("{}: expected a JSON object", where);
  FuzzStatsFile stats;
  auto target = RequiredString(json, "target", where);
  if (!target) return target.error();
  stats.target = *target;
  auto seconds = RequiredNumber(json, "seconds", where);
  if (!seconds) return seconds.error();
  stats.seconds = *seconds;
  auto inputs = RequiredCount(json, "inputs", where);
  if (!inputs) return inputs.error();
  stats.inputs = static_cast<uint64_t>(*inputs);
  auto counters = CountsObject(json, "counters", where);
  if (!counters) return counters.error();
  stats.counters = std::move(counters).value();
  if (json.contains("reasons") && !json["reasons"].is_null()) {
    const Json& reasons = json["reasons"];
    if (!reasons.is_object()) return Fail("{}: 'reasons' must be an object", where);
    const std::string reasons_where = fmt::format("{}: reasons", where);
    const char* key = reasons.contains("not_comparable") ? "not_comparable" : "poisoned";
    auto not_comparable = CountsObject(reasons, key, reasons_where);
    if (!not_comparable) return not_comparable.error();
    stats.not_comparable = std::move(not_comparable).value();
    auto rejected = CountsObject(reasons, "rejected", reasons_where);
    if (!rejected) return rejected.error();
    stats.rejected = std::move(rejected).value();
  }
  auto forms = FormsField(json, where);
  if (!forms) return forms.error();
  stats.forms = std::move(forms).value();
  if (json.contains("states") && !json["states"].is_null()) {
    const Json& states = json["states"];
    if (!states.is_object()) return Fail("{}: 'states' must be an object", where);
    const std::string states_where = fmt::format("{}: states", where);
    auto reached = CountsObject(states, "reached", states_where);
    if (!reached) return reached.error();
    stats.states_reached = std::move(reached).value();
    auto largest = CountsObject(states, "largest", states_where);
    if (!largest) return largest.error();
    stats.states_largest = std::move(largest).value();
  }
  return stats;
}

Status WriteFuzzStatsFile(const std::string& path, const FuzzStatsFile& stats) {
  if (path.empty()) return {};
  return WriteFile(path, FuzzStatsJson(stats));
}

Result<FuzzStatsFile> ReadFuzzStatsFile(const std::filesystem::path& path) {
  auto json = ReadJsonFile(path);
  if (!json) return json.error();
  return FuzzStatsFromJson(*json, fmt::format("fuzz stats {}", path.string()));
}

}  // namespace bpfdiff::fuzz
