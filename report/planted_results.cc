#include "report/planted_results.h"

#include <algorithm>

#include <fmt/format.h>

namespace bpfdiff::report {
namespace {

// A Markdown table cell: a '|' would end it and a line break the row.
std::string Cell(std::string_view text) {
  std::string cell(text);
  for (char& c : cell) {
    if (c == '|') c = '/';
    if (c == '\n' || c == '\r') c = ' ';
  }
  return cell;
}

Result<PlantedRun> RunFromJson(const Json& json, std::string_view where) {
  PlantedRun run;
  if (!json.is_object()) return Fail("{}: a run must be an object", where);
  auto detected = RequiredBool(json, "detected", where);
  if (!detected) return detected.error();
  run.detected = *detected;
  auto seconds = OptionalNumber(json, "seconds", where);
  if (!seconds) return seconds.error();
  run.seconds = seconds->value_or(0);
  auto exit_code = OptionalExitStatus(json, "exit_code", where);
  if (!exit_code) return exit_code.error();
  run.exit_code = exit_code->value_or(0);
  auto seed = OptionalCount(json, "seed", where);
  if (!seed) return seed.error();
  if (*seed) run.seed = static_cast<uint64_t>(**seed);
  return run;
}

// Version 1: one run from the seeds per entry.
Result<PlantedCheck> CheckFromJsonV1(const Json& json, std::string_view where) {
  PlantedCheck check;
  auto bug = RequiredString(json, "bug", where);
  if (!bug) return bug.error();
  check.bug = *bug;
  auto target = RequiredString(json, "target", where);
  if (!target) return target.error();
  check.target = *target;
  auto run = RunFromJson(json, where);
  if (!run) return run.error();
  check.from_seeds = *run;
  auto limit = OptionalNumber(json, "limit_seconds", where);
  if (!limit) return limit.error();
  check.limit_seconds = *limit;
  auto artifacts = OptionalString(json, "artifacts", where);
  if (!artifacts) return artifacts.error();
  check.artifacts = artifacts->value_or("");
  return check;
}

Result<PlantedCheck> CheckFromJson(const Json& json, std::optional<double> limit, std::string_view where) {
  PlantedCheck check;
  check.limit_seconds = limit;
  for (auto [key, field] : {std::pair{"bug", &check.bug}, std::pair{"target", &check.target}}) {
    auto value = RequiredString(json, key, where);
    if (!value) return value.error();
    *field = *value;
  }
  for (auto [key, field] : {std::pair{"area", &check.area}, std::pair{"fixed_by", &check.fixed_by},
                            std::pair{"first_line", &check.first_line}, std::pair{"artifacts", &check.artifacts}}) {
    auto value = OptionalString(json, key, where);
    if (!value) return value.error();
    *field = value->value_or("");
  }
  if (json.contains("value_dependent")) {
    auto vd = RequiredBool(json, "value_dependent", where);
    if (!vd) return vd.error();
    check.value_dependent = *vd;
  }
  if (json.contains("from_seeds") && !json["from_seeds"].is_null()) {
    auto run = RunFromJson(json["from_seeds"], fmt::format("{}: from_seeds", where));
    if (!run) return run.error();
    check.from_seeds = *run;
  }
  if (json.contains("from_empty")) {
    if (!json["from_empty"].is_array()) return Fail("{}: 'from_empty' must be an array of runs", where);
    for (const auto& run_json : json["from_empty"]) {
      auto run = RunFromJson(run_json, fmt::format("{}: from_empty", where));
      if (!run) return run.error();
      check.from_empty.push_back(*run);
    }
  }
  return check;
}

std::string Seconds(const std::optional<double>& seconds, std::string_view missing) {
  return seconds ? fmt::format("{:.1f} s", *seconds) : std::string(missing);
}

}  // namespace

bool PlantedCheck::detected() const {
  if (from_seeds) return from_seeds->detected;
  return std::any_of(from_empty.begin(), from_empty.end(), [](const PlantedRun& r) { return r.detected; });
}

std::optional<double> PlantedCheck::EmptyMedianSeconds() const {
  if (from_empty.empty()) return std::nullopt;
  // A miss sorts after every detection; the median is the middle run (the
  // lower middle of an even count).
  std::vector<std::optional<double>> times;
  for (const auto& run : from_empty) times.push_back(run.detected ? std::optional<double>(run.seconds) : std::nullopt);
  std::sort(times.begin(), times.end(), [](const auto& a, const auto& b) {
    if (a && b) return *a < *b;
    return a.has_value() && !b.has_value();
  });
  return times[(times.size() - 1) / 2];
}

PlantedSummary Summarize(const std::vector<PlantedCheck>& planted) {
  PlantedSummary summary;
  std::vector<double> medians;
  for (const auto& p : planted) {
    ++summary.bugs;
    summary.detected_from_seeds += p.from_seeds && p.from_seeds->detected;
    if (p.from_empty.empty()) continue;
    ++summary.measured_from_empty;
    if (auto median = p.EmptyMedianSeconds()) {
      ++summary.detected_from_empty;
      medians.push_back(*median);
    }
  }
  if (!medians.empty()) {
    std::sort(medians.begin(), medians.end());
    summary.median_from_empty = medians[(medians.size() - 1) / 2];
    summary.worst_from_empty = medians.back();
  }
  return summary;
}

Result<std::vector<PlantedCheck>> PlantedFromJson(const Json& json, std::string_view where) {
  std::vector<PlantedCheck> checks;
  if (json.is_array()) {  // version 1
    for (size_t i = 0; i < json.size(); ++i) {
      auto check = CheckFromJsonV1(json[i], fmt::format("{}: entry {}", where, i));
      if (!check) return check.error();
      checks.push_back(std::move(check).value());
    }
    return checks;
  }
  if (!json.is_object()) return Fail("{}: expected a JSON object", where);
  auto format = RequiredString(json, "format", where);
  if (!format) return format.error();
  if (*format != "bpfdiff-planted-2") return Fail("{}: format '{}', expected 'bpfdiff-planted-2'", where, *format);
  auto limit = OptionalNumber(json, "limit_seconds", where);
  if (!limit) return limit.error();
  if (!json.contains("bugs") || !json["bugs"].is_array()) return Fail("{}: 'bugs' must be an array", where);
  for (size_t i = 0; i < json["bugs"].size(); ++i) {
    auto check = CheckFromJson(json["bugs"][i], *limit, fmt::format("{}: bug {}", where, i));
    if (!check) return check.error();
    checks.push_back(std::move(check).value());
  }
  return checks;
}

Result<std::vector<PlantedCheck>> LoadPlanted(const std::filesystem::path& path) {
  auto json = ReadJsonFile(path);
  if (!json) return json.error();
  return PlantedFromJson(*json, fmt::format("planted-bug results {}", path.string()));
}

std::string PlantedMarkdown(const std::vector<PlantedCheck>& planted) {
  std::string out =
      "| bug | area | fixed upstream by | target | from the seeds | from empty (median) | what it found |\n"
      "|---|---|---|---|---|---|---|\n";
  for (const auto& p : planted) {
    const std::string seeds =
        !p.from_seeds ? "-" : p.from_seeds->detected ? fmt::format("{:.1f} s", p.from_seeds->seconds) : "not detected";
    const std::string empty = p.from_empty.empty() ? "-" : Seconds(p.EmptyMedianSeconds(), "not detected");
    fmt::format_to(std::back_inserter(out), "| `{}`{} | {} | {} | {} | {} | {} | {} |\n", Cell(p.bug),
                   p.value_dependent ? " (v)" : "", Cell(p.area), Cell(p.fixed_by), Cell(p.target), seeds, empty,
                   Cell(p.first_line));
  }
  const PlantedSummary s = Summarize(planted);
  fmt::format_to(std::back_inserter(out),
                 "\n{} bugs; from the seeds {} detected; from an empty corpus {} of {} detected within the limit "
                 "(median of the medians {}, worst {}). (v): value-dependent.\n",
                 s.bugs, s.detected_from_seeds, s.detected_from_empty, s.measured_from_empty,
                 Seconds(s.median_from_empty, "-"), Seconds(s.worst_from_empty, "-"));
  return out;
}

}  // namespace bpfdiff::report
