// What a fuzz target's main reads from its environment
// (fuzz/targets/target_settings.h): the stats path with `%p`, the Unicorn
// fault, and how a harness failure ends the process.
#include "fuzz/targets/target_settings.h"

#include <unistd.h>

#include <cstdlib>

#include <gtest/gtest.h>

namespace bpfdiff::fuzz {
namespace {

TEST(FuzzTargetSettings, StatsPathPidPattern) {
  EXPECT_EQ(ExpandStatsPath("out/diff_fuzzer.%p.json", 1234), "out/diff_fuzzer.1234.json");
  EXPECT_EQ(ExpandStatsPath("%p/%p", 7), "7/7");
  EXPECT_EQ(ExpandStatsPath("stats.json", 7), "stats.json");
  EXPECT_EQ(ExpandStatsPath("100%", 7), "100%");
  EXPECT_EQ(ExpandStatsPath("a%pb%", 42), "a42b%");
  EXPECT_EQ(ExpandStatsPath("", 7), "");
}

// Sets an environment variable for one test.
class Env {
 public:
  Env(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~Env() { unsetenv(name_); }
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

 private:
  const char* name_;
};

TEST(FuzzTargetSettings, ReadsThePidIntoTheStatsPath) {
  Env stats("BPFDIFF_FUZZ_STATS_JSON", "/tmp/stats/diff_fuzzer.%p.json");
  const TargetSettings settings = ReadTargetSettings("diff_fuzzer");
  EXPECT_EQ(settings.stats_path, "/tmp/stats/diff_fuzzer." + std::to_string(getpid()) + ".json");
}

TEST(FuzzTargetSettings, ReadsTheUnicornFault) {
  {
    const TargetSettings settings = ReadTargetSettings("diff_fuzzer");
    EXPECT_EQ(settings.unicorn_fault.call, UnicornCall::kNone);
  }
  Env fault("BPFDIFF_UNICORN_FAULT", "start:3");
  const TargetSettings settings = ReadTargetSettings("diff_fuzzer");
  EXPECT_EQ(settings.unicorn_fault.call, UnicornCall::kStartEmulation);
  EXPECT_EQ(settings.unicorn_fault.skip, 3u);
}

TEST(FuzzTargetSettingsDeathTest, AMalformedFaultEndsTheProcessWithStatus2) {
  Env fault("BPFDIFF_UNICORN_FAULT", "stop:3");
  EXPECT_EXIT(ReadTargetSettings("diff_fuzzer"), testing::ExitedWithCode(2),
              "diff_fuzzer: BPFDIFF_UNICORN_FAULT: unknown Unicorn call 'stop'");
}

TEST(FuzzTargetSettingsDeathTest, AHarnessFailureSaysSoAndExitsWithStatus2) {
  EXPECT_EXIT(ExitOnHarnessFailure("pack_fuzzer", "unicorn: open: no memory (injected)"),
              testing::ExitedWithCode(kHarnessFailureExit),
              "pack_fuzzer: harness failure, not a finding: unicorn: open: no memory \\(injected\\)");
}

}  // namespace
}  // namespace bpfdiff::fuzz
