// What each tail call of one JIT'd call read from the world's prog_array,
// so that the interpreter's expectation can follow the slot values the
// call actually saw when the array changed under it.
//
// The kernel's bpf_tail_call reads array->ptrs[index] once (READ_ONCE), at
// the moment it runs; an update concurrent with it may be seen or not, and
// the program then runs along whichever value was read. In the world, the
// prog_array changes only between operations, while a CPU is stopped, so
// the values a tail call may have read are exactly the values its slot held
// during the operations in which the CPU was executing that tail call. The
// world reports the blocks the CPU starts and where it stops; this class
// keeps, per tail call:
//
//   - the slot it reads (r2 the world's prog_array and r3 < max_entries;
//     otherwise the tail call reads none of ours and falls through on both
//     engines alike);
//   - `held`: the slot's value in every operation in which a block starting
//     inside the tail call's arm64 code ran at least one instruction. The
//     load of ptrs[index] follows the two bounds checks, whose conditional
//     branches end a block, so the block holding it always starts inside
//     that code (and a resumed call starts a new block where it stopped):
//     `held` contains the value the load read;
//   - `reached`: the program object whose tail-call entry the CPU jumped to
//     next, or nothing when it fell through (an empty slot, or a bound).
//
// ReplaySlots() then says which value each slot must hold for the
// interpreter to follow the JIT: the value it reached when that is one the
// slot held, so that a legitimate race is followed; otherwise the slot's
// last value, so that a JIT that went where the slot never pointed (or fell
// through while it was never empty) still diverges from the interpreter.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "support/result.h"

namespace bpfdiff::lifecycle {

struct TailCallRead {
  uint64_t site = 0;            // the first arm64 address of the tail call's code
  std::optional<uint32_t> slot; // the prog_array slot it reads; nullopt: none of the world's
  std::vector<uint64_t> held;   // the slot's values while it ran, each once, oldest first
  std::optional<uint64_t> reached;  // the program object it jumped into; nullopt: fell through
};

class TailCallReads {
 public:
  // A block starts at `block` inside the code of the tail call at `site`
  // (whose arm64 code begins there); the slot it reads holds `value` now.
  void BlockInside(uint64_t site, uint64_t block, std::optional<uint32_t> slot, uint64_t value);
  // A block starts outside the tail call in progress, if any: at the
  // tail-call entry of the program whose object is `reached`, or
  // (nullopt) anywhere else.
  void BlockOutside(std::optional<uint64_t> reached);
  // The call stopped before the instruction at `pc` and will resume there.
  void Stopped(uint64_t pc);
  // The call ended.
  void Ended();

  const std::vector<TailCallRead>& reads() const { return reads_; }

 private:
  void CommitPending();
  void Close(std::optional<uint64_t> reached);

  std::vector<TailCallRead> reads_;
  bool open_ = false;  // reads_.back() is still running
  // The last block started inside a tail call: its value counts once one
  // of its instructions has run (a block's hook runs before the machine
  // stops in front of its first instruction).
  std::optional<uint64_t> pending_value_;
  uint64_t pending_block_ = 0;
};

// The value each slot must hold for the interpreter to read what the JIT'd
// call read (see above), by slot. Error when one slot must hold two values:
// two tail calls of one call read it apart, with an update in between; one
// run of the interpreter over one memory cannot replay that.
Result<std::map<uint32_t, uint64_t>> ReplaySlots(const std::vector<TailCallRead>& reads);

}  // namespace bpfdiff::lifecycle
