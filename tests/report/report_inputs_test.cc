#include "report/report_inputs.h"

#include <algorithm>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "report/conformance_json.h"
#include "tests/report/fixture_model.h"

namespace bpfdiff::report {
namespace {

std::filesystem::path TempFile(std::string_view name, std::string_view text) {
  const auto path = ScratchPath(name);
  std::ofstream(path) << text;
  return path;
}

TEST(ReportInputs, ConformanceKeepsEachEnginesStatus) {
  auto summary = LoadConformance(Fixture("conformance.json"));
  ASSERT_TRUE(summary.ok()) << summary.message();
  EXPECT_EQ(summary->engines, (std::vector<std::string>{"interp", "jit", "jit-llsc"}));
  EXPECT_EQ(summary->passed, 2);
  EXPECT_EQ(summary->failed, 1);
  EXPECT_EQ(summary->skipped, 1);
  const auto counts = summary->PerEngine();
  ASSERT_EQ(counts.size(), 3u);
  EXPECT_EQ(counts[2].engine, "jit-llsc");
  EXPECT_EQ(counts[2].failed, 1);
  EXPECT_EQ(counts[2].not_comparable, 1);
  EXPECT_EQ(counts[0].not_comparable, 0);
}

TEST(ReportInputs, ConformanceJsonRoundTrips) {
  auto summary = LoadConformance(Fixture("conformance.json"));
  ASSERT_TRUE(summary.ok());
  auto again = ConformanceFromJson(ConformanceToJson(*summary), "round trip");
  ASSERT_TRUE(again.ok()) << again.message();
  ASSERT_EQ(again->results.size(), summary->results.size());
  for (size_t i = 0; i < summary->results.size(); ++i) {
    EXPECT_EQ(again->results[i].name, summary->results[i].name);
    EXPECT_EQ(again->results[i].status, summary->results[i].status);
    ASSERT_EQ(again->results[i].engines.size(), 3u);
    EXPECT_EQ(again->results[i].engines[1].reason, summary->results[i].engines[1].reason);
  }
}

TEST(ReportInputs, FuzzStatsKeepTheWritersOrderAndIgnoreUnknownKeys) {
  auto stats = LoadFuzzStats(Fixture("diff_fuzzer_stats.json"));
  ASSERT_TRUE(stats.ok()) << stats.message();
  EXPECT_EQ(stats->target, "diff_fuzzer");
  EXPECT_EQ(stats->inputs, 1234);
  ASSERT_EQ(stats->counters.size(), 3u);
  EXPECT_EQ(stats->counters[0].first, "compared");
  EXPECT_EQ(stats->counters[2].first, "extra_runs");
  ASSERT_TRUE(stats->forms.has_value());
  EXPECT_EQ(stats->forms->completed, 168);
  EXPECT_EQ(stats->forms->not_completed.size(), 6u);
}

TEST(ReportInputs, FuzzStatsWithoutOptionalPartsLoad) {
  auto stats = LoadFuzzStats(TempFile("minimal.json", R"({"target": "t", "seconds": 1, "inputs": 0})"));
  ASSERT_TRUE(stats.ok()) << stats.message();
  EXPECT_TRUE(stats->counters.empty());
  EXPECT_TRUE(stats->not_comparable.empty());
  EXPECT_FALSE(stats->forms.has_value());
}

TEST(ReportInputs, BadInputsSayWhatIsWrong) {
  auto missing = LoadFuzzStats(Fixture("no-such-file.json"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("no-such-file.json"), std::string::npos);

  auto malformed = LoadConformance(TempFile("malformed.json", "{\"format\": "));
  ASSERT_FALSE(malformed.ok());
  EXPECT_NE(malformed.message().find("not valid JSON"), std::string::npos) << malformed.message();

  auto no_inputs = LoadFuzzStats(TempFile("no-inputs.json", R"({"target": "t", "seconds": 1})"));
  ASSERT_FALSE(no_inputs.ok());
  EXPECT_NE(no_inputs.message().find("'inputs'"), std::string::npos) << no_inputs.message();

  auto wrong_type = LoadFuzzStats(TempFile("wrong.json", R"({"target": "t", "seconds": "long", "inputs": 1})"));
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_NE(wrong_type.message().find("'seconds' must be a number"), std::string::npos) << wrong_type.message();

  auto bad_status = LoadConformance(TempFile(
      "status.json", R"({"format": "bpfdiff-conformance-1", "engines": [], "tests": [{"name": "a", "status": "ok"}]})"));
  ASSERT_FALSE(bad_status.ok());
  EXPECT_NE(bad_status.message().find("unknown status 'ok'"), std::string::npos) << bad_status.message();

  auto planted = LoadPlanted(TempFile("planted.json", R"([{"bug": "b", "target": "t"}])"));
  ASSERT_FALSE(planted.ok());
  EXPECT_NE(planted.message().find("'detected'"), std::string::npos) << planted.message();
}

TEST(ReportInputs, FuzzRunsCountTimeoutsAndOutOfMemory) {
  auto runs = LoadFuzzRuns(TempFile("runs.json", R"([{"target": "t", "result": "oom", "ooms": 2, "timeouts": 1}])"));
  ASSERT_TRUE(runs) << runs.message();
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].result, "oom");
  EXPECT_EQ((*runs)[0].ooms, 2);
  EXPECT_EQ((*runs)[0].timeouts, 1);
  EXPECT_FALSE(LoadFuzzRuns(TempFile("runs2.json", R"([{"target": "t", "result": "slow"}])")));
}

TEST(ReportInputs, AFindingsKindIsRead) {
  auto runs = LoadFuzzRuns(TempFile("runs-kind.json", R"json([{"target": "t", "result": "finding", "exit_code": 77,
                                                              "finding_kind": "culprit add32 (jit)"}])json"));
  ASSERT_TRUE(runs) << runs.message();
  EXPECT_EQ((*runs)[0].finding_kind, "culprit add32 (jit)");
  EXPECT_FALSE(LoadFuzzRuns(TempFile("runs-kind2.json", R"([{"target": "t", "result": "finding", "finding_kind": 3}])")));
}

