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
    // A JIT that matched the reference agrees with it in everything
    // compared; one that did not, with the kernel's interpreter at most
    // in how it ended.
    std::vector<std::string_view> with_reference, with_kernel;
    for (const EngineRun& other : *runs) {
      if (!IsJit(other) || !other.outcome) continue;
      if (other.verdict.match()) {
        with_reference.push_back(other.engine);
      } else if (other.outcome->Summary() == by_kernel) {
        with_kernel.push_back(other.engine);
      }
    }
    auto names = [](const std::vector<std::string_view>& v) {
      return v.empty() ? std::string("none") : fmt::format("{}", fmt::join(v, ", "));
    };
    return fmt::format(
        "the two interpreters disagree: bpfdiff's oracle or the kernel's interpreter is wrong, no JIT; the JITs "
        "that agree with {}: {}; that end as kernel-interp does ({}) and not as {}: {}",
        reference.engine, names(with_reference), by_kernel, reference.engine, names(with_kernel));
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
