// bpfdiff emulators PATH... [--engines all|kernel]: every case (a fuzz
// artifact or corpus file, a .data or assembly file; a directory stands
// for the files below it that are cases) run on both arm64 executors, Unicorn and VIXL's
// simulator, and each engine's outcome on the one compared with its
// outcome on the other, on the case's input memory and on the input
// variants diff_fuzzer runs. The JITs' code is the same bytes on both, so
// a difference is an emulator disagreement: printed with the file, the
// engine and the first field that differs, and never a JIT divergence
// (that is `replay`'s). Exit 0 when the emulators agree on every case, 1
// on a disagreement, 2 when a case could not run.
#include <fmt/format.h>

#include "cli/commands.h"
#include "fuzz/diff/diff_harness.h"
#include "fuzz/diff/triage.h"
#include "harness/diff/engines.h"
#include "harness/diff/executor_compare.h"
#include "harness/machine/vixl_cpu.h"
#include "support/files.h"

namespace bpfdiff::cli {
namespace {

using fuzz::DiffHarness;

struct EmulatorsArgs {
  std::vector<std::string> paths;
  std::string engines{kAllEngines};
};

struct Tally {
  size_t cases = 0, agree = 0, disagree = 0, rejected = 0, could_not_run = 0;
  size_t not_cases = 0;  // files in a directory that are not cases
};

std::optional<std::string> MachineFailure(DiffHarness& unicorn, DiffHarness& vixl) {
  if (auto failure = unicorn.sandbox().UnicornFailure()) return "unicorn: " + *failure;
  if (auto failure = vixl.sandbox().UnicornFailure()) return "vixl: " + *failure;
  return std::nullopt;
}

int Run(const EmulatorsArgs& args, const Settings& settings) {
  struct File {
    std::filesystem::path path;
    bool named;  // on the command line, not found in a directory
  };
  std::vector<File> files;
  for (const auto& path : args.paths) {
    auto listed = ListFiles(path);
    if (!listed) {
      fmt::print(stderr, "bpfdiff emulators: {}\n", listed.message());
      return kExitBadInput;
    }
    const bool named = !std::filesystem::is_directory(path);
    for (auto& file : *listed) files.push_back({std::move(file), named});
  }
  auto unicorn = DiffHarness::Create(settings.bugs, settings.unicorn_fault, args.engines);
  if (!unicorn) {
    fmt::print(stderr, "bpfdiff emulators: {}\n", unicorn.message());
    return kExitBadInput;
  }
  auto vixl = DiffHarness::Create(settings.bugs, settings.unicorn_fault, args.engines, &CreateVixlMachine);
  if (!vixl) {
    fmt::print(stderr, "bpfdiff emulators: {}\n", vixl.message());
    return kExitBadInput;
  }
  Tally tally;
  int status = kExitOk;
  for (const auto& [file, named] : files) {
    auto source = fuzz::LoadArtifact(file);
    if (!source && !named) {
      ++tally.not_cases;  // a README beside the cases
      continue;
    }
    ++tally.cases;
    if (!source) {
      fmt::print(stderr, "bpfdiff emulators: {}\n", source.message());
      ++tally.could_not_run;
      status = WorstStatus(status, kExitBadInput);
      continue;
    }
    (*unicorn)->ToEngineForms(*source);
    const CaseRun a = (*unicorn)->RunCase(*source, DiffHarness::kInputVariants);
    const CaseRun b = (*vixl)->RunCase(*source, DiffHarness::kInputVariants);
    if (auto failure = MachineFailure(**unicorn, **vixl)) {
      // Neither harness can run anything more.
      fmt::print(stderr, "bpfdiff emulators: {}: could not run: {}\n", file.string(), *failure);
      ++tally.could_not_run;
      status = WorstStatus(status, kExitBadInput);
      break;
    }
    const auto disagreements = CompareExecutors(a, b, "unicorn", "vixl");
    if (!disagreements.empty()) {
      ++tally.disagree;
      status = WorstStatus(status, kExitFailed);
      for (const auto& d : disagreements) {
        fmt::print("EMULATOR DISAGREEMENT {}: {}{}: {}\n", file.string(), d.engine.empty() ? "" : d.engine,
                   d.memory == 0 ? "" : fmt::format(" (input variant {})", d.memory), d.detail);
      }
    } else if (a.load_error) {
      ++tally.rejected;
    } else {
      ++tally.agree;
    }
  }
  fmt::print("{} cases on unicorn and vixl ({} engines): {} agree, {} rejected at load by both, {} disagree, "
             "{} could not run{}\n",
             tally.cases, args.engines, tally.agree, tally.rejected, tally.disagree, tally.could_not_run,
             tally.not_cases == 0 ? "" : fmt::format(" ({} other files skipped)", tally.not_cases));
  return status;
}

}  // namespace

void AddEmulatorsCommand(CLI::App& app, const Settings& settings, int& exit_code) {
  auto args = std::make_shared<EmulatorsArgs>();
  CLI::App* cmd = app.add_subcommand(
      "emulators",
      "Run cases on both arm64 emulators (Unicorn and VIXL) and report where an engine's outcome differs between "
      "them: an emulator disagreement, not a JIT divergence");
  cmd->add_option("paths", args->paths, "Fuzz artifacts or corpus files, .data or assembly files, or directories")
      ->required();
  cmd->add_option("--engines", args->engines,
                  fmt::format("{}: the interpreter and bpfdiff's JIT; {}: the interpreter and the kernel's own JIT",
                              kAllEngines, kKernelEngines))
      ->check(CLI::IsMember({std::string(kAllEngines), std::string(kKernelEngines)}))
      ->capture_default_str();
  cmd->callback([args, &settings, &exit_code] { exit_code = Run(*args, settings); });
}

}  // namespace bpfdiff::cli
