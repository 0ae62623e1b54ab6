// The kernel's own interpreter (kernel/bpf/core.c's ___bpf_prog_run, of a
// Linux tree, compiled unmodified) and what the verifier does to a program
// before it runs there (kernelsrc/interpreter.c).
//
// This is the loading side only: the instructions as the interpreter gets
// them, and its entry. Running it over bpfdiff's guest memory (mapped at
// the guest's addresses, on a stack in guest memory, its helper calls
// reaching bpfdiff's helpers) is the engine's (harness/diff/
// kernel_interp_engine.h).
//
// Built only when CMake found a tree; otherwise Available() is false and
// Load says how to get one.
#pragma once

#include <array>
#include <csetjmp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "isa/program.h"
#include "kernelsrc/kernel_jit.h"
#include "support/result.h"

namespace bpfdiff::kernelsrc {

// Whether this build has the kernel's interpreter.
bool KernelInterpreterAvailable();

// The host function a helper call of the interpreter reaches: the
// kernel's helpers are C functions of five u64 arguments (BPF_CALL_x).
using HostHelper = uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);

// The tree's interpreter of a function with `stack_depth` bytes of BPF
// stack, entered as a bpf-to-bpf call enters it (__bpf_prog_run_args<N>):
// r1..r5 as given, r0 returned whole, `insns` the function's first
// instruction.
using InterpreterEntry = uint64_t (*)(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
                                      const void* insns);
// `tree`, here and below: one of LinkedKernelTrees() (kernel_jit.h);
// nullptr, the build's own.
InterpreterEntry InterpreterEntryFor(uint32_t stack_depth, const KernelTree* tree = nullptr);

// A run of the interpreter is a session of the kernel's code: BUG() in it
// longjmps to the jmp_buf Begin returns, which the caller setjmp()s in a
// frame that outlives the run; End leaves the session and says what the
// kernel's code said when it stopped ("" when it did not).
std::jmp_buf& BeginInterpreterRun(const KernelTree* tree = nullptr);
std::string EndInterpreterRun(const KernelTree* tree = nullptr);

// Why the tree's verifier refuses to load `program` for the interpreter
// (what only a JIT may run: kfunc calls, callbacks, the arena, tail calls
// from a program with bpf-to-bpf calls; and what the verifier refuses of
// any program and the interpreter would run into undefined C: a division
// by the constant 0, a shift by a constant past the width, an opcode it
// does not know), in the verifier's words; nullopt when it loads.
std::optional<std::string> InterpreterRefusal(const isa::Program& program, const KernelTree* tree = nullptr);

// A program as the verifier leaves it for the interpreter: a struct
// bpf_prog of the host heap (its len and insnsi), which a tail call
// through a program array reaches (array->ptrs[index]->insnsi).
class InterpreterProgram {
 public:
  ~InterpreterProgram();
  InterpreterProgram(const InterpreterProgram&) = delete;
  InterpreterProgram& operator=(const InterpreterProgram&) = delete;

  // `program` with every function given `stack_depth` bytes of stack;
  // `helper(id)` is the host function of helper `id`, nullptr for none.
  static Result<std::unique_ptr<InterpreterProgram>> Load(const isa::Program& program, uint32_t stack_depth,
                                                          HostHelper (*helper)(int32_t id),
                                                          const KernelTree* tree = nullptr);

  // The struct bpf_prog, for a program array's slot.
  uint64_t object() const { return reinterpret_cast<uint64_t>(prog_); }
  // Its first instruction.
  const void* insns() const;

 private:
  InterpreterProgram(void* prog, const bpfdiff_ktree_code* code) : prog_(prog), code_(code) {}
  void* prog_;
  const bpfdiff_ktree_code* code_;
};

// Where the interpreter's BPF_PROBE_MEM loads go
// (bpf_probe_read_kernel_common(), reached by a jump: the function at
// `function` takes its arguments and returns its value); nullptr: a trap,
// as for a service bpfdiff does not model.
void SetProbeHook(const void* function, const KernelTree* tree = nullptr);

}  // namespace bpfdiff::kernelsrc
