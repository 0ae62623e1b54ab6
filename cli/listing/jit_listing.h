// The arm64 code of a compiled program, in the style of llvm-objdump, each
// word annotated with the BPF instruction it came from, followed by the
// exception table decoded from RX memory and where the image lives.
#pragma once

#include <optional>
#include <string>

#include "isa/program.h"
#include "jit/a64/disasm/a64_disassembler.h"
#include "jit/jit.h"
#include "oracle/guest_memory.h"

namespace bpfdiff {

struct ListingOptions {
  // Only the words of BPF slots [first, last] (for replay's "code around
  // the diverging instruction"); all when unset.
  std::optional<uint32_t> first_slot, last_slot;
  std::optional<uint32_t> mark_slot;  // flagged with "=>"
};

std::string JitListing(const A64Disassembler& disassembler, const isa::Program& program,
                       const jit::CompiledProgram& compiled, const GuestMemory& memory,
                       const ListingOptions& options = {});

}  // namespace bpfdiff
