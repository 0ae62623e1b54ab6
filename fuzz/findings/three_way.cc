#include "fuzz/findings/three_way.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/diff/engines.h"
#include "kernelsrc/kernel_jit.h"

namespace bpfdiff::fuzz {
namespace {

constexpr std::string_view kKernelInterp = "kernel-interp";

// "@6.1.192" of kernel-jit@6.1.192; "" for the build's own tree's engines.
std::string_view TreeSuffix(std::string_view engine) {
  const size_t at = engine.find('@');
  return at == std::string_view::npos ? std::string_view() : engine.substr(at);
}

// The version an engine's tree has ("" when unknown).
std::string VersionOf(std::string_view engine) {
  const EngineSpec* spec = FindEngine(engine);
  const kernelsrc::KernelTree* tree = kernelsrc::TreeOrBuilt(spec != nullptr ? spec->tree : nullptr);
  return tree != nullptr ? tree->version : std::string();
}

// Versions compared part by part, numerically ("6.1.192" < "6.12.118").
bool OlderThan(std::string_view a, std::string_view b) {
  auto part = [](std::string_view& v) {
    uint64_t n = 0;
    while (!v.empty() && v.front() >= '0' && v.front() <= '9') {
      n = n * 10 + static_cast<uint64_t>(v.front() - '0');
      v.remove_prefix(1);
    }
    if (!v.empty()) v.remove_prefix(1);
    return n;
  };
  while (!a.empty() || !b.empty()) {
    const uint64_t x = part(a), y = part(b);
    if (x != y) return x < y;
  }
  return false;
}

bool IsJit(const EngineRun& run) {
  const EngineSpec* spec = FindEngine(run.engine);
  return spec != nullptr && spec->kind == EngineKind::kJit;
}

}  // namespace

std::optional<std::string> ThreeWayVerdict(const CaseRun& run, const EngineRun& diverged) {
  const std::vector<EngineRun>* runs = run.RunsHolding(diverged);
  if (runs == nullptr || runs->empty()) return std::nullopt;
  const EngineRun& reference = runs->front();
  // The kernel's interpreter of the diverged engine's tree.
  const std::string kernel_interp = fmt::format("{}{}", kKernelInterp, TreeSuffix(diverged.engine));
  const auto kernel =
      std::find_if(runs->begin(), runs->end(), [&](const EngineRun& r) { return r.engine == kernel_interp; });
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
        "that agree with {}: {}; that end as {} does ({}) and not as {}: {}",
        reference.engine, names(with_reference), kernel_interp, by_kernel, reference.engine, names(with_kernel));
  }
  if (kernel->verdict.match()) {
    return fmt::format("{} differs from both interpreters ({} agrees with {}): a JIT finding", diverged.engine,
                       kernel_interp, reference.engine);
  }
  if (!diverged.outcome) return std::nullopt;
  return diverged.outcome->Summary() == by_kernel
             ? fmt::format("{} ends as the kernel's interpreter does ({}), not as {}: the interpreters disagree",
                           diverged.engine, by_kernel, reference.engine)
             : fmt::format("{} differs from both interpreters, which also differ from each other", diverged.engine);
}

std::optional<std::string> TreeVerdict(const CaseRun& run, const EngineRun& diverged) {
  const std::vector<EngineRun>* runs = run.RunsHolding(diverged);
  if (runs == nullptr || runs->empty() || !diverged.engine.starts_with("kernel-")) return std::nullopt;
  const std::string_view row = std::string_view(diverged.engine).substr(0, diverged.engine.find('@'));
  // The same row of each tree that ran it, the diverged engine's included.
  std::vector<const EngineRun*> rows;
  for (const EngineRun& other : *runs) {
    if (std::string_view(other.engine).substr(0, other.engine.find('@')) == row && other.outcome) rows.push_back(&other);
  }
  if (rows.size() < 2) return std::nullopt;
  std::vector<std::string> right, wrong;
  for (const EngineRun* other : rows) {
    (other->verdict.match() ? right : wrong).push_back(fmt::format("{} ({})", VersionOf(other->engine), other->engine));
  }
  const std::string_view reference = runs->front().engine;
  if (right.empty()) {
    return fmt::format("every tree's {} differs from {}: {}; a finding of each tree (or of {})", row, reference,
                       fmt::join(wrong, ", "), reference);
  }
  std::string line = fmt::format("{} of Linux {} differs from {}; the trees whose {} agrees: {}", diverged.engine,
                                 VersionOf(diverged.engine), reference, row, fmt::join(right, ", "));
  if (rows.size() == 2 && wrong.size() == 1) {
    const EngineRun* other = rows[0] == &diverged ? rows[1] : rows[0];
    const std::string wrong_version = VersionOf(diverged.engine), right_version = VersionOf(other->engine);
    line += OlderThan(wrong_version, right_version)
                ? fmt::format(": {} is wrong where {} is right, a fix {} has (or code it never had)", wrong_version,
                              right_version, right_version)
                : fmt::format(": {} is wrong where {} is right, a regression since {}", wrong_version, right_version,
                              right_version);
  }
  return line;
}

}  // namespace bpfdiff::fuzz
