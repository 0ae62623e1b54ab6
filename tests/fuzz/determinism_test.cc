// Determinism (issue 17, item 4): what bpfdiff says about an input depends
// on the input alone.
//
//  - The shipped corpora run in two orders in one process, and again in a
//    shuffled order on a fresh harness: every input gives the same verdict
//    and the same text, byte for byte (`bpfdiff replay`'s report with the
//    arm64 listing of a divergence; diff_fuzzer's account of the input with
//    its input variants; pack scripts' traces; recursion schedules'
//    timelines under every policy with the fuzz target's program cache).
//  - Two `bpfdiff replay` processes print the same bytes, and the same as
//    the replays in this process.
//
// A planted bug makes diverging findings (and so listings) of most seeds.
// What leaked before: the pack's hole generator (jit/prog_pack.h) ran on
// across cases, so a replayed finding's images, and its listing, moved
// with every case run before it (harness/diff/differential.h now restores
// its state at the start of every case).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/replay_artifact.h"
#include "fuzz/diff/diff_harness.h"
#include "fuzz/pack/pack_script.h"
#include "harness/recursion/runner.h"
#include "harness/recursion/schedule_generator.h"
#include "harness/recursion/timeline.h"
#include "support/files.h"
#include "tests/cli/process.h"

namespace bpfdiff {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(BPFDIFF_SOURCE_DIR) / "fuzz" / "corpus";
constexpr const char* kPlantedBug = "alu32-add-no-zext";  // a divergence in most seeds

std::vector<std::string> CorpusFiles(const std::string& target) {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(kCorpus / target)) files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

// The orders: as listed, reversed, and shuffled with a fixed seed.
std::vector<std::vector<std::string>> Orders(const std::vector<std::string>& files) {
  std::vector<std::string> reversed(files.rbegin(), files.rend());
  std::vector<std::string> shuffled = files;
  std::mt19937 rng(17);
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  return {files, reversed, shuffled};
}

using Texts = std::map<std::string, std::string>;  // input -> what was said about it

// Runs `files` in each order through `run_one`; the process state carries
// over from order to order unless `fresh_state` makes new state. Every
// order must say the same about every input as the first.
template <typename MakeState, typename RunOne>
void ExpectOrderIndependent(const std::vector<std::string>& files, MakeState make_state, RunOne run_one) {
  auto state = make_state();
  std::optional<Texts> first;
  int order_index = 0;
  for (const auto& order : Orders(files)) {
    if (order_index == 2) state = make_state();  // the shuffled order on fresh state
    Texts texts;
    for (const auto& file : order) texts[file] = run_one(*state, file);
    if (!first) {
      first = std::move(texts);
    } else {
      for (const auto& file : files) {
        EXPECT_EQ(texts[file], (*first)[file]) << "order " << order_index << ": " << file;
      }
    }
    ++order_index;
  }
}

PlantedBugs Bugs(const char* name) {
  auto bugs = PlantedBugsNamed(name);
  EXPECT_TRUE(bugs.ok());
  return bugs ? *bugs : PlantedBugs{};
}

std::unique_ptr<fuzz::DiffHarness> MakeHarness(const PlantedBugs& bugs) {
  auto harness = fuzz::DiffHarness::Create(bugs);
  EXPECT_TRUE(harness.ok()) << harness.message();
  return harness ? std::move(harness).value() : nullptr;
}

std::string ReplayText(fuzz::DiffHarness& harness, const A64Disassembler& disassembler,
                       const std::string& file) {
  const cli::ReplayReport report = cli::ReplayArtifact(harness, disassembler, file);
  return fmt::format("status {}\n{}{}", report.status, report.out, report.err);
}

class Determinism : public testing::TestWithParam<const char*> {};

TEST_P(Determinism, ReplayOfTheDiffCorpusInAnyOrder) {
  const PlantedBugs bugs = Bugs(GetParam());
  auto disassembler = A64Disassembler::Create();
  ASSERT_TRUE(disassembler.ok()) << disassembler.message();
  const auto files = CorpusFiles("diff_fuzzer");
  ASSERT_GT(files.size(), 10u);
  size_t listings = 0;
  ExpectOrderIndependent(
      files, [&] { return MakeHarness(bugs); },
      [&](fuzz::DiffHarness& harness, const std::string& file) {
        std::string text = ReplayText(harness, *disassembler, file);
        if (text.find("arm64 code (") != std::string::npos) ++listings;
        return text;
      });
  if (*GetParam() != '\0') {
    EXPECT_GT(listings, 0u) << "the planted bug made no finding: nothing listed";
  }
}

TEST_P(Determinism, DiffFuzzerVerdictsInAnyOrder) {
  // What diff_fuzzer computes for an input: the runs on four more input
  // memories included, and the account it prints of a divergence.
  const PlantedBugs bugs = Bugs(GetParam());
  ExpectOrderIndependent(
      CorpusFiles("diff_fuzzer"), [&] { return MakeHarness(bugs); },
      [](fuzz::DiffHarness& harness, const std::string& file) {
        auto bytes = ReadBinaryFile(file);
        if (!bytes) return bytes.message();
        const auto input = harness.RunInput(*bytes, /*variants=*/4);
        if (!input.source) return std::string("not an input");
        if (input.run.load_error) return "rejected: " + *input.run.load_error;
        std::string text = fuzz::DescribeDivergence(*input.source, input.run);
        for (const auto& reason : input.run.NotComparableReasons()) text += "not comparable: " + reason + "\n";
        return text;
      });
}

INSTANTIATE_TEST_SUITE_P(Bugs, Determinism, testing::Values("", kPlantedBug),
                         [](const testing::TestParamInfo<const char*>& param) {
                           return *param.param == '\0' ? std::string("unmutated") : std::string("planted");
                         });

TEST(Determinism, PackScriptsInAnyOrder) {
  struct NoState {};
  ExpectOrderIndependent(
      CorpusFiles("pack_fuzzer"), [] { return std::make_unique<NoState>(); },
      [](NoState&, const std::string& file) {
        auto bytes = ReadBinaryFile(file);
        if (!bytes) return bytes.message();
        fuzz::PackScriptOptions options;
        options.trace = true;
        auto result = fuzz::RunPackScript(*bytes, options);
        if (!result) return result.message();
        std::string text = fmt::format("{} cpus, {} operations, {} loads, {} frees, {} compared, {} not comparable\n",
                                       result->cpus, result->operations, result->loads, result->frees,
                                       result->calls_compared, result->calls_not_comparable);
        for (const auto& line : result->trace) text += line + "\n";
        for (const auto& violation : result->violations) text += violation.Describe() + "\n";
        return text;
      });
}

// As recursion_fuzzer runs an input: one sandbox of two CPUs and a program
// cache kept across inputs (its code moves with what ran before: the
// verdicts and the timelines must not).
struct RecursionState {
  std::unique_ptr<Sandbox> sandbox;
  std::unique_ptr<recursion::ProgramCache> cache;
};

std::unique_ptr<RecursionState> MakeRecursionState() {
  auto state = std::make_unique<RecursionState>();
  auto sandbox = Sandbox::Create({.cpus = 2, .fast_machine = false});
  EXPECT_TRUE(sandbox.ok()) << sandbox.message();
  state->sandbox = std::move(sandbox).value();
  state->cache = std::make_unique<recursion::ProgramCache>(*state->sandbox, 512);
  return state;
}

std::string RunRecursionInput(RecursionState& state, const std::string& file) {
  using namespace recursion;
  auto bytes = ReadBinaryFile(file);
  if (!bytes) return bytes.message();
  // The target's decoding: a schedule text as written, other bytes through
  // the generator (the first byte picks the lowering).
  jit::AtomicLowering lowering = jit::AtomicLowering::kLse;
  std::optional<Schedule> schedule;
  const std::string text(bytes->begin(), bytes->end());
  if (!text.empty() && (text[0] == '#' || text[0] == 'c' || text[0] == 'p')) {
    if (auto parsed = ParseSchedule(text); parsed && parsed->cpus <= 2) schedule = std::move(parsed).value();
  }
  if (!schedule) {
    BytesSource source(*bytes);
    lowering = (source.Byte() & 1) ? jit::AtomicLowering::kLlSc : jit::AtomicLowering::kLse;
    GeneratorOptions options;
    options.max_cpus = 2;
    options.max_events = 16;
    schedule = GenerateSchedule(source, options);
  }
  auto attachment = Attachment::Create(*state.sandbox, schedule->programs, state.cache.get());
  if (!attachment) return "does not load: " + attachment.message();
  std::string out = FormatSchedule(*schedule);
  const Policy policies[] = {Policy::kAtomic, Policy::kAtomic, Policy::kPerContext, Policy::kLanded};
  const jit::AtomicLowering lowerings[] = {jit::AtomicLowering::kLse, jit::AtomicLowering::kLlSc, lowering, lowering};
  for (int i = 0; i < 4; ++i) {
    RunConfig config;
    config.policy = policies[i];
    config.lowering = lowerings[i];
    auto run = RunSchedule(*state.sandbox, **attachment, *schedule, config);
    if (!run) {
      out += ConfigName(config) + ": " + run.message() + "\n";
      continue;
    }
    out += fmt::format("{}: {}\n{}{}\n", ConfigName(config), run->ok() ? "ok" : "FINDING", FormatSummary(*run),
                       FormatTimeline(*run));
  }
  return out;
}

TEST(Determinism, RecursionSchedulesInAnyOrder) {
  ExpectOrderIndependent(CorpusFiles("recursion_fuzzer"), MakeRecursionState, RunRecursionInput);
}

// Two processes replaying the whole diff corpus (with a planted bug, so
// with listings) print the same bytes, and the same as this process.
TEST(Determinism, ReplayInTwoProcesses) {
  const auto files = CorpusFiles("diff_fuzzer");
  std::vector<std::string> args = {"replay"};
  args.insert(args.end(), files.begin(), files.end());
  setenv("BPFDIFF_PLANTED_BUG", kPlantedBug, 1);
  auto first = test::RunProcess(BPFDIFF_CLI_PATH, args, "");
  auto second = test::RunProcess(BPFDIFF_CLI_PATH, args, "");
  unsetenv("BPFDIFF_PLANTED_BUG");
  ASSERT_TRUE(first.ok()) << first.message();
  ASSERT_TRUE(second.ok()) << second.message();
  EXPECT_EQ(first->exit_code, 1) << first->err;
  EXPECT_EQ(first->exit_code, second->exit_code);
  EXPECT_EQ(first->out, second->out);
  EXPECT_EQ(first->err, second->err);

  const PlantedBugs bugs = Bugs(kPlantedBug);
  auto disassembler = A64Disassembler::Create();
  ASSERT_TRUE(disassembler.ok());
  auto harness = MakeHarness(bugs);
  std::string here;
  for (const auto& file : files) here += cli::ReplayArtifact(*harness, *disassembler, file).out;
  EXPECT_EQ(first->out.substr(0, here.size()), here);
  EXPECT_EQ(first->out.find("arm64 code (") != std::string::npos, true);
}

}  // namespace
}  // namespace bpfdiff
