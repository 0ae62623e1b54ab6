#include "harness/conformance/case_file.h"

#include <algorithm>

#include <fmt/format.h>

#include "isa/assembler.h"
#include "isa/data_file.h"
#include "support/files.h"

namespace bpfdiff {

Result<CaseFile> ParseCaseText(std::string_view text, bool is_data, std::string name) {
  CaseFile file;
  file.name = std::move(name);
  if (!is_data) {
    auto insns = isa::Assemble(text);
    if (!insns) return insns.error();
    file.source.programs.push_back(std::move(insns).value());
    return file;
  }
  auto data = isa::ParseDataFile(text);
  if (!data) return data.error();
  file.source.programs = std::move(data->programs);
  file.source.exception_callbacks = std::move(data->exception_callbacks);
  file.source.maps = std::move(data->maps);
  file.source.memory = std::move(data->memory);
  file.source.options.inline_kptr_xchg = data->options.kptr_xchg_inline;
  file.expected.result = data->expected_result;
  file.expected.error = data->expected_error;
  if (data->expected_trace) {
    std::vector<HelperCall> trace;
    for (const auto& call : *data->expected_trace) trace.push_back({call.id, call.args, call.ret});
    file.expected.trace = std::move(trace);
  }
  file.warnings = std::move(data->warnings);
  return file;
}

Result<CaseFile> ReadCaseFile(const std::filesystem::path& path) {
  auto text = ReadTextFile(path);
  if (!text) return text.error();
  return WithContext(ParseCaseText(*text, path.extension() == ".data", path.filename().string()),
                     path.string());
}

std::string ErrorText(const Outcome& outcome) {
  if (outcome.end == EndKind::kExit || outcome.end == EndKind::kUnwind) return "";
  return outcome.Summary();
}

Expectations ExpectationsForEngine(Expectations expected, bool ran_jit_only_rewrites, const LoadOptions& options,
                                   std::span<const int32_t> inlined_by_code) {
  const std::span<const int32_t> rewritten = options.JitInlinedHelpers();
  auto in = [](std::span<const int32_t> ids, int32_t id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); };
  if (expected.trace) {
    std::erase_if(*expected.trace, [&](const HelperCall& call) {
      return (ran_jit_only_rewrites && in(rewritten, call.id)) || in(inlined_by_code, call.id);
    });
  }
  return expected;
}

std::optional<std::string> CheckExpectations(const Expectations& expected, const Outcome& outcome) {
  const std::string error = ErrorText(outcome);
  if (expected.error) {
    if (error.empty()) {
      return fmt::format("expected error '{}', got {}", *expected.error, outcome.Summary());
    }
    if (!expected.error->empty() && *expected.error != error) {
      return fmt::format("expected error '{}', got '{}'", *expected.error, error);
    }
  } else if (!error.empty()) {
    return fmt::format("unexpected {}", error);
  } else if (expected.result && *expected.result != outcome.r0) {
    return fmt::format("r0 is 0x{:x}, expected 0x{:x}", outcome.r0, *expected.result);
  }
  if (expected.trace) {
    const auto& want = *expected.trace;
    const auto& got = outcome.helper_calls;
    for (size_t i = 0; i < std::max(want.size(), got.size()); ++i) {
      if (i >= got.size()) return fmt::format("missing helper call #{}: {}", i, FormatHelperCall(want[i]));
      if (i >= want.size()) return fmt::format("unexpected helper call #{}: {}", i, FormatHelperCall(got[i]));
      if (!(want[i] == got[i])) {
        return fmt::format("helper call #{} is {}, expected {}", i, FormatHelperCall(got[i]),
                           FormatHelperCall(want[i]));
      }
    }
  }
  return std::nullopt;
}

}  // namespace bpfdiff
