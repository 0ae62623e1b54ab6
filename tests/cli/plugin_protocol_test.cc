// The bpfdiff_plugin executable driven as bpf_conformance_runner drives it:
// memory (when the test has some) as the first argument in the runner's
// "01  0a  " encoding, plugin options after it, the program in the same
// encoding and a newline on stdin, then stdin closed.
#include <stdlib.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/conformance/case_file.h"
#include "isa/insn.h"
#include "tests/cli/process.h"
#include "tests/cli/runner_rules.h"

namespace bpfdiff::test {
namespace {

const std::string kPlugin = BPFDIFF_PLUGIN_PATH;

// Little-endian instruction bytes, as the runner sends them.
const std::vector<uint8_t> kReturn42 = {
    0xb7, 0x00, 0x00, 0x00, 0x2a, 0x00, 0x00, 0x00,  // mov r0, 42
    0x95, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // exit
};
const std::vector<uint8_t> kLoadWordOfMemory = {
    0x61, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // ldxw r0, [r1+0]
    0x95, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // exit
};

ProcessResult Spawn(const std::vector<std::string>& args, const std::string& stdin_text) {
  auto result = RunProcess(kPlugin, args, stdin_text);
  EXPECT_TRUE(result) << result.message();
  return result ? *result : ProcessResult{-1, "", ""};
}

ProcessResult SpawnProgram(const std::vector<std::string>& args, const std::vector<uint8_t>& program) {
  return Spawn(args, RunnerHex(program) + "\n");
}

TEST(PluginProtocol, MemoryFirstThenPluginOptions) {
  const std::vector<uint8_t> memory = {0x0a, 0x0b, 0x0c, 0x0d};
  for (const char* engine : {"interp", "jit", "jit-llsc", "all"}) {
    const auto reply = SpawnProgram({RunnerHex(memory), "--engine", engine}, kLoadWordOfMemory);
    EXPECT_EQ(reply.exit_code, 0) << engine << ": " << reply.err;
    EXPECT_EQ(reply.out, "d0c0b0a\n") << engine;
    EXPECT_EQ(JudgeLikeRunner({.result = 0x0d0c0b0a}, reply).verdict, RunnerVerdict::kPass) << engine;
  }
}

TEST(PluginProtocol, MemoryAloneUsesTheDefaultEngine) {
  const auto reply = SpawnProgram({RunnerHex(std::vector<uint8_t>{1, 0, 0, 0})}, kLoadWordOfMemory);
  EXPECT_EQ(reply.exit_code, 0) << reply.err;
  EXPECT_EQ(reply.out, "1\n");
}

TEST(PluginProtocol, OptionsWithoutMemory) {
  for (std::vector<std::string> args : {std::vector<std::string>{"--engine", "jit-llsc"},
                                       std::vector<std::string>{"--interpret"},
                                       std::vector<std::string>{"--engine", "", "jit"},
                                       std::vector<std::string>{}}) {
    const auto reply = SpawnProgram(args, kReturn42);
    EXPECT_EQ(reply.exit_code, 0) << reply.err;
    EXPECT_EQ(reply.out, "2a\n");
    EXPECT_EQ(reply.err, "");
  }
}

TEST(PluginProtocol, ProgramErrorIsTheExpectedErrorTextOnStderr) {
  auto file = ReadCaseFile(std::string(BPFDIFF_SOURCE_DIR) + "/tests/conformance/fault-null-load.data");
  ASSERT_TRUE(file) << file.message();
  ASSERT_TRUE(file->expected.error);
  const auto reply = SpawnProgram({}, isa::ToBytes(file->source.programs.front()));
  EXPECT_EQ(reply.exit_code, 1);
  EXPECT_EQ(reply.out, "");
  EXPECT_EQ(reply.err, *file->expected.error + "\n");
  const auto judged = JudgeLikeRunner({.error = *file->expected.error}, reply);
  EXPECT_EQ(judged.verdict, RunnerVerdict::kPass) << judged.message;
}

TEST(PluginProtocol, ProgramTheLoadStepRejectsGivesTheLoadMessage) {
  auto file =
      ReadCaseFile(std::string(BPFDIFF_SOURCE_DIR) + "/tests/conformance/stack-outside-frame-rejected.data");
  ASSERT_TRUE(file) << file.message();
  const auto reply = SpawnProgram({}, isa::ToBytes(file->source.programs.front()));
  EXPECT_EQ(reply.exit_code, 1);
  const auto judged = JudgeLikeRunner({.error = file->expected.error.value_or("")}, reply);
  EXPECT_EQ(judged.verdict, RunnerVerdict::kPass) << judged.message;
}

TEST(PluginProtocol, DivergenceFailsTheRunnerWithTheDivergenceOnStderr) {
  // Negative control: a JIT with a planted bug must not pass under the runner.
  const std::vector<uint8_t> add32_wraps = {
      0xb4, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,  // mov32 r0, -1
      0x04, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,  // add32 r0, 1
      0x95, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // exit
  };
  setenv("BPFDIFF_PLANTED_BUG", "alu32-add-no-zext", 1);
  const auto diverged = SpawnProgram({}, add32_wraps);
  const auto interp_only = SpawnProgram({"--engine", "interp"}, add32_wraps);
  unsetenv("BPFDIFF_PLANTED_BUG");
  EXPECT_EQ(diverged.exit_code, 1);
  EXPECT_NE(diverged.err.find("divergence"), std::string::npos) << diverged.err;
  EXPECT_NE(JudgeLikeRunner({.result = 0}, diverged).verdict, RunnerVerdict::kPass);
  EXPECT_EQ(interp_only.exit_code, 0) << interp_only.err;
  EXPECT_EQ(interp_only.out, "0\n");
}

TEST(PluginProtocol, BudgetExhaustionIsTheErrorOfTheEngineThatRanOutOnEverySetting) {
  // Under `all` the JITs do not run after the interpreter ran out (there is
  // nothing to compare with): the interpreter's error is the reply, never
  // a compile failure. A JIT alone gets the interpreter's budget in arm64
  // instructions, as many as the longest run `all` would allow it.
  const std::vector<uint8_t> loop_forever = {
      0x05, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00,  // ja -1
      0x95, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // exit
  };
  const auto all = SpawnProgram({}, loop_forever);
  EXPECT_EQ(all.exit_code, 1);
  EXPECT_EQ(all.out, "");
  EXPECT_EQ(all.err, "budget exhausted: 1000000 instructions\n");
  const auto jit = SpawnProgram({"--engine", "jit"}, loop_forever);
  EXPECT_EQ(jit.exit_code, 1);
  EXPECT_EQ(jit.err, "budget exhausted: 64100000 arm64 instructions\n");
}

TEST(PluginProtocol, ElfAndUnknownOptionsAreRefusedWithAReason) {
  const auto elf = SpawnProgram({RunnerHex(std::vector<uint8_t>{1}), "--elf"}, kReturn42);
  EXPECT_EQ(elf.exit_code, 2);
  EXPECT_EQ(elf.out, "");
  EXPECT_EQ(elf.err, "bpfdiff_plugin: ELF input is not supported; run the runner without --elf\n");

  const auto unknown = SpawnProgram({"--turbo"}, kReturn42);
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.out, "");
  EXPECT_NE(unknown.err.find("unknown plugin option '--turbo'"), std::string::npos) << unknown.err;
}

TEST(PluginProtocol, MalformedHexIsRefusedNamingWhere) {
  struct Case {
    std::string stdin_text;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"b7  00  0\n", "program on stdin: '0' at offset 8 has an odd number of hex digits"},
           {"b7  zz  \n", "program on stdin: 'zz' at offset 4 is not hex bytes"},
           {"b7  00  00  00\n", "program on stdin: 4 bytes is not a whole number of 8-byte instructions"},
           {"\n", "program on stdin: no instructions"},
       }) {
    const auto reply = Spawn({}, c.stdin_text);
    EXPECT_EQ(reply.exit_code, 2) << c.stdin_text;
    EXPECT_EQ(reply.out, "");
    EXPECT_EQ(reply.err, "bpfdiff_plugin: " + c.message + "\n");
  }
  const auto bad_memory = SpawnProgram({"01  x2  "}, kReturn42);
  EXPECT_EQ(bad_memory.exit_code, 2);
  EXPECT_EQ(bad_memory.err, "bpfdiff_plugin: memory argument: 'x2' at offset 4 is not hex bytes\n");
}

