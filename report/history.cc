#include "report/history.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <map>
#include <optional>
#include <system_error>

#include <fmt/format.h>

#include "support/files.h"

namespace bpfdiff::report {
namespace {

// "2024-05-01T03:15:00Z" -> "20240501T031500Z": no ':' in file names.
std::string FileNameFor(const std::string& timestamp) {
  std::string name;
  for (const char c : timestamp) {
    if (std::isalnum(static_cast<unsigned char>(c))) name += c;
  }
  return name + ".json";
}

// {"bug": seconds or null, ...}: null for a bug not detected.
Result<std::map<std::string, std::optional<double>>> SecondsByBug(const Json& json, std::string_view key,
                                                                  std::string_view where) {
  std::map<std::string, std::optional<double>> seconds;
  if (!json.contains(key) || json[key].is_null()) return seconds;
  if (!json[key].is_object()) return Fail("{}: '{}' must be an object of seconds (or null) by bug", where, key);
  for (const auto& [bug, value] : json[key].items()) {
    if (value.is_null()) {
      seconds[bug] = std::nullopt;
    } else if (value.is_number()) {
      seconds[bug] = value.get<double>();
    } else {
      return Fail("{}: '{}': '{}' must be a number of seconds or null", where, key, bug);
    }
  }
  return seconds;
}

}  // namespace

Json HistoryEntryToJson(const HistoryEntry& e) {
  Json json = {{"timestamp", e.timestamp},
               {"tests", e.tests},
               {"passed", e.passed},
               {"failed", e.failed},
               {"skipped", e.skipped},
               {"not_comparable", e.not_comparable},
               {"fuzz_inputs", e.fuzz_inputs},
               {"fuzz_failures", e.fuzz_failures},
               {"forms_completed", nullptr},
               {"forms_total", nullptr},
               {"planted_detected", e.planted_detected},
               {"planted_total", e.planted_total}};
  if (e.forms_completed) json["forms_completed"] = *e.forms_completed;
  if (e.forms_total) json["forms_total"] = *e.forms_total;
  if (e.planted_detected_from_empty) json["planted_detected_from_empty"] = *e.planted_detected_from_empty;
  if (e.planted_limit_seconds) json["planted_limit_seconds"] = *e.planted_limit_seconds;
  if (e.planted_empty_runs) json["planted_empty_runs"] = *e.planted_empty_runs;
  if (!e.planted_seconds_from_seeds.empty()) {
    Json seeds = Json::object();
    for (const auto& [bug, seconds] : e.planted_seconds_from_seeds) {
      seeds[bug] = seconds ? Json(*seconds) : Json(nullptr);
    }
    json["planted_from_seeds"] = seeds;
  }
  return json;
}

Result<HistoryEntry> HistoryEntryFromJson(const Json& json, std::string_view where) {
  if (!json.is_object()) return Fail("{}: expected a JSON object", where);
  HistoryEntry entry;
  auto timestamp = RequiredString(json, "timestamp", where);
  if (!timestamp) return timestamp.error();
  entry.timestamp = *timestamp;
  // Counts a later version may drop read as 0 rather than failing the trend.
  const std::pair<const char*, int64_t*> counts[] = {
      {"tests", &entry.tests},
      {"passed", &entry.passed},
      {"failed", &entry.failed},
      {"skipped", &entry.skipped},
      {"not_comparable", &entry.not_comparable},
      {"fuzz_inputs", &entry.fuzz_inputs},
      {"fuzz_failures", &entry.fuzz_failures},
      {"planted_detected", &entry.planted_detected},
      {"planted_total", &entry.planted_total},
  };
  for (const auto& [key, field] : counts) {
    auto value = OptionalCount(json, key, where);
    if (!value) return value.error();
    *field = value->value_or(0);
  }
  auto forms_completed = OptionalCount(json, "forms_completed", where);
  if (!forms_completed) return forms_completed.error();
  entry.forms_completed = *forms_completed;
  auto forms_total = OptionalCount(json, "forms_total", where);
  if (!forms_total) return forms_total.error();
  entry.forms_total = *forms_total;
  auto from_empty = OptionalCount(json, "planted_detected_from_empty", where);
  if (!from_empty) return from_empty.error();
  entry.planted_detected_from_empty = *from_empty;
  auto limit = OptionalNumber(json, "planted_limit_seconds", where);
  if (!limit) return limit.error();
  entry.planted_limit_seconds = *limit;
  auto empty_runs = OptionalCount(json, "planted_empty_runs", where);
  if (!empty_runs) return empty_runs.error();
  entry.planted_empty_runs = *empty_runs;
  auto seeds = SecondsByBug(json, "planted_from_seeds", where);
  if (!seeds) return seeds.error();
  entry.planted_seconds_from_seeds = std::move(seeds).value();
  return entry;
}

Result<History> ReadHistory(const std::filesystem::path& dir, size_t keep_last) {
  History history;
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return history;
  if (!std::filesystem::is_directory(dir, ec)) return Fail("history {}: not a directory", dir.string());
  auto files = ListFiles(dir, ".json");
  if (!files) return files.error();
  const size_t first = files->size() > keep_last ? files->size() - keep_last : 0;
  for (size_t i = first; i < files->size(); ++i) {
    const auto& path = (*files)[i];
    auto json = ReadJsonFile(path);
    auto entry = json ? HistoryEntryFromJson(*json, path.string()) : Result<HistoryEntry>(json.error());
    if (!entry) {
      history.unreadable.push_back(entry.message());
      continue;
    }
    history.entries.push_back(std::move(entry).value());
  }
  return history;
}

Result<std::filesystem::path> WriteHistoryEntry(const std::filesystem::path& dir, const HistoryEntry& entry) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Fail("history {}: {}", dir.string(), ec.message());
  const auto path = dir / FileNameFor(entry.timestamp);
  auto written = WriteFile(path, DumpJson(HistoryEntryToJson(entry)));
  if (!written) return written.error();
  return path;
}

std::string UtcTimestampNow() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace bpfdiff::report
