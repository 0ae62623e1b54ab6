#include "harness/diff/engines.h"

#include <deque>
#include <string>
#include <vector>

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

// The kernel engines of every tree linked beside the build's own
// (kernelsrc::LinkedKernelTrees() past the first): each row of kEngines
// that runs the kernel's code, named <row>@<version>. Built once; the
// rows and their names live as long as the process (the table is reached
// from a static, so that LeakSanitizer sees it held).
struct TreeEngineTable {
  std::deque<std::string> names;  // what the rows' names and descriptions view
  std::vector<EngineSpec> rows;
};

const std::vector<EngineSpec>& TreeEngines() {
  static const TreeEngineTable* table = [] {
    auto* built = new TreeEngineTable();
    const auto trees = kernelsrc::LinkedKernelTrees();
    for (size_t t = 1; t < trees.size(); ++t) {
      for (const EngineSpec& spec : kEngines) {
        if (spec.source != JitSource::kKernel) continue;
        const std::string& name = built->names.emplace_back(fmt::format("{}@{}", spec.name, trees[t].version));
        const std::string& what =
            built->names.emplace_back(fmt::format("{}, of Linux {}", spec.what, trees[t].version));
        EngineSpec row = spec;
        row.name = name;
        row.what = what;
        row.tree = &trees[t];
        built->rows.push_back(row);
      }
    }
    return built;
  }();
  return table->rows;
}

// The row of `base` (a row of kEngines) for `tree`: the row itself for
// the build's own tree.
const EngineSpec* SpecFor(const EngineSpec& base, const kernelsrc::KernelTree& tree) {
  if (&tree == kernelsrc::TreeOrBuilt(nullptr)) return &base;
  for (const EngineSpec& row : TreeEngines()) {
    if (row.tree == &tree && row.name.starts_with(base.name) && row.name[base.name.size()] == '@') return &row;
  }
  return nullptr;
}

// The tree `kernel@<version>` names, or nullptr.
const kernelsrc::KernelTree* TreeGroup(std::string_view which) {
  if (!which.starts_with(kKernelEngines) || which.size() <= kKernelEngines.size() ||
      which[kKernelEngines.size()] != '@') {
    return nullptr;
  }
  return kernelsrc::FindLinkedTree(which.substr(kKernelEngines.size() + 1));
}

// Whether the group name `which` selects `spec`.
bool InGroup(std::string_view which, const EngineSpec& spec) {
  const bool kernel_group = which == kKernelEngines || which == kTreeEngines || TreeGroup(which) != nullptr;
  if (spec.kind == EngineKind::kInterpreter && spec.source == JitSource::kModel) {
    return which == kAllEngines || kernel_group;
  }
  if (which == kAllEngines) return spec.source == JitSource::kModel;
  if (spec.source != JitSource::kKernel) return false;
  if (which == kKernelEngines) return spec.tree == nullptr;
  if (which == kTreeEngines) return true;
  const kernelsrc::KernelTree* named = TreeGroup(which);
  return named != nullptr && kernelsrc::TreeOrBuilt(spec.tree) == named;
}

}  // namespace

std::span<const EngineSpec> EngineSpecs() { return kEngines; }

std::span<const EngineSpec> LinkedTreeEngineSpecs() { return TreeEngines(); }

const EngineSpec* FindEngine(std::string_view name) {
  for (const auto& spec : kEngines) {
    if (spec.name == name) return &spec;
  }
  for (const auto& spec : TreeEngines()) {
    if (spec.name == name) return &spec;
  }
  // <row>@<version>, the version as FindLinkedTree takes it ("6.1").
  const size_t at = name.find('@');
  if (at == std::string_view::npos) return nullptr;
  const kernelsrc::KernelTree* tree = kernelsrc::FindLinkedTree(name.substr(at + 1));
  if (tree == nullptr) return nullptr;
  for (const auto& spec : kEngines) {
    if (spec.source == JitSource::kKernel && spec.name == name.substr(0, at)) return SpecFor(spec, *tree);
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
  return name == kAllEngines || name == kKernelEngines || name == kTreeEngines || TreeGroup(name) != nullptr ||
         FindEngine(name) != nullptr;
}

bool Selects(std::string_view choice, const EngineSpec& spec) {
  for (std::string_view part : PartsOf(choice)) {
    // (By what the name finds: kernel-jit@6.1 is kernel-jit@6.1.192.)
    if (InGroup(part, spec) || part == spec.name || FindEngine(part) == &spec) return true;
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
  for (const auto& spec : TreeEngines()) choices += fmt::format("{}, ", spec.name);
  std::string groups = fmt::format("{}, {}", kAllEngines, kKernelEngines);
  const auto trees = kernelsrc::LinkedKernelTrees();
  for (size_t t = 1; t < trees.size(); ++t) groups += fmt::format(", {}@{}", kKernelEngines, trees[t].version);
  return fmt::format("{}{} or {}, or several joined by commas (all,kernel)", choices, groups, kTreeEngines);
}

Result<std::unique_ptr<CodeGenerator>> MakeCodeGenerator(Sandbox& sandbox, const EngineSpec& spec,
                                                         const jit::JitBugs& bugs, KernelPackSource pack) {
  if (spec.kind != EngineKind::kJit) return Fail("{} is not a JIT engine", spec.name);
  if (spec.source == JitSource::kModel) return MakeModelGenerator(sandbox, jit::JitOptions{spec.atomics, bugs});
  if (!(bugs == jit::JitBugs{})) {
    return Fail("{}: a planted bug of bpfdiff's JIT was asked for; the kernel's JIT has none planted", spec.name);
  }
  auto generator = MakeKernelGenerator(sandbox, spec.atomics, spec.loaders, pack, spec.tree);
  if (!generator) return Fail("{}: {}", spec.name, generator.message());
  return generator;
}

Result<std::unique_ptr<Engine>> MakeEngine(Sandbox& sandbox, const EngineSpec& spec, const jit::JitBugs& bugs) {
  if (spec.kind == EngineKind::kInterpreter && spec.source == JitSource::kKernel) {
    auto engine = KernelInterpreterEngine::Create(sandbox, 0, spec.tree, std::string(spec.name));
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
  // In the table's order, each kernel row once per tree, the build's own
  // first (interp, kernel-interp, kernel-interp@6.1.192, kernel-jit,
  // kernel-jit@6.1.192, ...): a prefix of the list holds the same rows of
  // every tree.
  const auto trees = kernelsrc::LinkedKernelTrees();
  for (const auto& base : kEngines) {
    std::vector<const EngineSpec*> rows{&base};
    if (base.source == JitSource::kKernel && !trees.empty()) {
      rows.clear();
      for (const auto& tree : trees) rows.push_back(SpecFor(base, tree));
    }
    for (const EngineSpec* spec : rows) {
      if (spec == nullptr || !Selects(which, *spec)) continue;
      auto engine = MakeEngine(sandbox, *spec, bugs);
      if (!engine) return engine.error();
      engines.push_back(std::move(engine).value());
    }
  }
  if (engines.empty()) return Fail("unknown engine '{}' ({})", which, EngineChoices());
  return engines;
}

}  // namespace bpfdiff
