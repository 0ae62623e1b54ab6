#include "harness/test_bpf/runner.h"

#include <algorithm>
#include <cstring>
#include <regex>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include "harness/diff/differential.h"
#include "harness/diff/localize.h"
#include "harness/test_bpf/tail_call_suite.h"
#include "isa/disassembler.h"
#include "kernelsrc/kernel_jit.h"

namespace bpfdiff {
namespace {

using kernelsrc::TestBpfCase;
using kernelsrc::TestBpfFile;
using kernelsrc::TestBpfSuite;

// What one engine made of one case over its sub-tests.
struct CaseOnEngine {
  int errors = 0;           // run_one()'s err_cnt
  bool jited = true;        // the JIT compiled it (fp->jited)
  bool diverged = false;
  bool not_comparable = false;
  // The engine does not run the case at all: the kernel's interpreter,
  // for what only the verifier would stop (a division by the constant 0,
  // a shift past the width), which test_bpf.ko loads without it. On
  // arm64 the kernel's interpreter would run it; on this host its C would
  // trap or be undefined. Counted neither way, as "FAIL to prog_fill".
  bool left_out = false;
  // The first failure of test_bpf's own verdict, else bpfdiff's first
  // divergence.
  std::string reason;
  bool reason_is_error = false;
  std::string culprit;      // of its first divergence, when it was the run's first

  // A failure of test_bpf's own verdict.
  void Error(std::string why) {
    ++errors;
    if (!reason_is_error) {
      reason = std::move(why);
      reason_is_error = true;
    }
  }
  // A divergence from the interpreter.
  void Note(std::string why) {
    if (reason.empty()) reason = std::move(why);
  }
};

bool IsJit(std::string_view engine) {
  const EngineSpec* spec = FindEngine(engine);
  return spec != nullptr && spec->kind == EngineKind::kJit;
}

// run_one()'s judgement of one run: the program's u32 return value
// against the sub-test's result.
std::optional<std::string> KernelVerdict(const Outcome& outcome, uint32_t expected) {
  if (outcome.end != EndKind::kExit) return fmt::format("did not return: {}", outcome.Summary());
  const uint32_t ret = static_cast<uint32_t>(outcome.r0);
  if (ret == expected) return std::nullopt;
  return fmt::format("ret {} != {} ({:#x} != {:#x})", static_cast<int32_t>(ret), static_cast<int32_t>(expected), ret,
                     expected);
}

// The first divergence of `run` localized (harness/diff/localize.h): the
// engine it is in and its culprit, the first instruction after which that
// engine and the interpreter part, as one line.
std::pair<std::string, std::string> CulpritOf(DifferentialRunner& runner, const CaseRun& run) {
  const Localization localization = LocalizeFirstDivergence(runner, run, RunOptions{});
  if (!localization.culprit) return {localization.engine, fmt::format("no culprit: {}", localization.why_not)};
  const Culprit& culprit = *localization.culprit;
  if (culprit.prologue) return {localization.engine, "culprit: the prologue"};
  const auto& insns = run.loaded->programs.at(culprit.program).program.insns;
  const isa::Insn* next = culprit.slot + 1 < insns.size() ? &insns[culprit.slot + 1] : nullptr;
  return {localization.engine,
          fmt::format("culprit: {}slot {}, {}", culprit.program == 0 ? "" : fmt::format("program {} ", culprit.program),
                      culprit.source_slot, isa::DisassembleInsn(insns.at(culprit.slot), next))};
}

// One sub-test's run on every engine, folded into each engine's account;
// the first divergence gets its culprit.
void Judge(DifferentialRunner& runner, const CaseRun& run, uint32_t expected, int sub,
           std::vector<CaseOnEngine>& on) {
  const std::optional<Outcome>& interpreted = run.runs.front().outcome;
  std::pair<std::string, std::string> culprit;  // engine, its culprit
  if (run.FirstDivergence() != nullptr) culprit = CulpritOf(runner, run);
  for (size_t k = 0; k < run.runs.size(); ++k) {
    const EngineRun& engine_run = run.runs[k];
    CaseOnEngine& state = on[k];
    const Outcome* outcome = engine_run.outcome ? &*engine_run.outcome : nullptr;
    if (outcome == nullptr && !engine_run.prepare_error.empty()) {
      // bpf_prog_select_runtime() falls back to the interpreter when the
      // JIT gives up (CONFIG_BPF_JIT_ALWAYS_ON is off in test builds):
      // the case runs, and counts as not JIT'ed.
      state.jited = false;
      outcome = interpreted ? &*interpreted : nullptr;
    }
    auto where = [sub](std::string why) { return sub > 0 ? fmt::format("sub-test {}: {}", sub, why) : why; };
    if (outcome == nullptr && engine_run.verifier_refused && !IsJit(engine_run.engine)) {
      state.left_out = true;
      state.Note(where(engine_run.verdict.detail));
      continue;
    }
    if (outcome == nullptr) {
      state.Error(where(engine_run.WhyNotRun()));
      continue;
    }
    if (auto problem = KernelVerdict(*outcome, expected)) state.Error(where(*problem));
    if (!engine_run.outcome) continue;  // interpreted: nothing of the JIT's to compare
    switch (engine_run.verdict.kind) {
      case Verdict::Kind::kMatch:
        break;
      case Verdict::Kind::kDivergence:
        state.diverged = true;
        state.Note(where(engine_run.verdict.Describe()));
        if (engine_run.engine == culprit.first && state.culprit.empty()) state.culprit = where(culprit.second);
        break;
      case Verdict::Kind::kNotComparable:
        state.not_comparable = true;
        break;
    }
  }
}

// The reason a case is not run by bpfdiff, if it is not.
std::optional<std::string> LeftOut(const TestBpfCase& test) {
  if (test.classic) {
    return "classic BPF: its converter (net/core/filter.c, bpf_prog_create) is not compiled";
  }
  return std::nullopt;
}

// One run of a tail-call test on every engine: what the run alone says
// (the JIT gave up, the outcome differs from the interpreter's).
void JudgeRun(DifferentialRunner& runner, const CaseRun& run, std::vector<CaseOnEngine>& on) {
  std::pair<std::string, std::string> culprit;  // engine, its culprit
  if (run.FirstDivergence() != nullptr) culprit = CulpritOf(runner, run);
  for (size_t k = 0; k < run.runs.size(); ++k) {
    const EngineRun& engine_run = run.runs[k];
    CaseOnEngine& state = on[k];
    if (!engine_run.outcome) {
      if (!engine_run.prepare_error.empty()) state.jited = false;
      continue;
    }
    if (engine_run.verdict.kind == Verdict::Kind::kDivergence && !state.diverged) {
      state.diverged = true;
      state.Note(engine_run.verdict.Describe());
      if (engine_run.engine == culprit.first) state.culprit = culprit.second;
    } else if (engine_run.verdict.kind == Verdict::Kind::kNotComparable) {
      state.not_comparable = true;
    }
  }
}

class Suites {
 public:
  Suites(const TestBpfOptions& options, const TestBpfFile& file, DifferentialRunner& runner,
         std::vector<std::string> engines, std::ostream& out)
      : options_(options), file_(file), runner_(runner), engines_(std::move(engines)), out_(out) {}

