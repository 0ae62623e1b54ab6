// The architecture's rules on the code a JIT emitted, whichever JIT: no word
// whose register combination the Arm ARM leaves CONSTRAINED UNPREDICTABLE
// (a64/architecture_rules.h). Such a word runs as each CPU or emulator
// chooses, so it is the JIT's finding, not a difference of the emulators.
#pragma once

#include <optional>
#include <string>

#include "jit/jit.h"

namespace bpfdiff::jit {

// The first such word of `program`'s code, described (its address, word,
// the BPF slot whose code holds it, the rule); nullopt when there is none.
std::optional<std::string> FirstUnpredictableWord(const CompiledProgram& program);

}  // namespace bpfdiff::jit
