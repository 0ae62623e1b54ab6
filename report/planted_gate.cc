#include "report/planted_gate.h"

#include <algorithm>

#include <fmt/format.h>

namespace bpfdiff::report {
namespace {

constexpr std::string_view kFormat = "bpfdiff-planted-gate-1";

Result<std::optional<GateReplay>> ReplayFromJson(const Json& json, std::string_view key, std::string_view where) {
  if (!json.contains(key) || json[key].is_null()) return std::optional<GateReplay>();
  const Json& replay = json[key];
  const std::string field = fmt::format("{}: {}", where, key);
  if (!replay.is_object()) return Fail("{}: must be an object", field);
  GateReplay r;
  auto result = RequiredString(replay, "result", field);
  if (!result) return result.error();
  r.result = *result;
  auto exit_code = OptionalExitStatus(replay, "exit_code", field);
  if (!exit_code) return exit_code.error();
  r.exit_code = exit_code->value_or(0);
  auto seconds = OptionalNumber(replay, "seconds", field);
  if (!seconds) return seconds.error();
  r.seconds = seconds->value_or(0);
  return std::optional<GateReplay>(r);
}

Result<GateCheck> CheckFromJson(const Json& json, std::string_view where) {
  if (!json.is_object()) return Fail("{}: must be an object", where);
  GateCheck check;
  for (auto [key, field] : {std::pair{"bug", &check.bug}, std::pair{"target", &check.target}}) {
    auto value = RequiredString(json, key, where);
    if (!value) return value.error();
    *field = *value;
  }
  for (auto [key, field] : {std::pair{"reproducer", &check.reproducer}, std::pair{"problem", &check.problem}}) {
    auto value = OptionalString(json, key, where);
    if (!value) return value.error();
    *field = value->value_or("");
  }
  // A check the writer marked failed without saying why still fails.
  auto passed = RequiredBool(json, "passed", where);
  if (!passed) return passed.error();
  if (!*passed && check.problem.empty()) check.problem = "failed (the gate gave no reason)";
  for (auto [key, field] : {std::pair{"with_bug", &check.with_bug}, std::pair{"without_bug", &check.without_bug}}) {
    auto replay = ReplayFromJson(json, key, where);
    if (!replay) return replay.error();
    *field = *replay;
  }
  return check;
}

}  // namespace

bool PlantedGate::Passed() const {
  return problems.empty() && std::all_of(checks.begin(), checks.end(), [](const GateCheck& c) { return c.passed(); });
}

int PlantedGate::CaughtCount() const {
  return static_cast<int>(std::count_if(checks.begin(), checks.end(), [](const GateCheck& c) { return c.passed(); }));
}

Result<PlantedGate> PlantedGateFromJson(const Json& json, std::string_view where) {
  if (!json.is_object()) return Fail("{}: expected a JSON object", where);
  auto format = RequiredString(json, "format", where);
  if (!format) return format.error();
  if (*format != kFormat) return Fail("{}: format '{}', expected '{}'", where, *format, kFormat);
  PlantedGate gate;
  auto planted = OptionalString(json, "planted_in_environment", where);
  if (!planted) return planted.error();
  gate.planted_in_environment = planted->value_or("");
  if (json.contains("problems")) {
    if (!json["problems"].is_array()) return Fail("{}: 'problems' must be an array of strings", where);
    for (const auto& problem : json["problems"]) {
      if (!problem.is_string()) return Fail("{}: 'problems' must be an array of strings", where);
      gate.problems.push_back(problem.get<std::string>());
    }
  }
  if (!json.contains("bugs") || !json["bugs"].is_array()) return Fail("{}: 'bugs' must be an array", where);
  for (size_t i = 0; i < json["bugs"].size(); ++i) {
    auto check = CheckFromJson(json["bugs"][i], fmt::format("{}: bug {}", where, i));
    if (!check) return check.error();
    gate.checks.push_back(std::move(check).value());
  }
  // A gate that checked nothing proves nothing.
  if (gate.checks.empty()) gate.problems.push_back("the gate checked no planted bug");
  return gate;
}

Result<PlantedGate> LoadPlantedGate(const std::filesystem::path& path) {
  auto json = ReadJsonFile(path);
  if (!json) return json.error();
  return PlantedGateFromJson(*json, fmt::format("planted-bug gate {}", path.string()));
}

}  // namespace bpfdiff::report
