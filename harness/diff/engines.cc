#include "harness/diff/engines.h"

#include <fmt/format.h>

#include "harness/diff/interp_engine.h"
#include "harness/diff/jit_engine.h"

namespace bpfdiff {
namespace {

constexpr EngineSpec kEngines[] = {
    {"interp", EngineKind::kInterpreter, jit::AtomicLowering::kLse, "the reference interpreter"},
    {"jit", EngineKind::kJit, jit::AtomicLowering::kLse, "the arm64 JIT, LSE atomics"},
    {"jit-llsc", EngineKind::kJit, jit::AtomicLowering::kLlSc, "the arm64 JIT, LL/SC atomics"},
    {"kernel-jit", EngineKind::kJit, jit::AtomicLowering::kLse, "the kernel's arm64 JIT, LSE atomics",
     JitSource::kKernel},
    {"kernel-jit-llsc", EngineKind::kJit, jit::AtomicLowering::kLlSc, "the kernel's arm64 JIT, LL/SC atomics",
     JitSource::kKernel},
};

// Whether the group name `which` selects `spec`.
bool InGroup(std::string_view which, const EngineSpec& spec) {
  if (spec.kind == EngineKind::kInterpreter) return which == kAllEngines || which == kKernelEngines;
  if (which == kAllEngines) return spec.source == JitSource::kModel;
  if (which == kKernelEngines) return spec.source == JitSource::kKernel;
  return false;
}

}  // namespace

std::span<const EngineSpec> EngineSpecs() { return kEngines; }

const EngineSpec* FindEngine(std::string_view name) {
  for (const auto& spec : kEngines) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

const EngineSpec& JitEngineFor(jit::AtomicLowering atomics) {
  for (const auto& spec : kEngines) {
    if (spec.kind == EngineKind::kJit && spec.source == JitSource::kModel && spec.atomics == atomics) return spec;
  }
  return kEngines[1];  // every lowering has a row; the table's test says so
}

bool IsEngineChoice(std::string_view name) {
  return name == kAllEngines || name == kKernelEngines || FindEngine(name) != nullptr;
}

std::string EngineChoices() {
  std::string choices;
  for (const auto& spec : kEngines) choices += fmt::format("{}, ", spec.name);
  choices.resize(choices.size() - 2);
  return fmt::format("{}, {} or {}", choices, kAllEngines, kKernelEngines);
}

Result<std::unique_ptr<Engine>> MakeEngine(Sandbox& sandbox, const EngineSpec& spec, const jit::JitBugs& bugs) {
  if (spec.kind == EngineKind::kInterpreter) return std::unique_ptr<Engine>(std::make_unique<InterpreterEngine>(sandbox));
  if (spec.source == JitSource::kModel) {
    return std::unique_ptr<Engine>(
        std::make_unique<JitEngine>(sandbox, jit::JitOptions{spec.atomics, bugs}, std::string(spec.name)));
  }
  auto generator = MakeKernelGenerator(sandbox, spec.atomics);
  if (!generator) return Fail("{}: {}", spec.name, generator.message());
  return std::unique_ptr<Engine>(std::make_unique<JitEngine>(sandbox, std::move(generator).value(), std::string(spec.name)));
}

Result<std::vector<std::unique_ptr<Engine>>> MakeEngines(Sandbox& sandbox, std::string_view which,
                                                         const jit::JitBugs& bugs) {
  std::vector<std::unique_ptr<Engine>> engines;
  for (const auto& spec : kEngines) {
    if (!InGroup(which, spec) && which != spec.name) continue;
    auto engine = MakeEngine(sandbox, spec, bugs);
    if (!engine) return engine.error();
    engines.push_back(std::move(engine).value());
  }
  if (engines.empty()) return Fail("unknown engine '{}' ({})", which, EngineChoices());
  return engines;
}

}  // namespace bpfdiff
