#include "tests/jit/jit_test_support.h"

#include <fmt/format.h>

#include <cstring>

#include "fuzz/generator/generator.h"
#include "harness/diff/differential.h"
#include "harness/diff/engines.h"
#include "isa/assembler.h"
#include "jit/a64/disasm/a64_disassembler.h"
#include "jit/registers.h"
#include "support/files.h"

namespace bpfdiff::jit_testing {

std::filesystem::path OwnVectorsDir() { return std::filesystem::path(BPFDIFF_SOURCE_DIR) / "tests/conformance"; }

std::optional<std::filesystem::path> SharedSuiteDir() {
  const std::filesystem::path dir(BPFDIFF_CONFORMANCE_SUITE);
  std::error_code ec;
  if (dir.empty() || !std::filesystem::is_directory(dir, ec)) return std::nullopt;
  return dir;
}

std::filesystem::path FuzzSeedDir() { return std::filesystem::path(BPFDIFF_SOURCE_DIR) / "fuzz/corpus/diff_fuzzer"; }

std::vector<NamedCase> ReadDataFiles(const std::filesystem::path& dir, std::string_view name_filter) {
  std::vector<NamedCase> cases;
  auto files = ListFiles(dir, ".data");
  if (!files) {
    ADD_FAILURE() << files.message();
    return cases;
  }
  for (const auto& path : *files) {
    const std::string name = path.filename().string();
    if (name.find(name_filter) == std::string::npos) continue;
    auto file = ReadCaseFile(path);
    if (!file) {
      ADD_FAILURE() << name << ": " << file.message();
      continue;
    }
    cases.push_back({name, std::move(file->source), std::move(file->expected)});
  }
  return cases;
}

std::vector<NamedCase> ReadFuzzSeeds(const std::filesystem::path& dir) {
  std::vector<NamedCase> cases;
  auto files = ListFiles(dir);
  if (!files) {
    ADD_FAILURE() << files.message();
    return cases;
  }
  for (const auto& path : *files) {
    auto bytes = ReadBinaryFile(path);
    if (!bytes) {
      ADD_FAILURE() << bytes.message();
      continue;
    }
    auto source = fuzz::DecodeFuzzInput(*bytes);
    if (!source) continue;
    cases.push_back({path.filename().string(), std::move(*source), {}});
  }
  return cases;
}

std::vector<isa::Insn> Asm(std::string_view text) {
  auto insns = isa::Assemble(text);
  if (!insns) {
    ADD_FAILURE() << "does not assemble: " << insns.message();
    return {};
  }
  return std::move(insns).value();
}

isa::Program MustProgram(std::vector<isa::Insn> insns) {
  auto program = isa::MakeProgram(std::move(insns));
  if (!program) {
    ADD_FAILURE() << "not a valid program: " << program.message();
    return {};
  }
  return std::move(program).value();
}

std::unique_ptr<Sandbox> MakeSandbox(const SandboxOptions& options) {
  auto sandbox = Sandbox::Create(options);
  if (!sandbox) {
    ADD_FAILURE() << "sandbox: " << sandbox.message();
    return nullptr;
  }
  return std::move(sandbox).value();
}

std::vector<uint64_t> RunOnInterpAndJit(std::vector<isa::Insn> insns,
                                        const std::vector<std::vector<uint8_t>>& inputs) {
  auto sandbox = MakeSandbox();
  if (sandbox == nullptr || inputs.empty()) return {};
  auto engines = MakeEngines(*sandbox, "all");
  EXPECT_TRUE(engines.ok());
  DifferentialRunner runner(*sandbox, std::move(engines).value());
  CaseSource source;
  source.programs.push_back(std::move(insns));
  source.memory = inputs.front();
  RunOptions options;
  options.engine_limit = 2;  // interp, jit
  options.input_variants.assign(inputs.begin() + 1, inputs.end());
  const CaseRun run = runner.Run(source, options);
  EXPECT_FALSE(run.load_error.has_value()) << run.load_error.value_or("");
  if (run.load_error) return {};
  std::vector<uint64_t> results;
  std::vector<const std::vector<EngineRun>*> all = {&run.runs};
  for (const auto& variant : run.variants) all.push_back(&variant);
  for (const auto* runs : all) {
    EXPECT_EQ(runs->size(), 2u);
    if (runs->size() != 2) return {};
    const EngineRun& jit = (*runs)[1];
    EXPECT_EQ(jit.prepare_error, "");
    if (!jit.outcome) return {};
    EXPECT_TRUE(jit.verdict.match()) << jit.verdict.Describe();
    EXPECT_EQ(jit.outcome->end, EndKind::kExit) << jit.outcome->Summary();
    results.push_back(jit.outcome->r0);
  }
  return results;
}

std::vector<uint32_t> ProbeLoadSlots(const isa::Program& program, uint32_t first, uint32_t end) {
  std::vector<uint32_t> slots;
  for (uint32_t slot = first; slot < end; ++slot) {
    const isa::Insn& insn = program.insns[slot];
    if (insn.opcode == isa::kOpLddw) {
      ++slot;
      continue;
    }
    if (isa::ClassOf(insn.opcode) != isa::kClassLdx) continue;
    const uint8_t mode = isa::ModeOf(insn.opcode);
    if (mode == isa::kModeProbeMem || mode == isa::kModeProbeMemSx) slots.push_back(slot);
  }
  return slots;
}

uint64_t ProbeLoadAddress(const jit::CompiledSubprogram& sub, uint32_t slot) {
  const uint32_t next_word = sub.offsets[slot - sub.first_slot + 1];
  return sub.rx_image + 4 * (uint64_t{next_word} - 1);
}

namespace {

struct RawEntry {
  uint64_t insn_field;  // RX address of the entry's insn field
  int32_t insn;
  int32_t fixup;
  int16_t type;
  int16_t data;

