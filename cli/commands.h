// The bpfdiff subcommands. Each Add*Command registers one subcommand on the
// app; its callback stores the process exit status in `exit_code`.
//
// Exit status convention: 0 success (or: all engines agree), 1 a test
// failed or engines diverged, 2 bad input or usage.
#pragma once

#include <CLI/CLI.hpp>

#include "harness/planted/planted_bugs.h"

namespace bpfdiff::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitBadInput = 2;

// What main reads from the environment, once, for every subcommand (library
// code reads none).
struct Settings {
  PlantedBugs bugs;  // BPFDIFF_PLANTED_BUG: a negative control, never on by default
};

void AddRunCommand(CLI::App& app, const Settings& settings, int& exit_code);
void AddTextCommands(CLI::App& app, const Settings& settings, int& exit_code);  // asm, disasm
void AddConformanceCommand(CLI::App& app, const Settings& settings, int& exit_code);
void AddPluginCommand(CLI::App& app, const Settings& settings, int& exit_code);
void AddJitCommand(CLI::App& app, const Settings& settings, int& exit_code);
void AddRecursionCommand(CLI::App& app, const Settings& settings, int& exit_code);
void AddReportCommand(CLI::App& app, const Settings& settings, int& exit_code);
void AddTriageCommands(CLI::App& app, const Settings& settings, int& exit_code);  // replay, minimize, export
void AddPackCommands(CLI::App& app, const Settings& settings, int& exit_code);    // pack replay, pack itlb
void AddPlantedCommand(CLI::App& app, const Settings& settings, int& exit_code);  // planted list, table
void AddSweepCommand(CLI::App& app, const Settings& settings, int& exit_code);    // sweep

}  // namespace bpfdiff::cli
