// The bpfdiff subcommands. Each Add*Command registers one subcommand on the
// app; its callback stores the process exit status in `exit_code` (the
// statuses and their order: cli/exit_status.h).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/exit_status.h"
#include "harness/machine/machine.h"
#include "harness/planted/planted_bugs.h"

namespace bpfdiff::cli {

// What main reads from the environment, once, for every subcommand (library
// code reads none).
struct Settings {
  PlantedBugs bugs;  // BPFDIFF_PLANTED_BUG: a negative control, never on by default
  // BPFDIFF_UNICORN_FAULT: a Unicorn call made to fail on purpose, in every
  // sandbox a command makes, to show that the failure is reported (an
  // error naming the call, exit 2) rather than taken for a result.
  UnicornFault unicorn_fault;
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
void AddEnginesCommand(CLI::App& app, const Settings& settings, int& exit_code);  // engines
void AddEmulatorsCommand(CLI::App& app, const Settings& settings, int& exit_code);  // emulators
void AddTrampolineCommand(CLI::App& app, const Settings& settings, int& exit_code);  // trampoline
void AddTestBpfCommand(CLI::App& app, const Settings& settings, int& exit_code);     // test-bpf

}  // namespace bpfdiff::cli
