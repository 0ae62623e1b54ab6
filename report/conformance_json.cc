#include "report/conformance_json.h"

#include <fmt/format.h>

namespace bpfdiff::report {
namespace {

// Version 2 names the status "not_comparable" where version 1 said
// "poisoned"; both are read.
constexpr std::string_view kFormat = "bpfdiff-conformance-2";
constexpr std::string_view kFormatV1 = "bpfdiff-conformance-1";

Result<TestStatus> StatusField(const Json& object, std::string_view where) {
  auto name = RequiredString(object, "status", where);
  if (!name) return name.error();
  auto status = ParseTestStatus(*name);
  if (!status) return Fail("{}: unknown status '{}' (pass, fail, skip or not_comparable)", where, *name);
  return *status;
}

Result<EngineResult> EngineResultFromJson(const Json& json, std::string_view where) {
  auto engine = RequiredString(json, "engine", where);
  if (!engine) return engine.error();
  auto status = StatusField(json, where);
  if (!status) return status.error();
  auto reason = OptionalString(json, "reason", where);
  if (!reason) return reason.error();
  return EngineResult{*engine, *status, reason->value_or("")};
}

Result<TestResult> TestFromJson(const Json& json, std::string_view where) {
  TestResult test;
  auto name = RequiredString(json, "name", where);
  if (!name) return name.error();
  test.name = *name;
  const std::string test_where = fmt::format("{}: test '{}'", where, test.name);
  auto status = StatusField(json, test_where);
  if (!status) return status.error();
  test.status = *status;
  auto suite = OptionalString(json, "suite", test_where);
  if (!suite) return suite.error();
  test.suite = suite->value_or("");
  auto reason = OptionalString(json, "reason", test_where);
  if (!reason) return reason.error();
  test.reason = reason->value_or("");
  if (json.contains("engines")) {
    if (!json["engines"].is_array()) return Fail("{}: 'engines' must be an array", test_where);
    for (const auto& engine_json : json["engines"]) {
      auto engine = EngineResultFromJson(engine_json, test_where);
      if (!engine) return engine.error();
      test.engines.push_back(std::move(engine).value());
    }
  }
  return test;
}

}  // namespace

Json ConformanceToJson(const ConformanceSummary& summary) {
  Json json;
  json["format"] = kFormat;
  json["engines"] = summary.engines;
  json["counts"] = {{"passed", summary.passed}, {"failed", summary.failed}, {"skipped", summary.skipped}};
  json["per_engine"] = Json::array();
  for (const auto& c : summary.PerEngine()) {
    json["per_engine"].push_back(
        {{"engine", c.engine}, {"passed", c.passed}, {"failed", c.failed}, {"skipped", c.skipped},
         {"not_comparable", c.not_comparable}});
  }
  json["tests"] = Json::array();
  for (const auto& test : summary.results) {
    Json engines = Json::array();
    for (const auto& e : test.engines) {
      engines.push_back({{"engine", e.engine}, {"status", TestStatusName(e.status)}, {"reason", e.reason}});
    }
    json["tests"].push_back({{"name", test.name},
                             {"suite", test.suite},
                             {"status", TestStatusName(test.status)},
                             {"reason", test.reason},
                             {"engines", std::move(engines)}});
  }
  return json;
}

Result<ConformanceSummary> ConformanceFromJson(const Json& json, std::string_view where) {
  if (!json.is_object()) return Fail("{}: expected a JSON object", where);
  auto format = RequiredString(json, "format", where);
  if (!format) return format.error();
  if (*format != kFormat && *format != kFormatV1) {
    return Fail("{}: format '{}', expected '{}'", where, *format, kFormat);
  }
  ConformanceSummary summary;
  if (!json.contains("engines") || !json["engines"].is_array()) {
    return Fail("{}: 'engines' must be an array of names", where);
  }
  for (const auto& engine : json["engines"]) {
    if (!engine.is_string()) return Fail("{}: 'engines' must be an array of names", where);
    summary.engines.push_back(engine.get<std::string>());
  }
  if (!json.contains("tests") || !json["tests"].is_array()) return Fail("{}: 'tests' must be an array", where);
  for (const auto& test_json : json["tests"]) {
    auto test = TestFromJson(test_json, where);
    if (!test) return test.error();
    switch (test->status) {
      case TestStatus::kPass:
      case TestStatus::kNotComparable: ++summary.passed; break;
      case TestStatus::kFail: ++summary.failed; break;
      case TestStatus::kSkip: ++summary.skipped; break;
    }
    summary.results.push_back(std::move(test).value());
  }
  return summary;
}

}  // namespace bpfdiff::report