TEST(ReportInputs, ARunWithoutStatsIsKept) {
  const ReportModel model = FixtureModel();
  ASSERT_EQ(model.fuzz.size(), 3u);
  EXPECT_EQ(model.fuzz[2].target, "recursion_fuzzer");
  EXPECT_TRUE(model.fuzz[2].run.has_value());
  EXPECT_FALSE(model.fuzz[2].stats.has_value());
}

TEST(ReportInputs, TheStatsOfForkWorkersAddUp) {
  FuzzStats a;
  a.target = "diff_fuzzer";
  a.seconds = 60;
  a.inputs = 1000;
  a.counters = {{"compared", 900}, {"findings", 0}};
  a.not_comparable = {{"budget", 5}, {"poisoned read", 1}};
  a.forms = FormCoverage{174, 170, 168, {"ldabsw", "ldindw", "ldabsh", "ldindh", "ldabsb", "ldindb"}};
  FuzzStats b = a;
  b.seconds = 61;
  b.inputs = 500;
  b.counters = {{"compared", 450}, {"timeouts", 2}};
  b.not_comparable = {{"poisoned read", 9}};
  b.forms = FormCoverage{174, 165, 167, {"ldabsw", "ldindw", "ldabsh", "ldindh", "ldabsb", "ldindb", "jmp32 jset"}};
  FuzzStats other;
  other.target = "pack_fuzzer";
  other.inputs = 7;

  auto merged = MergeFuzz({}, {a, other, b});
  ASSERT_TRUE(merged) << merged.message();
  ASSERT_EQ(merged->size(), 2u);
  const FuzzStats& sum = *(*merged)[0].stats;
  EXPECT_EQ(sum.inputs, 1500u);
  EXPECT_EQ(sum.seconds, 61);
  EXPECT_EQ(sum.counters, (NamedCounts{{"compared", 1350}, {"findings", 0}, {"timeouts", 2}}));
  EXPECT_EQ(sum.not_comparable, (NamedCounts{{"poisoned read", 10}, {"budget", 5}}));
  ASSERT_TRUE(sum.forms);
  EXPECT_EQ(sum.forms->completed, 168u) << "jmp32 jset was completed by the first worker";
  EXPECT_EQ(sum.forms->not_completed.size(), 6u);
  EXPECT_EQ((*merged)[1].stats->inputs, 7u);
}

