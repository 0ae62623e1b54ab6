#include "report/test_bpf_json.h"

#include <fmt/format.h>

namespace bpfdiff::report {
namespace {

constexpr std::string_view kFormat = "bpfdiff-test-bpf-1";

Json TalliesToJson(const std::vector<TestBpfTally>& tallies) {
  Json json = Json::array();
  for (const auto& t : tallies) {
    json.push_back({{"engine", t.engine},
                    {"passed", t.passed},
                    {"failed", t.failed},
                    {"jited", t.jited},
                    {"run", t.run},
                    {"agreed", t.agreed},
                    {"diverged", t.diverged},
                    {"not_comparable", t.not_comparable},
                    {"not_run", t.not_run}});
  }
  return json;
}

Result<int> Count(const Json& object, std::string_view key, std::string_view where) {
  auto value = RequiredCount(object, key, where);
  if (!value) return value.error();
  if (*value < 0 || *value > 1'000'000'000) return Fail("{}: '{}' is out of range: {}", where, key, *value);
  return static_cast<int>(*value);
}

Result<TestBpfTally> TallyFromJson(const Json& json, std::string_view where) {
  if (!json.is_object()) return Fail("{}: a tally must be an object", where);
  TestBpfTally t;
  auto engine = RequiredString(json, "engine", where);
  if (!engine) return engine.error();
  t.engine = *engine;
  const std::string tally_where = fmt::format("{}: engine {}", where, t.engine);
  for (auto [key, field] : {std::pair{"passed", &t.passed}, std::pair{"failed", &t.failed},
                            std::pair{"jited", &t.jited}, std::pair{"run", &t.run}, std::pair{"agreed", &t.agreed},
                            std::pair{"diverged", &t.diverged}, std::pair{"not_comparable", &t.not_comparable}}) {
    auto value = Count(json, key, tally_where);
    if (!value) return value.error();
    *field = *value;
  }
  // Written since kernel-interp: absent from older files, where it was 0.
  if (json.contains("not_run")) {
    auto value = Count(json, "not_run", tally_where);
    if (!value) return value.error();
    t.not_run = *value;
  }
  if (t.passed + t.failed != t.run) {
    return Fail("{}: {} passed and {} failed, but {} run", tally_where, t.passed, t.failed, t.run);
  }
  return t;
}

Result<std::vector<TestBpfTally>> TalliesFromJson(const Json& suites, std::string_view key, std::string_view where) {
  std::vector<TestBpfTally> tallies;
  if (!suites.contains(key)) return tallies;  // that suite did not run
  if (!suites[key].is_array()) return Fail("{}: suites.{} must be an array", where, key);
  for (const auto& tally : suites[key]) {
    auto t = TallyFromJson(tally, fmt::format("{}: suites.{}", where, key));
    if (!t) return t.error();
    tallies.push_back(std::move(t).value());
  }
  return tallies;
}

}  // namespace

Json TestBpfToJson(const TestBpfSummary& summary) {
  Json json;
  json["format"] = kFormat;
  json["tree"] = summary.tree;
  json["suites"] = Json::object();
  if (!summary.cases.empty()) json["suites"]["test_bpf"] = TalliesToJson(summary.cases);
  if (!summary.tail_calls.empty()) json["suites"]["test_tail_calls"] = TalliesToJson(summary.tail_calls);
  json["left_out"] = Json::array();
  for (const auto& [reason, cases] : summary.left_out) json["left_out"].push_back({{"reason", reason}, {"cases", cases}});
  json["failures"] = Json::array();
  for (const auto& f : summary.failures) {
    json["failures"].push_back({{"suite", f.suite},
                                {"index", f.index},
                                {"name", f.name},
                                {"engine", f.engine},
                                {"reason", f.reason},
                                {"kernel_verdict", f.kernel_verdict}});
  }
  return json;
}

Result<TestBpfSummary> TestBpfFromJson(const Json& json, std::string_view where) {
  if (!json.is_object()) return Fail("{}: expected a JSON object", where);
  auto format = RequiredString(json, "format", where);
  if (!format) return format.error();
  if (*format != kFormat) return Fail("{}: format '{}', expected '{}'", where, *format, kFormat);
  TestBpfSummary summary;
  auto tree = OptionalString(json, "tree", where);
  if (!tree) return tree.error();
  summary.tree = tree->value_or("");
  if (!json.contains("suites") || !json["suites"].is_object()) return Fail("{}: 'suites' must be an object", where);
  auto cases = TalliesFromJson(json["suites"], "test_bpf", where);
  if (!cases) return cases.error();
  summary.cases = std::move(cases).value();
  auto tail_calls = TalliesFromJson(json["suites"], "test_tail_calls", where);
  if (!tail_calls) return tail_calls.error();
  summary.tail_calls = std::move(tail_calls).value();
  if (json.contains("left_out")) {
    if (!json["left_out"].is_array()) return Fail("{}: 'left_out' must be an array", where);
    for (const auto& entry : json["left_out"]) {
      if (!entry.is_object()) return Fail("{}: 'left_out' holds objects", where);
      auto reason = RequiredString(entry, "reason", where);
      if (!reason) return reason.error();
      auto count = Count(entry, "cases", where);
      if (!count) return count.error();
      summary.left_out[*reason] += *count;
    }
  }
  if (json.contains("failures")) {
    if (!json["failures"].is_array()) return Fail("{}: 'failures' must be an array", where);
    for (const auto& entry : json["failures"]) {
      if (!entry.is_object()) return Fail("{}: 'failures' holds objects", where);
      TestBpfFailure f;
      for (auto [key, field] : {std::pair{"suite", &f.suite}, std::pair{"name", &f.name},
                                std::pair{"engine", &f.engine}, std::pair{"reason", &f.reason}}) {
        auto value = RequiredString(entry, key, where);
        if (!value) return value.error();
        *field = *value;
      }
      auto index = Count(entry, "index", where);
      if (!index) return index.error();
      f.index = *index;
      auto kernel = RequiredBool(entry, "kernel_verdict", where);
      if (!kernel) return kernel.error();
      f.kernel_verdict = *kernel;
      summary.failures.push_back(std::move(f));
    }
  }
  return summary;
}

}  // namespace bpfdiff::report
