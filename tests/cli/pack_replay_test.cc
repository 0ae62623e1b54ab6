// `bpfdiff pack replay` says why the calls it could not compare were not
// comparable, as the world recorded it (harness/lifecycle/
// not_comparable.h), and names no reason when every call was compared. It
// once printed "(the prog_array changed during the call)" after every
// count, zero included, whatever the reason: since the world follows the
// prog_array entries the calls' tail calls read, that is no reason at all.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli/cli_run.h"

namespace bpfdiff::test {
namespace {

const std::string kSource = BPFDIFF_SOURCE_DIR;

TEST(PackReplay, NamesTheReasonTheWorldRecordedForACallNotComparable) {
  // One call loads a prog_array entry through an untrusted pointer while
  // another CPU's free empties it (tests/fuzz/pack/pack_script_test.cc).
  const std::string script = kSource + "/tests/fuzz/pack/prog-array-loaded-while-updated.pack";
  const ProcessResult result = RunTool(kBpfdiff, {"pack", "replay", script});
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_NE(result.out.find(" calls compared, 1 not comparable (prog-array-loaded-while-updated: 1)\n"),
            std::string::npos)
      << result.out;
  EXPECT_EQ(result.out.find("the prog_array changed during the call"), std::string::npos) << result.out;
}

TEST(PackReplay, NamesNoReasonWhenEveryCallWasCompared) {
  const std::string script = kSource + "/fuzz/corpus/pack_fuzzer/free-during-call.pack";
  const ProcessResult result = RunTool(kBpfdiff, {"pack", "replay", script});
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_NE(result.out.find(" calls compared, 0 not comparable\n"), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("the prog_array changed"), std::string::npos) << result.out;
}

}  // namespace
}  // namespace bpfdiff::test
