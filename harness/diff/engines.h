// The engines bpfdiff compares, in one table: every command line, the
// plugin, the conformance runner and the fuzz targets name engines from it.
//
//   interp           the reference interpreter (oracle/)
//   kernel-interp    the kernel's own interpreter (kernel/bpf/core.c of the
//                    tree, kernelsrc/), the second reference
//   jit              bpfdiff's arm64 JIT, atomics lowered to LSE instructions
//   jit-llsc         bpfdiff's arm64 JIT, atomics lowered to load/store-exclusive loops
//   kernel-jit       the kernel's own arm64 JIT (kernelsrc/), LSE atomics
//   kernel-jit-cbpf  the kernel's own arm64 JIT, LSE atomics, each program
//                    taken as converted from classic BPF, its loader and
//                    CPU chosen by the case (kernelsrc/kernel_loader.h): the
//                    epilogue's Spectre-BHB mitigation
//   kernel-jit-llsc  the kernel's own arm64 JIT, LL/SC atomics
//   all              interp, jit and jit-llsc (interp first: the reference)
//   kernel           interp, kernel-interp and the kernel-jit engines
// A build that links further trees beside its own (kernelsrc::
// LinkedKernelTrees()) has each kernel row again per tree, named
// <row>@<version> (kernel-jit@6.1.192; "kernel-jit@6.1" finds it too):
//   kernel@<version> interp and that tree's kernel engines
//   trees            interp and the kernel engines of every tree
// Choices join with commas ("all,kernel": all five), in the table's order,
// each kernel row of every tree selected after the build's own.
// The kernel's engines exist in a build that read a Linux tree; asked for in
// one that did not, they are an error that says how to get one.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "harness/diff/code_generator.h"
#include "harness/diff/engine.h"
#include "harness/machine/sandbox.h"
#include "jit/jit.h"
#include "support/result.h"

namespace bpfdiff {

// Whose JIT an engine runs.
enum class JitSource : uint8_t { kModel, kKernel };

struct EngineSpec {
  std::string_view name;
  EngineKind kind;
  jit::AtomicLowering atomics;  // for a JIT
  std::string_view what;
  JitSource source = JitSource::kModel;
  KernelLoaders loaders = KernelLoaders::kRoot;  // for the kernel's JIT
  // The tree whose code a kernel engine runs; nullptr: the build's own.
  const kernelsrc::KernelTree* tree = nullptr;
};

// interp, jit, jit-llsc, kernel-jit, kernel-jit-llsc: the reference first.
std::span<const EngineSpec> EngineSpecs();
// The kernel rows of the trees linked beside the build's own, each named
// <row>@<version>; empty when it links none.
std::span<const EngineSpec> LinkedTreeEngineSpecs();
// The name that selects the interpreter and bpfdiff's JIT in both lowerings.
inline constexpr std::string_view kAllEngines = "all";
// The name that selects the interpreter and the kernel's JIT in both lowerings.
inline constexpr std::string_view kKernelEngines = "kernel";
// The name that selects the interpreter and every linked tree's kernel engines.
inline constexpr std::string_view kTreeEngines = "trees";

// The engine named `name` (not a group), or nullptr.
const EngineSpec* FindEngine(std::string_view name);
// bpfdiff's JIT engine whose atomics are `atomics`.
const EngineSpec& JitEngineFor(jit::AtomicLowering atomics);
// Whether `name` selects engines: one of EngineSpecs(), "all" or "kernel",
// or several of those joined by commas.
bool IsEngineChoice(std::string_view name);
// "interp, jit, ..., all or kernel", for usage and error messages.
std::string EngineChoices();

// The engine of `spec` over `sandbox`; bpfdiff's JIT plants `bugs` (the
// kernel's has none planted). An error for a kernel engine in a build
// without a Linux tree.
Result<std::unique_ptr<Engine>> MakeEngine(Sandbox& sandbox, const EngineSpec& spec, const jit::JitBugs& bugs = {});
// The code of the JIT engine `spec` (not the interpreter's) over `sandbox`,
// with `bugs` planted in bpfdiff's JIT: what the lifecycle world compiles
// its programs with. A kernel engine's images go to the prog pack `pack`
// names. An error for a kernel engine in a build without a Linux tree.
Result<std::unique_ptr<CodeGenerator>> MakeCodeGenerator(Sandbox& sandbox, const EngineSpec& spec,
                                                         const jit::JitBugs& bugs = {},
                                                         KernelPackSource pack = KernelPackSource::kBpfdiff);
// The engines `which` selects (a name, "all" or "kernel"); an error naming
// the choices for anything else.
Result<std::vector<std::unique_ptr<Engine>>> MakeEngines(Sandbox& sandbox, std::string_view which,
                                                         const jit::JitBugs& bugs = {});

}  // namespace bpfdiff
