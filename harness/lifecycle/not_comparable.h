// Why a call of the world could not be compared with the interpreter, by
// name: the names are counted (World::not_comparable_reasons) and reach
// the fuzz statistics and the nightly report, so they are stable.
//
// A call whose prog_array changed while it ran is compared: the
// interpreter follows the slot values the call read (tail_call_reads.h).
// What is left:
#pragma once

#include <string_view>

#include "harness/diff/compare.h"
#include "oracle/outcome.h"

namespace bpfdiff::lifecycle {

// A store faulted part way into unmapped memory: the architecture leaves
// the bytes it may already have written unknown (the only reason the
// kernel itself leaves the result undefined).
inline constexpr std::string_view kPartialStoreFault = "partial-store-fault";
// The interpreter ran out of its instruction budget (WorldOptions::
// call_budget): a limit of the harness, not of the kernel.
inline constexpr std::string_view kInterpreterBudget = "interpreter-budget";
// An engine of the harness failed (a Unicorn call, a program the world
// does not have): the harness's failure, not the program's.
inline constexpr std::string_view kInterpreterError = "interpreter-error";
inline constexpr std::string_view kJitHarnessError = "jit-harness-error";
// Two tail calls of one call read the same prog_array slot, with an update
// in between, and saw two values: the interpreter is replayed over one
// memory, which holds one value per slot. A limit of the oracle; no
// pack_fuzzer program tail-calls more than once per call.
inline constexpr std::string_view kSlotReadTwice = "prog-array-slot-read-twice";
// The call diverged, an entry changed while it ran, and a program of the
// call may itself have loaded bytes of the prog_array (through an
// untrusted pointer: a PROBE_MEM load or bpf_probe_read), not only through
// its tail calls. A plain load racing with another CPU's update sees the
// old or the new bytes depending on when it runs, which the kernel leaves
// to timing; the world follows what tail calls read, not what loads read.
inline constexpr std::string_view kArrayLoadedWhileUpdated = "prog-array-loaded-while-updated";
// The same race with the memory loads and frees write: a program of the
// call loaded JIT images (pack or oversize text) or program objects (whose
// bpf_func a load sets) that were written while the call ran, and it
// diverged. (Such calls were compared, and could diverge falsely, before
// the world followed tail calls.)
inline constexpr std::string_view kImagesLoadedWhileUpdated = "images-loaded-while-updated";
// The call diverged and reached, by a tail call, a program that reads r3
// or r6..r9 before writing them: a JIT that restores them at a tail call
// (the kernel's) holds them otherwise than the interpreter, which keeps the
// tail caller's (LoadedCase::read_at_tail_call_entry).
inline constexpr std::string_view kTailCallTargetReadsRestoredRegister = "tail-call-target-reads-restored-register";
// The call diverged and the interpreter read stack bytes that differ
// between engines by design: outside the BPF frames, or where a prologue
// saved registers that the program had not written since (the kernel's
// frames, oracle/frame_window.h).
inline constexpr std::string_view kPrivateStackRead = "private-stack-read";
// The frames of the JIT's code could not be read from it (a prologue not
// of the shape the kernel engines read): no call is compared.
inline constexpr std::string_view kFramesUnreadable = "frames-unreadable";
// A verdict of Compare() that none of the above names (a reason added to
// Compare after this list).
inline constexpr std::string_view kOtherVerdict = "other-verdict";

// The name of a not-comparable `verdict` of Compare(expected, actual).
std::string_view NotComparableReason(const Outcome& expected, const Outcome& actual, const Verdict& verdict);

}  // namespace bpfdiff::lifecycle
