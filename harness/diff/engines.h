// The engines bpfdiff compares, in one table: every command line, the
// plugin, the conformance runner and the fuzz targets name engines from it.
//
//   interp     the reference interpreter (oracle/)
//   jit        the arm64 JIT, atomics lowered to LSE instructions
//   jit-llsc   the arm64 JIT, atomics lowered to load/store-exclusive loops
//   all        the three, interp first (the reference)
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "harness/diff/engine.h"
#include "harness/machine/sandbox.h"
#include "jit/jit.h"
#include "support/result.h"

namespace bpfdiff {

struct EngineSpec {
  std::string_view name;
  EngineKind kind;
  jit::AtomicLowering atomics;  // for a JIT
  std::string_view what;
};

// interp, jit, jit-llsc: the reference first.
std::span<const EngineSpec> EngineSpecs();
// The name that selects every engine.
inline constexpr std::string_view kAllEngines = "all";

// The engine named `name` (not "all"), or nullptr.
const EngineSpec* FindEngine(std::string_view name);
// The JIT engine whose atomics are `atomics`.
const EngineSpec& JitEngineFor(jit::AtomicLowering atomics);
// Whether `name` selects engines: one of EngineSpecs() or "all".
bool IsEngineChoice(std::string_view name);
// "interp, jit, jit-llsc or all", for usage and error messages.
std::string EngineChoices();

// The engine of `spec` over `sandbox`; a JIT plants `bugs`.
std::unique_ptr<Engine> MakeEngine(Sandbox& sandbox, const EngineSpec& spec, const jit::JitBugs& bugs = {});
// The engines `which` selects (a name, or "all"); an error naming the
// choices for anything else.
Result<std::vector<std::unique_ptr<Engine>>> MakeEngines(Sandbox& sandbox, std::string_view which,
                                                         const jit::JitBugs& bugs = {});

}  // namespace bpfdiff