TEST(PluginProtocol, HexWithoutSpacesOrNewlineIsAccepted) {
  const auto reply = Spawn({}, "b70000002a000000 9500000000000000");
  EXPECT_EQ(reply.exit_code, 0) << reply.err;
  EXPECT_EQ(reply.out, "2a\n");
}

TEST(PluginProtocol, SubcommandSpeaksTheSameProtocol) {
  // `bpfdiff plugin` takes the memory after the word `plugin`; otherwise
  // it is bpfdiff_plugin.
  const std::vector<uint8_t> memory = {0x0a, 0x0b, 0x0c, 0x0d};
  auto reply = RunProcess(BPFDIFF_CLI_PATH, {"plugin", RunnerHex(memory), "--engine", "jit"},
                                RunnerHex(kLoadWordOfMemory) + "\n");
  ASSERT_TRUE(reply) << reply.message();
  EXPECT_EQ(reply->exit_code, 0) << reply->err;
  EXPECT_EQ(reply->out, "d0c0b0a\n");

  auto elf = RunProcess(BPFDIFF_CLI_PATH, {"plugin", "--elf"}, "");
  ASSERT_TRUE(elf) << elf.message();
  EXPECT_EQ(elf->exit_code, 2);
  EXPECT_EQ(elf->err, "bpfdiff plugin: ELF input is not supported; run the runner without --elf\n");
}

}  // namespace
}  // namespace bpfdiff::test
