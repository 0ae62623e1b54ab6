#include "harness/diff/engines.h"

#include <fmt/format.h>

#include "harness/diff/interp_engine.h"
#include "harness/diff/jit_engine.h"
#include "harness/diff/kernel_interp_engine.h"

namespace bpfdiff {
namespace {

constexpr EngineSpec kEngines[] = {
    {"interp", EngineKind::kInterpreter, jit::AtomicLowering::kLse, "the reference interpreter"},
    {"kernel-interp", EngineKind::kInterpreter, jit::AtomicLowering::kLse,
     "the kernel's own interpreter (kernel/bpf/core.c), the second reference", JitSource::kKernel},
    {"jit", EngineKind::kJit, jit::AtomicLowering::kLse, "the arm64 JIT, LSE atomics"},
    {"jit-llsc", EngineKind::kJit, jit::AtomicLowering::kLlSc, "the arm64 JIT, LL/SC atomics"},
    {"kernel-jit", EngineKind::kJit, jit::AtomicLowering::kLse, "the kernel's arm64 JIT, LSE atomics",
     JitSource::kKernel},
    {"kernel-jit-blind", EngineKind::kJit, jit::AtomicLowering::kLse,
     "the kernel's arm64 JIT, LSE atomics, bpf_jit_harden on: constants blinded by kernel/bpf/core.c, "
     "the loader chosen by the case",
     JitSource::kKernel, KernelLoaders::kHardened},
    {"kernel-jit-cbpf", EngineKind::kJit, jit::AtomicLowering::kLse,
     "the kernel's arm64 JIT, LSE atomics, programs taken as classic BPF, loader and CPU chosen by the case",
     JitSource::kKernel, KernelLoaders::kClassic},
    {"kernel-jit-llsc", EngineKind::kJit, jit::AtomicLowering::kLlSc, "the kernel's arm64 JIT, LL/SC atomics",
     JitSource::kKernel},
    {"kernel-jit-llsc-blind", EngineKind::kJit, jit::AtomicLowering::kLlSc,
     "the kernel's arm64 JIT, LL/SC atomics, bpf_jit_harden on: constants blinded by kernel/bpf/core.c, "
     "the loader chosen by the case",
     JitSource::kKernel, KernelLoaders::kHardened},
};

// Whether the group name `which` selects `spec`.
bool InGroup(std::string_view which, const EngineSpec& spec) {
  if (spec.kind == EngineKind::kInterpreter && spec.source == JitSource::kModel) {
    return which == kAllEngines || which == kKernelEngines;
  }
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

namespace {

// The parts of a comma-separated choice.
std::vector<std::string_view> PartsOf(std::string_view choice) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (;;) {
    const size_t comma = choice.find(',', start);
    parts.push_back(choice.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) return parts;
    start = comma + 1;
  }
}

bool IsOneChoice(std::string_view name) {
  return name == kAllEngines || name == kKernelEngines || FindEngine(name) != nullptr;
}

bool Selects(std::string_view choice, const EngineSpec& spec) {
  for (std::string_view part : PartsOf(choice)) {
    if (InGroup(part, spec) || part == spec.name) return true;
  }
  return false;
}

}  // namespace

bool IsEngineChoice(std::string_view name) {
  for (std::string_view part : PartsOf(name)) {
    if (!IsOneChoice(part)) return false;
  }
  return true;
}

std::string EngineChoices() {
  std::string choices;
  for (const auto& spec : kEngines) choices += fmt::format("{}, ", spec.name);
  choices.resize(choices.size() - 2);
  return fmt::format("{}, {} or {}, or several joined by commas (all,kernel)", choices, kAllEngines, kKernelEngines);
}

Result<std::unique_ptr<CodeGenerator>> MakeCodeGenerator(Sandbox& sandbox, const EngineSpec& spec,
                                                         const jit::JitBugs& bugs, KernelPackSource pack) {
  if (spec.kind != EngineKind::kJit) return Fail("{} is not a JIT engine", spec.name);
  if (spec.source == JitSource::kModel) return MakeModelGenerator(sandbox, jit::JitOptions{spec.atomics, bugs});
  if (!(bugs == jit::JitBugs{})) {
    return Fail("{}: a planted bug of bpfdiff's JIT was asked for; the kernel's JIT has none planted", spec.name);
  }
  auto generator = MakeKernelGenerator(sandbox, spec.atomics, spec.loaders, pack);
  if (!generator) return Fail("{}: {}", spec.name, generator.message());
  return generator;
}

Result<std::unique_ptr<Engine>> MakeEngine(Sandbox& sandbox, const EngineSpec& spec, const jit::JitBugs& bugs) {
  if (spec.kind == EngineKind::kInterpreter && spec.source == JitSource::kKernel) {
    auto engine = KernelInterpreterEngine::Create(sandbox);
    if (!engine) return engine.error();
    return std::unique_ptr<Engine>(std::move(engine).value());
  }
  if (spec.kind == EngineKind::kInterpreter) return std::unique_ptr<Engine>(std::make_unique<InterpreterEngine>(sandbox));
  auto generator = MakeCodeGenerator(sandbox, spec, bugs);
  if (!generator) return generator.error();
  return std::unique_ptr<Engine>(std::make_unique<JitEngine>(sandbox, std::move(generator).value(), std::string(spec.name)));
}

Result<std::vector<std::unique_ptr<Engine>>> MakeEngines(Sandbox& sandbox, std::string_view which,
                                                         const jit::JitBugs& bugs) {
  std::vector<std::unique_ptr<Engine>> engines;
  if (!IsEngineChoice(which)) return Fail("unknown engine '{}' ({})", which, EngineChoices());
  for (const auto& spec : kEngines) {
    if (!Selects(which, spec)) continue;
    auto engine = MakeEngine(sandbox, spec, bugs);
    if (!engine) return engine.error();
    engines.push_back(std::move(engine).value());
  }
  if (engines.empty()) return Fail("unknown engine '{}' ({})", which, EngineChoices());
  return engines;
}

}  // namespace bpfdiff