  Status RunCases(TestBpfSummary& summary, const std::optional<std::regex>& filter) {
    auto range = file_.Select(TestBpfSuite::kCases, options_.selection);
    if (!range) return range.error();
    summary.cases = Tallies();
    for (int i = range->first; i <= range->second; ++i) {
      const TestBpfCase test = file_.Case(i);
      if (filter && !std::regex_search(test.name, *filter)) continue;
      if (auto reason = LeftOut(test)) {
        ++summary.left_out[*reason];
        continue;
      }
      auto program = file_.Program(i);
      if (!program) {
        // test_bpf(): "FAIL to prog_fill", counted neither way.
        ++summary.left_out[fmt::format("its fill helper failed: {}", program.message())];
        continue;
      }
      std::vector<CaseOnEngine> on(engines_.size());
      bool ran = true;
      for (size_t sub = 0; sub < test.subtests.size(); ++sub) {
        auto context = file_.Context(i, static_cast<int>(sub));
        if (!context) {
          // run_one(): "data generation failed", and no further sub-test.
          for (auto& state : on) state.Error(context.message());
          break;
        }
        CaseSource source;
        source.programs = {program->insns};
        source.stack_depths = {program->stack_depth};  // fp->aux->stack_depth
        source.memory = std::move(context).value();
        source.options.null_context = test.no_data;  // generate_test_data(): NULL
        const CaseRun run = runner_.Run(source);
        if (run.load_error) {
          ++summary.left_out[fmt::format("bpfdiff's load step refuses it: {}", WithoutPlace(*run.load_error))];
          if (options_.every_case) fmt::print(out_, "#{} {}: left out: {}\n", i, test.name, *run.load_error);
          ran = false;
          break;
        }
        Judge(runner_, run, test.subtests[sub].result, static_cast<int>(sub), on);
      }
      if (!ran) continue;
      Record("test_bpf", i, test.name, on, summary.cases, summary.failures);
    }
    PrintTallies("test_bpf", summary.cases);
    return {};
  }

