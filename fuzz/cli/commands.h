// The bpfdiff subcommands defined in fuzz/cli/ (they decode fuzz artifacts
// and pack scripts); registered by harness/cli/main.cc.
#pragma once

#include <CLI/CLI.hpp>

namespace bpfdiff::fuzz {

void AddTriageCommands(CLI::App& app, int& exit_code);  // replay, minimize, export
void AddPackCommands(CLI::App& app, int& exit_code);    // pack replay, pack itlb

}  // namespace bpfdiff::fuzz
