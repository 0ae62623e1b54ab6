// What a tree's verifier decides from its JIT's answers. kernel/bpf/
// verifier.c asks the arch JIT what it supports (bpf_jit_supports_*()) and
// which helper calls it performs itself (bpf_jit_inlines_helper_call())
// before a program reaches it, and refuses or rewrites the program by the
// answers. bpfdiff has no verifier, so the kernel engines ask the tree's
// JIT the same questions (verifier_questions.c) and refuse what that
// tree's verifier would: a tree whose JIT lacks per-CPU moves never runs
// one, whatever another tree does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "isa/program.h"

namespace bpfdiff::kernelsrc {

struct VerifierAnswers {
  bool kfunc_call = false;         // bpf_jit_supports_kfunc_call
  bool subprog_tailcalls = false;  // bpf_jit_supports_subprog_tailcalls
  bool ptr_xchg = false;           // bpf_jit_supports_ptr_xchg: kptr_xchg inlined
  bool percpu_insn = false;        // bpf_jit_supports_percpu_insn: BPF_ADDR_PERCPU moves
  bool exceptions = false;         // bpf_jit_supports_exceptions: bpf_throw
  bool arena = false;              // bpf_jit_supports_arena
  bool arena_atomics = false;      // bpf_jit_supports_insn(atomic, in_arena)
  bool bypass_spec_v4 = false;     // bpf_jit_bypass_spec_v4
  // Not a question to the JIT: whether the tree's verifier knows the cpu
  // v4 instructions at all (TreeFeatures::cpu_v4).
  bool cpu_v4 = true;
  // The helper ids whose calls the JIT performs inline, ascending.
  std::vector<int32_t> inlined_helpers;
};

// Why the verifier of a tree whose JIT gave `answers` refuses `program`,
// with the verifier's own words where it has them; nullopt when it takes
// it (as far as these answers go):
//  - a per-CPU address move (`mov64` with offset BPF_ADDR_PERCPU) when the
//    JIT has none: the verifier emits them only after asking, and rejects
//    one it meets in a program ("invalid BPF_ALU opcode");
//  - an arena access when the JIT has no arena, an arena atomic when it
//    takes none (arm64: without LSE atomics);
//  - a call of bpf_throw when the JIT has no exceptions;
//  - a cpu v4 instruction when the tree predates them (the verifier's
//    "unknown opcode" or "uses reserved fields");
//  - a tail call in a program of several functions when the JIT cannot
//    mix them ("tail_calls are not allowed in non-JITed programs with
//    bpf-to-bpf calls").
std::optional<std::string> VerifierRefusal(const VerifierAnswers& answers, const isa::Program& program);

// Whether `insn` uses the arena (PROBE_MEM32, PROBE_ATOMIC, the cast to a
// user address).
bool IsArenaAccess(const isa::Insn& insn);

}  // namespace bpfdiff::kernelsrc
