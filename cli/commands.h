// The bpfdiff subcommands. Each Add*Command registers one subcommand on the
// app; its callback stores the process exit status in `exit_code`.
//
// Exit status convention: 0 success (or: all engines agree), 1 a test
// failed or engines diverged, 2 bad input or usage.
#pragma once

#include <CLI/CLI.hpp>

namespace bpfdiff::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitBadInput = 2;

void AddRunCommand(CLI::App& app, int& exit_code);
void AddTextCommands(CLI::App& app, int& exit_code);  // asm, disasm
void AddConformanceCommand(CLI::App& app, int& exit_code);
void AddPluginCommand(CLI::App& app, int& exit_code);
void AddJitCommand(CLI::App& app, int& exit_code);
void AddRecursionCommand(CLI::App& app, int& exit_code);
void AddReportCommand(CLI::App& app, int& exit_code);
void AddTriageCommands(CLI::App& app, int& exit_code);  // replay, minimize, export
void AddPackCommands(CLI::App& app, int& exit_code);    // pack replay, pack itlb

}  // namespace bpfdiff::cli
