// Commands given several files handle every one, report each, and exit
// with the worst status (0 ok < 1 a finding < 2 could not run): one file
// that does not load never hides the files after it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/cli/cli_run.h"

namespace bpfdiff::test {
namespace {

constexpr std::string_view kReturnOne = "-- asm\nmov %r0, 1\nexit\n-- result\n0x1\n";
const std::string kCorpus = std::string(BPFDIFF_SOURCE_DIR) + "/fuzz/corpus/";

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

TEST(SeveralFiles, ReplayReportsEveryFileAndExitsWithTheWorst) {
  const ScratchDir dir("several-replay");
  const std::string good = dir.File("good.data", kReturnOne);
  const std::string missing = (dir.path() / "missing").string();
  const std::string garbage = dir.File("garbage.data", "-- asm\nnot an instruction\n");
  const std::string rejected = kCorpus + "diff_fuzzer/raw-call-depth-9-rejected";
  const std::string last = dir.File("last.data", kReturnOne);
  const ProcessResult result = RunTool(kBpfdiff, {"replay", good, missing, rejected, garbage, last});
  EXPECT_EQ(result.exit_code, 2) << result.err;
  for (const std::string& ran : {good, rejected, last}) {
    EXPECT_NE(result.out.find("== " + ran + "\n"), std::string::npos) << ran << "\n" << result.out;
  }
  EXPECT_NE(result.out.find("rejected at load: program 0: calls nest 9 frames deep"), std::string::npos)
      << result.out;
  EXPECT_NE(result.err.find("bpfdiff replay: " + missing + ": "), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("bpfdiff replay: " + garbage), std::string::npos) << result.err;
  EXPECT_EQ(Count(result.out, "all engines agree\n"), 2u) << result.out;
  EXPECT_NE(result.out.find("replayed 5 files: 2 agree, 1 rejected at load, 0 diverge, 2 could not run\n"),
            std::string::npos)
      << result.out;
}

TEST(SeveralFiles, ReplayOfTheShippedCorpusReachesEveryFile) {
  // The seeds include three the load step rejects on purpose (raw-*-rejected:
  // nine frames, a stack access past the frame, bpf_throw under a callback);
  // the rest agree.
  std::vector<std::string> seeds;
  for (const auto& entry : std::filesystem::directory_iterator(kCorpus + "diff_fuzzer")) {
    seeds.push_back(entry.path().string());
  }
  std::sort(seeds.begin(), seeds.end());
  std::vector<std::string> args = {"replay"};
  args.insert(args.end(), seeds.begin(), seeds.end());
  const ProcessResult result = RunTool(kBpfdiff, args);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  for (const auto& seed : seeds) EXPECT_NE(result.out.find("== " + seed + "\n"), std::string::npos) << seed;
  EXPECT_NE(result.out.find(fmt::format("replayed {} files: {} agree, 3 rejected at load, 0 diverge, 0 could not run\n",
                                        seeds.size(), seeds.size() - 3)),
            std::string::npos)
      << result.out.substr(result.out.size() > 2000 ? result.out.size() - 2000 : 0);
}

TEST(SeveralFiles, ADivergenceIsOneAndCouldNotRunIsTwo) {
  // A planted bug makes a divergence (1); a file that does not load after
  // it makes the whole run 2, and both are reported.
  const ScratchDir dir("several-divergence");
  const std::string add = dir.File("add32.data", "-- asm\nlddw %r0, 0x100000000\nadd32 %r0, 1\nexit\n");
  const Environment planted = {{"BPFDIFF_PLANTED_BUG", "alu32-add-no-zext"}};
  const ProcessResult one = RunTool(kBpfdiff, {"replay", add}, planted);
  EXPECT_EQ(one.exit_code, 1) << one.out << one.err;
  EXPECT_NE(one.out.find("DIVERGENCE jit: "), std::string::npos) << one.out;
  const ProcessResult two = RunTool(kBpfdiff, {"replay", add, (dir.path() / "missing").string()}, planted);
  EXPECT_EQ(two.exit_code, 2);
  EXPECT_NE(two.out.find("DIVERGENCE jit: "), std::string::npos) << two.out;
  EXPECT_NE(two.out.find("replayed 2 files: 0 agree, 0 rejected at load, 1 diverge, 1 could not run\n"),
            std::string::npos)
      << two.out;
}

TEST(SeveralFiles, PackReplayRunsTheScriptsAfterOneThatDoesNotRead) {
  const ScratchDir dir("several-pack");
  const std::string first = kCorpus + "pack_fuzzer/four-cpus.pack";
  const std::string not_a_script = dir.File("not-a-script", std::string(1, '\x7f') + "xyz");
  const std::string missing = (dir.path() / "missing").string();
  const std::string last = kCorpus + "pack_fuzzer/probe-loads.pack";
  const ProcessResult result = RunTool(kBpfdiff, {"pack", "replay", first, not_a_script, missing, last});
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.out.find("== " + first + " "), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("== " + last + " "), std::string::npos) << result.out;
  EXPECT_NE(result.err.find(not_a_script + ": not a pack script"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find(missing), std::string::npos) << result.err;
  EXPECT_NE(result.out.find("replayed 4 scripts: every invariant held in 2, one broke in 0, 2 could not run\n"),
            std::string::npos)
      << result.out;
}

TEST(SeveralFiles, ConformanceRunsTheSuitesThatExist) {
  const ScratchDir dir("several-conformance");
  dir.File("suite/one.data", kReturnOne);
  const std::string missing = (dir.path() / "no-such-suite").string();
  const std::filesystem::path empty = dir.path() / "empty";
  std::filesystem::create_directories(empty);
  const ProcessResult result = RunTool(
      kBpfdiff, {"conformance", "--suite", missing, "--suite", (dir.path() / "suite").string(), "--suite", empty.string()});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.out.find("PASS one.data\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("1 passed, 0 failed, 0 skipped\n"), std::string::npos) << result.out;
  EXPECT_NE(result.err.find(missing + ": no such file or directory"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find(empty.string() + ": no .data files"), std::string::npos) << result.err;
  // A test that fails is 1; with a missing suite beside it, still 2.
  dir.File("failing/two.data", "-- asm\nmov %r0, 2\nexit\n-- result\n0x1\n");
  const ProcessResult failing = RunTool(kBpfdiff, {"conformance", "--suite", (dir.path() / "failing").string()});
  EXPECT_EQ(failing.exit_code, 1) << failing.out;
  const ProcessResult both =
      RunTool(kBpfdiff, {"conformance", "--suite", (dir.path() / "failing").string(), "--suite", missing});
  EXPECT_EQ(both.exit_code, 2) << both.out;
  EXPECT_NE(both.out.find("FAIL two.data"), std::string::npos) << both.out;
}

TEST(SeveralFiles, AReportIsMadeFromThePartsThatRead) {
  const ScratchDir dir("several-report");
  const std::string fixtures = std::string(BPFDIFF_SOURCE_DIR) + "/tests/report/fixtures/";
  const std::string broken = dir.File("broken_stats.json", "{\"format\": ");
  const ProcessResult result =
      RunTool(kBpfdiff, {"report", "--conformance", fixtures + "conformance.json", "--fuzz-stats",
                     fixtures + "diff_fuzzer_stats.json", "--fuzz-stats", broken, "--fuzz-stats",
                     fixtures + "pack_fuzzer_stats.json", "--timestamp", "2024-05-01T03:00:00Z", "--out",
                     (dir.path() / "out").string()});
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find(broken), std::string::npos) << result.err;
  const std::string summary = ReadWhole(dir.path() / "out" / "summary.txt");
  EXPECT_NE(summary.find("input left out: "), std::string::npos) << summary;
  EXPECT_NE(summary.find("diff_fuzzer"), std::string::npos) << summary;
  EXPECT_NE(summary.find("pack_fuzzer"), std::string::npos) << summary;
  EXPECT_NE(ReadWhole(dir.path() / "out" / "report.html"), "<missing>");
}

}  // namespace
}  // namespace bpfdiff::test
