// plugin_fuzzer: the bpf_conformance plugin (cli/plugin/) on hostile
// arguments and stdin. The input's first line is the command line after
// the program name, split on single spaces as the runner splits
// --plugin_options (so doubled spaces make empty arguments); the rest is
// what comes on stdin. It runs as the executable would (plugin_session.h),
// without the process around it, and checks the protocol:
//  - bad arguments give one line of message; good ones, spelled out again
//    canonically (MEMORY_HEX --engine E), parse to the same arguments;
//  - a reply exits 0 with r0 as lowercase hex and a newline on stdout and
//    nothing on stderr, or exits 1 or 2 with nothing on stdout and a
//    non-empty message, ending in one newline, on stderr (what the runner
//    compares with a test's `-- error` line).
#include "fuzz/targets/libfuzzer_entry_points.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "cli/plugin/plugin_args.h"
#include "cli/plugin/plugin_session.h"

namespace {

using namespace bpfdiff;

[[noreturn]] void Found(std::string_view what, std::string_view input) {
  fmt::print(stderr, "\n==== plugin_fuzzer finding ====\n{}\n---- input ----\n{}\n----\n", what, input);
  std::fflush(stderr);
  std::abort();
}

std::vector<std::string> SplitOnSpaces(std::string_view line) {
  std::vector<std::string> args;
  if (line.empty()) return args;
  while (true) {
    const size_t space = line.find(' ');
    args.emplace_back(line.substr(0, space));
    if (space == std::string_view::npos) break;
    line.remove_prefix(space + 1);
  }
  return args;
}

void CheckCanonicalSpelling(const PluginArgs& parsed, std::string_view input) {
  std::vector<std::string> spelled;
  if (!parsed.memory_hex.empty()) spelled.push_back(parsed.memory_hex);
  spelled.insert(spelled.end(), {"--engine", parsed.engine});
  if (parsed.help) spelled.emplace_back("--help");
  auto again = ParsePluginArgs(spelled);
  if (!again) Found("the canonical spelling does not parse: " + again.message(), input);
  if (again->memory_hex != parsed.memory_hex || again->engine != parsed.engine || again->help != parsed.help) {
    Found("the canonical spelling parses to other arguments", input);
  }
}

void CheckReply(const PluginReply& reply, std::string_view input) {
  switch (reply.exit_status) {
    case kPluginExitOk: {
      const std::string_view out = reply.out;
      const bool hex = out.size() >= 2 && out.back() == '\n' &&
                       out.substr(0, out.size() - 1).find_first_not_of("0123456789abcdef") == std::string_view::npos;
      if (!hex || !reply.err.empty()) {
        Found(fmt::format("exit 0 with stdout '{}' and stderr '{}'", reply.out, reply.err), input);
      }
      return;
    }
    case kPluginExitFailed:
    case kPluginExitBadInput: {
      const std::string_view err = reply.err;
      const bool message = err.size() >= 2 && err.back() == '\n' && err.find_first_not_of(" \t\r\n") != std::string_view::npos;
      if (!reply.out.empty() || !message) {
        Found(fmt::format("exit {} with stdout '{}' and stderr '{}'", reply.exit_status, reply.out, reply.err), input);
      }
      return;
    }
    default:
      Found(fmt::format("exit status {}", reply.exit_status), input);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t eol = input.find('\n');
  const std::vector<std::string> args = SplitOnSpaces(input.substr(0, eol));
  const std::string_view stdin_text = eol == std::string_view::npos ? std::string_view{} : input.substr(eol + 1);

  auto parsed = ParsePluginArgs(args);
  if (!parsed) {
    if (parsed.message().empty() || parsed.message().find('\n') != std::string::npos) {
      Found(fmt::format("the error is not one line: '{}'", parsed.message()), input);
    }
    return 0;
  }
  CheckCanonicalSpelling(*parsed, input);
  if (parsed->help) {
    if (PluginUsage("bpfdiff_plugin").empty()) Found("no usage text", input);
    return 0;
  }
  CheckReply(ServePlugin(*parsed, stdin_text, PlantedBugs{}), input);
  return 0;
}
