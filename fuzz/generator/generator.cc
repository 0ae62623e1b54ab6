#include "fuzz/generator/generator.h"

#include <algorithm>

#include "fuzz/generator/data_stream.h"
#include "fuzz/generator/far_branch.h"
#include "fuzz/generator/function_builder.h"
#include "fuzz/generator/fuzz_format.h"
#include "fuzz/generator/interesting_values.h"
#include "fuzz/generator/record_reader.h"
#include "isa/program.h"
#include "oracle/guest_layout.h"

namespace bpfdiff::fuzz {
namespace {

constexpr uint32_t kValueSizes[] = {8, 16, 24, 64};

std::optional<CaseSource> DecodeRaw(std::span<const uint8_t> input) {
  // The input memory (version 2), then instruction slots. Drop the slots
  // that name no form (and the second slot of an lddw travels with its
  // first), keep the rest as it is; the load step's validation decides.
  const RawLayout layout = RawLayoutOf(input.data(), input.size());
  std::vector<isa::Insn> insns;
  const auto bytes = input.subspan(layout.instructions_begin);
  for (size_t i = 0; i + isa::kInsnSize <= bytes.size(); i += isa::kInsnSize) {
    const isa::Insn insn = isa::Insn::FromBytes(&bytes[i]);
    const bool second_of_lddw = !insns.empty() && insns.back().opcode == isa::kOpLddw;
    if (second_of_lddw || isa::Classify(insn)) insns.push_back(insn);
  }
  if (insns.empty()) return std::nullopt;
  CaseSource source;
  source.programs.push_back(std::move(insns));
  source.memory.assign(input.begin() + static_cast<ptrdiff_t>(layout.memory_begin),
                       input.begin() + static_cast<ptrdiff_t>(layout.memory_end));
  return source;
}

// The maps the header asks for (bits of byte 3, tail-call targets in byte
// 4), array values drawn from `data`, each recorded in the layout the
// builders aim their accesses at.
void DecodeMaps(const RecordReader& records, DataStream& data, CaseSource& source, CaseLayout& layout) {
  const uint8_t map_bits = records.HeaderByte(3);
  const uint32_t value_size = kValueSizes[(map_bits >> 3) & 3];
  auto add_map = [&](int32_t fd, isa::MapType type, uint32_t key, uint32_t value, uint32_t entries) {
    isa::MapSpec spec{fd, type, key, value, entries, {}, {}};
    if (type != isa::MapType::kProgArray) {
      const auto stride = static_cast<uint32_t>(guest::ArrayValueStride(value));
      // Hash values start empty; array values get data.
      if (type == isa::MapType::kArray) spec.initial_values = data.Bytes(stride * entries);
      layout.value_maps.push_back({fd, type, key, value, entries, static_cast<uint8_t>(source.maps.size())});
    }
    source.maps.push_back(std::move(spec));
  };
  if (map_bits & 1) add_map(1, isa::MapType::kArray, 4, value_size, 4);
  if (map_bits & 2) add_map(2, isa::MapType::kHash, 8, value_size, 8);
  if (map_bits & 4) add_map(3, isa::MapType::kArray, 4, 8, 1);
  const size_t targets = records.HeaderByte(4) % 4;
  if (targets > 0) {
    // Slot i holds program i + 1; the last slot stays empty.
    isa::MapSpec prog_array{4, isa::MapType::kProgArray, 4, 8, static_cast<uint32_t>(targets + 1), {}, {}};
    for (size_t t = 1; t <= targets; ++t) prog_array.programs.push_back(static_cast<int32_t>(t));
    prog_array.programs.push_back(-1);
    layout.prog_array = MapInfo{4, isa::MapType::kProgArray, 4, 8, static_cast<uint32_t>(targets + 1),
                                static_cast<uint8_t>(source.maps.size())};
    source.maps.push_back(std::move(prog_array));
  }
}

// The main program: function 0 and its subprograms (byte 2), laid out one
// after another with local calls resolved. Callees are built first so that
// the main entry knows which of them nobody calls.
std::vector<isa::Insn> BuildMainProgram(RecordReader& records, DataStream& data, CaseLayout& layout) {
  const size_t functions = 1 + records.HeaderByte(2) % (layout.version >= 3 ? 8 : 4);
  layout.signatures.resize(functions);
  const uint8_t callbacks = layout.version >= 7 ? records.HeaderByte(14) >> kCallbackMaskShift : 0;
  for (size_t f = 1; f < functions; ++f) {
    Signature& sig = layout.signatures[f];
    sig.args = static_cast<int>(data.Next() % 6);
    sig.caller_stack = sig.args > 0 && data.Next() % 3 == 0;
    if ((callbacks >> ((f - 1) % 4)) & 1) {
      // bpf_loop's callback too: (i, ctx), no caller's stack.
      sig.callback = true;
      sig.args = std::min(sig.args, 2);
      sig.caller_stack = false;
    }
  }
  if (layout.version >= 8 && functions > 1 && (records.HeaderByte(2) & kExceptionCallbackBit) != 0) {
    // The last function is the program's exception callback: the cookie.
    Signature& sig = layout.signatures[functions - 1];
    sig = Signature{.args = 1, .exception_callback = true};
  }
  std::vector<FunctionBuilder> builders;
  for (size_t f = 0; f < functions; ++f) {
    builders.emplace_back(layout, f == 0 ? FunctionBuilder::Role::kMainEntry : FunctionBuilder::Role::kSubprogram,
                          f, functions);
  }
  std::vector<bool> called(functions, false);
  layout.throws.assign(functions, false);
  for (size_t f = functions; f-- > 1;) {
    builders[f].Build(records);
    layout.throws[f] = builders[f].throws();
    for (const auto& [slot, callee] : builders[f].local_calls()) called[callee] = true;
  }
  // The main entry's own calls are known only after it is built; it calls
  // at its end whatever no later function calls.
  std::vector<size_t> uncalled;
  for (size_t f = 1; f < functions; ++f) {
    if (!called[f] && !layout.signatures[f].exception_callback) uncalled.push_back(f);
  }
  builders[0].set_uncalled(uncalled);
  builders[0].Build(records);

  std::vector<isa::Insn> program;
  std::vector<size_t> starts;
  for (auto& builder : builders) {
    starts.push_back(program.size());
    program.insert(program.end(), builder.code().begin(), builder.code().end());
  }
  if (layout.signatures[functions - 1].exception_callback) {
    layout.exception_callback_start = static_cast<uint32_t>(starts[functions - 1]);
  }
  for (size_t f = 0; f < functions; ++f) {
    for (const auto& [slot, callee] : builders[f].local_calls()) {
      const size_t at = starts[f] + slot;
      program[at].imm = static_cast<int32_t>(static_cast<int64_t>(starts[callee]) - static_cast<int64_t>(at) - 1);
    }
  }
  return program;
}

}  // namespace

std::optional<CaseSource> DecodeFuzzInput(std::span<const uint8_t> input) {
  if (input.size() < 2 || !IsFormatVersion(input[0])) return std::nullopt;
  if (input[1] == kModeRaw) return DecodeRaw(input);

  RecordReader records(input);
  DataStream data(records.HeaderWord(6));
  CaseSource source;
  CaseLayout layout;
  if (input[0] >= 2) {
    layout.observe_registers = true;
    layout.frame_low = -static_cast<int32_t>(isa::kStackSize) + kObservedRegistersBytes;
    layout.legacy_packet_access = false;
    layout.interesting_addresses = kInterestingAddresses;
  }
  layout.version = input[0];
  layout.magnitudes = input[0] >= 3 && (records.HeaderByte(15) & kOptionMagnitudes) != 0;
  layout.tail_call_chain = input[0] >= 4 && (records.HeaderByte(15) & kOptionTailCallChain) == kOptionTailCallChain;
  layout.chain_to_next = (records.HeaderByte(15) & kOptionChainToNext) != 0;
  layout.chain_upper_garbage = (records.HeaderByte(15) & kOptionChainUpperGarbage) != 0;
  layout.bounds = input[0] >= 4 && (records.HeaderByte(15) & kOptionBounds) != 0;
  layout.context_length = records.HeaderByte(5) % 129;
  source.memory = data.Bytes(layout.context_length);
  source.options.inline_kptr_xchg = records.HeaderByte(14) & 1;
  DecodeMaps(records, data, source, layout);
  source.programs.push_back(BuildMainProgram(records, data, layout));
  if (input[0] >= 6 && (records.HeaderByte(15) & kOptionFarBranch) != 0 &&
      InputHash(input.data(), input.size()) % kFarBranchOneIn == 0) {
    // Before the main entry's first instruction: every jump and local call
    // is relative, so the rest of the program keeps its meaning.
    const auto block = FarBranchBlock(static_cast<uint8_t>(records.HeaderByte(14) >> kFarBranchFillerShift),
                                      static_cast<int32_t>(records.HeaderWord(6)), input[0] >= 7);
    auto& main = source.programs.front();
    main.insert(main.begin(), block.begin(), block.end());
    if (layout.exception_callback_start != 0) layout.exception_callback_start += static_cast<uint32_t>(block.size());
  }
  if (layout.exception_callback_start != 0) source.exception_callbacks = {layout.exception_callback_start};
  // Tail-call targets: one function each.
  for (size_t t = 0; t < records.HeaderByte(4) % 4; ++t) {
    FunctionBuilder target(layout, FunctionBuilder::Role::kTailTarget, t, 1);
    target.Build(records);
    source.programs.push_back(std::move(target.code()));
  }
  return source;
}

std::vector<isa::Insn> GenerateSelfContainedProgram(uint8_t version, uint8_t subprograms,
                                                    std::span<const uint8_t> records, uint64_t seed) {
  std::vector<uint8_t> input(kHeaderSize, 0);
  input[0] = version;
  input[1] = 0;  // structured; no maps (3), tail-call targets (4) or input memory (5)
  input[2] = subprograms;
  for (size_t i = 0; i < 8; ++i) input[6 + i] = static_cast<uint8_t>(seed >> (8 * i));
  input.insert(input.end(), records.begin(), records.end());
  // A structured header of a version the decoder reads always decodes
  // (callers pass a constant); with no maps, input memory or tail-call
  // targets, the case is this one program.
  CaseSource source = DecodeFuzzInput(input).value();
  return std::move(source.programs.front());
}

Result<std::vector<uint8_t>> EncodeRawInput(const CaseSource& source) {
  if (source.programs.size() != 1) return Fail("raw mode holds one program, not {}", source.programs.size());
  if (!source.maps.empty()) return Fail("raw mode holds no maps");
  if (source.options.HasJitOnlyRewrites()) return Fail("raw mode holds no load options");
  for (uint32_t callback : source.exception_callbacks) {
    if (callback != 0) return Fail("raw mode holds no exception callback of a program's own");
  }
  const std::vector<uint8_t>& memory = source.memory;
  if (memory.size() > kMaxRawMemory) {
    return Fail("{} bytes of input memory is more than raw mode holds ({})", memory.size(), kMaxRawMemory);
  }
  std::vector<uint8_t> input = {kFormatVersion, kModeRaw, static_cast<uint8_t>(memory.size()),
                                static_cast<uint8_t>(memory.size() >> 8)};
  input.insert(input.end(), memory.begin(), memory.end());
  for (const isa::Insn& insn : source.programs.front()) {
    uint8_t bytes[isa::kInsnSize];
    insn.ToBytes(bytes);
    input.insert(input.end(), bytes, bytes + isa::kInsnSize);
  }
  return input;
}

void UpgradeFuzzInput(std::vector<uint8_t>& input) {
  if (input.size() < 2 || !IsFormatVersion(input[0]) || input[0] == kFormatVersion) return;
  if (input[0] == 1) {
    // A raw input keeps its case, with a memory length of 0; a structured
    // one keeps its records, which now mean what version 2 makes of them
    // (fuzz_format.h).
    if (input[1] == kModeRaw) input.insert(input.begin() + 2, {0, 0});
    input[0] = 2;
  }
  if (input[0] == 2) {
    // Version 3 reads byte 2 modulo 8 and byte 15 as options: keep the
    // number of subprograms and the ordinary operands.
    if (input[1] != kModeRaw) {
      if (input.size() > 2) input[2] %= 4;
      if (input.size() > 15) input[15] = 0;
    }
    input[0] = 3;
  }
  if (input[0] == 3) {
    // Version 4 reads byte 15 bits 1..6 as the tail-call chain and the
    // bounds mode: both off, every record keeps its meaning.
    if (input[1] != kModeRaw && input.size() > 15) input[15] &= kOptionMagnitudes;
    input[0] = 4;
  }
  if (input[0] == 4) {
    // Version 5 picks among five pointer setups (p0 % 5): p0 % 4 names
    // the same one of the first four.
    if (input[1] != kModeRaw) {
      for (size_t at = kHeaderSize; at + 1 < input.size(); at += kRecordSize) {
        if (input[at] >= kPointerSetupFirst && input[at] <= kPointerSetupLast) input[at + 1] %= 4;
      }
    }
    input[0] = 5;
  }
  if (input[0] == 5) {
    // Version 6 reads byte 15 bit 7 as the far-branch mode: off.
    if (input[1] != kModeRaw && input.size() > 15) input[15] &= static_cast<uint8_t>(~kOptionFarBranch);
    input[0] = 6;
  }
  if (input[0] == 6) {
    // Version 7 reads byte 14 bits 4..7 as the callbacks: none.
    if (input[1] != kModeRaw && input.size() > 14) input[14] &= static_cast<uint8_t>((1u << kCallbackMaskShift) - 1);
    input[0] = 7;
  }
  if (input[0] == 7) {
    // Version 8 reads p0 bit 1 of an early exit as a throw, and byte 2 bit 7
    // as an exception callback of the program's own: none.
    if (input[1] != kModeRaw) {
      if (input.size() > 2) input[2] &= static_cast<uint8_t>(~kExceptionCallbackBit);
      for (size_t at = kHeaderSize; at + 1 < input.size(); at += kRecordSize) {
        if (input[at] >= kEarlyExitFirst && input[at] <= kEarlyExitLast) {
          input[at + 1] &= static_cast<uint8_t>(~kEarlyExitThrows);
        }
      }
    }
    input[0] = 8;
  }
}

}  // namespace bpfdiff::fuzz
