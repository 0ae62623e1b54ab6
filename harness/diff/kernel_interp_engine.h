// The kernel's own interpreter (kernel/bpf/core.c's ___bpf_prog_run, from
// the tree the build read) as an Engine: "kernel-interp", the second
// reference.
//
// How it runs a case as the kernel does, in this process:
//  - the programs are as the verifier leaves them for the interpreter
//    (kernelsrc/kernel_interpreter.h): divisions guarded, helper calls
//    pointing at host functions, bpf-to-bpf calls as BPF_CALL_ARGS;
//  - guest memory is mapped at its own addresses (harness/machine/
//    identity_view.h), so the interpreter dereferences the guest's pointers
//    as the kernel dereferences its own;
//  - it runs on a stack of its own in guest memory, this CPU's stack
//    region, so that its BPF frames (core.c's `u64 stack[]` of each
//    __bpf_prog_run_args512) lie in guest memory where helpers and the
//    comparison see them. Its frames are measured once, at Create, by a
//    probe program, and given as the engine's geometry, with which the
//    reference runs again as it does for a JIT;
//  - each helper call reaches a host function that leaves that stack and
//    calls bpfdiff's helper (oracle/helpers.h) on the caller's, as the JIT
//    engines' stubs do; a tail call reads the program array, whose slots
//    point at the interpreter's struct bpf_prog for the run (a run that
//    reads them is not comparable: HoldsOwnProgramArraySlots).
// It is entered as a bpf-to-bpf call enters it (r1 the context, r2 its
// length, r0 returned whole), since the kernel's bpf_func entry returns
// only r0's low half and zeroes r2.
//
// What it cannot do: stop at instruction boundaries (no RunTraced), report
// which tail calls it took (the interpreter keeps no account; their effects
// are compared), count instructions (no budget: it runs only cases whose
// reference ended within its own), or survive a plain access that faults
// (the kernel would oops): it runs only where the reference made none
// (Engine::RunsOnHostMemory), and a fault that happens anyway ends the run
// as a trap that says where.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/diff/engine.h"
#include "harness/machine/sandbox.h"
#include "kernelsrc/kernel_jit.h"

namespace bpfdiff {

class KernelInterpreterEngine final : public Engine {
 public:
  // Fails in a build without a Linux tree, or when the interpreter's
  // frames do not fit the CPU's stack region as the comparison needs.
  // `tree`: one of kernelsrc::LinkedKernelTrees(), nullptr for the build's
  // own; `name` the engine's (kernel-interp@6.1.192 for another tree).
  static Result<std::unique_ptr<KernelInterpreterEngine>> Create(Sandbox& sandbox, int cpu = 0,
                                                                 const kernelsrc::KernelTree* tree = nullptr,
                                                                 std::string name = "kernel-interp");
  ~KernelInterpreterEngine() override;

  std::string_view name() const override { return name_; }
  EngineKind kind() const override { return EngineKind::kInterpreter; }
  Status Prepare(const LoadedCase& loaded) override;
  Outcome Run(uint64_t budget) override;
  Outcome RunTraced(uint64_t budget, BoundaryTrace& trace) override;
  int cpu() const override { return cpu_; }
  StackGeometry geometry() const override { return geometry_; }
  std::optional<std::string> not_comparable() const override { return not_comparable_; }
  bool verifier_refused() const override { return not_comparable_.has_value(); }
  bool RunsOnHostMemory() const override { return true; }
  bool ReportsTailCalls() const override { return false; }
  bool HoldsOwnProgramArraySlots() const override { return true; }
  void Release() override;

  struct Impl;

 private:
  KernelInterpreterEngine(Sandbox& sandbox, int cpu, std::string name);

  Sandbox& sandbox_;
  int cpu_;
  std::string name_;
  StackGeometry geometry_;
  std::optional<std::string> not_comparable_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace bpfdiff
