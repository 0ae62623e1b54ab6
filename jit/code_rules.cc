#include "jit/code_rules.h"

#include <fmt/format.h>

#include "jit/a64/architecture_rules.h"

namespace bpfdiff::jit {

std::optional<std::string> FirstUnpredictableWord(const CompiledProgram& program) {
  for (const CompiledSubprogram& sub : program.subprograms) {
    for (size_t i = 0; i < sub.words.size(); ++i) {
      const auto rule = a64::ConstrainedUnpredictable(sub.words[i]);
      if (!rule) continue;
      const uint64_t pc = sub.rx_image + 4 * i;
      return fmt::format("0x{:08x} at 0x{:x} (the code of BPF slot {}), a CONSTRAINED UNPREDICTABLE word: {}",
                         sub.words[i], pc, sub.SlotAt(pc), *rule);
    }
  }
  return std::nullopt;
}

}  // namespace bpfdiff::jit
