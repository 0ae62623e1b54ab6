// The plugin's command line, in the order upstream's bpf_conformance_runner
// builds it:
//
//   PLUGIN [MEMORY_HEX] [plugin_options...] [--elf]
//
// MEMORY_HEX is present only when the test has input memory, and is the
// first argument: anything not starting with "--" in that place. The
// options are the runner's --plugin_options split on single spaces, so
// empty arguments (from doubled spaces) are ignored.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "harness/diff/engines.h"
#include "support/result.h"

namespace bpfdiff {

// The engines a plugin run uses when no option names one. `all` runs the
// interpreter and both JIT lowerings and fails with the first divergence:
// that is what bpfdiff exists for, and a plugin that ran only the
// interpreter would hide a JIT bug behind a passing conformance run. Tests
// pass on `all` exactly when every engine meets the expectation, so nothing
// is lost against `interp` but time.
inline constexpr std::string_view kPluginDefaultEngine = kAllEngines;

struct PluginArgs {
  std::string memory_hex;  // empty: no input memory
  std::string engine{kPluginDefaultEngine};
  bool help = false;  // --help: print PluginUsage() and run nothing
};

// Error for a second positional argument, an unknown option, a missing or
// unknown engine name, and --elf (the runner's ELF mode is not supported).
Result<PluginArgs> ParsePluginArgs(std::span<const std::string> args);

// The usage text for --help, naming `program`.
std::string PluginUsage(std::string_view program);

}  // namespace bpfdiff
