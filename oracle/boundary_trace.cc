#include "oracle/boundary_trace.h"

#include <algorithm>

namespace bpfdiff {

void BoundaryTrace::Record(uint32_t program, uint32_t slot, const std::array<uint64_t, isa::kNumRegs>& regs,
                           const std::vector<HelperCall>& helper_calls) {
  if (full()) return;
  BoundaryState& state = states_.emplace_back();
  state.program = program;
  state.slot = slot;
  if (helper_calls.size() < calls_read_) {  // another run's calls: count them from the start
    calls_read_ = 0;
    calls_counted_ = 0;
    last_counted_ = {};
  }
  for (; calls_read_ < helper_calls.size(); ++calls_read_) {
    const HelperCall& call = helper_calls[calls_read_];
    if (std::find(uncounted_.begin(), uncounted_.end(), call.id) != uncounted_.end()) continue;
    ++calls_counted_;
    last_counted_ = call;
  }
  state.helper_calls = calls_counted_;
  state.last_call = last_counted_;
  state.regs = regs;
  state.memory = window_ ? env_.Digest(*window_) : env_.Digest(cpu_, geometry_);
}

}  // namespace bpfdiff
