// The one table of engines (harness/diff/engines.h): what every command
// line, the plugin and the runner accept.
#include "harness/diff/engines.h"

#include <gtest/gtest.h>

#include <set>
#include <memory>
#include <string>
#include <vector>

namespace bpfdiff {
namespace {

TEST(Engines, TheReferenceComesFirstAndNamesAreUnique) {
  ASSERT_FALSE(EngineSpecs().empty());
  EXPECT_EQ(EngineSpecs().front().kind, EngineKind::kInterpreter);
  std::set<std::string_view> names;
  for (const auto& spec : EngineSpecs()) {
    EXPECT_TRUE(names.insert(spec.name).second) << spec.name;
    EXPECT_NE(spec.name, kAllEngines);
    EXPECT_NE(spec.name, kKernelEngines);
    EXPECT_EQ(FindEngine(spec.name), &spec);
    EXPECT_TRUE(IsEngineChoice(spec.name));
    EXPECT_NE(EngineChoices().find(std::string(spec.name)), std::string::npos) << EngineChoices();
  }
  EXPECT_TRUE(IsEngineChoice(kAllEngines));
  EXPECT_TRUE(IsEngineChoice(kKernelEngines));
  EXPECT_FALSE(IsEngineChoice("jit-x"));
  EXPECT_EQ(FindEngine(kAllEngines), nullptr);
}

TEST(Engines, EveryAtomicLoweringHasAJitEngine) {
  for (auto atomics : {jit::AtomicLowering::kLse, jit::AtomicLowering::kLlSc}) {
    const EngineSpec& spec = JitEngineFor(atomics);
    EXPECT_EQ(spec.kind, EngineKind::kJit);
    EXPECT_EQ(spec.atomics, atomics);
    EXPECT_EQ(spec.source, JitSource::kModel);
  }
}

// The names of the table's engines that are bpfdiff's interpreter (the
// reference of every choice) or `source`'s (its interpreter and JIT), in
// the table's order.
std::vector<std::string_view> NamesOf(JitSource source) {
  std::vector<std::string_view> names;
  for (const auto& spec : EngineSpecs()) {
    const bool reference = spec.kind == EngineKind::kInterpreter && spec.source == JitSource::kModel;
    if (reference || spec.source == source) names.push_back(spec.name);
  }
  return names;
}

std::vector<std::string_view> NamesOf(const std::vector<std::unique_ptr<Engine>>& engines) {
  std::vector<std::string_view> names;
  for (const auto& engine : engines) names.push_back(engine->name());
  return names;
}

TEST(Engines, AllMakesTheInterpreterAndTheModelJitInTheTablesOrder) {
  auto sandbox = Sandbox::Create();
  ASSERT_TRUE(sandbox) << sandbox.message();
  auto engines = MakeEngines(**sandbox, kAllEngines);
  ASSERT_TRUE(engines) << engines.message();
  EXPECT_EQ(NamesOf(*engines), (std::vector<std::string_view>{"interp", "jit", "jit-llsc"}));
  EXPECT_EQ(NamesOf(*engines), NamesOf(JitSource::kModel));
  auto unknown = MakeEngines(**sandbox, "nope");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.message().find(EngineChoices()), std::string::npos) << unknown.message();
}

// "kernel" makes the interpreter, the kernel's interpreter and the kernel's
// JIT where the build read a tree; elsewhere it fails, saying how to get one.
TEST(Engines, KernelMakesTheInterpreterAndTheKernelsJitOrSaysWhyNot) {
  auto sandbox = Sandbox::Create();
  ASSERT_TRUE(sandbox) << sandbox.message();
  auto engines = MakeEngines(**sandbox, kKernelEngines);
  if (!engines) {
    EXPECT_NE(engines.message().find("BPFDIFF_KERNEL_SOURCE"), std::string::npos) << engines.message();
    GTEST_SKIP() << engines.message();
  }
  EXPECT_EQ(NamesOf(*engines),
            (std::vector<std::string_view>{"interp", "kernel-interp", "kernel-jit", "kernel-jit-blind",
                                           "kernel-jit-cbpf", "kernel-jit-llsc", "kernel-jit-llsc-blind"}));
  EXPECT_EQ(NamesOf(*engines), NamesOf(JitSource::kKernel));
  // Joined, in the table's order, each once.
  auto both = MakeEngines(**sandbox, "kernel,all,jit");
  ASSERT_TRUE(both) << both.message();
  EXPECT_EQ(NamesOf(*both),
            (std::vector<std::string_view>{"interp", "kernel-interp", "jit", "jit-llsc", "kernel-jit",
                                           "kernel-jit-blind", "kernel-jit-cbpf", "kernel-jit-llsc",
                                           "kernel-jit-llsc-blind"}));
}

TEST(Engines, AJoinedChoiceWithAnUnknownPartIsAnError) {
  EXPECT_TRUE(IsEngineChoice("interp,jit"));
  EXPECT_FALSE(IsEngineChoice("interp,nope"));
  EXPECT_FALSE(IsEngineChoice("interp,"));
  auto sandbox = Sandbox::Create();
  ASSERT_TRUE(sandbox) << sandbox.message();
  EXPECT_FALSE(MakeEngines(**sandbox, "jit,nope"));
}

}  // namespace
}  // namespace bpfdiff
