// Reading a case from a file a user names: a bpf_conformance `.data` file
// (with our extension sections), or BPF assembly in any other file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "oracle/load.h"
#include "oracle/outcome.h"
#include "support/result.h"

namespace bpfdiff {

struct Expectations {
  std::optional<uint64_t> result;
  std::optional<std::string> error;  // empty text: any error
  std::optional<std::vector<HelperCall>> trace;
};

struct CaseFile {
  std::string name;  // file name
  CaseSource source;
  Expectations expected;
  std::vector<std::string> warnings;
};

Result<CaseFile> ReadCaseFile(const std::filesystem::path& path);
// Parses `text` as a `.data` file (is_data) or as assembly.
Result<CaseFile> ParseCaseText(std::string_view text, bool is_data, std::string name);

// What a run's outcome says, as the `-- error` section spells it: empty for
// a normal exit, otherwise the outcome's summary.
std::string ErrorText(const Outcome& outcome);

// Whether `outcome` meets the file's expectations; the reason when not.
std::optional<std::string> CheckExpectations(const Expectations& expected, const Outcome& outcome);

// The expectations one engine must meet: the file's, less the expected
// calls to the helpers the JIT-only rewrites replace when the engine ran
// them (LoadOptions::JitInlinedHelpers), and to those its code performs
// inline whatever the case asks (Engine::inlined_helpers): a file's trace
// is the helper form's, the interpreter's.
Expectations ExpectationsForEngine(Expectations expected, bool ran_jit_only_rewrites, const LoadOptions& options,
                                   std::span<const int32_t> inlined_by_code = {});

}  // namespace bpfdiff
