#include "harness/lifecycle/tail_call_reads.h"

#include <algorithm>

#include <fmt/format.h>

namespace bpfdiff::lifecycle {

void TailCallReads::CommitPending() {
  if (!pending_value_) return;
  if (open_) {
    std::vector<uint64_t>& held = reads_.back().held;
    if (std::find(held.begin(), held.end(), *pending_value_) == held.end()) held.push_back(*pending_value_);
  }
  pending_value_.reset();
}

void TailCallReads::Close(std::optional<uint64_t> reached) {
  if (!open_) return;
  reads_.back().reached = reached;
  open_ = false;
}

void TailCallReads::BlockInside(uint64_t site, uint64_t block, std::optional<uint32_t> slot, uint64_t value) {
  // A block started after the pending one: the pending one ran.
  CommitPending();
  if (open_ && reads_.back().site != site) Close(std::nullopt);  // fell through into the next tail call
  if (!open_) {
    reads_.push_back({site, slot, {}, std::nullopt});
    open_ = true;
  }
  if (!slot) return;
  pending_value_ = value;
  pending_block_ = block;
}

void TailCallReads::BlockOutside(std::optional<uint64_t> reached) {
  CommitPending();
  Close(reached);
}

void TailCallReads::Stopped(uint64_t pc) {
  // Stopped in front of the pending block's first instruction: nothing of
  // it ran in this operation; the resumed call starts it again.
  if (pending_value_ && pc == pending_block_) pending_value_.reset();
  CommitPending();
}

void TailCallReads::Ended() {
  CommitPending();
  Close(std::nullopt);
}

Result<std::map<uint32_t, uint64_t>> ReplaySlots(const std::vector<TailCallRead>& reads) {
  std::map<uint32_t, uint64_t> slots;
  for (const TailCallRead& read : reads) {
    if (!read.slot || read.held.empty()) continue;
    const uint64_t jit = read.reached.value_or(0);
    const bool legitimate = std::find(read.held.begin(), read.held.end(), jit) != read.held.end();
    const uint64_t value = legitimate ? jit : read.held.back();
    const auto [it, inserted] = slots.emplace(*read.slot, value);
    if (!inserted && it->second != value) {
      return Fail("prog_array slot {} was read as 0x{:x} and later as 0x{:x} in one call", *read.slot, it->second,
                  value);
    }
  }
  return slots;
}

}  // namespace bpfdiff::lifecycle
