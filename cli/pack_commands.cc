// bpfdiff pack: the prog pack lifecycle from the command line.
//
//   pack replay SCRIPT...   runs pack_fuzzer inputs (fuzz/pack/pack_script.h),
//                           optionally printing each operation; exit 0 when
//                           every invariant held, 1 when one broke, 2 on bad
//                           input
//   pack itlb               the simulated iTLB report: pages fetched from
//                           with images packed and with pages of their own
//
// A planted bug (BPFDIFF_PLANTED_BUG) applies as in pack_fuzzer.
#include "cli/commands.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "fuzz/pack/itlb_report.h"
#include "fuzz/pack/pack_script.h"
#include "support/files.h"

namespace bpfdiff::cli {
namespace {

using namespace bpfdiff::fuzz;

int Replay(const std::vector<std::string>& scripts, bool trace, const PlantedBugs& bugs) {
  PackScriptOptions options;
  options.bugs = bugs;
  options.trace = trace;
  int status = kExitOk;
  for (const auto& path : scripts) {
    auto bytes = ReadBinaryFile(path);
    if (!bytes) {
      fmt::print(stderr, "bpfdiff pack replay: {}\n", bytes.message());
      return kExitBadInput;
    }
    auto result = RunPackScript(*bytes, options);
    if (!result) {
      fmt::print(stderr, "bpfdiff pack replay: {}: {}\n", path, result.message());
      return kExitBadInput;
    }
    if (!result->is_script) {
      fmt::print(stderr, "bpfdiff pack replay: {}: not a pack script (byte 0 must be {})\n", path,
                 kPackScriptVersion);
      return kExitBadInput;
    }
    fmt::print("== {} ({} CPUs)\n", path, result->cpus);
    for (size_t i = 0; i < result->trace.size(); ++i) fmt::print("{:4}  {}\n", i, result->trace[i]);
    fmt::print("{} operations, {} loads ({} rejected), {} frees, {} stale calls, {} calls compared, "
               "{} not comparable (the prog_array changed during the call)\n",
               result->operations, result->loads, result->loads_rejected, result->frees, result->stale_calls,
               result->calls_compared, result->calls_not_comparable);
    for (const auto& violation : result->violations) fmt::print("{}\n", violation.Describe());
    if (!result->violations.empty()) status = kExitFailed;
    else fmt::print("every invariant held\n");
  }
  return status;
}

int Itlb(const ItlbOptions& options) {
  auto report = MeasureItlb(options);
  if (!report) {
    fmt::print(stderr, "bpfdiff pack itlb: {}\n", report.message());
    return kExitBadInput;
  }
  fmt::print("{}", report->Format());
  return kExitOk;
}

}  // namespace

void AddPackCommands(CLI::App& app, const Settings& settings, int& exit_code) {
  CLI::App* pack = app.add_subcommand("pack", "The prog pack lifecycle on several simulated CPUs");
  pack->require_subcommand(1);

  auto scripts = std::make_shared<std::vector<std::string>>();
  auto trace = std::make_shared<bool>(false);
  CLI::App* replay = pack->add_subcommand("replay", "Run pack_fuzzer inputs with every lifecycle invariant checked");
  replay->add_option("scripts", *scripts, "pack_fuzzer inputs (corpus files, crash files)")->required();
  replay->add_flag("--trace", *trace, "Print every operation");
  replay->callback([scripts, trace, &settings, &exit_code] { exit_code = Replay(*scripts, *trace, settings.bugs); });

  auto itlb_options = std::make_shared<ItlbOptions>();
  CLI::App* itlb = pack->add_subcommand("itlb", "Simulated iTLB report: packed images versus pages of their own");
  itlb->add_option("--loaded", itlb_options->loaded, "Programs loaded")->capture_default_str();
  itlb->add_option("--run", itlb_options->run, "Programs run in turn (the first ones loaded)")->capture_default_str();
  itlb->add_option("--rounds", itlb_options->rounds, "Times each runs")->capture_default_str();
  itlb->add_option("--seed", itlb_options->seed, "Seed of the generated programs")->capture_default_str();
  itlb->callback([itlb_options, &exit_code] { exit_code = Itlb(*itlb_options); });
}

}  // namespace bpfdiff::cli
