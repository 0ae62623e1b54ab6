// bpfdiff_plugin: the bpf_conformance plugin, with the argument order of
// upstream's bpf_conformance_runner (`PLUGIN [MEMORY_HEX] [options...]`),
// which the `bpfdiff plugin` subcommand cannot take: the runner puts the
// memory before anything from --plugin_options, so before a subcommand name.
//
//   bpf_conformance_runner --test_file_directory DIR --plugin_path bpfdiff_plugin
//
// The environment, read here and nowhere else: BPFDIFF_PLANTED_BUG (a
// negative control, see harness/planted/) and BPFDIFF_UNICORN_FAULT
// (CALL[:SKIP], a Unicorn failure on purpose: exit 2 with the failed call
// named on stderr). A value of either that does not parse is exit 2.
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/plugin/plugin_session.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  const char* bug = std::getenv("BPFDIFF_PLANTED_BUG");
  auto bugs = bpfdiff::PlantedBugsNamed(bug == nullptr ? "" : bug);
  if (!bugs) {
    fmt::print(stderr, "bpfdiff_plugin: BPFDIFF_PLANTED_BUG: {}\n", bugs.message());
    return bpfdiff::kPluginExitBadInput;
  }
  bpfdiff::UnicornFault unicorn_fault;
  if (const char* fault = std::getenv("BPFDIFF_UNICORN_FAULT"); fault != nullptr && *fault != '\0') {
    auto parsed = bpfdiff::ParseUnicornFault(fault);
    if (!parsed) {
      fmt::print(stderr, "bpfdiff_plugin: BPFDIFF_UNICORN_FAULT: {}\n", parsed.message());
      return bpfdiff::kPluginExitBadInput;
    }
    unicorn_fault = *parsed;
  }
  fmt::print(stderr, "{}", bpfdiff::PlantedBugBanner(*bugs));
  return bpfdiff::ServePluginOnStdio(args, "bpfdiff_plugin", *bugs, unicorn_fault);
}
