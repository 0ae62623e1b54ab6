// bpfdiff plugin [MEMORY_HEX]: the bpf_conformance plugin protocol. The
// program comes as hex on stdin, the memory as hex in the first argument;
// r0 goes to stdout in hex; an error exits non-zero with the message on
// stderr. So upstream's bpf_conformance_runner can drive our engines.
#include <iostream>
#include <iterator>

#include <fmt/format.h>

#include "harness/case_file.h"
#include "harness/cli/commands.h"
#include "harness/differential.h"
#include "support/hex.h"

namespace bpfdiff::cli {
namespace {

struct PluginArgs {
  std::string memory;
  std::string engine = "interp";
};

int Fail(const std::string& message) {
  fmt::print(stderr, "{}\n", message);
  return kExitFailed;
}

int Run(const PluginArgs& args) {
  const std::string input(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>{});
  auto bytes = ParseHexBytes(input);
  if (!bytes) return Fail(fmt::format("program: {}", bytes.message()));
  if (bytes->size() % isa::kInsnSize != 0) return Fail("program: not a whole number of instructions");
  auto memory = ParseHexBytes(args.memory);
  if (!memory) return Fail(fmt::format("memory: {}", memory.message()));

  CaseSource source;
  source.programs.emplace_back();
  for (size_t i = 0; i < bytes->size(); i += isa::kInsnSize) {
    source.programs[0].push_back(isa::Insn::FromBytes(&(*bytes)[i]));
  }
  source.memory = std::move(memory).value();

  auto sandbox = Sandbox::Create();
  if (!sandbox) return Fail(sandbox.message());
  auto engines = MakeEngines(**sandbox, args.engine);
  if (!engines) return Fail(engines.message());
  DifferentialRunner runner(**sandbox, std::move(engines).value());
  const CaseRun run = runner.Run(source);
  if (run.load_error) return Fail(*run.load_error);
  for (const auto& engine_run : run.runs) {
    if (!engine_run.outcome) return Fail(engine_run.prepare_error);
    if (const std::string error = ErrorText(*engine_run.outcome); !error.empty()) return Fail(error);
  }
  if (const EngineRun* diverged = run.FirstDivergence()) return Fail(diverged->verdict.Describe());
  fmt::print("{:x}\n", run.runs.front().outcome->r0);
  return kExitOk;
}

}  // namespace

void AddPluginCommand(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<PluginArgs>();
  CLI::App* cmd = app.add_subcommand("plugin", "Speak the bpf_conformance plugin protocol");
  cmd->add_option("memory", args->memory, "Input memory as hex");
  cmd->add_option("--engine", args->engine, "interp, jit, jit-llsc or all")->capture_default_str();
  cmd->allow_extras();  // upstream may pass options of its own (e.g. --elf is rejected below)
  cmd->callback([args, cmd, &exit_code] {
    for (const auto& extra : cmd->remaining()) {
      exit_code = Fail(fmt::format("unsupported plugin option '{}'", extra));
      return;
    }
    exit_code = Run(*args);
  });
}

}  // namespace bpfdiff::cli
