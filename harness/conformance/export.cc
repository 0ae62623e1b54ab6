#include "harness/conformance/export.h"

#include "harness/conformance/case_file.h"
#include "isa/data_writer.h"

namespace bpfdiff {

std::string ExportCase(const CaseSource& source, const Outcome& reference, std::string_view comment) {
  isa::DataFile file;
  file.programs = source.programs;
  file.exception_callbacks = source.exception_callbacks;
  file.maps = source.maps;
  file.memory = source.memory;
  file.options.kptr_xchg_inline = source.options.inline_kptr_xchg;
  const std::string error = ErrorText(reference);
  if (error.empty()) {
    file.expected_result = reference.r0;
  } else {
    file.expected_error = error;
  }
  std::vector<isa::ExpectedCall> trace;
  for (const auto& call : reference.helper_calls) trace.push_back({call.id, call.args, call.ret});
  file.expected_trace = std::move(trace);
  return isa::FormatDataFile(file, comment);
}

}  // namespace bpfdiff
