// bpf_throw (kernel/bpf/helpers.c) as guest code, at guest::kThrowKfuncAddress:
// what the JITs' calls of the kfunc reach. As the kernel's, it walks the
// frame records from its caller's (arch_bpf_stack_walk with
// bpf_stack_walker): each frame's return address is looked up in the throw
// table (guest::kThrowTableAddress, the stand-in for bpf_prog_ksym_find()),
// a subprogram's frame is passed, and the first frame of a program's own
// function is the exception boundary, whose exception callback it calls:
//
//   callback(cookie, 0, the boundary's x29, 0, 0)      (blr, as a C call)
//
// The callback takes that frame and returns for the program; it never
// returns here. A return address that is not BPF code after a BPF frame (the
// kernel's walk stops there), a boundary without a callback, more frames
// than a program can have, or a callback that returns, ends the call in a
// BRK, which ThrowKfuncTrap() names.
//
// It keeps x19..x28 (r6..r9 reach the callback as they were at the throw)
// and writes guest::kThrowKfuncClobber | n into x5..x8 and x9..x15 before
// the call, as C code may: the callback finds that in r0 (x7), as the
// interpreter gives it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "oracle/guest_memory.h"
#include "support/result.h"

namespace bpfdiff {

// The words of the kfunc.
std::vector<uint32_t> ThrowKfuncCode();

// Writes them at guest::kThrowKfuncAddress.
Status InstallThrowKfunc(GuestMemory& memory);

// One function of the throw table: its code [start, end) and, for a
// program's own function, the program's exception callback (0 for a
// subprogram; guest::kThrowNoCallback for a program without one).
struct ThrowTableEntry {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t callback = 0;
};

// Writes the throw table. Fails when it has more entries than the table holds.
Status WriteThrowTable(GuestMemory& memory, std::span<const ThrowTableEntry> entries);

// What a BRK of the kfunc at `pc` means, or nullopt when `pc` is not one.
std::optional<std::string> ThrowKfuncTrap(uint64_t pc);

}  // namespace bpfdiff