TEST(ReportInputs, WorkersStatesAddUpAndTheirLargestValuesDoNot) {
  FuzzStats a;
  a.target = "pack_fuzzer";
  a.states_reached = {{"images_crossing_a_page", 3}, {"frees_deferred_cpu_inside_by_tail_call", 0}};
  a.states_largest = {{"largest_image_bytes", 100}, {"most_live_programs", 9}};
  FuzzStats b = a;
  b.states_reached = {{"images_crossing_a_page", 2}, {"frees_deferred_cpu_inside_by_tail_call", 1}};
  b.states_largest = {{"largest_image_bytes", 4000}, {"most_live_programs", 5}};
  auto merged = MergeFuzz({}, {a, b});
  ASSERT_TRUE(merged) << merged.message();
  ASSERT_EQ(merged->size(), 1u);
  const FuzzStats& sum = *(*merged)[0].stats;
  EXPECT_EQ(sum.states_reached, (NamedCounts{{"images_crossing_a_page", 5}, {"frees_deferred_cpu_inside_by_tail_call", 1}}));
  EXPECT_EQ(sum.states_largest, (NamedCounts{{"largest_image_bytes", 4000}, {"most_live_programs", 9}}));
}

TEST(ReportModel, PassesOnlyWhenEveryPartPassed) {
  ReportModel model = FixtureModel();
  EXPECT_FALSE(model.Passed());
  model.conformance.failed = 0;
  EXPECT_FALSE(model.Passed()) << "the gate did not catch a planted bug";
  ASSERT_TRUE(model.planted_gate);
  model.planted_gate->checks[2].problem.clear();
  EXPECT_TRUE(model.Passed()) << "the benchmark missed a bug on a first night: measured, not failed";
  model.planted_gate->problems.push_back("x: names no planted bug");
  EXPECT_FALSE(model.Passed());
  model.planted_gate->problems.clear();
  model.fuzz[0].run->result = "finding";
  EXPECT_FALSE(model.Passed());
}

// The gate's results: what the nightly's verdict on planted bugs rests on.
TEST(PlantedGate, ReadsEachBugsReplaysAndRecomputesTheVerdict) {
  auto gate = LoadPlantedGate(Fixture("planted_gate.json"));
  ASSERT_TRUE(gate) << gate.message();
  ASSERT_EQ(gate->checks.size(), 3u);
  EXPECT_EQ(gate->CaughtCount(), 2);
  EXPECT_FALSE(gate->Passed());
  const GateCheck& failed = gate->checks[2];
  EXPECT_EQ(failed.target, "recursion_fuzzer");
  ASSERT_TRUE(failed.with_bug);
  EXPECT_EQ(failed.with_bug->result, "clean");
  EXPECT_NE(failed.problem.find("not caught with the bug switched on"), std::string::npos);

  // "passed": true at the top does not pass a gate whose bug failed, and a
  // bug marked failed without a reason still fails.
  auto marked = LoadPlantedGate(TempFile("gate1.json", R"({"format": "bpfdiff-planted-gate-1", "passed": true,
      "bugs": [{"bug": "b", "target": "t", "passed": false}]})"));
  ASSERT_TRUE(marked) << marked.message();
  EXPECT_FALSE(marked->Passed());
  EXPECT_FALSE(marked->checks[0].problem.empty());
  // A gate that checked nothing proves nothing.
  auto empty = LoadPlantedGate(TempFile("gate2.json", R"({"format": "bpfdiff-planted-gate-1", "bugs": []})"));
  ASSERT_TRUE(empty) << empty.message();
  EXPECT_FALSE(empty->Passed());
}