  // test_tail_calls(): every test is an entry of one program array, its
  // markers relocated as prepare_tail_call_tests() does, and runs
  // MAX_TESTRUNS times, which matters only where the context carries a
  // count from run to run (FLAG_NEED_STATE).
  Status RunTailCalls(TestBpfSummary& summary, const std::optional<std::regex>& filter) {
    auto range = file_.Select(TestBpfSuite::kTailCalls, options_.selection);
    if (!range) return range.error();
    summary.tail_calls = Tallies();
    const int count = file_.Count(TestBpfSuite::kTailCalls);
    std::vector<kernelsrc::TestBpfTailCall> tests;
    for (int j = 0; j < count; ++j) tests.push_back(file_.TailCall(j));
    const TailCallSuite suite(tests, file_.Markers());
    const int max_testruns = file_.Markers().max_testruns;

    for (int i = range->first; i <= range->second; ++i) {
      const kernelsrc::TestBpfTailCall& test = tests[i];
      if (filter && !std::regex_search(test.name, *filter)) continue;
      if (!suite.Relocated(i)) {
        ++summary.left_out[fmt::format("tail-call test: {}", suite.Relocated(i).message())];
        continue;
      }
      CaseSource source = suite.CaseOf(i, test.needs_state);
      const int runs = test.result_in_state ? max_testruns : 1;
      std::vector<CaseOnEngine> on(engines_.size());
      std::optional<CaseRun> run;
      for (int r = 0; r < runs; ++r) {
        run = runner_.Run(source);
        if (run->load_error) break;
        if (!run->runs.front().outcome) break;
        JudgeRun(runner_, *run, on);
        // The count goes on from the interpreter's: an engine that agreed
        // on every run holds the same.
        source.memory = run->runs.front().outcome->memory.context;
      }
      if (run->load_error) {
        ++summary.left_out[fmt::format("bpfdiff's load step refuses it: {}", WithoutPlace(*run->load_error))];
        continue;
      }
      const std::optional<Outcome>& interpreted = run->runs.front().outcome;
      for (size_t k = 0; k < run->runs.size(); ++k) {
        if (!interpreted) {
          on[k].Error(run->runs.front().WhyNotRun());
          continue;
        }
        // An engine whose JIT gave up ran interpreted (as above).
        const EngineRun& engine_run = run->runs[k];
        const Outcome& outcome = engine_run.outcome ? *engine_run.outcome : *interpreted;
        int32_t ret = static_cast<int32_t>(outcome.r0);
        if (test.result_in_state && outcome.memory.context.size() >= sizeof(ret)) {
          std::memcpy(&ret, outcome.memory.context.data(), sizeof(ret));
        }
        if (outcome.end != EndKind::kExit) {
          on[k].Error(fmt::format("did not return: {}", outcome.Summary()));
        } else if (ret != test.result) {
          on[k].Error(fmt::format("ret {} != {}", ret, test.result));
        }
      }
      Record("test_tail_calls", i, test.name, on, summary.tail_calls, summary.failures);
    }
    PrintTallies("test_tail_calls", summary.tail_calls);
    return {};
  }

 private:
  // A load error without the instruction it names, so that a summary
  // counts the cases one rule refuses together.
  static std::string WithoutPlace(const std::string& message) {
    static const std::regex place(R"(instruction \d+ \([^)]*\): )");
    return std::regex_replace(message, place, "");
  }

  std::vector<TestBpfTally> Tallies() const {
    std::vector<TestBpfTally> tallies;
    for (const auto& engine : engines_) tallies.push_back({.engine = engine});
    return tallies;
  }

  void Record(std::string_view suite, int index, const std::string& name, const std::vector<CaseOnEngine>& on,
              std::vector<TestBpfTally>& tallies, std::vector<TestBpfFailure>& failures) {
    for (size_t k = 0; k < on.size(); ++k) {
      const CaseOnEngine& state = on[k];
      TestBpfTally& tally = tallies[k];
      const bool jited = IsJit(engines_[k]) && state.jited;
      if (state.left_out) {
        ++tally.not_run;
        if (options_.every_case) {
          fmt::print(out_, "{}: #{} {} not run: {}\n", engines_[k], index, name, state.reason);
        }
        continue;
      }
      ++tally.run;
      if (jited) ++tally.jited;
      if (state.errors == 0) {
        ++tally.passed;
      } else {
        ++tally.failed;
      }
      if (state.diverged) {
        ++tally.diverged;
      } else if (state.not_comparable) {
        ++tally.not_comparable;
      } else {
        ++tally.agreed;
      }
      const bool failed = state.errors != 0 || state.diverged;
      const std::string reason =
          state.culprit.empty() ? state.reason : fmt::format("{} ({})", state.reason, state.culprit);
      if (options_.every_case) {
        fmt::print(out_, "{}: #{} {} jited:{} {}\n", engines_[k], index, name, jited ? 1 : 0,
                   failed ? fmt::format("FAIL: {}", reason) : std::string("PASS"));
      }
      if (failed) {
        failures.push_back({std::string(suite), index, name, engines_[k], reason, state.errors != 0});
        if (!options_.every_case) {
          fmt::print(out_, "{}: {}: #{} {}: {}{}\n", engines_[k], suite, index, name,
                     state.errors != 0 ? "FAIL " : "diverges from the interpreter: ", reason);
        }
      }
    }
  }

