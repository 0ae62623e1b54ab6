// Runs a program the kernel's JIT compiled, as the kernel's tests need.
#pragma once

#include <functional>
#include <vector>

#include "harness/diff/code_generator.h"
#include "harness/machine/jit_call.h"
#include "harness/machine/sandbox.h"
#include "jit/jit.h"
#include "oracle/load.h"
#include "oracle/outcome.h"
#include "support/result.h"

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

}  // namespace bpfdiff
