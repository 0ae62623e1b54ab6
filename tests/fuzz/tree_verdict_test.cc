// Two trees' JITs in one run (harness/diff/engines.h: kernel-jit beside
// kernel-jit@6.1.192) and the line that says which tree is wrong
// (fuzz/findings/three_way.h, TreeVerdict): on runs made up here, and on
// a real case that the two trees' JITs run differently. Needs a build that
// links a second tree beside its own (the default build links 6.1 beside
// 6.12: kernelsrc/CMakeLists.txt); another build skips, saying so.
#include <gtest/gtest.h>

#include <string>

#include "fuzz/diff/diff_harness.h"
#include "fuzz/findings/three_way.h"
#include "harness/conformance/case_file.h"
#include "harness/diff/engines.h"
#include "kernelsrc/kernel_jit.h"

namespace bpfdiff::fuzz {
namespace {

// The linked tree other than the build's own, or nullptr.
const kernelsrc::KernelTree* OtherTree() {
  const auto trees = kernelsrc::LinkedKernelTrees();
  return trees.size() >= 2 ? &trees[1] : nullptr;
}

EngineRun RunOf(std::string engine, bool matched) {
  EngineRun run;
  run.engine = std::move(engine);
  run.outcome = Outcome{};
  run.outcome->end = EndKind::kExit;
  run.verdict.kind = matched ? Verdict::Kind::kMatch : Verdict::Kind::kDivergence;
  return run;
}

TEST(LinkedTrees, EachKernelRowOncePerTreeTheBuildsOwnFirst) {
  const kernelsrc::KernelTree* other = OtherTree();
  if (other == nullptr) GTEST_SKIP() << "this build links one tree";
  const std::string at = "@" + other->version;
  const EngineSpec* jit = FindEngine("kernel-jit" + at);
  ASSERT_NE(jit, nullptr);
  EXPECT_EQ(jit->tree, other);
  EXPECT_EQ(jit->kind, EngineKind::kJit);
  // The version as a maintainer types it, and the build's own by version.
  const std::string major_minor = other->version.substr(0, other->version.rfind('.'));
  EXPECT_EQ(FindEngine("kernel-jit-llsc@" + major_minor), FindEngine("kernel-jit-llsc" + at));
  EXPECT_EQ(FindEngine("kernel-jit@" + kernelsrc::BuiltKernelTree()->version), FindEngine("kernel-jit"));
  EXPECT_EQ(FindEngine("kernel-jit@9.99"), nullptr);
  EXPECT_EQ(FindEngine("jit@" + other->version), nullptr);  // bpfdiff's model has no trees
  EXPECT_TRUE(IsEngineChoice("trees"));
  EXPECT_TRUE(IsEngineChoice("kernel" + at));
  EXPECT_FALSE(IsEngineChoice("kernel@9.99"));

  auto sandbox = Sandbox::Create({});
  ASSERT_TRUE(sandbox.ok()) << sandbox.message();
  auto engines = MakeEngines(**sandbox, "trees");
  ASSERT_TRUE(engines.ok()) << engines.message();
  std::vector<std::string> names;
  for (const auto& engine : *engines) names.emplace_back(engine->name());
  ASSERT_GE(names.size(), 5u);
  EXPECT_EQ(names[0], "interp");
  EXPECT_EQ(names[1], "kernel-interp");
  EXPECT_EQ(names[2], "kernel-interp" + at);
  EXPECT_EQ(names[3], "kernel-jit");
  EXPECT_EQ(names[4], "kernel-jit" + at);
  EXPECT_EQ(names.size(), 1 + 2 * (EngineSpecs().size() - 3));  // every kernel row, twice
  // One engine by the version as a maintainer types it, with the reference.
  auto shorter = MakeEngines(**sandbox, "interp,kernel-jit@" + major_minor);
  ASSERT_TRUE(shorter.ok()) << shorter.message();
  ASSERT_EQ(shorter->size(), 2u);
  EXPECT_EQ((*shorter)[1]->name(), "kernel-jit" + at);
}

TEST(TreeVerdict, NamesTheTreeThatIsWrongAndWhichWay) {
  const kernelsrc::KernelTree* other = OtherTree();
  if (other == nullptr) GTEST_SKIP() << "this build links one tree";
  const std::string own = kernelsrc::BuiltKernelTree()->version;
  const std::string at = "@" + other->version;
  CaseRun run;
  run.runs = {RunOf("interp", true), RunOf("kernel-jit", false), RunOf("kernel-jit" + at, true),
              RunOf("kernel-jit-llsc", true), RunOf("kernel-jit-llsc" + at, false)};
  // The build's own (6.12) wrong where the older tree is right: a regression.
  const auto regression = TreeVerdict(run, run.runs[1]);
  ASSERT_TRUE(regression);
  EXPECT_NE(regression->find(own + " is wrong where " + other->version + " is right, a regression since " +
                             other->version),
            std::string::npos)
      << *regression;
  // The older wrong where the newer is right: a fix the newer has.
  const auto fixed = TreeVerdict(run, run.runs[4]);
  ASSERT_TRUE(fixed);
  EXPECT_NE(fixed->find(other->version + " is wrong where " + own + " is right, a fix " + own + " has"),
            std::string::npos)
      << *fixed;
  // Every tree wrong; an engine no other tree ran; bpfdiff's model.
  run.runs[2].verdict.kind = Verdict::Kind::kDivergence;
  EXPECT_NE(TreeVerdict(run, run.runs[1]).value_or("").find("every tree's kernel-jit differs"), std::string::npos);
  run.runs.push_back(RunOf("kernel-jit-cbpf", false));
  EXPECT_FALSE(TreeVerdict(run, run.runs.back()));
  run.runs.push_back(RunOf("jit", false));
  EXPECT_FALSE(TreeVerdict(run, run.runs.back()));
}

// A tail call to an empty slot: 6.1's JIT counts it, as the interpreter
// does; 6.12's counts only a populated slot (SHIMS.md, the known finding
// tailcall-count-rules). Run by both trees in one harness.
TEST(TreeVerdict, TheTwoTreesTailCallCountsOnOneCase) {
  const kernelsrc::KernelTree* other = OtherTree();
  if (other == nullptr) GTEST_SKIP() << "this build links one tree";
  if (other->features.tail_call_empty_slot_uncounted == kernelsrc::BuiltKernelTree()->features.tail_call_empty_slot_uncounted) {
    GTEST_SKIP() << "the two trees count tail calls alike";
  }
  auto file = ReadCaseFile(std::string(BPFDIFF_SOURCE_DIR) + "/tests/conformance/tailcall-count-rules.data");
  ASSERT_TRUE(file.ok()) << file.message();
  auto harness = DiffHarness::Create({}, {}, "trees");
  ASSERT_TRUE(harness.ok()) << harness.message();
  const CaseRun run = (*harness)->RunCase(file->source, 0);
  const EngineRun* uncounted = nullptr;
  for (const EngineRun& engine_run : run.runs) {
    const auto spec = FindEngine(engine_run.engine);
    ASSERT_NE(spec, nullptr) << engine_run.engine;
    if (engine_run.engine.starts_with("kernel-jit") && engine_run.outcome) {
      const auto* tree = kernelsrc::TreeOrBuilt(spec->tree);
      // The tree that leaves an empty slot uncounted is the one wrong.
      EXPECT_EQ(engine_run.verdict.match(), !tree->features.tail_call_empty_slot_uncounted) << engine_run.engine;
      if (!engine_run.verdict.match() && engine_run.engine.find("llsc") == std::string::npos) uncounted = &engine_run;
    }
  }
  ASSERT_NE(uncounted, nullptr);
  const auto verdict = TreeVerdict(run, *uncounted);
  ASSERT_TRUE(verdict);
  EXPECT_NE(verdict->find(" is wrong where "), std::string::npos) << *verdict;
}

}  // namespace
}  // namespace bpfdiff::fuzz
