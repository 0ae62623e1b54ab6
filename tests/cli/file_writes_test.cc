// What bpfdiff writes survives a write that fails: the previous file stays
// as it was, and the error names the path. The failure is a real one that
// also stops root: the child inherits a file size limit (RLIMIT_FSIZE, with
// SIGXFSZ ignored), so its write fails part-way with EFBIG, as on a disk
// that fills. And a corrupt night in the history is skipped with one
// warning that names it, and the report is still written.
#include <sys/resource.h>

#include <csignal>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/cli/cli_run.h"

namespace bpfdiff::test {
namespace {

const std::string kFixtures = std::string(BPFDIFF_SOURCE_DIR) + "/tests/report/fixtures/";

// Files of the processes spawned while this lives may not grow past `bytes`.
class ChildFileSizeLimit {
 public:
  explicit ChildFileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);  // inherited: the child's write fails, it is not killed
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  }
  ~ChildFileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit saved_{};
  void (*old_handler_)(int) = nullptr;
};

std::vector<std::string> Names(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

TEST(FileWrites, AnExportThatCannotBeWrittenLeavesThePreviousTest) {
  const ScratchDir dir("writes-export");
  const std::string artifact = dir.File("in/case.data", "-- asm\nmov %r0, 7\nexit\n");
  const std::string output = dir.File("out/regression.data", "the previous test\n");
  ProcessResult result;
  {
    const ChildFileSizeLimit limit(32);
    result = RunTool(kBpfdiff, {"export", artifact, "-o", output});
  }
  EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
  EXPECT_NE(result.err.find(output + ": cannot write: File too large"), std::string::npos) << result.err;
  EXPECT_EQ(ReadWhole(output), "the previous test\n");
  EXPECT_EQ(Names(dir.path() / "out"), std::vector<std::string>{"regression.data"});  // no temporary left

  const ProcessResult again = RunTool(kBpfdiff, {"export", artifact, "-o", output});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(ReadWhole(output).find("-- result\n0x7"), std::string::npos) << ReadWhole(output);
}

TEST(FileWrites, AnExportIntoADirectoryThatIsAFileIsNamed) {
  const ScratchDir dir("writes-notdir");
  const std::string artifact = dir.File("case.data", "-- asm\nmov %r0, 7\nexit\n");
  const std::string plain = dir.File("plain", "a file");
  const ProcessResult result = RunTool(kBpfdiff, {"export", artifact, "-o", plain + "/regression.data"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find(plain + "/regression.data: cannot create a temporary file in " + plain + ": Not a directory"),
            std::string::npos)
      << result.err;
}

TEST(FileWrites, AReportThatCannotBeWrittenLeavesLastNightsFiles) {
  const ScratchDir dir("writes-report");
  const std::string out = (dir.path() / "out").string();
  const std::vector<std::string> args = {"report", "--conformance", kFixtures + "conformance.json", "--timestamp",
                                         "2024-05-01T03:00:00Z", "--out", out};
  const ProcessResult first = RunTool(kBpfdiff, args);
  ASSERT_EQ(first.exit_code, 1) << first.err;  // the fixtures hold a failure
  const std::vector<std::string> files = {"junit.xml", "report.html", "report.json", "summary.txt"};
  std::vector<std::string> before;
  for (const auto& f : files) before.push_back(ReadWhole(dir.path() / "out" / f));

  std::vector<std::string> again = args;
  again[4] = "2024-05-02T03:00:00Z";
  ProcessResult failed;
  {
    const ChildFileSizeLimit limit(2048);  // the summary fits, a later file of the set does not
    failed = RunTool(kBpfdiff, again);
  }
  EXPECT_EQ(failed.exit_code, 2);
  EXPECT_EQ(failed.err.rfind("bpfdiff report: " + out + "/", 0), 0u) << failed.err;
  EXPECT_NE(failed.err.find(": cannot write: File too large"), std::string::npos) << failed.err;
  EXPECT_LT(before[3].size(), 2048u);  // summary.txt: written to its temporary, then dropped
  for (size_t i = 0; i < files.size(); ++i) {
    EXPECT_EQ(ReadWhole(dir.path() / "out" / files[i]), before[i]) << files[i] << " changed";
  }
  std::vector<std::string> expected = files;
  expected.insert(expected.begin(), "history");
  EXPECT_EQ(Names(dir.path() / "out"), expected);  // no temporaries
  EXPECT_EQ(Names(dir.path() / "out" / "history"), std::vector<std::string>{"20240501T030000Z.json"});
}

TEST(FileWrites, ACorruptNightIsSkippedWithOneWarningAndTheReportIsWritten) {
  const ScratchDir dir("writes-history");
  const auto history = dir.path() / "history";
  std::filesystem::copy(kFixtures + "history", history);
  const std::string bad = dir.File("history/20240430T120000Z.json", "{\"timestamp\": \"2024-04-30T12:00:00Z\", \"te");
  const ProcessResult result =
      RunTool(kBpfdiff, {"report", "--conformance", kFixtures + "conformance.json", "--history", history.string(),
                     "--timestamp", "2024-05-01T03:00:00Z", "--out", (dir.path() / "out").string()});
  EXPECT_EQ(result.exit_code, 1) << result.err;  // the fixtures' failure, not the history
  EXPECT_EQ(Count(result.out + result.err, bad), 1u) << result.out << result.err;
  EXPECT_NE(result.out.find("note: history entry skipped: " + bad + ": not valid JSON"), std::string::npos)
      << result.out;
  const std::string summary = ReadWhole(dir.path() / "out" / "summary.txt");
  EXPECT_NE(summary.find("trend over 4 nights"), std::string::npos) << summary;  // 3 good ones and tonight
  EXPECT_NE(ReadWhole(dir.path() / "out" / "report.html").find("20240430T120000Z.json"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(history / "20240501T030000Z.json"));
}

}  // namespace
}  // namespace bpfdiff::test
