// bpfdiff: differential fuzzing and conformance testing of the arm64 BPF JIT.
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "cli/commands.h"

namespace {

// BPFDIFF_PLANTED_BUG switches a planted bug on for every subcommand that
// runs code; an unknown name is bad input for all of them. Likewise
// BPFDIFF_UNICORN_FAULT, a Unicorn failure on purpose: a value that does not
// parse is bad input, never silently no fault.
bpfdiff::Result<bpfdiff::cli::Settings> ReadSettings() {
  bpfdiff::cli::Settings settings;
  const char* bug = std::getenv("BPFDIFF_PLANTED_BUG");
  auto bugs = bpfdiff::PlantedBugsNamed(bug == nullptr ? "" : bug);
  if (!bugs) return bpfdiff::Fail("BPFDIFF_PLANTED_BUG: {}", bugs.message());
  settings.bugs = std::move(bugs).value();
  if (const char* fault = std::getenv("BPFDIFF_UNICORN_FAULT"); fault != nullptr && *fault != '\0') {
    auto parsed = bpfdiff::ParseUnicornFault(fault);
    if (!parsed) return bpfdiff::Fail("BPFDIFF_UNICORN_FAULT: {}", parsed.message());
    settings.unicorn_fault = *parsed;
  }
  return settings;
}

}  // namespace

int main(int argc, char** argv) {
  const auto read = ReadSettings();
  if (!read) {
    fmt::print(stderr, "bpfdiff: {}\n", read.message());
    return bpfdiff::cli::kExitBadInput;
  }
  const bpfdiff::cli::Settings& settings = *read;
  fmt::print(stderr, "{}", bpfdiff::PlantedBugBanner(settings.bugs));
  if (settings.unicorn_fault.call != bpfdiff::UnicornCall::kNone) {
    fmt::print(stderr, "bpfdiff: BPFDIFF_UNICORN_FAULT={}: a Unicorn call will fail on purpose\n",
               std::getenv("BPFDIFF_UNICORN_FAULT"));
  }
  CLI::App app{
      "bpfdiff: differential fuzzing and conformance testing of the Linux BPF arm64 JIT.\n"
      "Programs run on a reference interpreter and on an arm64 JIT whose code lives in\n"
      "prog packs and executes in the Unicorn engine; the outcomes are compared."};
  app.footer(std::string(bpfdiff::cli::kExitStatusHelp));
  app.require_subcommand(1);
  int exit_code = bpfdiff::cli::kExitOk;
  bpfdiff::cli::AddRunCommand(app, settings, exit_code);
  bpfdiff::cli::AddTextCommands(app, settings, exit_code);
  bpfdiff::cli::AddConformanceCommand(app, settings, exit_code);
  bpfdiff::cli::AddTestBpfCommand(app, settings, exit_code);
  bpfdiff::cli::AddPluginCommand(app, settings, exit_code);
  bpfdiff::cli::AddJitCommand(app, settings, exit_code);
  bpfdiff::cli::AddTriageCommands(app, settings, exit_code);
  bpfdiff::cli::AddPackCommands(app, settings, exit_code);
  bpfdiff::cli::AddPlantedCommand(app, settings, exit_code);
  bpfdiff::cli::AddSweepCommand(app, settings, exit_code);
  bpfdiff::cli::AddEnginesCommand(app, settings, exit_code);
  bpfdiff::cli::AddEmulatorsCommand(app, settings, exit_code);
  bpfdiff::cli::AddRecursionCommand(app, settings, exit_code);
  bpfdiff::cli::AddTrampolineCommand(app, settings, exit_code);
  bpfdiff::cli::AddReportCommand(app, settings, exit_code);
  // The same statuses for every subcommand, so every --help says them.
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    sub->footer(std::string(bpfdiff::cli::kExitStatusHelp));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int status = app.exit(e);
    return status == 0 ? 0 : bpfdiff::cli::kExitBadInput;
  }
  return exit_code;
}
