// Reading JSON inputs (report inputs, fuzz stats files, history) field by
// field, with errors as values.
//
// nlohmann's accessors throw on a wrong type; inputs come from other
// processes (and from people editing files by hand), so every read checks
// the type first and a mismatch becomes a message that names the field.
// Unknown keys are ignored: writers may add fields without breaking readers.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "support/result.h"

namespace bpfdiff {

using Json = nlohmann::ordered_json;  // keeps the writer's key order

// The whole file as JSON: an error for a missing file or malformed text.
Result<Json> ReadJsonFile(const std::filesystem::path& path);

// `where` prefixes messages ("fuzz stats x.json").
Result<std::string> RequiredString(const Json& object, std::string_view key, std::string_view where);
Result<double> RequiredNumber(const Json& object, std::string_view key, std::string_view where);
Result<int64_t> RequiredCount(const Json& object, std::string_view key, std::string_view where);
Result<bool> RequiredBool(const Json& object, std::string_view key, std::string_view where);

// Absent (or null) keys give nullopt; a present key of the wrong type is
// still an error.
Result<std::optional<std::string>> OptionalString(const Json& object, std::string_view key,
                                                  std::string_view where);
Result<std::optional<double>> OptionalNumber(const Json& object, std::string_view key, std::string_view where);
Result<std::optional<int64_t>> OptionalCount(const Json& object, std::string_view key, std::string_view where);
// An exit status as a shell writes it: an integer that fits an int (a
// number such as 1e19 is refused by name rather than cast out of range).
Result<std::optional<int64_t>> OptionalExitStatus(const Json& object, std::string_view key, std::string_view where);

// Text for JSON output: invalid UTF-8 in a reason is replaced, not thrown.
std::string DumpJson(const Json& json, int indent = 2);

}  // namespace bpfdiff
