#include "fuzz/findings/three_way.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/diff/engines.h"

namespace bpfdiff::fuzz {
namespace {

constexpr std::string_view kKernelInterp = "kernel-interp";

bool IsJit(const EngineRun& run) {
  const EngineSpec* spec = FindEngine(run.engine);
  return spec != nullptr && spec->kind == EngineKind::kJit;
}

}  // namespace

std::optional<std::string> ThreeWayVerdict(const CaseRun& run, const EngineRun& diverged) {
  const std::vector<EngineRun>* runs = run.RunsHolding(diverged);
  if (runs == nullptr || runs->empty()) return std::nullopt;
  const EngineRun& reference = runs->front();
  const auto kernel = std::find_if(runs->begin(), runs->end(), [](const EngineRun& r) { return r.engine == kKernelInterp; });
  if (kernel == runs->end() || !kernel->outcome || !reference.outcome) return std::nullopt;
  const std::string by_kernel = kernel->outcome->Summary();
  const std::string by_reference = reference.outcome->Summary();
  if (&*kernel == &diverged) {
    std::vector<std::string_view> with_kernel, with_reference;
    for (const EngineRun& other : *runs) {
      if (!IsJit(other) || !other.outcome) continue;
      const std::string summary = other.outcome->Summary();
      if (summary == by_kernel) with_kernel.push_back(other.engine);
      if (summary == by_reference && summary != by_kernel) with_reference.push_back(other.engine);
    }
    return fmt::format(
        "the two interpreters disagree: bpfdiff's oracle or the kernel's interpreter is wrong, no JIT; the JITs "
        "that end as kernel-interp does ({}): {}; as {} does ({}): {}",
        by_kernel, with_kernel.empty() ? "none" : fmt::format("{}", fmt::join(with_kernel, ", ")), reference.engine,
        by_reference, with_reference.empty() ? "none" : fmt::format("{}", fmt::join(with_reference, ", ")));
  }
  if (kernel->verdict.match()) {
    return fmt::format("{} differs from both interpreters (kernel-interp agrees with {}): a JIT finding",
                       diverged.engine, reference.engine);
  }
  if (!diverged.outcome) return std::nullopt;
  return diverged.outcome->Summary() == by_kernel
             ? fmt::format("{} ends as the kernel's interpreter does ({}), not as {}: the interpreters disagree",
                           diverged.engine, by_kernel, reference.engine)
             : fmt::format("{} differs from both interpreters, which also differ from each other", diverged.engine);
}

}  // namespace bpfdiff::fuzz
