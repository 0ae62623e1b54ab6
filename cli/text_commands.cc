// bpfdiff asm / disasm: BPF assembly text <-> instruction bytes.
#include <cstdio>
#include <iostream>
#include <iterator>

#include <fmt/format.h>

#include "cli/commands.h"
#include "isa/assembler.h"
#include "isa/data_file.h"
#include "isa/disassembler.h"
#include "support/files.h"
#include "support/hex.h"

namespace bpfdiff::cli {
namespace {

struct AsmArgs {
  std::string input;
  std::string output;
};

Result<std::string> ReadInput(const std::string& path) {
  if (path == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  return ReadTextFile(path);
}

int Asm(const AsmArgs& args) {
  auto text = ReadInput(args.input);
  if (!text) {
    fmt::print(stderr, "bpfdiff asm: {}\n", text.message());
    return kExitBadInput;
  }
  auto insns = isa::Assemble(*text);
  if (!insns) {
    fmt::print(stderr, "bpfdiff asm: {}: {}\n", args.input, insns.message());
    return kExitBadInput;
  }
  const std::vector<uint8_t> bytes = isa::ToBytes(*insns);
  if (args.output.empty()) {
    fmt::print("{}\n", FormatHexBytes(bytes));
    return kExitOk;
  }
  if (auto status = WriteFile(args.output, bytes); !status) {
    fmt::print(stderr, "bpfdiff asm: {}\n", status.message());
    return kExitBadInput;
  }
  return kExitOk;
}

struct DisasmArgs {
  std::string input;
  bool hex = false;
  bool labels = false;
};

int Disasm(const DisasmArgs& args) {
  std::vector<isa::Insn> insns;
  if (args.input.ends_with(".data")) {
    auto data = isa::ReadDataFile(args.input);
    if (!data) {
      fmt::print(stderr, "bpfdiff disasm: {}\n", data.message());
      return kExitBadInput;
    }
    insns = data->programs.front();
  } else {
    std::vector<uint8_t> bytes;
    if (args.hex) {
      auto text = ReadInput(args.input);
      if (!text) {
        fmt::print(stderr, "bpfdiff disasm: {}\n", text.message());
        return kExitBadInput;
      }
      auto parsed = ParseHexBytes(*text);
      if (!parsed) {
        fmt::print(stderr, "bpfdiff disasm: {}: {}\n", args.input, parsed.message());
        return kExitBadInput;
      }
      bytes = std::move(parsed).value();
    } else {
      auto read = ReadBinaryFile(args.input);
      if (!read) {
        fmt::print(stderr, "bpfdiff disasm: {}\n", read.message());
        return kExitBadInput;
      }
      bytes = std::move(read).value();
    }
    if (bytes.size() % isa::kInsnSize != 0) {
      fmt::print(stderr, "bpfdiff disasm: {}: {} bytes is not a whole number of instructions\n",
                 args.input, bytes.size());
      return kExitBadInput;
    }
    for (size_t i = 0; i < bytes.size(); i += isa::kInsnSize) insns.push_back(isa::Insn::FromBytes(&bytes[i]));
  }
  auto program = isa::MakeProgram(insns);
  if (!program) {
    // Still show what is there, so the user can see what is wrong.
    fmt::print("{}", isa::DisassembleForDisplay(insns));
    fmt::print(stderr, "bpfdiff disasm: {}: {}\n", args.input, program.message());
    return kExitBadInput;
  }
  fmt::print("{}", isa::Disassemble(*program, {.labels = args.labels}));
  return kExitOk;
}

}  // namespace

void AddTextCommands(CLI::App& app, const Settings& /*settings*/, int& exit_code) {
  auto asm_args = std::make_shared<AsmArgs>();
  CLI::App* as = app.add_subcommand("asm", "Assemble BPF assembly into instruction bytes");
  as->add_option("input", asm_args->input, "Assembly file, or - for standard input")->required();
  as->add_option("-o,--output", asm_args->output, "Write raw bytes here (default: hex to stdout)");
  as->callback([asm_args, &exit_code] { exit_code = Asm(*asm_args); });

  auto disasm_args = std::make_shared<DisasmArgs>();
  CLI::App* dis = app.add_subcommand("disasm", "Disassemble instruction bytes (or a .data file's program)");
  dis->add_option("input", disasm_args->input, "Raw bytes, a .data file, or - (with --hex)")->required();
  dis->add_flag("--hex", disasm_args->hex, "The input is hex text, not raw bytes");
  dis->add_flag("--labels", disasm_args->labels, "Print jump targets as labels");
  dis->callback([disasm_args, &exit_code] { exit_code = Disasm(*disasm_args); });
}

}  // namespace bpfdiff::cli