  uint64_t target() const { return insn_field + static_cast<uint64_t>(static_cast<int64_t>(insn)); }
  uint64_t resume() const { return insn_field + 4 - (static_cast<uint32_t>(fixup) & ((1u << 27) - 1)); }
  int reg() const { return static_cast<int>(static_cast<uint32_t>(fixup) >> 27); }
};

const A64Disassembler& Disassembler() {
  static const A64Disassembler* disassembler = [] {
    auto created = A64Disassembler::Create();
    if (!created) {
      ADD_FAILURE() << created.message();
      return static_cast<A64Disassembler*>(nullptr);
    }
    return new A64Disassembler(std::move(created).value());
  }();
  return *disassembler;
}

}  // namespace

::testing::AssertionResult CheckExtable(const isa::Program& program, const jit::CompiledSubprogram& sub,
                                        const GuestMemory& memory) {
  const std::vector<uint32_t> probes = ProbeLoadSlots(program, sub.first_slot, sub.end_slot);
  if (sub.extable_entries != probes.size()) {
    return ::testing::AssertionFailure() << sub.extable_entries << " exception-table entries for "
                                         << probes.size() << " PROBE_MEM loads";
  }
  if (sub.rx_extable != sub.rx_image + 4ull * sub.code_words) {
    return ::testing::AssertionFailure() << fmt::format("table at 0x{:x}, code ends at 0x{:x}", sub.rx_extable,
                                                        sub.rx_image + 4ull * sub.code_words);
  }
  const uint64_t table_bytes = uint64_t{sub.extable_entries} * jit::kExtableEntrySize;
  const uint64_t slot_end = sub.allocation->rx_slot() + sub.allocation->slot_bytes();
  if (sub.rx_extable + table_bytes > slot_end) {
    return ::testing::AssertionFailure() << "the table runs past the end of the slot";
  }
  if (probes.empty()) return ::testing::AssertionSuccess();
  const uint8_t* table = memory.HostPointer(sub.rx_extable, table_bytes);
  if (table == nullptr) return ::testing::AssertionFailure() << "the table is not in guest memory";

  std::vector<RawEntry> entries(probes.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const uint8_t* e = table + i * jit::kExtableEntrySize;
    RawEntry& entry = entries[i];
    entry.insn_field = sub.rx_extable + i * jit::kExtableEntrySize;
    std::memcpy(&entry.insn, e, 4);
    std::memcpy(&entry.fixup, e + 4, 4);
    std::memcpy(&entry.type, e + 8, 2);
    std::memcpy(&entry.data, e + 10, 2);
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    const RawEntry& entry = entries[i];
    const uint32_t slot = probes[i];
    const uint64_t load = ProbeLoadAddress(sub, slot);
    const int expected_reg = static_cast<int>(jit::Map(program.insns[slot].dst));
    auto where = [&] { return fmt::format("entry {} (instruction {}): ", i, slot); };
    if (entry.target() != load) {
      return ::testing::AssertionFailure()
             << where() << fmt::format("target 0x{:x}, the load is at 0x{:x}", entry.target(), load);
    }
    if (entry.resume() != load + 4) {
      return ::testing::AssertionFailure()
             << where() << fmt::format("resumes at 0x{:x}, expected 0x{:x}", entry.resume(), load + 4);
    }
    if (entry.reg() != expected_reg) {
      return ::testing::AssertionFailure() << where() << "register x" << entry.reg() << ", the load's dst is x"
                                           << expected_reg;
    }
    if (entry.type != jit::kExTypeBpf || entry.data != 0) {
      return ::testing::AssertionFailure() << where() << "type " << entry.type << ", data " << entry.data;
    }
    if (i > 0 && entries[i - 1].target() >= entry.target()) {
      return ::testing::AssertionFailure() << where() << "not sorted by target";
    }
    // The word at the target is the load itself, into that register.
    const uint8_t* code = memory.HostPointer(load, 4);
    if (code == nullptr) return ::testing::AssertionFailure() << where() << "target not in guest memory";
    uint32_t word;
    std::memcpy(&word, code, 4);
    const auto text = Disassembler().Disassemble(word, load);
    if (!text || text->rfind("ldr", 0) != 0 || static_cast<int>(word & 31) != expected_reg) {
      return ::testing::AssertionFailure() << where() << fmt::format("the word at the target is 0x{:08x} ({})", word,
                                                                     text.value_or("invalid"));
    }
    // What the kernel's search finds.
    const auto fixup = jit::SearchExtable(table, sub.rx_extable, sub.extable_entries, load);
    if (!fixup || fixup->resume_pc != load + 4 || fixup->reg != expected_reg) {
      return ::testing::AssertionFailure() << where() << "SearchExtable does not find the entry";
    }
  }
  if (jit::SearchExtable(table, sub.rx_extable, sub.extable_entries, sub.rx_image)) {
    return ::testing::AssertionFailure() << "SearchExtable finds an entry for the first word of the code";
  }
  return ::testing::AssertionSuccess();
}

std::optional<uint64_t> AddressMovValue(const std::vector<uint32_t>& words, uint32_t index) {
  if (index + 3 > words.size()) return std::nullopt;
  const uint32_t movz = words[index], movk16 = words[index + 1], movk32 = words[index + 2];
  // movz xd, #imm16, lsl #0; movk xd, #imm16, lsl #16; movk xd, #imm16, lsl #32
  if ((movz & 0xffe00000) != 0xd2800000 || (movk16 & 0xffe00000) != 0xf2a00000 ||
      (movk32 & 0xffe00000) != 0xf2c00000) {
    return std::nullopt;
  }
  const uint32_t rd = movz & 31;
  if ((movk16 & 31) != rd || (movk32 & 31) != rd) return std::nullopt;
  auto imm16 = [](uint32_t word) { return uint64_t{(word >> 5) & 0xffff}; };
  return imm16(movz) | imm16(movk16) << 16 | imm16(movk32) << 32;
}

}  // namespace bpfdiff::jit_testing
