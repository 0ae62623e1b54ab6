// bpfdiff: differential fuzzing and conformance testing of the arm64 BPF JIT.
#include <cstdio>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "bpfdiff: differential fuzzing and conformance testing of the Linux BPF arm64 JIT.\n"
      "Programs run on a reference interpreter and on an arm64 JIT whose code lives in\n"
      "prog packs and executes in the Unicorn engine; the outcomes are compared."};
  app.require_subcommand(1);
  int exit_code = bpfdiff::cli::kExitOk;
  bpfdiff::cli::AddRunCommand(app, exit_code);
  bpfdiff::cli::AddTextCommands(app, exit_code);
  bpfdiff::cli::AddConformanceCommand(app, exit_code);
  bpfdiff::cli::AddPluginCommand(app, exit_code);
  bpfdiff::cli::AddJitCommand(app, exit_code);
  bpfdiff::cli::AddTriageCommands(app, exit_code);
  bpfdiff::cli::AddPackCommands(app, exit_code);
  bpfdiff::cli::AddRecursionCommand(app, exit_code);
  bpfdiff::cli::AddReportCommand(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int status = app.exit(e);
    return status == 0 ? 0 : bpfdiff::cli::kExitBadInput;
  }
  return exit_code;
}
