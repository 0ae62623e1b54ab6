// Code of the guest's own (the kernel functions bpfdiff writes as arm64
// words: bpf_loop, bpf_throw), written at its fixed address.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "oracle/guest_memory.h"
#include "support/result.h"

namespace bpfdiff {

// Writes `code` at `address`, in at most `capacity` bytes. Fails, naming
// `name`, when it does not fit, when a word is AARCH64_BREAK_FAULT (an
// encoder refused its operands) or when no guest memory is there.
Status InstallGuestCode(GuestMemory& memory, uint64_t address, uint64_t capacity, std::span<const uint32_t> code,
                        std::string_view name);

}  // namespace bpfdiff
