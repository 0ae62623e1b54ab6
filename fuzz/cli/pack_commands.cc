// bpfdiff pack: the prog pack lifecycle from the command line.
//
//   pack replay SCRIPT...   runs pack_fuzzer inputs (fuzz/pack_script.h),
//                           optionally printing each operation; exit 0 when
//                           every invariant held, 1 when one broke, 2 on bad
//                           input
//
// A planted bug (BPFDIFF_PLANTED_BUG) applies as in pack_fuzzer.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "fuzz/pack_script.h"
#include "support/files.h"

namespace bpfdiff::fuzz {
namespace {

constexpr int kOk = 0, kFailed = 1, kBadInput = 2;

int Replay(const std::vector<std::string>& scripts, bool trace) {
  auto bugs = PlantedBugsFromEnvironment();
  if (!bugs) {
    fmt::print(stderr, "bpfdiff pack replay: {}\n", bugs.message());
    return kBadInput;
  }
  PackScriptOptions options;
  options.bugs = *bugs;
  options.trace = trace;
  int status = kOk;
  for (const auto& path : scripts) {
    auto bytes = ReadBinaryFile(path);
    if (!bytes) {
      fmt::print(stderr, "bpfdiff pack replay: {}\n", bytes.message());
      return kBadInput;
    }
    auto result = RunPackScript(*bytes, options);
    if (!result) {
      fmt::print(stderr, "bpfdiff pack replay: {}: {}\n", path, result.message());
      return kBadInput;
    }
    if (!result->is_script) {
      fmt::print(stderr, "bpfdiff pack replay: {}: not a pack script (byte 0 must be {})\n", path,
                 kPackScriptVersion);
      return kBadInput;
    }
    fmt::print("== {} ({} CPUs)\n", path, result->cpus);
    for (size_t i = 0; i < result->trace.size(); ++i) fmt::print("{:4}  {}\n", i, result->trace[i]);
    fmt::print("{} operations, {} loads ({} rejected), {} frees, {} stale calls, {} calls compared, "
               "{} not comparable (the prog_array changed during the call)\n",
               result->operations, result->loads, result->loads_rejected, result->frees, result->stale_calls,
               result->calls_compared, result->calls_not_comparable);
    for (const auto& violation : result->violations) fmt::print("{}\n", violation.Describe());
    if (!result->violations.empty()) status = kFailed;
    else fmt::print("every invariant held\n");
  }
  return status;
}

}  // namespace

void AddPackCommands(CLI::App& app, int& exit_code) {
  CLI::App* pack = app.add_subcommand("pack", "The prog pack lifecycle on several simulated CPUs");
  pack->require_subcommand(1);

  auto scripts = std::make_shared<std::vector<std::string>>();
  auto trace = std::make_shared<bool>(false);
  CLI::App* replay = pack->add_subcommand("replay", "Run pack_fuzzer inputs with every lifecycle invariant checked");
  replay->add_option("scripts", *scripts, "pack_fuzzer inputs (corpus files, crash files)")->required();
  replay->add_flag("--trace", *trace, "Print every operation");
  replay->callback([scripts, trace, &exit_code] { exit_code = Replay(*scripts, *trace); });
}

}  // namespace bpfdiff::fuzz
