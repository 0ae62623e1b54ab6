#include "tests/fuzz/fuzz_test_support.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "fuzz/generator/fuzz_format.h"
#include "isa/disassembler.h"
#include "isa/insn.h"
#include "support/hex.h"

namespace bpfdiff::fuzz {

std::vector<uint8_t> RandomStructuredInput(std::mt19937_64& random, size_t records) {
  std::vector<uint8_t> input(kHeaderSize + records * kRecordSize);
  for (auto& byte : input) byte = static_cast<uint8_t>(random());
  input[0] = kFormatVersion;
  // Any mode byte but raw means structured; keep the variety of the rest.
  if (input[1] == kModeRaw) input[1] = 0;
  // Byte 15, the options, stays random: half the inputs take their
  // operands from the magnitude classes.
  return input;
}

std::vector<uint8_t> RandomStructuredInput(std::mt19937_64& random, size_t min_records, size_t max_records) {
  const size_t records = min_records + random() % (max_records - min_records + 1);
  return RandomStructuredInput(random, records);
}

std::vector<uint8_t> RandomRawInput(std::mt19937_64& random, size_t slots) {
  // Up to 16 bytes of input memory, then the slots.
  const size_t memory = random() % 17;
  std::vector<uint8_t> input(4 + memory + slots * isa::kInsnSize);
  for (auto& byte : input) byte = static_cast<uint8_t>(random());
  input[0] = kFormatVersion;
  input[1] = kModeRaw;
  input[2] = static_cast<uint8_t>(memory);
  input[3] = 0;
  return input;
}

DiffHarness* SharedHarness() {
  static auto created = DiffHarness::Create(PlantedBugs{});
  if (!created) {
    ADD_FAILURE() << "DiffHarness::Create: " << created.message();
    return nullptr;
  }
  return created->get();
}

std::string DescribeSource(const CaseSource& source) {
  std::string out;
  for (size_t p = 0; p < source.programs.size(); ++p) {
    out += fmt::format("program {}:\n{}", p, isa::DisassembleForDisplay(source.programs[p]));
  }
  return out + DescribeConfiguration(source);
}

std::string DescribeConfiguration(const CaseSource& source) {
  std::string out;
  for (const auto& map : source.maps) {
    out += fmt::format("map fd {}: {} key {} value {} entries {}", map.fd, isa::MapTypeName(map.type),
                       map.key_size, map.value_size, map.max_entries);
    for (size_t slot = 0; slot < map.programs.size(); ++slot) {
      out += fmt::format("{}{}", slot == 0 ? " programs " : ",", map.programs[slot]);
    }
    out += "\n";
    if (!map.initial_values.empty()) out += "  values " + FormatHexBytes(map.initial_values, "") + "\n";
  }
  out += fmt::format("memory: {} bytes{}{}\n", source.memory.size(), source.memory.empty() ? "" : " ",
                     FormatHexBytes(source.memory, ""));
  out += fmt::format("inline kptr_xchg: {}\n", source.options.inline_kptr_xchg);
  // Only where named: the goldens of the versions before 8 stay as they were.
  for (size_t p = 0; p < source.exception_callbacks.size(); ++p) {
    if (source.exception_callbacks[p] != 0) {
      out += fmt::format("program {}: exception callback at slot {}\n", p, source.exception_callbacks[p]);
    }
  }
  return out;
}

std::string Hex(const std::vector<uint8_t>& bytes) { return FormatHexBytes(bytes, " "); }

}  // namespace bpfdiff::fuzz
