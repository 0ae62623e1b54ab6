// bpfdiff: differential fuzzing and conformance testing of the arm64 BPF JIT.
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "cli/commands.h"

namespace {

// BPFDIFF_PLANTED_BUG switches a planted bug on for every subcommand that
// runs code; an unknown name is bad input for all of them.
bpfdiff::Result<bpfdiff::cli::Settings> ReadSettings() {
  bpfdiff::cli::Settings settings;
  const char* bug = std::getenv("BPFDIFF_PLANTED_BUG");
  auto bugs = bpfdiff::PlantedBugsNamed(bug == nullptr ? "" : bug);
  if (!bugs) return bpfdiff::Fail("BPFDIFF_PLANTED_BUG: {}", bugs.message());
  settings.bugs = std::move(bugs).value();
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
  CLI::App app{
      "bpfdiff: differential fuzzing and conformance testing of the Linux BPF arm64 JIT.\n"
      "Programs run on a reference interpreter and on an arm64 JIT whose code lives in\n"
      "prog packs and executes in the Unicorn engine; the outcomes are compared."};
  app.require_subcommand(1);
  int exit_code = bpfdiff::cli::kExitOk;
  bpfdiff::cli::AddRunCommand(app, settings, exit_code);
  bpfdiff::cli::AddTextCommands(app, settings, exit_code);
  bpfdiff::cli::AddConformanceCommand(app, settings, exit_code);
  bpfdiff::cli::AddPluginCommand(app, settings, exit_code);
  bpfdiff::cli::AddJitCommand(app, settings, exit_code);
  bpfdiff::cli::AddTriageCommands(app, settings, exit_code);
  bpfdiff::cli::AddPackCommands(app, settings, exit_code);
  bpfdiff::cli::AddPlantedCommand(app, settings, exit_code);
  bpfdiff::cli::AddSweepCommand(app, settings, exit_code);
  bpfdiff::cli::AddRecursionCommand(app, settings, exit_code);
  bpfdiff::cli::AddReportCommand(app, settings, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int status = app.exit(e);
    return status == 0 ? 0 : bpfdiff::cli::kExitBadInput;
  }
  return exit_code;
}
