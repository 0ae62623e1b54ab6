#include "fuzz/generator/mutator.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <random>
#include <vector>

#include "fuzz/generator/fuzz_format.h"
#include "fuzz/generator/generator.h"
#include "fuzz/generator/magnitudes.h"
#include "isa/opcode_table.h"

namespace bpfdiff::fuzz {
namespace {

// std::mt19937 is specified exactly by the standard; its raw outputs (not
// the library's distributions) keep the mutator the same everywhere.
class Random {
 public:
  explicit Random(unsigned seed) : engine_(seed) {}
  uint32_t Below(uint32_t n) { return n == 0 ? 0 : static_cast<uint32_t>(engine_() % n); }
  uint8_t Byte() { return static_cast<uint8_t>(engine_()); }
  bool Chance(uint32_t one_in) { return Below(one_in) == 0; }

 private:
  std::mt19937 engine_;
};

using Record = std::array<uint8_t, kRecordSize>;

Record RandomRecord(Random& random) {
  Record record;
  for (auto& b : record) b = random.Byte();
  // Never a stray end-of-function by accident: those are inserted on purpose.
  if (record[0] == kEndOfFunction) record[0] = random.Byte() % kEndOfFunction;
  return record;
}

// One instruction of a random form of the opcode table, with random fields
// (raw mode: the decoder decides whether they are valid).
std::array<uint8_t, 8> RandomSlot(Random& random) {
  const auto forms = isa::AllForms();
  const isa::Form& form = forms[random.Below(static_cast<uint32_t>(forms.size()))];
  std::array<uint8_t, 8> slot;
  for (auto& b : slot) b = random.Byte();
  slot[0] = form.opcode;
  // Draws are sequenced: the order of evaluation of operands is unspecified,
  // and mutants must be the same whichever compiler built the mutator.
  const uint32_t dst = random.Below(11);
  const uint32_t src = random.Below(11);
  slot[1] = static_cast<uint8_t>(dst | src << 4);
  if (random.Chance(2)) slot[2] = slot[3] = 0;  // offsets are often zero
  return slot;
}

size_t MutateStructured(std::vector<uint8_t>& input, size_t max_size, Random& random) {
  std::vector<Record> records;
  for (size_t at = kHeaderSize; at < input.size(); at += kRecordSize) {
    Record record{};
    for (size_t i = 0; i < kRecordSize && at + i < input.size(); ++i) record[i] = input[at + i];
    records.push_back(record);
  }
  const size_t max_records = max_size > kHeaderSize ? (max_size - kHeaderSize) / kRecordSize : 0;
  const int mutations = 1 + static_cast<int>(random.Below(3));
  for (int m = 0; m < mutations; ++m) {
    const size_t n = records.size();
    const auto at = [&](size_t extra) { return random.Below(static_cast<uint32_t>(n + extra)); };
    switch (random.Below(9)) {
      case 0:
      case 1:  // insert a new record
        if (n < max_records) {
          const size_t where = at(1);  // sequenced, as in RandomSlot
          records.insert(records.begin() + where, RandomRecord(random));
        }
        break;
      case 2:  // delete a record
        if (n > 0) records.erase(records.begin() + at(0));
        break;
      case 3:  // replace a record
        if (n > 0) records[at(0)] = RandomRecord(random);
        break;
      case 4:  // change one operand (or the construct) of a record
        if (n > 0) records[at(0)][random.Below(kRecordSize)] = random.Byte();
        break;
      case 5:  // a record's word (p3 .. p6) becomes a magnitude-class value
        if (n > 0) {
          const size_t i = at(0);
          const auto value = static_cast<uint32_t>(
              kMagnitudes32[random.Below(static_cast<uint32_t>(std::size(kMagnitudes32)))]);
          for (size_t b = 0; b < 4; ++b) records[i][4 + b] = static_cast<uint8_t>(value >> (8 * b));
        }
        break;
      case 6:  // duplicate a record (loops and regions like company)
        if (n > 0 && n < max_records) {
          const size_t i = at(0);
          records.insert(records.begin() + i, records[i]);
        }
        break;
      case 7:  // swap two records, or end the current function here
        if (n > 1 && !random.Chance(4)) {
          const size_t i = at(0);
          const size_t j = at(0);  // sequenced: argument order is unspecified
          std::swap(records[i], records[j]);
        } else if (n < max_records) {
          Record end = RandomRecord(random);
          end[0] = kEndOfFunction;
          records.insert(records.begin() + at(1), end);
        }
        break;
      default:  // the case's configuration (bytes 2 .. 15, the options too)
        input[2 + random.Below(kHeaderSize - 2)] = random.Byte();
        break;
    }
  }
  input.resize(kHeaderSize);
  for (const Record& record : records) input.insert(input.end(), record.begin(), record.end());
  if (input.size() > max_size) input.resize(max_size - (max_size - kHeaderSize) % kRecordSize);
  return input.size();
}

size_t MutateRaw(std::vector<uint8_t>& input, size_t max_size, Random& random) {
  // Instruction slots start after the input memory; a changed byte may be
  // anywhere past the mode (the memory's length and bytes too).
  const size_t first = RawLayoutOf(input.data(), input.size()).instructions_begin;
  const size_t slots = (input.size() - first) / 8;
  const size_t at = first + 8 * random.Below(static_cast<uint32_t>(slots + 1));
  switch (random.Below(4)) {
    case 0: {  // insert an instruction
      const auto slot = RandomSlot(random);
      input.insert(input.begin() + static_cast<ptrdiff_t>(at), slot.begin(), slot.end());
      break;
    }
    case 1:  // delete one
      if (slots > 0 && at + 8 <= input.size()) {
        input.erase(input.begin() + static_cast<ptrdiff_t>(at), input.begin() + static_cast<ptrdiff_t>(at + 8));
      }
      break;
    case 2:  // replace one
      if (slots > 0 && at + 8 <= input.size()) {
        const auto slot = RandomSlot(random);
        std::copy(slot.begin(), slot.end(), input.begin() + static_cast<ptrdiff_t>(at));
      }
      break;
    default:  // change a byte
      if (input.size() > 2) input[2 + random.Below(static_cast<uint32_t>(input.size() - 2))] = random.Byte();
      break;
  }
  if (input.size() > max_size) input.resize(max_size);
  return input.size();
}

}  // namespace

size_t MutateInput(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  Random random(seed);
  if (max_size < kHeaderSize) return std::min(size, max_size);
  std::vector<uint8_t> input(data, data + size);
  UpgradeFuzzInput(input);
  if (input.size() < 2 || input[0] != kFormatVersion) {
    // Not ours: start a structured input with a random configuration.
    input.assign(kHeaderSize, 0);
    input[0] = kFormatVersion;
    for (size_t i = 2; i < kHeaderSize; ++i) input[i] = random.Byte();
  }
  // Now and then switch between modes (a raw input keeps its bytes). A short
  // raw input that becomes structured grows to a whole header first.
  if (random.Chance(64)) input[1] = input[1] == kModeRaw ? 0 : kModeRaw;
  if (input[1] != kModeRaw && input.size() < kHeaderSize) input.resize(kHeaderSize, 0);
  const size_t out = input[1] == kModeRaw ? MutateRaw(input, max_size, random)
                                          : MutateStructured(input, max_size, random);
  std::memcpy(data, input.data(), out);
  return out;
}

size_t CrossOverInputs(const uint8_t* first, size_t first_size, const uint8_t* second,
                       size_t second_size, uint8_t* out, size_t max_out, unsigned seed) {
  Random random(seed);
  if (first_size < kHeaderSize || max_out < kHeaderSize) {
    const size_t n = std::min(first_size, max_out);
    std::memcpy(out, first, n);
    return n;
  }
  const size_t first_records = (first_size - kHeaderSize) / kRecordSize;
  const size_t second_records = second_size > kHeaderSize ? (second_size - kHeaderSize) / kRecordSize : 0;
  const size_t keep = random.Below(static_cast<uint32_t>(first_records + 1));
  const size_t from = random.Below(static_cast<uint32_t>(second_records + 1));
  std::vector<uint8_t> result(first, first + kHeaderSize + keep * kRecordSize);
  if (second_size > kHeaderSize) {
    result.insert(result.end(), second + kHeaderSize + from * kRecordSize,
                  second + kHeaderSize + second_records * kRecordSize);
  }
  UpgradeFuzzInput(result);  // what the mutator writes is of the current version
  if (result.size() > max_out) result.resize(max_out - (max_out - kHeaderSize) % kRecordSize);
  std::memcpy(out, result.data(), result.size());
  return result.size();
}

}  // namespace bpfdiff::fuzz
