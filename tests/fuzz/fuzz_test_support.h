// Inputs for the fuzz-layer tests: random structured and raw inputs from a
// caller's PRNG (so every test is reproducible from its fixed seed), and one
// differential harness per test process (creating it maps a sandbox).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "fuzz/diff/diff_harness.h"

namespace bpfdiff::fuzz {

// A valid 16-byte structured header (kFormatVersion, a mode byte that is not
// raw, random configuration, reserved byte 0) followed by `records` random
// 8-byte records.
std::vector<uint8_t> RandomStructuredInput(std::mt19937_64& random, size_t records);
// As above with between `min_records` and `max_records` records.
std::vector<uint8_t> RandomStructuredInput(std::mt19937_64& random, size_t min_records, size_t max_records);

// kFormatVersion, kModeRaw, a random input memory of up to 16 bytes, then
// `slots` random 8-byte instruction slots.
std::vector<uint8_t> RandomRawInput(std::mt19937_64& random, size_t slots);

// The interpreter and both JIT lowerings, without planted bugs; created on
// first use, then shared by every test of the process. Null (and a test
// failure saying why) when the sandbox cannot be created.
DiffHarness* SharedHarness();

// Every program of the case as numbered slots with bytes and text, then
// its configuration: what a fuzz input means, for failure messages.
std::string DescribeSource(const CaseSource& source);
// The maps (with initial values), the input memory and the load options,
// one line each.
std::string DescribeConfiguration(const CaseSource& source);

// For failure messages: the input as hex bytes.
std::string Hex(const std::vector<uint8_t>& bytes);

}  // namespace bpfdiff::fuzz
