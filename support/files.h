// Reading and writing whole files, with errors as values.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "support/result.h"

namespace bpfdiff {

Result<std::string> ReadTextFile(const std::filesystem::path& path);
Result<std::vector<uint8_t>> ReadBinaryFile(const std::filesystem::path& path);
Status WriteFile(const std::filesystem::path& path, std::span<const uint8_t> bytes);
Status WriteFile(const std::filesystem::path& path, std::string_view text);

// Regular files below `path` (or `path` itself when it is a file), sorted by
// name so that every run visits them in the same order.
Result<std::vector<std::filesystem::path>> ListFiles(const std::filesystem::path& path,
                                                     std::string_view extension = "");

}  // namespace bpfdiff
