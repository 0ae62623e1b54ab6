#include "tests/oracle/oracle_test_support.h"

#include <cstring>

#include <fmt/format.h>

#include "isa/assembler.h"

namespace bpfdiff::testing {

std::vector<isa::Insn> Asm(std::string_view text) {
  auto result = isa::Assemble(text);
  EXPECT_TRUE(result.ok()) << text << "\n-> " << (result.ok() ? "" : result.message());
  return result.ok() ? *result : std::vector<isa::Insn>{};
}

CaseSource SourceOf(const Case& c) {
  CaseSource source;
  for (const std::string& text : c.programs) source.programs.push_back(Asm(text));
  source.maps = c.maps;
  source.memory = c.memory;
  source.options = c.options;
  return source;
}

Outcome Prepared::Run(uint64_t budget, int cpu) {
  return Interpreter(*env, loaded, InterpreterOptions{budget, cpu, kGeometry}).Run();
}

std::optional<Prepared> Prepare(const CaseSource& source) {
  auto env = GuestEnvironment::Create();
  if (!env) {
    ADD_FAILURE() << "GuestEnvironment::Create: " << env.message();
    return std::nullopt;
  }
  auto loaded = LoadCase(source);
  if (!loaded) {
    ADD_FAILURE() << "LoadCase: " << loaded.message();
    return std::nullopt;
  }
  Prepared prepared{std::move(env).value(), std::move(loaded).value()};
  prepared.env->Install(prepared.loaded);
  return prepared;
}

Outcome RunCase(const Case& c) {
  auto prepared = Prepare(SourceOf(c));
  if (!prepared) return Outcome{};  // kHarnessError
  return prepared->Run(c.budget);
}

Outcome RunAsm(std::string_view text, std::vector<uint8_t> memory) {
  Case c;
  c.programs = {std::string(text)};
  c.memory = std::move(memory);
  return RunCase(c);
}

Outcome RunInsns(std::vector<isa::Insn> insns, std::vector<isa::MapSpec> maps) {
  CaseSource source;
  source.programs = {std::move(insns)};
  source.maps = std::move(maps);
  auto prepared = Prepare(source);
  if (!prepared) return Outcome{};
  return prepared->Run();
}

std::string LoadError(const CaseSource& source) {
  auto loaded = LoadCase(source);
  return loaded.ok() ? std::string() : loaded.message();
}

std::string LoadError(const Case& c) { return LoadError(SourceOf(c)); }

::testing::AssertionResult ExitsWith(const Outcome& outcome, uint64_t r0) {
  if (outcome.end == EndKind::kExit && outcome.r0 == r0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << fmt::format("expected exit r0=0x{:x}, got {}", r0,
                                                   outcome.Describe());
}

::testing::AssertionResult FaultsAt(const Outcome& outcome, uint32_t insn, uint64_t address,
                                    AccessKind kind, uint32_t program) {
  if (outcome.end == EndKind::kFault && outcome.fault && outcome.fault->insn == insn &&
      outcome.fault->address == address && outcome.fault->kind == kind &&
      outcome.fault->program == program) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << fmt::format("expected a {} fault at insn {} of program {} on 0x{:x}, got {}",
                        AccessKindName(kind), insn, program, address, outcome.Describe());
}

uint64_t Read64(const std::vector<uint8_t>& bytes, size_t index) {
  uint64_t value = 0;
  if (index + 8 > bytes.size()) {
    ADD_FAILURE() << "Read64 at " << index << " of " << bytes.size() << " bytes";
    return 0;
  }
  std::memcpy(&value, bytes.data() + index, 8);
  return value;
}

std::vector<uint8_t> Bytes64(std::initializer_list<uint64_t> values) {
  std::vector<uint8_t> bytes;
  for (uint64_t v : values) {
    for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  return bytes;
}

std::vector<isa::Insn> Lddw(uint8_t dst, uint64_t value) {
  return {Make(isa::kOpLddw, dst, 0, 0, static_cast<int32_t>(static_cast<uint32_t>(value))),
          Make(0, 0, 0, 0, static_cast<int32_t>(static_cast<uint32_t>(value >> 32)))};
}

isa::MapSpec ArrayMap(int32_t fd, uint32_t value_size, uint32_t entries, std::vector<uint8_t> initial) {
  isa::MapSpec map;
  map.fd = fd;
  map.type = isa::MapType::kArray;
  map.key_size = 4;
  map.value_size = value_size;
  map.max_entries = entries;
  map.initial_values = std::move(initial);
  return map;
}

isa::MapSpec HashMap(int32_t fd, uint32_t key_size, uint32_t value_size, uint32_t entries) {
  isa::MapSpec map;
  map.fd = fd;
  map.type = isa::MapType::kHash;
  map.key_size = key_size;
  map.value_size = value_size;
  map.max_entries = entries;
  return map;
}

isa::MapSpec ProgArray(int32_t fd, uint32_t entries, std::vector<int32_t> programs) {
  isa::MapSpec map;
  map.fd = fd;
  map.type = isa::MapType::kProgArray;
  map.key_size = 4;
  map.value_size = 4;
  map.max_entries = entries;
  map.programs = std::move(programs);
  return map;
}

}  // namespace bpfdiff::testing
