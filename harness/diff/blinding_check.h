// What constant blinding promises, checked on the code: no constant the
// program chose is in the code the JIT made for it. bpf_jit_blind_constants()
// (kernel/bpf/core.c) rewrites every instruction with an immediate it
// covers into a load of `imm ^ rnd` and an xor with `rnd`, so that an
// attacker who chooses constants does not choose machine code (JIT spray).
// A class of instruction the rewrite forgets (or that a fix teaches it,
// such as 2321a9596d22's arena stores) computes the same result either
// way; only the code shows it.
#pragma once

#include <optional>
#include <string>

#include "isa/program.h"
#include "jit/jit.h"

namespace bpfdiff {

// The first constant of `program` that `compiled` (code blinding made)
// still builds in a register, in the code of the instruction that holds it,
// said with the slot and the word; nullopt when there is none. Checked are
// the immediates the kernel blinds (ALU and ALU64 but shifts, conditional
// jumps, stores of an immediate, both halves of lddw) whose 32 bits need
// two move-wide instructions (neither half 0 nor 0xffff): a value that fits
// one is too common in any JIT's own code, and a random `rnd` makes a
// false report of one of these a 1-in-2^32 event.
std::optional<std::string> ConstantLeftByBlinding(const isa::Program& program, const jit::CompiledProgram& compiled);

}  // namespace bpfdiff
