// bpf_loop (kernel/bpf/bpf_iter.c) as guest code, at guest::kLoopHelperAddress:
// what the JITs' direct calls of helper 181 reach. It is a C function in
// the kernel, which calls the callback, a BPF function, through a pointer
// (blr): so is this one, so that the callback's entry (its BTI landing
// pad, its prologue as a function called from C), the callee-saved
// registers it must keep for its caller's caller, and its frame, below
// bpf_loop's, are the JIT's as on a kernel.
//
//   long bpf_loop(u32 nr_loops, void *callback_fn, void *callback_ctx, u64 flags)
//     flags != 0: -EINVAL; nr_loops > BPF_MAX_LOOPS: -E2BIG;
//     for (i = 0; i < nr_loops; i++)
//       if (callback_fn(i, callback_ctx, 0, 0, 0)) return i + 1;
//     return i;
//
// Its frame (guest::kLoopHelperFrameBytes) is a frame record and its state
// (nr_loops, the callback, ctx, i): it keeps nothing in a register across
// the callback, and leaves x19..x28 alone, so that the callback sees its
// caller's callee-saved registers, as the kernel's C code keeps them for
// it. Before each call of the callback and before it returns, it writes
// guest::kLoopHelperClobber | n into x5..x8 and x12..x17 (which it may,
// under AAPCS64): a JIT that keeps a value there across the call is
// caught, and the interpreter gives r0 (x7) the same value at the
// callback's entry.
#pragma once

#include <cstdint>
#include <vector>

#include "oracle/guest_memory.h"
#include "support/result.h"

namespace bpfdiff {

// The words of the helper.
std::vector<uint32_t> LoopHelperCode();

// Writes them at guest::kLoopHelperAddress.
Status InstallLoopHelper(GuestMemory& memory);

}  // namespace bpfdiff
