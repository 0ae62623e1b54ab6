// report_json_fuzzer: one file, hostile or not, through every loader of the
// nightly report's inputs (report/report_inputs.h): conformance results,
// fuzz stats (fuzz/stats/stats_file.h), fuzz runs and the planted-bug
// results, and one night of the history (report/history.h). Each loader
// must answer with a value or with a message that names the file, and:
//  - what has a writer round-trips: the conformance results, the fuzz
//    stats and a history entry, written and read back, write the same
//    JSON again (a writer never writes what its reader refuses);
//  - the conformance counts add up to the tests;
//  - the planted results' summary is consistent (no more detected than
//    measured), and their Markdown table has one row of eight cells per
//    bug, whatever the strings in the file;
//  - the fuzz runs and stats merge into at most one target each.
// The input is written to a file of its own in a directory this process
// makes (TMPDIR, read here in the main) and removes at exit.
#include "fuzz/targets/libfuzzer_entry_points.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "fuzz/stats/stats_file.h"
#include "report/conformance_json.h"
#include "report/fuzz/target_support.h"
#include "report/history.h"
#include "report/planted_results.h"
#include "report/report_inputs.h"
#include "support/json_fields.h"

namespace {

using namespace bpfdiff;
using namespace bpfdiff::report;
using fuzzing::Found;

std::filesystem::path* input_path = nullptr;  // in the scratch directory

// A loader's error names the file it read.
template <typename T>
bool Loaded(const Result<T>& result, std::string_view loader) {
  if (result) return true;
  if (result.message().find(input_path->string()) == std::string::npos) {
    Found(fmt::format("{}: the error does not name the file: '{}'", loader, result.message()));
  }
  return false;
}

void CheckConformance() {
  auto summary = LoadConformance(*input_path);
  if (!Loaded(summary, "conformance")) return;
  if (static_cast<size_t>(summary->passed + summary->failed + summary->skipped) != summary->results.size()) {
    Found(fmt::format("conformance: {} passed, {} failed, {} skipped of {} tests", summary->passed, summary->failed,
                      summary->skipped, summary->results.size()));
  }
  const Json written = ConformanceToJson(*summary);
  auto again = ConformanceFromJson(written, "written");
  if (!again) Found("conformance: what the writer wrote does not read: " + again.message());
  if (DumpJson(ConformanceToJson(*again)) != DumpJson(written)) {
    Found("conformance: read back, the results write differently:\n" + DumpJson(written));
  }
}

std::optional<fuzz::FuzzStatsFile> CheckFuzzStats() {
  auto stats = LoadFuzzStats(*input_path);
  if (!Loaded(stats, "fuzz stats")) return std::nullopt;
  const std::string written = fuzz::FuzzStatsJson(*stats);
  const Json json = Json::parse(written, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) Found("fuzz stats: the writer wrote invalid JSON:\n" + written);
  auto again = fuzz::FuzzStatsFromJson(json, "written");
  if (!again) Found("fuzz stats: what the writer wrote does not read: " + again.message() + "\n" + written);
  if (fuzz::FuzzStatsJson(*again) != written) Found("fuzz stats: read back, the stats write differently:\n" + written);
  return std::move(stats).value();
}

std::vector<FuzzRun> CheckFuzzRuns() {
  auto runs = LoadFuzzRuns(*input_path);
  if (!Loaded(runs, "fuzz runs")) return {};
  return std::move(runs).value();
}

// One row per bug, each of the table's seven columns between eight '|'.
void CheckPlantedMarkdown(const std::vector<PlantedCheck>& planted) {
  const std::string markdown = PlantedMarkdown(planted);
  size_t line_start = 0;
  size_t rows = 0;
  while (line_start < markdown.size()) {
    size_t end = markdown.find('\n', line_start);
    if (end == std::string::npos) end = markdown.size();
    const std::string_view line(markdown.data() + line_start, end - line_start);
    line_start = end + 1;
    if (!line.starts_with("|")) continue;
    ++rows;
    if (std::count(line.begin(), line.end(), '|') != 8) Found(fmt::format("planted: a table row of other than 7 cells: {}", line));
  }
  if (rows != planted.size() + 2) {
    Found(fmt::format("planted: {} table rows for {} bugs:\n{}", rows, planted.size(), markdown));
  }
}

void CheckPlanted() {
  auto planted = LoadPlanted(*input_path);
  if (!Loaded(planted, "planted")) return;
  const PlantedSummary s = Summarize(*planted);
  const bool consistent = s.bugs == static_cast<int>(planted->size()) && s.detected_from_seeds <= s.bugs &&
                          s.measured_from_empty <= s.bugs && s.detected_from_empty <= s.measured_from_empty &&
                          s.median_from_empty.has_value() == (s.detected_from_empty > 0) &&
                          (!s.median_from_empty || *s.median_from_empty <= *s.worst_from_empty);
  if (!consistent) Found("planted: an inconsistent summary");
  CheckPlantedMarkdown(*planted);
}

void CheckHistoryEntry() {
  auto json = ReadJsonFile(*input_path);
  if (!Loaded(json, "history entry")) return;
  auto entry = HistoryEntryFromJson(*json, input_path->string());
  if (!Loaded(entry, "history entry")) return;
  fuzzing::CheckHistoryRoundTrip(*entry);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  input_path = new std::filesystem::path(fuzzing::MakeScratchDirectory("report_json_fuzzer") / "input.json");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A plain write: WriteFile's fsync would cost more than the loaders.
  std::ofstream out(*input_path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) fuzzing::Fatal(fmt::format("cannot write {}", input_path->string()));
  CheckConformance();
  auto stats = CheckFuzzStats();
  const std::vector<FuzzRun> runs = CheckFuzzRuns();
  CheckPlanted();
  CheckHistoryEntry();
  std::vector<FuzzStats> all_stats;
  if (stats) all_stats.push_back(*stats);
  auto merged = MergeFuzz(runs, all_stats);
  if (merged && merged->size() > runs.size() + all_stats.size()) Found("fuzz: more targets than runs and stats");
  return 0;
}
