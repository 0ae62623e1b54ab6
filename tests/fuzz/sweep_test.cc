// The operand-magnitude sweep (fuzz/sweep/operand_sweep.h): every form
// against the magnitude classes on every engine, whole outcomes compared.
// It is the conformance-style half of the value coverage: run here, by the
// README's test command, not by chance.
#include "fuzz/sweep/operand_sweep.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <utility>

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

// Every offset class the JIT tells apart (jit/memory.cc: the scaled
// unsigned immediate up to 4095 * size, else a register; jit/atomic.cc: an
// immediate of +-1..4095 added to the address, else a register), for loads,
// stores and atomics of each width, each access inside the input memory or
// the stack: every run ends at the exit, none faults.
TEST(FuzzSweep, CoversEveryOffsetClassOfLoadsStoresAndAtomicsInBounds) {
  // (class of access, size) -> offsets the sweep uses.
  std::map<std::pair<std::string, unsigned>, std::set<int32_t>> offsets;
  std::vector<const SweepCase*> far;
  const auto cases = OperandSweep();
  for (const auto& c : cases) {
    if (c.name.find("far") != std::string::npos) far.push_back(&c);
    for (const auto& insn : c.source.programs.front()) {
      const uint8_t cls = insn.opcode & 0x07, mode = insn.opcode & 0xe0;
      const unsigned size = isa::SizeBytes(insn.opcode);
      std::string kind;
      if (cls == isa::kClassLdx && (mode == isa::kModeMem || mode == isa::kModeMemSx)) kind = "load";
      if ((cls == isa::kClassSt || cls == isa::kClassStx) && mode == isa::kModeMem) kind = "store";
      if (cls == isa::kClassStx && mode == isa::kModeAtomic) kind = "atomic";
      if (!kind.empty()) offsets[{kind, size}].insert(insn.offset);
    }
  }
  for (const auto& kind : {std::string("load"), std::string("store")}) {
    for (unsigned size : {1u, 2u, 4u, 8u}) {
      SCOPED_TRACE(kind + " of " + std::to_string(size));
      const auto& seen = offsets[{kind, size}];
      const auto s = static_cast<int32_t>(size);
      for (int32_t off : {0, 4095 * s, -1, -4096, 32767, -32768}) EXPECT_TRUE(seen.count(off)) << off;
      if (4096 * s <= 32767) {
        EXPECT_TRUE(seen.count(4096 * s));
      }
    }
  }
  for (unsigned size : {4u, 8u}) {
    SCOPED_TRACE("atomic of " + std::to_string(size));
    const auto& seen = offsets[{"atomic", size}];
    for (int32_t off : {0, 1, 4095, -1, -4095, 4096, -4096, 32767, -32768}) EXPECT_TRUE(seen.count(off)) << off;
  }
  DiffHarness* harness = SharedHarness();
  ASSERT_NE(harness, nullptr);
  ASSERT_FALSE(far.empty());
  for (const SweepCase* c : far) {
    const CaseRun run = harness->RunCase(c->source);
    ASSERT_FALSE(run.load_error) << c->name << ": " << *run.load_error;
    EXPECT_EQ(run.runs.front().outcome->end, EndKind::kExit) << c->name << ": " << run.runs.front().outcome->Summary();
  }
}

}  // namespace
}  // namespace bpfdiff::fuzz
