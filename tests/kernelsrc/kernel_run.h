// Runs a program the kernel's JIT compiled, as the kernel's tests need.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "harness/diff/code_generator.h"
#include "harness/machine/jit_call.h"
#include "harness/machine/sandbox.h"
#include "jit/jit.h"
#include "kernelsrc/kernel_jit.h"
#include "kernelsrc/kernel_loader.h"
#include "oracle/guest_layout.h"
#include "oracle/load.h"
#include "oracle/outcome.h"
#include "support/result.h"
#include "tests/jit/jit_test_support.h"

namespace bpfdiff {

// Program 0 of `loaded`, compiled by the kernel's JIT as `compiled`, called
// on CPU 0 of `sandbox` as bpf_prog_run calls it, with the kernel's
// conventions (guarded pages, frame records) as `adjust` leaves them.
inline Result<Outcome> RunOnKernelConventions(Sandbox& sandbox, const LoadedCase& loaded,
                                              const jit::CompiledProgram& compiled,
                                              const std::function<void(CodeConventions&)>& adjust = {}) {
  auto conventions = KernelConventions(std::vector<const jit::CompiledProgram*>{&compiled});
  if (!conventions) return conventions.error();
  if (adjust) adjust(*conventions);
  GuestEnvironment& env = sandbox.env();
  env.Install(loaded);
  env.SetProgramEntry(0, compiled.entry());
  env.ResetForRun(0);
  CallPrograms programs;
  programs.compiled = {&compiled};
  programs.programs = {&loaded.programs[0].program};
  programs.conventions = *conventions;
  JitCall call(env, sandbox.machine(0), 0, programs);
  call.Start(0, {0, 0, 0, 0, 0}, 100000);
  return *call.Step();
}

// One program (BPF assembly) compiled by the kernel's JIT, LSE lowering, as
// `loader` loads it, in a sandbox of its own on the executor `factory`
// makes (Unicorn when null). `error` says why nothing was compiled.
struct CompiledUnderLoader {
  std::unique_ptr<Sandbox> sandbox;
  std::unique_ptr<kernelsrc::KernelJit> jit;
  LoadedCase loaded;
  jit::CompiledProgram compiled;
  std::string error;

  CompiledUnderLoader(std::string_view text, const kernelsrc::KernelLoader& loader, MachineFactory factory = nullptr) {
    SandboxOptions options;
    options.machine_factory = factory;
    sandbox = jit_testing::MakeSandbox(options);
    auto created = kernelsrc::KernelJit::Create(sandbox->pack(), sandbox->patcher(), KernelJitWorldOf(*sandbox),
                                                jit::AtomicLowering::kLse);
    if (!created) {
      error = created.message();
      return;
    }
    jit = std::move(created).value();
    CaseSource source;
    source.programs.push_back(jit_testing::Asm(text));
    auto load = LoadCase(source);
    if (!load) {
      error = load.message();
      return;
    }
    loaded = std::move(load).value();
    auto made = jit->Compile(loaded.programs[0].program, loader);
    if (!made) {
      error = made.message();
      return;
    }
    compiled = std::move(made).value();
  }

  // The words of the main program's code (prologue, body, epilogue).
  std::vector<uint32_t> Code() const {
    if (compiled.subprograms.empty()) return {};
    const auto& sub = compiled.subprograms[0];
    return {sub.words.begin(), sub.words.begin() + sub.code_words};
  }
};

}  // namespace bpfdiff
