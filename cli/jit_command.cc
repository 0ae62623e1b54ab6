// bpfdiff jit FILE: the arm64 code of each program of a case, disassembled
// by LLVM and annotated with the BPF instructions, its exception table and
// its pack slot; bpfdiff's JIT's code, or with --engine kernel-jit the
// kernel's.
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/listing/jit_listing.h"
#include "harness/conformance/case_file.h"
#include "harness/diff/jit_engine.h"
#include "harness/diff/engines.h"

namespace bpfdiff::cli {
namespace {

struct JitArgs {
  std::string file;
  bool llsc = false;
  std::string engine = "jit";
};

int Run(const JitArgs& args, const Settings& settings) {
  const PlantedBugs& bugs = settings.bugs;
  auto file = ReadCaseFile(args.file);
  if (!file) {
    fmt::print(stderr, "bpfdiff jit: {}\n", file.message());
    return kExitBadInput;
  }
  auto loaded = LoadCase(file->source);
  if (!loaded) {
    fmt::print(stderr, "bpfdiff jit: {}: {}\n", args.file, loaded.message());
    return kExitBadInput;
  }
  auto sandbox = Sandbox::Create({.pack_bugs = bugs.pack, .unicorn_fault = settings.unicorn_fault});
  auto disassembler = A64Disassembler::Create();
  if (!sandbox || !disassembler) {
    fmt::print(stderr, "bpfdiff jit: {}\n", !sandbox ? sandbox.message() : disassembler.message());
    return kExitBadInput;
  }
  (*sandbox)->env().Install(*loaded);
  // --llsc: the LL/SC lowering of the engine's JIT.
  const EngineSpec* spec = FindEngine(args.llsc && args.engine.find("llsc") == std::string::npos
                                          ? args.engine + "-llsc"
                                          : args.engine);
  if (spec == nullptr || spec->kind != EngineKind::kJit) {
    fmt::print(stderr, "bpfdiff jit: --engine {}: jit, jit-llsc, kernel-jit, kernel-jit-cbpf or kernel-jit-llsc\n",
               args.engine);
    return kExitBadInput;
  }
  // A planted bug shows in the code it plants.
  auto generator = MakeCodeGenerator(**sandbox, *spec, bugs.jit);
  if (!generator) {
    fmt::print(stderr, "bpfdiff jit: {}\n", generator.message());
    return kExitBadInput;
  }
  JitEngine engine(**sandbox, std::move(generator).value(), std::string(spec->name));
  if (auto status = engine.Prepare(*loaded); !status) {
    fmt::print(stderr, "bpfdiff jit: {}: {}\n", args.file, status.message());
    return kExitFailed;
  }
  // Finalizing the images asks Unicorn to drop stale translations.
  if (auto failure = (*sandbox)->UnicornFailure()) {
    fmt::print(stderr, "bpfdiff jit: {}: {}\n", args.file, *failure);
    return kExitBadInput;
  }
  if (const auto* loader = engine.loader()) fmt::print("loaded as: {}\n", loader->name);
  for (size_t p = 0; p < engine.compiled().size(); ++p) {
    if (engine.compiled().size() > 1) fmt::print("program {}:\n", p);
    fmt::print("{}", JitListing(*disassembler, loaded->programs[p].program, engine.compiled()[p],
                                (*sandbox)->env().memory()));
  }
  return kExitOk;
}

}  // namespace

void AddJitCommand(CLI::App& app, const Settings& settings, int& exit_code) {
  auto args = std::make_shared<JitArgs>();
  CLI::App* cmd = app.add_subcommand("jit", "Show the arm64 code the JIT makes for a file");
  cmd->add_option("file", args->file, "A .data file or BPF assembly")->required();
  cmd->add_flag("--llsc", args->llsc, "Lower atomics with load/store-exclusive loops instead of LSE");
  cmd->add_option("--engine", args->engine,
                  "Whose JIT: jit, jit-llsc, kernel-jit, kernel-jit-cbpf (classic BPF, the loader chosen by the "
                  "program), kernel-jit-blind (bpf_jit_harden on: constants blinded by kernel/bpf/core.c, the "
                  "loader chosen by the program), kernel-jit-llsc or kernel-jit-llsc-blind")
      ->capture_default_str();
  cmd->callback([args, &settings, &exit_code] { exit_code = Run(*args, settings); });
}

}  // namespace bpfdiff::cli
