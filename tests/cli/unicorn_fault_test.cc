// When Unicorn fails (BPFDIFF_UNICORN_FAULT makes it fail on purpose:
// opening an engine, mapping memory, starting emulation), every command
// that runs code says which call failed and why (uc_strerror's text),
// exits 2, does not abort, and prints nothing that reads as a verdict.
#include <gtest/gtest.h>
#include <unicorn/unicorn.h>

#include <string>
#include <vector>

#include "tests/cli/cli_run.h"

namespace bpfdiff::test {
namespace {

constexpr std::string_view kReturnOne = "-- asm\nmov %r0, 1\nexit\n-- result\n0x1\n";
const std::string kReturnOneHex = "b7 00 00 00 01 00 00 00 95 00 00 00 00 00 00 00\n";

struct Fault {
  const char* env;     // BPFDIFF_UNICORN_FAULT
  const char* called;  // how the message names the call
};
constexpr Fault kFaults[] = {
    {"open", "unicorn: open: "},
    {"map", "unicorn: map region "},
    {"start", "unicorn: start emulation at "},
};

// One way of running a case, and what its verdict looks like on stdout.
struct Command {
  const char* name;
  ProcessResult (*run)(const ScratchDir& dir, const char* fault);
};

ProcessResult RunRun(const ScratchDir& dir, const char* fault) {
  return RunTool(kBpfdiff, {"run", dir.File("one.data", kReturnOne), "--engine", "all"}, {{"BPFDIFF_UNICORN_FAULT", fault}});
}
ProcessResult RunConformance(const ScratchDir& dir, const char* fault) {
  dir.File("suite/one.data", kReturnOne);
  return RunTool(kBpfdiff, {"conformance", "--suite", (dir.path() / "suite").string(), "--engine", "all"},
             {{"BPFDIFF_UNICORN_FAULT", fault}});
}
ProcessResult RunReplay(const ScratchDir& dir, const char* fault) {
  return RunTool(kBpfdiff, {"replay", dir.File("one.data", kReturnOne)}, {{"BPFDIFF_UNICORN_FAULT", fault}});
}
ProcessResult RunPlugin(const ScratchDir&, const char* fault) {
  return RunTool(kBpfdiffPlugin, {}, {{"BPFDIFF_UNICORN_FAULT", fault}}, kReturnOneHex);
}
ProcessResult RunPluginSubcommand(const ScratchDir&, const char* fault) {
  return RunTool(kBpfdiff, {"plugin"}, {{"BPFDIFF_UNICORN_FAULT", fault}}, kReturnOneHex);
}

constexpr Command kCommands[] = {
    {"run", RunRun},
    {"conformance", RunConformance},
    {"replay", RunReplay},
    {"bpfdiff_plugin", RunPlugin},
    {"plugin", RunPluginSubcommand},
};

class UnicornFault : public testing::TestWithParam<std::tuple<Command, Fault>> {};

TEST_P(UnicornFault, IsAnErrorNamingTheCallWithNoVerdict) {
  const auto& [command, fault] = GetParam();
  const ScratchDir dir(std::string("unicorn-fault-") + command.name);
  const ProcessResult result = command.run(dir, fault.env);
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find(fault.called), std::string::npos) << result.err;
  EXPECT_NE(result.err.find(uc_strerror(UC_ERR_NOMEM)), std::string::npos) << result.err;
  // Nothing on stdout: no outcome, no PASS line, no counts, no r0.
  EXPECT_EQ(result.out, "") << result.out;

  // The same command without the fault runs and agrees: the failure above
  // was the injected one, not a broken case.
  const ProcessResult clean = command.run(dir, "");
  EXPECT_EQ(clean.exit_code, 0) << clean.out << clean.err;
}

INSTANTIATE_TEST_SUITE_P(Commands, UnicornFault,
                         testing::Combine(testing::ValuesIn(kCommands), testing::ValuesIn(kFaults)),
                         [](const auto& param) {
                           std::string name = std::string(std::get<0>(param.param).name) + "_" +
                                              std::get<1>(param.param).env;
                           return name;
                         });

TEST(UnicornFaultReplay, TheFilesAfterAFailureStillRun) {
  // The engine's first emulation succeeds and its second fails: the
  // second file cannot run, and the third runs on a new harness.
  const ScratchDir dir("unicorn-fault-replay-three");
  const std::string a = dir.File("a.data", kReturnOne), b = dir.File("b.data", kReturnOne),
                    c = dir.File("c.data", kReturnOne);
  const ProcessResult result = RunTool(kBpfdiff, {"replay", a, b, c}, {{"BPFDIFF_UNICORN_FAULT", "start:1"}});
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.out.find("== " + a + "\n"), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("== " + b + "\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("== " + c + "\n"), std::string::npos) << result.out;
  EXPECT_NE(result.err.find(b + ": could not run: unicorn: start emulation at "), std::string::npos) << result.err;
  EXPECT_NE(result.out.find("replayed 3 files: 2 agree, 0 rejected at load, 0 diverge, 1 could not run\n"),
            std::string::npos)
      << result.out;
}

TEST(UnicornFaultSetting, AValueThatDoesNotParseIsBadInput) {
  const ScratchDir dir("unicorn-fault-bad");
  const ProcessResult tool =
      RunTool(kBpfdiff, {"run", dir.File("one.data", kReturnOne)}, {{"BPFDIFF_UNICORN_FAULT", "close"}});
  EXPECT_EQ(tool.exit_code, 2);
  EXPECT_NE(tool.err.find("BPFDIFF_UNICORN_FAULT: unknown Unicorn call 'close'"), std::string::npos) << tool.err;
  EXPECT_EQ(tool.out, "");
  const ProcessResult plugin = RunTool(kBpfdiffPlugin, {}, {{"BPFDIFF_UNICORN_FAULT", "start:x"}}, kReturnOneHex);
  EXPECT_EQ(plugin.exit_code, 2);
  EXPECT_NE(plugin.err.find("BPFDIFF_UNICORN_FAULT: "), std::string::npos) << plugin.err;
  EXPECT_EQ(plugin.out, "");
}

}  // namespace
}  // namespace bpfdiff::test
