// The one table of engines (harness/diff/engines.h): what every command
// line, the plugin and the runner accept.
#include "harness/diff/engines.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace bpfdiff {
namespace {

TEST(Engines, TheReferenceComesFirstAndNamesAreUnique) {
  ASSERT_FALSE(EngineSpecs().empty());
  EXPECT_EQ(EngineSpecs().front().kind, EngineKind::kInterpreter);
  std::set<std::string_view> names;
  for (const auto& spec : EngineSpecs()) {
    EXPECT_TRUE(names.insert(spec.name).second) << spec.name;
    EXPECT_NE(spec.name, kAllEngines);
    EXPECT_EQ(FindEngine(spec.name), &spec);
    EXPECT_TRUE(IsEngineChoice(spec.name));
    EXPECT_NE(EngineChoices().find(std::string(spec.name)), std::string::npos) << EngineChoices();
  }
  EXPECT_TRUE(IsEngineChoice(kAllEngines));
  EXPECT_FALSE(IsEngineChoice("jit-x"));
  EXPECT_EQ(FindEngine(kAllEngines), nullptr);
}

TEST(Engines, EveryAtomicLoweringHasAJitEngine) {
  for (auto atomics : {jit::AtomicLowering::kLse, jit::AtomicLowering::kLlSc}) {
    const EngineSpec& spec = JitEngineFor(atomics);
    EXPECT_EQ(spec.kind, EngineKind::kJit);
    EXPECT_EQ(spec.atomics, atomics);
  }
}

TEST(Engines, AllMakesEveryEngineInTheTablesOrder) {
  auto sandbox = Sandbox::Create();
  ASSERT_TRUE(sandbox) << sandbox.message();
  auto engines = MakeEngines(**sandbox, kAllEngines);
  ASSERT_TRUE(engines) << engines.message();
  ASSERT_EQ(engines->size(), EngineSpecs().size());
  for (size_t i = 0; i < engines->size(); ++i) {
    EXPECT_EQ((*engines)[i]->name(), EngineSpecs()[i].name);
    EXPECT_EQ((*engines)[i]->kind(), EngineSpecs()[i].kind);
  }
  auto unknown = MakeEngines(**sandbox, "nope");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.message().find(EngineChoices()), std::string::npos) << unknown.message();
}

}  // namespace
}  // namespace bpfdiff
