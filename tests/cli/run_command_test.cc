// What `bpfdiff run` prints for the runs it could not make, and its exit
// statuses: every engine line says what happened to that engine.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli/process.h"

namespace bpfdiff::test {
namespace {

// A file with `text` in the test's own temporary directory, removed with
// the object.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& text)
      : dir_(std::filesystem::temp_directory_path() / ("bpfdiff-cli-test-" + std::to_string(getpid()))) {
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / name) << text;
    path_ = (dir_ / name).string();
  }
  ~TempFile() { std::filesystem::remove_all(dir_); }
  const std::string& path() const { return path_; }

 private:
  std::filesystem::path dir_;
  std::string path_;
};

ProcessResult RunBpfdiff(const std::vector<std::string>& args) {
  auto result = RunProcess(BPFDIFF_CLI_PATH, args, "");
  EXPECT_TRUE(result) << result.message();
  return result ? *result : ProcessResult{-1, "", ""};
}

TEST(CliRun, EnginesLeftWithoutARunSayWhy) {
  // The interpreter runs out of its budget; the JITs are not run (nothing
  // to compare with), and say so rather than "could not compile".
  const TempFile file("loop.data", "-- asm\nloop:\nja loop\nexit\n");
  const ProcessResult run = RunBpfdiff({"run", file.path(), "--engine", "all"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.out.find("interp: budget exhausted: 1000000 instructions"), std::string::npos) << run.out;
  for (const char* engine : {"jit", "jit-llsc"}) {
    EXPECT_NE(run.out.find(std::string(engine) + ": not run: interp ran out of its instruction budget\n"),
              std::string::npos)
        << run.out;
  }
  EXPECT_EQ(run.out.find("could not compile"), std::string::npos) << run.out;
}

TEST(CliRun, AJitThatRefusesAValidProgramIsADivergence) {
  const TempFile file("call.data", "-- asm\ncall local sub\nexit\nsub:\nmov %r0, 1\nexit\n");
  setenv("BPFDIFF_PLANTED_BUG", "extra-pass-grows", 1);
  const ProcessResult run = RunBpfdiff({"run", file.path(), "--engine", "all"});
  unsetenv("BPFDIFF_PLANTED_BUG");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.out.find("jit: could not compile: "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("DIVERGENCE jit: divergence in compilation: jit refused: "), std::string::npos) << run.out;
}

}  // namespace
}  // namespace bpfdiff::test
