// Parser for bpf_conformance `.data` test files, with our extensions (see
// docs/assembly.md):
//
//   -- asm                  program 0 in assembly
//   -- raw                  program 0 as 64-bit instruction words (wins over -- asm)
//   -- mem                  input memory, hex bytes
//   -- result               expected r0
//   -- error                expected error text
//   -- c, -- no register offset   ignored
//   -- asm <k>, -- raw <k>  program k >= 1 (tail-call targets)
//   -- map <fd> <array|hash|prog_array> key=<n> value=<n> entries=<n>
//   -- options              one option word per line
//   -- trace                expected helper calls: `<id>(<a1>, ..., <a5>) = <ret>`
//
// `#` starts a comment anywhere. Unlike upstream, which skips a file with an
// unknown directive, every problem is an error naming its line. The parser
// reads the file; it does not validate programs (MakeProgram does, so that
// files whose expected outcome is a load error can be read).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "isa/insn.h"
#include "isa/program.h"
#include "support/result.h"

namespace bpfdiff::isa {

// Upper bound on the number of programs of one file (-- asm <k> has k below it).
inline constexpr size_t kMaxDataPrograms = 64;

enum class ProgramSource : uint8_t { kAsm, kRaw };

// Where a program of a data file came from, for messages.
struct ProgramOrigin {
  ProgramSource source = ProgramSource::kAsm;
  std::string asm_text;  // the -- asm section as written (empty without one)
  size_t asm_line = 0;   // line of the -- asm header, 0 without one
  size_t raw_line = 0;   // line of the -- raw header, 0 without one
};

// One expected helper call of a `-- trace` section. The fields are those of
// the oracle's helper trace (oracle/outcome.h) so that comparing is direct.
struct ExpectedCall {
  int32_t id = 0;
  std::array<uint64_t, 5> args{};
  uint64_t ret = 0;

  friend bool operator==(const ExpectedCall&, const ExpectedCall&) = default;
};

// Options of the `-- options` section. KnownDataOptions() lists their names.
struct DataOptions {
  // Load step: rewrite bpf_kptr_xchg calls inline, as JITs that support
  // pointer xchg get them.
  bool kptr_xchg_inline = false;

  friend bool operator==(const DataOptions&, const DataOptions&) = default;
};

struct DataFile {
  // [0] is the main program; [k] comes from `-- asm k` / `-- raw k`.
  std::vector<std::vector<Insn>> programs;
  std::vector<ProgramOrigin> origins;  // parallel to programs
  std::vector<MapSpec> maps;
  std::vector<uint8_t> memory;
  std::optional<uint64_t> expected_result;
  // Present when the file has `-- error`; empty text means "some error".
  std::optional<std::string> expected_error;
  DataOptions options;
  // Per program: the first slot of the subprogram `-- exception_callback`
  // names (the BTF decl tag "exception_callback:" of the kernel's loader);
  // 0 for none.
  std::vector<uint32_t> exception_callbacks;
  // Present when the file has `-- trace` (possibly empty: no calls).
  std::optional<std::vector<ExpectedCall>> expected_trace;
  // Things worth saying that do not stop the file from being used, such as
  // `-- asm` and `-- raw` sections that disagree (`-- raw` is used).
  std::vector<std::string> warnings;
};

// Errors read "line 7: ..." (or "line 7, column 3: ..." inside `-- asm`).
Result<DataFile> ParseDataFile(std::string_view text);

// Reads and parses a file; errors are prefixed with its path.
Result<DataFile> ReadDataFile(const std::filesystem::path& path);

// The names `-- options` accepts.
std::span<const std::string_view> KnownDataOptions();

}  // namespace bpfdiff::isa
