// The kernel functions a BPF trampoline calls, as guest code: the
// __bpf_prog_enter*()/__bpf_prog_exit*() pair of each attached program and
// __bpf_tramp_enter()/__bpf_tramp_exit() (kernel/bpf/trampoline.c), at the
// addresses guest_layout.h gives them.
//
// They do what the trampoline can observe of the kernel's, and check what
// it hands them:
//   - enter logs the link's cookie (run_ctx->bpf_cookie, which the
//     trampoline stored), saves run_ctx in run_ctx->saved_run_ctx as
//     bpf_set_run_ctx() does, keeps the prog it was given, and answers the
//     start time: a value unique to the call (guest::kTrampStartTag and the
//     log's count, never 0, never an address the trampoline holds), or 0
//     for a recursion miss, which it keeps too;
//   - exit checks that it got the prog and the start time its enter got
//     and answered (exactly: 0 after a miss), and the run_ctx whose
//     saved_run_ctx enter set, then logs the cookie's complement;
//   - __bpf_tramp_enter/exit check that they got the struct
//     bpf_tramp_image the trampoline was built for (which the runner
//     writes at guest::kTrampImageObjectOffset), then log their marks.
// A failed check is a BRK (kStubCheckBrk): the run ends in a trap, which
// the oracle's run does not.
// Each clobbers every register AAPCS64 lets it but x7
// (trampoline::StubClobber), so that a trampoline that keeps a value in
// one across the call is caught. The oracle (oracle/trampoline.h) follows
// the same log.
#pragma once

#include <cstdint>
#include <vector>

#include "oracle/guest_memory.h"
#include "support/result.h"

namespace bpfdiff::trampoline {

// The BRK immediate of a failed check in an exit stub.
inline constexpr uint32_t kStubCheckBrk = 0x7ab;

enum class Stub : uint8_t { kProgEnter, kProgEnterMiss, kProgExit, kImageEnter, kImageExit };

// The code of one stub.
std::vector<uint32_t> StubCode(Stub stub);

// Writes every stub at its address (in the stop page, read-only for the
// guest). Call before any machine runs code there.
Status InstallStubs(GuestMemory& memory);

}  // namespace bpfdiff::trampoline
