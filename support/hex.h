// Hexadecimal byte strings, as the bpf_conformance plugin protocol and the
// `-- mem` section use them: pairs of hex digits, optionally separated by
// white space ("aa bb 11" or "aabb11").
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "support/result.h"

namespace bpfdiff {

Result<std::vector<uint8_t>> ParseHexBytes(std::string_view text);

// "aa bb 11" with `separator` between bytes (may be empty).
std::string FormatHexBytes(std::span<const uint8_t> bytes, std::string_view separator = " ");

// Parses an unsigned integer written in decimal or with a 0x prefix.
Result<uint64_t> ParseUnsigned(std::string_view text);

}  // namespace bpfdiff
