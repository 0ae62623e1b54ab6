#include "fuzz/stats/stats_file.h"

#include <nlohmann/json.hpp>

#include "support/files.h"

namespace bpfdiff::fuzz {

std::string FuzzStatsJson(const FuzzStatsFile& stats) {
  // ordered_json: the counters keep the order the target gave them.
  nlohmann::ordered_json json;
  json["target"] = stats.target;
  json["seconds"] = stats.seconds;
  json["inputs"] = stats.inputs;
  json["counters"] = nlohmann::ordered_json::object();
  for (const auto& [name, count] : stats.counters) json["counters"][name] = count;
  json["reasons"]["poisoned"] = nlohmann::ordered_json::object();
  for (const auto& [reason, count] : stats.poisoned) json["reasons"]["poisoned"][reason] = count;
  json["reasons"]["rejected"] = nlohmann::ordered_json::object();
  for (const auto& [reason, count] : stats.rejected) json["reasons"]["rejected"][reason] = count;
  if (stats.forms) {
    json["forms"]["total"] = stats.forms->total;
    json["forms"]["generated"] = stats.forms->generated;
    json["forms"]["completed"] = stats.forms->completed;
    json["forms"]["not_completed"] = stats.forms->not_completed;
  }
  return json.dump(1) + "\n";
}

Status WriteFuzzStatsFile(const std::string& path, const FuzzStatsFile& stats) {
  if (path.empty()) return {};
  return WriteFile(path, FuzzStatsJson(stats));
}

}  // namespace bpfdiff::fuzz