TEST(PlantedGate, AMalformedFileIsAnErrorNamingItAndTheField) {
  auto format = LoadPlantedGate(TempFile("gate3.json", R"({"format": "bpfdiff-planted-2", "bugs": []})"));
  ASSERT_FALSE(format);
  EXPECT_NE(format.message().find("gate3.json"), std::string::npos) << format.message();
  EXPECT_NE(format.message().find("bpfdiff-planted-gate-1"), std::string::npos) << format.message();
  auto replay = LoadPlantedGate(TempFile("gate4.json", R"({"format": "bpfdiff-planted-gate-1",
      "bugs": [{"bug": "b", "target": "t", "passed": true, "with_bug": {"exit_code": 77}}]})"));
  ASSERT_FALSE(replay);
  EXPECT_NE(replay.message().find("with_bug"), std::string::npos) << replay.message();
  EXPECT_NE(replay.message().find("'result'"), std::string::npos) << replay.message();
  auto passed = LoadPlantedGate(TempFile("gate5.json", R"({"format": "bpfdiff-planted-gate-1",
      "bugs": [{"bug": "b", "target": "t"}]})"));
  ASSERT_FALSE(passed);
  EXPECT_NE(passed.message().find("'passed'"), std::string::npos) << passed.message();
}

// The benchmark's format: runs from the seeds and from an empty corpus,
// medians where a miss counts as never, and the totals.
TEST(PlantedResults, ReadsTheBenchmarkAndSummarizesIt) {
  auto planted = LoadPlanted(Fixture("planted_v2.json"));
  ASSERT_TRUE(planted.ok()) << planted.message();
  ASSERT_EQ(planted->size(), 3u);
  const PlantedCheck& sub = (*planted)[0];
  EXPECT_EQ(sub.area, "ALU and encodings");
  EXPECT_TRUE(sub.value_dependent);
  ASSERT_EQ(sub.from_empty.size(), 3u);
  EXPECT_EQ(sub.from_empty[1].seed, 2u);
  EXPECT_EQ(sub.EmptyMedianSeconds(), 12.0) << "4.0, 12.0 and a miss: the middle one";
  EXPECT_EQ((*planted)[2].EmptyMedianSeconds(), std::nullopt) << "two misses of three: not detected";
  EXPECT_FALSE((*planted)[2].detected()) << "the history counts the run from the seeds";

  const PlantedSummary s = Summarize(*planted);
  EXPECT_EQ(s.bugs, 3);
  EXPECT_EQ(s.detected_from_seeds, 2);
  EXPECT_EQ(s.measured_from_empty, 3);
  EXPECT_EQ(s.detected_from_empty, 2);
  EXPECT_EQ(s.median_from_empty, 0.5);
  EXPECT_EQ(s.worst_from_empty, 12.0);

  const std::string table = PlantedMarkdown(*planted);
  EXPECT_NE(table.find("| `sub-imm-intmin` (v) | ALU and encodings | 5855c4c1f415"), std::string::npos) << table;
  EXPECT_NE(table.find("| not detected | not detected |"), std::string::npos) << table;
  EXPECT_NE(table.find("from an empty corpus 2 of 3 detected within the limit"), std::string::npos) << table;
}

