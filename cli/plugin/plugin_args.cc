#include "cli/plugin/plugin_args.h"

#include <algorithm>

#include <fmt/format.h>

#include "harness/diff/differential.h"

namespace bpfdiff {
namespace {

// Checked here, before stdin is read, with MakeEngines' own list.
bool IsEngineName(std::string_view name) {
  const auto names = EngineNames();
  return std::find(names.begin(), names.end(), name) != names.end();
}

Status SetEngine(PluginArgs& parsed, std::string_view name) {
  if (!IsEngineName(name)) {
    return Fail("unknown engine '{}' (interp, jit, jit-llsc or all)", name);
  }
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
      if (i >= args.size()) return Fail("--engine needs a value (interp, jit, jit-llsc or all)");
      if (auto set = SetEngine(parsed, args[i]); !set) return set.error();
    } else if (arg.starts_with("--engine=")) {
      if (auto set = SetEngine(parsed, std::string_view(arg).substr(9)); !set) return set.error();
    } else if (arg == "--interpret") {
      parsed.engine = "interp";  // ubpf_plugin's spelling, so runner command lines carry over
    } else if (arg == "--jit") {
      parsed.engine = "jit";  // likewise
    } else if (arg == "--elf") {
      return Fail("ELF input is not supported; run the runner without --elf");
    } else if (arg == "--help" || arg == "-h") {
      parsed.help = true;
    } else if (!arg.starts_with("-")) {
      return Fail("unexpected argument '{}': the memory hex must be the first argument", arg);
    } else {
      return Fail("unknown plugin option '{}' (--engine interp|jit|jit-llsc|all, --interpret, --jit)", arg);
    }
  }
  return parsed;
}

std::string PluginUsage(std::string_view program) {
  return fmt::format(
      "usage: {} [MEMORY_HEX] [--engine interp|jit|jit-llsc|all] [--interpret] [--jit]\n"
      "\n"
      "The bpf_conformance plugin protocol, in bpf_conformance_runner's argument order.\n"
      "The program comes as hex bytes on stdin, the input memory as hex bytes in the\n"
      "first argument. Prints r0 in hex on stdout and exits 0; on an error (a fault, a\n"
      "program the load step rejects, a divergence between engines) prints the message\n"
      "on stderr and exits 1; exits 2 on bad arguments or malformed hex.\n"
      "\n"
      "  --engine E    interp, jit (LSE atomics), jit-llsc, or all (default: {}; runs all\n"
      "                three and fails with the first divergence)\n"
      "  --interpret   same as --engine interp (ubpf_plugin's option)\n"
      "  --jit         same as --engine jit (ubpf_plugin's option)\n",
      program, kPluginDefaultEngine);
}

}  // namespace bpfdiff
