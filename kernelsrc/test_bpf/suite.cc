#include "kernelsrc/test_bpf/suite.h"

#include <algorithm>
#include <array>
#include <string_view>

#include <fmt/format.h>

#include "kernelsrc/test_bpf/bridge.h"

namespace bpfdiff::kernelsrc {
namespace {

isa::Insn FromKernel(const bpfdiff_kjit_insn& insn) {
  isa::Insn out;
  out.opcode = insn.code;
  out.dst = insn.regs & 0x0f;
  out.src = insn.regs >> 4;
  out.offset = insn.off;
  out.imm = insn.imm;
  return out;
}

std::vector<isa::Insn> FromKernel(const bpfdiff_kjit_insn* insns, uint32_t length) {
  std::vector<isa::Insn> out;
  out.reserve(length);
  for (uint32_t i = 0; i < length; ++i) out.push_back(FromKernel(insns[i]));
  return out;
}

bpfdiff_test_bpf_suite ToBridge(TestBpfSuite suite) {
  return suite == TestBpfSuite::kTailCalls ? BPFDIFF_TEST_BPF_TAIL_CALLS : BPFDIFF_TEST_BPF_CASES;
}

bpfdiff_test_bpf_constants Constants(const bpfdiff_test_bpf_file* file) {
  bpfdiff_test_bpf_constants constants;
  file->get_constants(&constants);
  return constants;
}

}  // namespace

Result<TestBpfFile> TestBpfFile::Open(std::string_view version) {
  if (version.empty()) return TestBpfFile(bpfdiff_linked_test_bpf[0].file());
  std::string linked;
  for (const bpfdiff_test_bpf_linked* entry = bpfdiff_linked_test_bpf; entry->version != nullptr; ++entry) {
    if (version == entry->version) return TestBpfFile(entry->file());
    linked += fmt::format("{}{}", linked.empty() ? "" : ", ", entry->version);
  }
  return Fail("this build holds no lib/test_bpf.c of Linux {} (it holds {})", version, linked);
}

int TestBpfFile::Count(TestBpfSuite suite) const { return file_->count(ToBridge(suite)); }

TestBpfMarkers TestBpfFile::Markers() const {
  const bpfdiff_test_bpf_constants c = Constants(file_);
  return {c.max_testruns,      c.max_insns,         c.tail_call_marker,   c.tail_call_null,
          c.tail_call_invalid, c.func_test_func,    c.has_tail_call_field != 0, c.cpu_v4 != 0};
}

Result<std::pair<int, int>> TestBpfFile::Select(TestBpfSuite suite, const TestBpfSelection& selection) const {
  std::array<char, 256> message{};
  int first = 0, last = 0;
  if (file_->select(ToBridge(suite), selection.name.c_str(), selection.id, selection.first,
                              selection.last, &first, &last, message.data(), message.size()) != 0) {
    std::string_view text(message.data());
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
    return Fail("{}", text);
  }
  // Past the suite's end, test_bpf's loop stops at its last case.
  return std::pair{first, std::min(last, Count(suite) - 1)};
}

TestBpfCase TestBpfFile::Case(int index) const {
  const bpfdiff_test_bpf_constants c = Constants(file_);
  bpfdiff_test_bpf_case raw;
  file_->get_case(index, &raw);
  TestBpfCase out;
  out.index = index;
  out.name = raw.descr;
  out.classic = (raw.aux & c.type_classic) != 0;
  out.no_data = (raw.aux & c.flag_no_data) != 0;
  out.large_mem = (raw.aux & c.flag_large_mem) != 0;
  out.has_fill_helper = raw.has_fill_helper != 0;
  for (int i = 0; i < raw.subtests; ++i) out.subtests.push_back(TestBpfSubtest{raw.data_size[i], raw.result[i]});
  return out;
}

Result<TestBpfProgram> TestBpfFile::Program(int index) const {
  TestBpfProgram program;
  std::array<char, 256> message{};
  auto take = [](void* owner, const bpfdiff_kjit_insn* insns, uint32_t length, uint32_t stack_depth) {
    auto* out = static_cast<TestBpfProgram*>(owner);
    out->insns = FromKernel(insns, length);
    out->stack_depth = stack_depth;
  };
  if (file_->program(index, take, &program, message.data(), message.size()) != 0) {
    return Fail("{}", message.data());
  }
  return program;
}

Result<std::vector<uint8_t>> TestBpfFile::Context(int index, int sub) const {
  // A socket buffer or data_size bytes; test_bpf's data sizes are small
  // (MAX_DATA) but FLAG_LARGE_MEM's are not.
  const TestBpfCase test = Case(index);
  size_t capacity = 4096;
  if (sub < static_cast<int>(test.subtests.size()) && test.subtests[sub].data_size > 0) {
    capacity = std::max(capacity, static_cast<size_t>(test.subtests[sub].data_size));
  }
  std::vector<uint8_t> bytes(capacity);
  std::array<char, 256> message{};
  size_t size = 0;
  if (file_->context(index, sub, bytes.data(), bytes.size(), &size, message.data(), message.size()) != 0) {
    return Fail("{}", message.data());
  }
  if (size > capacity) return Fail("the context of {} is {} bytes, more than the {} read", test.name, size, capacity);
  bytes.resize(size);
  return bytes;
}

TestBpfTailCall TestBpfFile::TailCall(int index) const {
  const bpfdiff_test_bpf_constants c = Constants(file_);
  bpfdiff_test_bpf_tail_call raw;
  file_->get_tail_call(index, &raw);
  TestBpfTailCall out;
  out.index = index;
  out.name = raw.descr;
  out.insns = FromKernel(raw.insns, raw.length);
  out.needs_state = (raw.flags & c.tail_flag_need_state) != 0;
  out.result_in_state = (raw.flags & c.tail_flag_result_in_state) != 0;
  out.result = raw.result;
  out.has_tail_call = raw.has_tail_call != 0;
  out.stack_depth = static_cast<uint32_t>(raw.stack_depth);
  return out;
}

}  // namespace bpfdiff::kernelsrc