// Found by report_json_fuzzer: an exit code of 1e19 was cast to int64_t
// (undefined; UBSan stops there), in the fuzz runs and the planted runs.
TEST(ReportInputs, AnExitCodeBeyondAnIntIsAnErrorNamingTheField) {
  auto runs = LoadFuzzRuns(TempFile("runs3.json", R"([{"target": "t", "result": "clean", "exit_code": 1e19}])"));
  ASSERT_FALSE(runs);
  EXPECT_NE(runs.message().find("'exit_code'"), std::string::npos) << runs.message();
  EXPECT_FALSE(LoadFuzzRuns(TempFile("runs4.json", R"([{"target": "t", "result": "clean", "exit_code": 1.5}])")));
  auto negative = LoadFuzzRuns(TempFile("runs5.json", R"([{"target": "t", "result": "error", "exit_code": -6}])"));
  ASSERT_TRUE(negative) << negative.message();
  EXPECT_EQ((*negative)[0].exit_code, -6);

  auto planted = LoadPlanted(TempFile("planted3.json", R"([{"bug": "b", "target": "t", "detected": true,
                                                            "exit_code": -1e300}])"));
  ASSERT_FALSE(planted);
  EXPECT_NE(planted.message().find("'exit_code'"), std::string::npos) << planted.message();
}

// Found by report_json_fuzzer: a '|' in a bug's area split its row of the
// Markdown table (only the first line was escaped).
TEST(PlantedResults, TheTableHasOneRowOfSevenCellsPerBugWhateverItsStrings) {
  auto planted = LoadPlanted(TempFile("planted4.json", R"({"format": "bpfdiff-planted-2", "bugs": [
      {"bug": "a|b", "target": "t|", "area": "|the pack", "fixed_by": "x\ny", "first_line": "one|two\r\nthree"}]})"));
  ASSERT_TRUE(planted) << planted.message();
  const std::string table = PlantedMarkdown(*planted);
  const std::string row = table.substr(table.find("| `"), table.find('\n', table.find("| `")) - table.find("| `"));
  EXPECT_EQ(std::count(row.begin(), row.end(), '|'), 8) << row;
  EXPECT_NE(row.find("/the pack | x y |"), std::string::npos) << row;
}

TEST(PlantedResults, AnUnknownFormatIsAnErrorNamingTheFile) {
  auto planted = LoadPlanted(TempFile("planted.json", R"({"format": "bpfdiff-planted-9", "bugs": []})"));
  ASSERT_FALSE(planted.ok());
  EXPECT_NE(planted.message().find("bpfdiff-planted-9"), std::string::npos) << planted.message();
}

// Optional parts that do not load are left out and named; the report is
// made from the rest. The conformance results are required.
TEST(ReportInputs, OptionalPartsThatDoNotLoadAreLeftOutAndNamed) {
  ReportInputs inputs;
  inputs.conformance = Fixture("conformance.json");
  inputs.fuzz_stats = {Fixture("diff_fuzzer_stats.json"), TempFile("broken_stats.json", "{\"target\": ")};
  inputs.planted = TempFile("broken_planted.json", "[");
  inputs.planted_gate = TempFile("broken_gate.json", "{");
  auto model = LoadReportInputs(inputs);
  ASSERT_TRUE(model) << model.message();
  ASSERT_EQ(model->inputs_left_out.size(), 3u);
  EXPECT_NE(model->inputs_left_out[0].find("broken_stats.json"), std::string::npos) << model->inputs_left_out[0];
  EXPECT_NE(model->inputs_left_out[1].find("broken_planted.json"), std::string::npos) << model->inputs_left_out[1];
  EXPECT_NE(model->inputs_left_out[2].find("broken_gate.json"), std::string::npos) << model->inputs_left_out[2];
  EXPECT_EQ(model->fuzz.size(), 1u);  // the stats that loaded
  EXPECT_TRUE(model->planted.empty());
  EXPECT_FALSE(model->planted_gate);

  inputs.conformance = TempFile("broken_conformance.json", "{");
  EXPECT_FALSE(LoadReportInputs(inputs));
}

}  // namespace
}  // namespace bpfdiff::report
