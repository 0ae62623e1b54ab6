#include "harness/machine/guest_code.h"

#include "jit/a64/encoder.h"

namespace bpfdiff {

Status InstallGuestCode(GuestMemory& memory, uint64_t address, uint64_t capacity, std::span<const uint32_t> code,
                        std::string_view name) {
  if (code.size() * 4 > capacity) {
    return Fail("{}'s code has {} words, more than its {} bytes", name, code.size(), capacity);
  }
  for (size_t i = 0; i < code.size(); ++i) {
    if (code[i] == a64::kBreakFault) return Fail("{}'s word {} has an operand that cannot be encoded", name, i);
    if (!memory.Store<uint32_t>(address + 4 * i, code[i])) {
      return Fail("no guest memory at 0x{:x} for {}", address + 4 * i, name);
    }
  }
  return {};
}

}  // namespace bpfdiff
