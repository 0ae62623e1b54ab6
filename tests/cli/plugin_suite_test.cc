// Whole suites through the bpfdiff_plugin executable, as upstream's
// bpf_conformance_runner would run them with
//
//   --plugin_path bpfdiff_plugin --cpu_version v4
//
// (its default groups: everything but callx and packet). Each selected test
// is spawned the runner's way and judged by the runner's rules; every one
// must pass, including each test with `-- mem`.
#include <algorithm>
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "harness/conformance/case_file.h"
#include "isa/insn.h"
#include "isa/opcode_table.h"
#include "isa/program.h"
#include "support/files.h"
#include "tests/cli/process.h"
#include "tests/cli/runner_rules.h"

namespace bpfdiff::test {
namespace {

struct SuiteTally {
  int files = 0;
  int unrepresentable = 0;  // uses what the protocol cannot carry (see Representable)
  int not_selected = 0;     // needs a CPU version or group the runner leaves out
  int run = 0;
  int with_memory = 0;
  int passed = 0;
  std::vector<std::string> failures;
};

// The runner sends one program and one memory, and its parser keeps one
// result or one error line. Files that use our extensions (maps, more
// programs, load options, helper traces) or expect "any error" (an empty
// `-- error`, which the runner reads as "no error") say more than it can
// ask; the runner's parser skips the extension sections' files itself.
bool Representable(const CaseFile& file) {
  const Expectations& expected = file.expected;
  if (!expected.result && !expected.error) return false;
  if (expected.error && (expected.error->empty() || expected.error->find('\n') != std::string::npos)) {
    return false;
  }
  const bool own_exception_callback =
      std::any_of(file.source.exception_callbacks.begin(), file.source.exception_callbacks.end(),
                  [](uint32_t slot) { return slot != 0; });
  return file.source.programs.size() == 1 && file.source.maps.empty() && !file.source.options.inline_kptr_xchg &&
         !expected.trace && !own_exception_callback;
}

SuiteTally RunSuiteThroughPlugin(const std::filesystem::path& suite) {
  SuiteTally tally;
  auto files = ListFiles(suite, ".data");
  if (!files) {
    tally.failures.push_back(files.message());
    return tally;
  }
  for (const auto& path : *files) {
    ++tally.files;
    const std::string name = path.filename().string();
    auto file = ReadCaseFile(path);
    if (!file) {
      tally.failures.push_back(file.message());
      continue;
    }
    if (!Representable(*file)) {
      ++tally.unrepresentable;
      continue;
    }
    const auto& program = file->source.programs.front();
    const isa::Requirements needs = isa::RequirementsOf(program);
    if (needs.cpu > isa::CpuVersion::kV4 || (needs.groups & ~isa::kGroupsDefault) != 0) {
      ++tally.not_selected;
      continue;
    }

    ++tally.run;
    std::vector<std::string> args;
    if (!file->source.memory.empty()) {
      ++tally.with_memory;
      args.push_back(RunnerHex(file->source.memory));
    }
    auto reply = RunProcess(BPFDIFF_PLUGIN_PATH, args, RunnerHex(isa::ToBytes(program)) + "\n");
    if (!reply) {
      tally.failures.push_back(name + ": " + reply.message());
      continue;
    }
    const RunnerExpectation expected{file->expected.result.value_or(0), file->expected.error.value_or("")};
    const RunnerJudgement judged = JudgeLikeRunner(expected, *reply);
    if (judged.verdict != RunnerVerdict::kPass) {
      tally.failures.push_back(name + ": " + judged.message);
    } else if (file->expected.error && reply->exit_code == 0) {
      // The runner would pass this when r0 happens to be 0; we do not.
      tally.failures.push_back(name + ": exited 0 but the test expects an error");
    } else {
      ++tally.passed;
    }
  }
  return tally;
}

void ExpectAllPass(const SuiteTally& tally) {
  std::cout << tally.files << " files: " << tally.run << " run (" << tally.with_memory << " with -- mem), "
            << tally.passed << " passed, " << tally.failures.size() << " failed; " << tally.not_selected
            << " not selected (cpu/groups), " << tally.unrepresentable << " beyond the protocol\n";
  for (const auto& failure : tally.failures) ADD_FAILURE() << failure;
  EXPECT_GT(tally.run, 0);
}

TEST(PluginSuite, UpstreamSuitePassesUnderTheRunnersRules) {
  const std::filesystem::path suite = BPFDIFF_CONFORMANCE_SUITE;
  if (!std::filesystem::exists(suite)) GTEST_SKIP() << suite << " is not present";
  const SuiteTally tally = RunSuiteThroughPlugin(suite);
  ExpectAllPass(tally);
  EXPECT_GT(tally.with_memory, 0);
}

TEST(PluginSuite, OwnVectorsPassUnderTheRunnersRules) {
  ExpectAllPass(RunSuiteThroughPlugin(std::filesystem::path(BPFDIFF_SOURCE_DIR) / "tests/conformance"));
}

}  // namespace
}  // namespace bpfdiff::test
