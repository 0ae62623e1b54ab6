#include "oracle/outcome.h"

#include <fmt/format.h>

namespace bpfdiff {

std::string_view EndKindName(EndKind kind) {
  switch (kind) {
    case EndKind::kExit: return "exit";
    case EndKind::kUnwind: return "unwind";
    case EndKind::kFault: return "fault";
    case EndKind::kTrap: return "trap";
    case EndKind::kHelperError: return "helper error";
    case EndKind::kBudget: return "budget exhausted";
    case EndKind::kHarnessError: return "harness error";
  }
  return "?";
}

std::string FormatHelperCall(const HelperCall& call) {
  return fmt::format("helper {}(0x{:x}, 0x{:x}, 0x{:x}, 0x{:x}, 0x{:x}) = 0x{:x}", call.id,
                     call.args[0], call.args[1], call.args[2], call.args[3], call.args[4],
                     call.ret);
}

std::string Outcome::Summary() const {
  switch (end) {
    case EndKind::kExit:
    case EndKind::kUnwind: return fmt::format("{} r0=0x{:x}", EndKindName(end), r0);
    case EndKind::kFault:
      if (fault) {
        return fmt::format("fault at insn {}{}: {} of 0x{:x}", fault->insn,
                           fault->program ? fmt::format(" of program {}", fault->program) : "",
                           AccessKindName(fault->kind), fault->address);
      }
      return "fault";
    default:
      return message.empty() ? std::string(EndKindName(end))
                             : fmt::format("{}: {}", EndKindName(end), message);
  }
}

std::string Outcome::Describe() const {
  std::string out = Summary() + "\n";
  for (size_t i = 0; i < helper_calls.size(); ++i) {
    out += fmt::format("  call #{}: {}\n", i, FormatHelperCall(helper_calls[i]));
  }
  for (uint32_t target : tail_calls) out += fmt::format("  tail call to program {}\n", target);
  return out;
}

}  // namespace bpfdiff
