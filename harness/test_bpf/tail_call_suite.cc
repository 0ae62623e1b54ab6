#include "harness/test_bpf/tail_call_suite.h"

#include <fmt/format.h>

namespace bpfdiff {
namespace {

// The fd the relocated programs name their array by.
constexpr int32_t kArrayFd = 1;

// BPF_ALU | BPF_MOV | BPF_K
constexpr uint8_t kOpMov32Imm = isa::kClassAlu | isa::kAluMov | isa::kSrcK;

// One of prepare_tail_call_tests()'s programs, relocated as it relocates
// them: TAIL_CALL()'s lddw of the marker names the array, its mov of the
// marker the index (relative to the test, or the NULL entry, or one past
// the array). A call of a helper by id (BPF_CALL_REL) it makes a call of
// the kernel function: bpfdiff's engines have none of those helpers.
Result<std::vector<isa::Insn>> Relocate(const kernelsrc::TestBpfTailCall& test, int which, int count,
                                        const kernelsrc::TestBpfMarkers& markers) {
  std::vector<isa::Insn> insns = test.insns;
  for (size_t k = 0; k < insns.size(); ++k) {
    isa::Insn& insn = insns[k];
    if (insn.opcode == isa::kOpLddw && insn.imm == markers.tail_call_marker) {
      insn.src = isa::kPseudoMapFd;
      insn.imm = kArrayFd;
      if (k + 1 < insns.size()) insns[++k].imm = 0;
    } else if (insn.opcode == kOpMov32Imm && insn.imm == markers.tail_call_marker) {
      insn.imm = insn.offset == markers.tail_call_null      ? count
                 : insn.offset == markers.tail_call_invalid ? count + 1
                                                            : which + insn.offset;
      insn.offset = 0;
    } else if (insn.opcode == isa::kOpCall && insn.src == isa::kPseudoCall) {
      return Fail("it calls helper {} (ktime, jiffies, the NUMA node, test_func: none of them is one of "
                  "bpfdiff's helpers)",
                  insn.imm);
    }
  }
  return insns;
}

}  // namespace

TailCallSuite::TailCallSuite(const std::vector<kernelsrc::TestBpfTailCall>& tests,
                             const kernelsrc::TestBpfMarkers& markers) {
  const int count = static_cast<int>(tests.size());
  for (int j = 0; j < count; ++j) {
    relocated_.push_back(Relocate(tests[static_cast<size_t>(j)], j, count, markers));
    stack_depths_.push_back(tests[static_cast<size_t>(j)].stack_depth);
  }
  // Entry j holds test j's program (an entry bpfdiff could not build stays
  // empty), and the last entry is NULL.
  array_.fd = kArrayFd;
  array_.type = isa::MapType::kProgArray;
  array_.key_size = 4;
  array_.value_size = 4;
  array_.max_entries = static_cast<uint32_t>(count + 1);
  for (size_t j = 0; j < relocated_.size(); ++j) {
    if (const auto& relocated = relocated_[j]) {
      entries_.push_back(*relocated);
      entry_stack_depths_.push_back(stack_depths_[j]);
      array_.programs.push_back(static_cast<int32_t>(entries_.size()));  // after the main program
    } else {
      array_.programs.push_back(-1);
    }
  }
  array_.programs.push_back(-1);
}

CaseSource TailCallSuite::CaseOf(int which, bool needs_state) const {
  CaseSource source;
  source.programs.push_back(*Relocated(which));
  source.programs.insert(source.programs.end(), entries_.begin(), entries_.end());
  source.stack_depths.push_back(stack_depths_.at(static_cast<size_t>(which)));
  source.stack_depths.insert(source.stack_depths.end(), entry_stack_depths_.begin(), entry_stack_depths_.end());
  source.maps = {array_};
  source.options.null_context = !needs_state;
  if (needs_state) source.memory.assign(sizeof(int32_t), 0);  // int state = 0
  return source;
}

}  // namespace bpfdiff
