#include "oracle/boundary_trace.h"

namespace bpfdiff {

void BoundaryTrace::Record(uint32_t program, uint32_t slot, const std::array<uint64_t, isa::kNumRegs>& regs,
                           const std::vector<HelperCall>& helper_calls) {
  if (full()) return;
  BoundaryState& state = states_.emplace_back();
  state.program = program;
  state.slot = slot;
  state.helper_calls = static_cast<uint32_t>(helper_calls.size());
  if (!helper_calls.empty()) state.last_call = helper_calls.back();
  state.regs = regs;
  state.memory = window_ ? env_.Digest(*window_) : env_.Digest(cpu_, geometry_);
}

}  // namespace bpfdiff
