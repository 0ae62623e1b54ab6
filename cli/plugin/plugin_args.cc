#include "cli/plugin/plugin_args.h"

#include <fmt/format.h>

#include "harness/diff/engines.h"

namespace bpfdiff {
namespace {

// Checked here, before stdin is read, against the one table of engines.
Status SetEngine(PluginArgs& parsed, std::string_view name) {
  if (!IsEngineChoice(name)) return Fail("unknown engine '{}' ({})", name, EngineChoices());
  parsed.engine = name;
  return {};
}

}  // namespace

Result<PluginArgs> ParsePluginArgs(std::span<const std::string> args) {
  PluginArgs parsed;
  size_t i = 0;
  auto skip_empty = [&] {
    while (i < args.size() && args[i].empty()) ++i;
  };
  skip_empty();
  if (i < args.size() && !args[i].starts_with("-")) parsed.memory_hex = args[i++];

  for (skip_empty(); i < args.size(); ++i, skip_empty()) {
    const std::string& arg = args[i];
    if (arg == "--engine") {
      ++i;
      skip_empty();
      if (i >= args.size()) return Fail("--engine needs a value ({})", EngineChoices());
      if (auto set = SetEngine(parsed, args[i]); !set) return set.error();
    } else if (arg.starts_with("--engine=")) {
      if (auto set = SetEngine(parsed, std::string_view(arg).substr(9)); !set) return set.error();
    } else if (arg == "--interpret") {
      parsed.engine = EngineSpecs().front().name;  // ubpf_plugin's spelling: the interpreter
    } else if (arg == "--jit") {
      parsed.engine = JitEngineFor(jit::AtomicLowering::kLse).name;  // ubpf_plugin's spelling: the JIT
    } else if (arg == "--elf") {
      return Fail("ELF input is not supported; run the runner without --elf");
    } else if (arg == "--help" || arg == "-h") {
      parsed.help = true;
    } else if (!arg.starts_with("-")) {
      return Fail("unexpected argument '{}': the memory hex must be the first argument", arg);
    } else {
      return Fail("unknown plugin option '{}' (--engine {}, --interpret, --jit)", arg, EngineChoices());
    }
  }
  return parsed;
}

std::string PluginUsage(std::string_view program) {
  return fmt::format(
      "usage: {} [MEMORY_HEX] [--engine E] [--interpret] [--jit]\n"
      "\n"
      "The bpf_conformance plugin protocol, in bpf_conformance_runner's argument order.\n"
      "The program comes as hex bytes on stdin, the input memory as hex bytes in the\n"
      "first argument. Prints r0 in hex on stdout and exits 0; on an error (a fault, a\n"
      "program the load step rejects, a divergence between engines) prints the message\n"
      "on stderr and exits 1; exits 2 on bad arguments or malformed hex.\n"
      "\n"
      "  --engine E    {} (default: {}; all runs every\n"
      "                engine and fails with the first divergence)\n"
      "  --interpret   same as --engine interp (ubpf_plugin's option)\n"
      "  --jit         same as --engine jit (ubpf_plugin's option)\n",
      program, EngineChoices(), kPluginDefaultEngine);
}

}  // namespace bpfdiff
