// The operand-magnitude sweep (fuzz/sweep/operand_sweep.h): every form
// against the magnitude classes on every engine, whole outcomes compared.
// It is the conformance-style half of the value coverage: run here, by the
// README's test command, not by chance.
#include "fuzz/sweep/operand_sweep.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/fuzz/fuzz_test_support.h"

namespace bpfdiff::fuzz {
namespace {

TEST(FuzzSweep, EveryEngineAgreesOnEveryCombination) {
  DiffHarness* harness = SharedHarness();
  ASSERT_NE(harness, nullptr);
  const auto cases = OperandSweep();
  const SweepResult result = RunSweep(*harness, cases);
  for (const auto& d : result.divergences) ADD_FAILURE() << d.case_name << " [" << d.combo << "] " << d.detail;
  EXPECT_EQ(result.divergent_cases, 0u);
  EXPECT_EQ(result.not_comparable, 0u) << "the sweep's programs should all be comparable";
  std::printf("sweep: %zu cases, %zu operand combinations, %zu divergent\n", result.cases, result.combos,
              result.divergent_cases);
}

TEST(FuzzSweep, CoversEveryFormFamilyAndStaysDeterministic) {
  const auto a = OperandSweep();
  const auto b = OperandSweep();
  ASSERT_EQ(a.size(), b.size());
  std::set<std::string> families;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].source.programs, b[i].source.programs);
    EXPECT_LE(a[i].combos.size(), 64u);
    families.insert(a[i].name.substr(0, a[i].name.find_first_of(" ,")));
  }
  for (const char* family : {"alu64", "alu32", "jeq", "jsle32", "loads", "stores", "atomic64", "atomic32",
                             "probe", "helper", "callx", "tail", "subprogram"}) {
    EXPECT_TRUE(families.count(family)) << family;
  }
}

}  // namespace
}  // namespace bpfdiff::fuzz
