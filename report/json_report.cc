// report.json: every input merged, with the verdict, for tools that want
// more than the text and less work than the inputs.
#include "report/tree_fuzzing.h"
#include "report/conformance_json.h"
#include "report/test_bpf_json.h"
#include "report/history.h"
#include "report/planted_trend.h"
#include "report/report_writers.h"

namespace bpfdiff::report {
namespace {

Json FuzzToJson(const FuzzTarget& target) {
  Json json = {{"target", target.target}, {"run", nullptr}, {"stats", nullptr}};
  if (target.run) {
    const FuzzRun& r = *target.run;
    json["run"] = {{"result", r.result},     {"exit_code", r.exit_code}, {"timeouts", r.timeouts},
                   {"ooms", r.ooms},         {"seconds", r.seconds},     {"artifacts", r.artifacts}};
    if (!r.finding_kind.empty()) json["run"]["finding_kind"] = r.finding_kind;
  }
  if (target.stats) json["stats"] = fuzz::FuzzStatsToJson(*target.stats);
  return json;
}

Json RunToJson(const PlantedRun& r) {
  Json json = {{"detected", r.detected}, {"seconds", r.seconds}, {"exit_code", r.exit_code}};
  if (r.seed) json["seed"] = *r.seed;
  return json;
}

Json PlantedToJson(const PlantedCheck& p) {
  Json json = {{"bug", p.bug}, {"target", p.target}, {"area", p.area}, {"fixed_by", p.fixed_by},
               {"value_dependent", p.value_dependent}, {"detected", p.detected()}};
  if (p.from_seeds) json["from_seeds"] = RunToJson(*p.from_seeds);
  json["from_empty"] = Json::array();
  for (const auto& r : p.from_empty) json["from_empty"].push_back(RunToJson(r));
  if (auto median = p.EmptyMedianSeconds()) json["empty_median_seconds"] = *median;
  if (p.limit_seconds) json["limit_seconds"] = *p.limit_seconds;
  json["first_line"] = p.first_line;
  json["artifacts"] = p.artifacts;
  return json;
}

Json GateReplayToJson(const std::optional<GateReplay>& r) {
  if (!r) return nullptr;
  return {{"result", r->result}, {"exit_code", r->exit_code}, {"seconds", r->seconds}};
}

Json GateToJson(const PlantedGate& gate) {
  Json json = {{"passed", gate.Passed()},
               {"planted_in_environment", gate.planted_in_environment.empty() ? Json(nullptr)
                                                                             : Json(gate.planted_in_environment)},
               {"problems", gate.problems},
               {"bugs", Json::array()}};
  for (const auto& c : gate.checks) {
    json["bugs"].push_back({{"bug", c.bug},
                            {"target", c.target},
                            {"reproducer", c.reproducer},
                            {"passed", c.passed()},
                            {"problem", c.problem},
                            {"with_bug", GateReplayToJson(c.with_bug)},
                            {"without_bug", GateReplayToJson(c.without_bug)}});
  }
  return json;
}

Json CountsToJson(const CoverageCounts& c) {
  return {{"lines", c.lines},         {"lines_covered", c.lines_covered},
          {"branches", c.branches},   {"branches_covered", c.branches_covered},
          {"functions", c.functions}, {"functions_covered", c.functions_covered}};
}

Json SourceCoverageToJson(const SourceCoverage& coverage) {
  Json json = {{"total", CountsToJson(coverage.total)}, {"html", coverage.html}};
  json["areas"] = Json::array();
  for (const auto& area : coverage.areas) {
    json["areas"].push_back({{"area", area.area}, {"rooms", area.rooms}, {"counts", CountsToJson(area.counts)}});
  }
  json["files"] = Json::array();
  for (const auto& file : coverage.files) {
    json["files"].push_back({{"path", file.path}, {"area", file.area}, {"counts", CountsToJson(file.counts)}});
  }
  return json;
}

Json KernelCoverageToJson(const KernelCoverage& coverage) {
  Json json = {{"tree", coverage.tree.string()}, {"html", coverage.html}};
  json["files"] = Json::array();
  for (const auto& file : coverage.files) {
    Json never_run = Json::array();
    for (const auto& f : file.never_run) {
      const Json reason = f.reason.empty() ? Json(nullptr) : Json(f.reason);  // null: none recorded
      never_run.push_back({{"name", f.name}, {"line", f.line}, {"reason", reason}});
    }
    Json uncovered = Json::array();
    for (const auto& stretch : file.uncovered) {
      uncovered.push_back({{"function", stretch.function},
                           {"first_line", stretch.first_line},
                           {"last_line", stretch.last_line},
                           {"lines", stretch.lines},
                           {"text", stretch.text},
                           {"reason", stretch.reason.empty() ? Json(nullptr) : Json(stretch.reason)}});
    }
    Json entry = {{"path", file.path},
                  {"counts", CountsToJson(file.counts)},
                  {"never_run", never_run},
                  {"uncovered_lines", uncovered},
                  {"uncovered_lines_explained", file.UncoveredLinesExplained()}};
    if (!file.source_error.empty()) entry["source_error"] = file.source_error;
    json["files"].push_back(std::move(entry));
  }
  json["reasons_not_needed"] = coverage.reasons_not_needed;
  return json;
}

}  // namespace

std::string JsonReport(const ReportModel& model) {
  Json json;
  json["format"] = "bpfdiff-report-1";
  json["timestamp"] = model.timestamp;
  json["passed"] = model.Passed();
  json["headline"] = HistoryEntryToJson(model.Headline());
  json["conformance"] = ConformanceToJson(model.conformance);
  json["upstream_suite"] = model.upstream_suite ? Json(*model.upstream_suite) : Json(nullptr);
  json["kernel_coverage"] = model.kernel_coverage ? KernelCoverageToJson(*model.kernel_coverage) : Json(nullptr);
  json["test_bpf"] = model.test_bpf ? TestBpfToJson(*model.test_bpf) : Json(nullptr);
  json["kernel_trees"] = Json::array();
  for (size_t t = 0; t < model.kernel_trees.size(); ++t) {
    const KernelTreeRun& tree = model.kernel_trees[t];
    const TreeFuzzing fuzzing = FuzzingOfTree(TreeVersion(tree.tree), t == 0, model.fuzz);
    Json known_docs = Json::array();
    for (const KnownFindingDoc& doc : tree.known_docs) {
      known_docs.push_back({{"name", doc.name},
                            {"title", doc.title},
                            {"reproducer", doc.reproducer},
                            {"on_this_tree", tree.KnownStatus(doc.name)},
                            {"commits", doc.commits}});
    }
    Json known_met = Json::object();
    for (const auto& [name, count] : fuzzing.known) known_met[name] = count;
    json["kernel_trees"].push_back({{"tree", tree.tree},
                                    {"passed", tree.Passed()},
                                    {"conformance", ConformanceToJson(tree.conformance)},
                                    {"test_bpf", tree.test_bpf ? TestBpfToJson(*tree.test_bpf) : Json(nullptr)},
                                    {"known_findings", tree.known_findings},
                                    {"known_findings_documented", known_docs},
                                    {"fuzzing", {{"compared", fuzzing.compared},
                                                 {"known_findings_met", known_met},
                                                 {"findings", fuzzing.findings}}}});
  }
  json["source_coverage"] = model.source_coverage ? SourceCoverageToJson(*model.source_coverage) : Json(nullptr);
  json["fuzz"] = Json::array();
  for (const auto& target : model.fuzz) json["fuzz"].push_back(FuzzToJson(target));
  json["findings_by_kind"] = Json::array();
  for (const auto& group : model.FindingsByKind()) {
    json["findings_by_kind"].push_back({{"kind", group.kind}, {"targets", group.targets}});
  }
  json["planted_gate"] = model.planted_gate ? GateToJson(*model.planted_gate) : Json(nullptr);
  json["planted"] = Json::array();
  for (const auto& p : model.planted) json["planted"].push_back(PlantedToJson(p));
  json["planted_regressions"] = Json::array();
  for (const auto& r : PlantedRegressions(model)) {
    json["planted_regressions"].push_back({{"bug", r.bug.empty() ? Json(nullptr) : Json(r.bug)}, {"what", r.what}});
  }
  json["history"] = Json::array();
  for (const auto& entry : model.history) json["history"].push_back(HistoryEntryToJson(entry));
  json["notes"] = model.notes;
  return DumpJson(json);
}

}  // namespace bpfdiff::report
