// bpfdiff pack: the prog pack lifecycle from the command line.
//
//   pack replay SCRIPT...   runs pack_fuzzer inputs (fuzz/pack/pack_script.h),
//                           optionally printing each operation; each script
//                           is run and reported, and the exit status is the
//                           worst of them: 0 every invariant held, 1 one
//                           broke, 2 a script that could not run. --jit
//                           kernel-jit compiles the programs with the
//                           kernel's JIT, as BPFDIFF_ENGINES=kernel
//                           pack_fuzzer does (kernel-jit@6.1: another tree
//                           the build links); --trace --programs prints
//                           each program loaded
//   pack itlb               the simulated iTLB report: pages fetched from
//                           with images packed and with pages of their own
//
// A planted bug (BPFDIFF_PLANTED_BUG) applies as in pack_fuzzer.
#include "cli/commands.h"
#include "harness/diff/engines.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "fuzz/pack/itlb_report.h"
#include "fuzz/pack/pack_script.h"
#include "fuzz/stats/stats_file.h"
#include "support/files.h"

namespace bpfdiff::cli {
namespace {

using namespace bpfdiff::fuzz;

// " (reason: calls, ...)", as the world recorded why each call could not
// be compared (harness/lifecycle/not_comparable.h), most frequent first;
// nothing when every call was compared.
std::string NotComparableReasons(const PackScriptResult& result) {
  if (result.not_comparable_reasons.empty()) return "";
  const auto reasons = MostFrequentFirst({result.not_comparable_reasons.begin(), result.not_comparable_reasons.end()});
  std::string text;
  for (const auto& [reason, calls] : reasons) text += fmt::format("{}{}: {}", text.empty() ? "" : ", ", reason, calls);
  return fmt::format(" ({})", text);
}

// Every script, each on its own: one that does not read or is not a pack
// script is reported and the next one still runs; the worst status wins.
int Replay(const std::vector<std::string>& scripts, bool trace, bool trace_programs, const std::string& jit_engine,
           const std::string& pack, const Settings& settings) {
  PackScriptOptions options;
  options.jit_engine = jit_engine;
  options.kernel_pack = pack == "kernel";
  options.bugs = settings.bugs;
  options.unicorn_fault = settings.unicorn_fault;
  options.trace = trace;
  options.trace_programs = trace_programs;
  int status = kExitOk;
  size_t held = 0, broke = 0, could_not_run = 0;
  for (const auto& path : scripts) {
    auto bytes = ReadBinaryFile(path);
    auto result = bytes ? RunPackScript(*bytes, options) : Result<PackScriptResult>(bytes.error());
    std::string why_not;
    if (!bytes) {
      why_not = bytes.message();
    } else if (!result) {
      why_not = fmt::format("{}: {}", path, result.message());
    } else if (!result->is_script) {
      why_not = fmt::format("{}: not a pack script (byte 0 must be a version, {} to {})", path,
                            kPackScriptOldestVersion, kPackScriptVersion);
    }
    if (!why_not.empty()) {
      std::fflush(stdout);  // in order with the scripts before it
      fmt::print(stderr, "bpfdiff pack replay: {}\n", why_not);
      status = WorstStatus(status, kExitBadInput);
      ++could_not_run;
      continue;
    }
    fmt::print("== {} ({} CPUs)\n", path, result->cpus);
    for (size_t i = 0; i < result->trace.size(); ++i) fmt::print("{:4}  {}\n", i, result->trace[i]);
    fmt::print("{} operations, {} loads ({} rejected), {} frees, {} stale calls, {} interrupts, {} calls compared, "
               "{} not comparable{}\n",
               result->operations, result->loads, result->loads_rejected, result->frees, result->stale_calls,
               result->interrupts,
               result->calls_compared, result->calls_not_comparable, NotComparableReasons(*result));
    for (const auto& violation : result->violations) fmt::print("{}\n", violation.Describe());
    if (!result->violations.empty()) {
      status = WorstStatus(status, kExitFailed);
      ++broke;
    } else {
      fmt::print("every invariant held\n");
      ++held;
    }
  }
  if (scripts.size() > 1) {
    fmt::print("replayed {} scripts: every invariant held in {}, one broke in {}, {} could not run\n",
               scripts.size(), held, broke, could_not_run);
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
  auto jit_engine = std::make_shared<std::string>("jit");
  auto pack_source = std::make_shared<std::string>("kernel");
  CLI::App* replay = pack->add_subcommand("replay", "Run pack_fuzzer inputs with every lifecycle invariant checked");
  replay->add_option("scripts", *scripts, "pack_fuzzer inputs (corpus files, crash files)")->required();
  replay->add_flag("--trace", *trace, "Print every operation");
  auto trace_programs = std::make_shared<bool>(false);
  replay->add_flag("--programs", *trace_programs, "With --trace: each program loaded, disassembled");
  replay->add_option("--jit", *jit_engine,
                     "Whose JIT compiles the programs: jit, jit-llsc or a kernel-jit engine but -cbpf, of a "
                     "tree this build links too (kernel-jit-blind@6.1; the -blind engines: bpf_jit_harden, the "
                     "loader chosen by each program; pack_fuzzer_kernel runs kernel-jit-blind)")
      ->check(
          [](const std::string& name) -> std::string {
            const EngineSpec* spec = FindEngine(name);
            if (spec != nullptr && spec->kind == EngineKind::kJit && spec->loaders != KernelLoaders::kClassic) {
              return "";
            }
            return fmt::format("{} is no JIT engine the pack scripts run (bpfdiff engines lists them; not -cbpf)",
                               name);
          },
          "JIT")
      ->capture_default_str();
  replay->add_option("--pack", *pack_source,
                     "Under a kernel engine, whose prog pack: kernel (kernel/bpf/core.c's, from the tree) or bpfdiff "
                     "(bpfdiff's model of it)")
      ->check(CLI::IsMember({"kernel", "bpfdiff"}))
      ->capture_default_str();
  replay->callback([scripts, trace, trace_programs, jit_engine, pack_source, &settings, &exit_code] {
    exit_code = Replay(*scripts, *trace, *trace_programs, *jit_engine, *pack_source, settings);
  });

  auto itlb_options = std::make_shared<ItlbOptions>();
  CLI::App* itlb = pack->add_subcommand("itlb", "Simulated iTLB report: packed images versus pages of their own");
  itlb->add_option("--loaded", itlb_options->loaded, "Programs loaded")->capture_default_str();
  itlb->add_option("--run", itlb_options->run, "Programs run in turn (the first ones loaded)")->capture_default_str();
  itlb->add_option("--rounds", itlb_options->rounds, "Times each runs")->capture_default_str();
  itlb->add_option("--seed", itlb_options->seed, "Seed of the generated programs")->capture_default_str();
  itlb->callback([itlb_options, &exit_code] { exit_code = Itlb(*itlb_options); });
}

}  // namespace bpfdiff::cli
