#include "tests/cli/runner_rules.h"

#include <cctype>
#include <stdexcept>

#include <fmt/format.h>

namespace bpfdiff::test {
namespace {

void StripOneNewline(std::string& text) {
  if (!text.empty() && text.back() == '\n') text.pop_back();
}

void StripTrailingSpace(std::string& text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
}

}  // namespace

std::string RunnerHex(std::span<const uint8_t> bytes) {
  std::string text;
  for (uint8_t byte : bytes) text += fmt::format("{:02x}  ", byte);
  return text;
}

RunnerJudgement JudgeLikeRunner(const RunnerExpectation& expected, const ProcessResult& reply) {
  std::string value = reply.out;
  std::string error = reply.err;
  StripOneNewline(value);
  StripOneNewline(error);

  if (reply.exit_code != 0) {
    if (value.empty() && !error.empty()) value = error;
    if (expected.error.empty()) {
      return {RunnerVerdict::kError, fmt::format("plugin exited {} with '{}'", reply.exit_code, value)};
    }
    if (const size_t cr = value.find('\r'); cr != std::string::npos) value.resize(cr);
    StripTrailingSpace(value);
    if (value == expected.error) return {RunnerVerdict::kPass, ""};
    return {RunnerVerdict::kFail,
            fmt::format("plugin exited {} with '{}', expected '{}'", reply.exit_code, value, expected.error)};
  }

  uint64_t result = 0;
  try {
    result = std::stoull(value, nullptr, 16);
  } catch (const std::exception&) {  // the runner's own reading of stdout throws on non-numbers
    return {RunnerVerdict::kError, fmt::format("stdout '{}' is not a hex number", value)};
  }
  if (result != expected.result) {
    return {RunnerVerdict::kFail, fmt::format("r0 0x{:x}, expected 0x{:x}", result, expected.result)};
  }
  return {RunnerVerdict::kPass, ""};
}

}  // namespace bpfdiff::test