  void PrintTallies(std::string_view suite, const std::vector<TestBpfTally>& tallies) {
    // The module's own lines (test_tail_calls names its function).
    const std::string prefix = suite == "test_bpf" ? "test_bpf" : fmt::format("test_bpf: {}", suite);
    for (const TestBpfTally& t : tallies) {
      fmt::print(out_, "{}: {}: Summary: {} PASSED, {} FAILED, [{}/{} JIT'ed]\n", t.engine, prefix, t.passed,
                 t.failed, t.jited, t.run);
    }
    for (const TestBpfTally& t : tallies) {
      if (t.engine == engines_.front()) continue;  // the reference
      fmt::print(out_, "{}: bpfdiff: {}: {} agree with the interpreter, {} diverge, {} not comparable{}\n", t.engine,
                 suite, t.agreed, t.diverged, t.not_comparable,
                 t.not_run == 0 ? "" : fmt::format(", {} not run (what only the kernel's verifier stops)", t.not_run));
    }
  }

  const TestBpfOptions& options_;
  const TestBpfFile& file_;
  DifferentialRunner& runner_;
  std::vector<std::string> engines_;
  std::ostream& out_;
};

// The one tree whose kernel engines `names` are (nullptr: the build's own,
// also for none); an error when they are of several: each tree has its own
// lib/test_bpf.c.
Result<const kernelsrc::KernelTree*> TreeOfEngines(const std::vector<std::string>& names) {
  const kernelsrc::KernelTree* tree = nullptr;
  bool any = false;
  for (const std::string& name : names) {
    const EngineSpec* spec = FindEngine(name);
    if (spec == nullptr || spec->source != JitSource::kKernel) continue;
    if (any && spec->tree != tree) {
      return Fail("test-bpf runs one tree's lib/test_bpf.c, and the engines chosen are of several trees ({}): "
                  "name one (kernel, kernel@<version>)",
                  fmt::join(names, ", "));
    }
    tree = spec->tree;
    any = true;
  }
  return tree;
}

}  // namespace

Result<TestBpfSummary> RunTestBpf(const TestBpfOptions& options, std::ostream& out) {
  std::optional<std::regex> filter;
  try {
    if (options.filter) filter.emplace(*options.filter);
  } catch (const std::regex_error& e) {
    return Fail("bad regular expression {}: {}", *options.filter, e.what());
  }
  SandboxOptions sandbox_options;
  sandbox_options.keep_unchanged_translations = true;  // a slot is freed and reloaded per case
  sandbox_options.machine_factory = options.machine_factory;
  sandbox_options.pack_bugs = options.bugs.pack;
  auto sandbox = Sandbox::Create(sandbox_options);
  if (!sandbox) return sandbox.error();
  auto engines = MakeEngines(**sandbox, options.engine, options.bugs.jit);
  if (!engines) return engines.error();
  std::vector<std::string> names;
  for (const auto& engine : *engines) names.emplace_back(engine->name());
  if (names.front() != "interp") {
    return Fail("test-bpf compares every engine with the interpreter: the engine choice {} must include interp",
                options.engine);
  }
  // The file of the engines' tree.
  auto tree = TreeOfEngines(names);
  if (!tree) return tree.error();
  Result<TestBpfFile> file = options.file != nullptr ? *options.file
                             : *tree != nullptr       ? TestBpfFile::Open((*tree)->version)
                                                      : TestBpfFile::Open();
  if (!file) return file.error();
  DifferentialRunner runner(**sandbox, std::move(engines).value());
  Suites suites(options, *file, runner, names, out);

  TestBpfSummary summary;
  if (const kernelsrc::KernelTree* of = kernelsrc::TreeOrBuilt(*tree)) {
    summary.tree = of->version.empty() ? of->path : of->version;
  }
  if (!options.suite || *options.suite == TestBpfSuite::kCases) {
    if (auto status = suites.RunCases(summary, filter); !status) return status.error();
  }
  if (!options.suite || *options.suite == TestBpfSuite::kTailCalls) {
    if (auto status = suites.RunTailCalls(summary, filter); !status) return status.error();
  }
  if (auto failure = (*sandbox)->UnicornFailure()) return Fail("could not run: {}", *failure);
  for (const auto& [reason, count] : summary.left_out) fmt::print(out, "left out: {} cases: {}\n", count, reason);
  return summary;
}

}  // namespace bpfdiff
