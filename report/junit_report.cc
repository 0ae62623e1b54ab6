// JUnit XML as CI dashboards read it (the Jenkins/Ant schema): a testsuite
// per engine with a testcase per test; not-comparable runs pass and say why
// in <system-out>; a testsuite for the planted-bug gate, one for the
// bug-finding benchmark (time = time to detect) and one per fuzz target.
#include <fmt/format.h>

#include "report/markup_escape.h"
#include "report/planted_trend.h"
#include "report/report_writers.h"

namespace bpfdiff::report {
namespace {

struct Case {
  std::string name;
  double seconds = 0;
  enum class Kind : uint8_t { kPass, kFailure, kSkipped } kind = Kind::kPass;
  std::string message;  // failure or skip message
  std::string output;   // <system-out>
};

struct Suite {
  std::string name;
  std::vector<Case> cases;
};

void AppendSuite(std::string& out, const Suite& suite) {
  int failures = 0, skipped = 0;
  double seconds = 0;
  for (const auto& c : suite.cases) {
    failures += c.kind == Case::Kind::kFailure;
    skipped += c.kind == Case::Kind::kSkipped;
    seconds += c.seconds;
  }
  const std::string name = EscapeMarkup(suite.name);
  fmt::format_to(std::back_inserter(out),
                 "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{:.3f}\">\n",
                 name, suite.cases.size(), failures, skipped, seconds);
  for (const auto& c : suite.cases) {
    fmt::format_to(std::back_inserter(out), "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\"", name,
                   EscapeMarkup(c.name), c.seconds);
    if (c.kind == Case::Kind::kPass && c.output.empty()) {
      out += "/>\n";
      continue;
    }
    out += ">\n";
    const std::string message = EscapeMarkup(OneLine(c.message, 200));
    if (c.kind == Case::Kind::kFailure) {
      fmt::format_to(std::back_inserter(out), "      <failure message=\"{}\">{}</failure>\n", message,
                     EscapeMarkup(c.message));
    } else if (c.kind == Case::Kind::kSkipped) {
      fmt::format_to(std::back_inserter(out), "      <skipped message=\"{}\"/>\n", message);
    }
    if (!c.output.empty()) {
      fmt::format_to(std::back_inserter(out), "      <system-out>{}</system-out>\n", EscapeMarkup(c.output));
    }
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n";
}

std::vector<Suite> ConformanceSuites(const ConformanceSummary& summary) {
  std::vector<Suite> suites;
  for (const auto& engine : summary.engines) suites.push_back({fmt::format("conformance.{}", engine), {}});
  for (const auto& test : summary.results) {
    for (size_t i = 0; i < test.engines.size() && i < suites.size(); ++i) {
      const EngineResult& e = test.engines[i];
      Case c;
      c.name = test.name;
      switch (e.status) {
        case TestStatus::kPass: break;
        case TestStatus::kFail: c.kind = Case::Kind::kFailure; c.message = e.reason; break;
        case TestStatus::kSkip: c.kind = Case::Kind::kSkipped; c.message = e.reason; break;
        case TestStatus::kNotComparable: c.output = fmt::format("not comparable: {}", e.reason); break;
      }
      suites[i].cases.push_back(std::move(c));
    }
  }
  return suites;
}

// The gate: a testcase per planted bug, failed when its reproducer was not
// caught with the bug or not clean without it.
Suite GateSuite(const PlantedGate& gate) {
  Suite suite{"planted-gate", {}};
  for (const auto& check : gate.checks) {
    Case c;
    c.name = fmt::format("{} ({})", check.bug, check.target);
    if (check.with_bug) c.seconds += check.with_bug->seconds;
    if (check.without_bug) c.seconds += check.without_bug->seconds;
    if (!check.passed()) {
      c.kind = Case::Kind::kFailure;
      c.message = fmt::format("planted bug {}: {}", check.bug, check.problem);
    }
    suite.cases.push_back(std::move(c));
  }
  for (const auto& problem : gate.problems) {
    suite.cases.push_back({"reproducers", 0, Case::Kind::kFailure, problem, ""});
  }
  return suite;
}

// The benchmark (time = time to detect from the seeds): a bug not detected
// within the limit passes and says so; a regression against the history
// fails its bug (or, for the count from an empty corpus, a case of its own).
Suite BenchmarkSuite(const ReportModel& model) {
  Suite suite{"planted-benchmark", {}};
  const std::vector<PlantedRegression> regressions = PlantedRegressions(model);
  for (const auto& p : model.planted) {
    Case c;
    c.name = fmt::format("{} ({})", p.bug, p.target);
    c.seconds = p.from_seeds ? p.from_seeds->seconds : 0;
    if (p.from_seeds && !p.from_seeds->detected) {
      c.output = fmt::format("not detected from the seeds within {:.0f} s ({}){}", p.limit_seconds.value_or(c.seconds),
                             SeedsMissNote(p, model.history),
                             p.artifacts.empty() ? "" : fmt::format("; logs in {}", p.artifacts));
    }
    for (const auto& r : regressions) {
      if (r.bug != p.bug) continue;
      c.kind = Case::Kind::kFailure;
      c.message = fmt::format("regression: {}", r.what);
    }
    suite.cases.push_back(std::move(c));
  }
  for (const auto& r : regressions) {
    if (r.bug.empty()) {
      suite.cases.push_back({"from an empty corpus", 0, Case::Kind::kFailure, "regression: " + r.what, ""});
    }
  }
  return suite;
}

Suite FuzzSuite(const FuzzTarget& target) {
  Case c;
  c.name = "campaign";
  if (target.run) c.seconds = target.run->seconds;
  if (target.stats) {
    c.output = fmt::format("{} inputs in {:.1f} s", target.stats->inputs, target.stats->seconds);
    for (const auto& [name, count] : target.stats->counters) c.output += fmt::format(", {} {}", name, count);
    if (const std::string states = StatesSummary(*target.stats); !states.empty()) c.output += "; " + states;
  } else {
    c.output = "no stats (the target wrote none)";
  }
  if (target.failed()) {
    c.kind = Case::Kind::kFailure;
    c.message = fmt::format("{} ended with a {} (exit {}); artifacts in {}", target.target, target.run->result,
                            target.run->exit_code, target.run->artifacts);
  }
  return {fmt::format("fuzz.{}", target.target), {std::move(c)}};
}

}  // namespace

std::string JunitReport(const ReportModel& model) {
  std::vector<Suite> suites = ConformanceSuites(model.conformance);
  if (model.planted_gate) suites.push_back(GateSuite(*model.planted_gate));
  if (!model.planted.empty()) suites.push_back(BenchmarkSuite(model));
  for (const auto& target : model.fuzz) suites.push_back(FuzzSuite(target));

  size_t tests = 0, failures = 0, skipped = 0;
  for (const auto& suite : suites) {
    for (const auto& c : suite.cases) {
      ++tests;
      failures += c.kind == Case::Kind::kFailure;
      skipped += c.kind == Case::Kind::kSkipped;
    }
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  fmt::format_to(std::back_inserter(out),
                 "<testsuites name=\"bpfdiff\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" "
                 "timestamp=\"{}\">\n",
                 tests, failures, skipped, EscapeMarkup(model.timestamp));
  for (const auto& suite : suites) AppendSuite(out, suite);
  out += "</testsuites>\n";
  return out;
}

}  // namespace bpfdiff::report
