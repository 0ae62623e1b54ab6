// Where a JIT engine's code comes from: bpfdiff's model of the arm64 JIT
// (jit/), or the kernel's own, built from a Linux tree (kernelsrc/). Both
// write the same artifact (jit::CompiledProgram) into the sandbox's pack;
// what differs in how their code runs is said by their CodeConventions.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "harness/machine/jit_call.h"
#include "harness/machine/sandbox.h"
#include "isa/program.h"
#include "jit/jit.h"
#include "kernelsrc/kernel_jit.h"
#include "oracle/load.h"
#include "support/result.h"

namespace bpfdiff {

class CodeGenerator {
 public:
  virtual ~CodeGenerator() = default;
  // The programs of a case are compiled next; `main_program` is its first.
  // A generator whose loader varies by case chooses it here.
  virtual void BeginCase(const isa::Program& main_program) { (void)main_program; }
  // The loader of the case begun, when the generator varies it; nullptr
  // otherwise.
  virtual const kernelsrc::KernelLoader* loader() const { return nullptr; }
  // Compiles a loaded program: its instructions, with the stack depth its
  // loader gives it (bpfdiff's model gives every function 512 bytes
  // whatever it is given: a deeper frame than the program needs is as
  // good).
  virtual Result<jit::CompiledProgram> Compile(const LoadedProgram& program) = 0;
  // Compile with the `fail_call`-th call (from 1) of a kernel service the
  // JIT checks for failure made to fail, and what the kernel's error path
  // did (kernelsrc/kernel_jit.h). bpfdiff's model calls no such service:
  // its compile is a plain one, with nothing injected.
  virtual kernelsrc::FailingCompile CompileFailing(const LoadedProgram& program, uint32_t fail_call) {
    (void)fail_call;
    kernelsrc::FailingCompile plain;
    plain.compiled = Compile(program);
    return plain;
  }
  // Frees `program`'s images; an error when the kernel's free (its
  // bpf_jit_free()) freed other slots than the program's.
  virtual Status Release(jit::CompiledProgram& program) = 0;
  // How the code of `compiled` runs, a program by its index (nullptr: no
  // program has the index). An error says why its runs cannot be compared
  // with the interpreter's (the reason is reported as "not comparable",
  // never as a divergence).
  virtual Result<CodeConventions> Conventions(std::span<const jit::CompiledProgram* const> compiled) const = 0;
  // Helpers whose calls the code performs inline, whatever the case asks
  // for (the kernel's JIT: its tree's bpf_jit_inlines_helper_call()).
  virtual std::span<const int32_t> InlinedHelpers() const { return {}; }
  // Why the verifier that drives this JIT would refuse `program`, for what
  // the JIT says it lacks (the kernel's: kernelsrc/verifier_answers.h);
  // nullopt when it takes it. Such a program is not comparable: its tree
  // never runs it.
  virtual std::optional<std::string> VerifierRefusal(const isa::Program& program) const {
    (void)program;
    return std::nullopt;
  }
  // What the prog pack the code went into did wrong since the last call,
  // seen from outside (kernelsrc::KernelJit::TakePackProblems): only
  // kernel/bpf/core.c's pack reports any.
  virtual std::vector<std::string> TakePackProblems() { return {}; }
};

// bpfdiff's model JIT.
std::unique_ptr<CodeGenerator> MakeModelGenerator(Sandbox& sandbox, const jit::JitOptions& options);

// Who loads the programs the kernel's JIT compiles: the root loader of
// eBPF, or, chosen for each case by a hash of its main program, a loader
// of classic BPF (kernelsrc::ClassicLoaders()) or of eBPF with the JIT
// hardened (kernelsrc::HardenedLoaders()).
enum class KernelLoaders : uint8_t { kRoot, kClassic, kHardened };

// Which prog pack the kernel's JIT allocates its images from: bpfdiff's
// (jit/prog_pack.h, a model of core.c's), or kernel/bpf/core.c's own,
// compiled from the tree, over the sandbox's pack regions (one user per
// process: kernelsrc::KernelPack).
enum class KernelPackSource : uint8_t { kBpfdiff, kCoreC };

// What the kernel's JIT must know of `sandbox` (kernelsrc::KernelJitWorld):
// the guest's environment, where its dummy_tramp and thread_info's cpu
// are, the shims' planted bugs, and, when the pack is core.c's or the
// tree's JIT has no prog pack (it writes its images in place: 6.1), the
// sandbox's memory shown at its guest addresses before the kernel's code
// runs.
// `tree`, here and below: one of kernelsrc::LinkedKernelTrees(); nullptr,
// the build's own.
kernelsrc::KernelJitWorld KernelJitWorldOf(Sandbox& sandbox, KernelPackSource pack = KernelPackSource::kBpfdiff,
                                           const kernelsrc::ShimBugs& bugs = {},
                                           const kernelsrc::KernelTree* tree = nullptr);

// The kernel's JIT, from `tree` (the tree this build read by default); an
// error when the build has none, or its layouts disagree with the guest's.
Result<std::unique_ptr<CodeGenerator>> MakeKernelGenerator(Sandbox& sandbox, jit::AtomicLowering atomics,
                                                           KernelLoaders loaders = KernelLoaders::kRoot,
                                                           KernelPackSource pack = KernelPackSource::kBpfdiff,
                                                           const kernelsrc::KernelTree* tree = nullptr);

// A hash of instructions (FNV-1a over their fields): what chooses a classic
// case's loader (of its main program as loaded), and whether a kernel
// campaign runs the case on that engine (other bits, of the source).
uint64_t ProgramFingerprint(std::span<const isa::Insn> insns);

// The conventions of the kernel's code for `compiled`, read from the code
// (exposed for tests): the frame each function's prologue builds, per
// function when they differ.
// (`tree`'s ex_handler_bpf: trees differ.)
Result<CodeConventions> KernelConventions(std::span<const jit::CompiledProgram* const> compiled,
                                          const kernelsrc::KernelTree* tree = nullptr);
Result<CodeConventions> KernelConventions(const std::vector<jit::CompiledProgram>& compiled,
                                          const kernelsrc::KernelTree* tree = nullptr);

// Pointers to `compiled`, for Conventions().
std::vector<const jit::CompiledProgram*> Pointers(const std::vector<jit::CompiledProgram>& compiled);

}  // namespace bpfdiff
