// bpfdiff trampoline: trampoline_fuzzer inputs replayed and shown.
//
//   bpfdiff trampoline FILE|DIR... [--executor unicorn|vixl] [--show]
//       decodes each file as trampoline_fuzzer does (a traced program and
//       its fentry, fexit and fmod_ret programs), has the kernel's own arch
//       code build, attach, replace, detach and free the trampoline, and
//       compares every run with the oracle's composition (oracle/trampoline.h).
//       One line per file; --show prints each case too, and a case that
//       does not match is always shown.
//
// Exit status: 0 when every case matched (or was not comparable), 1 when one
// diverged or the kernel refused one, 2 when a file cannot be read or this
// build has no kernel JIT.
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/executor_option.h"
#include "fuzz/generator/trampoline_case.h"
#include "harness/trampoline/kernel_trampoline.h"
#include "kernelsrc/kernel_jit.h"
#include "support/files.h"

namespace bpfdiff::cli {
namespace {

struct TrampolineArgs {
  std::vector<std::string> inputs;
  std::string executor = "unicorn";
  bool show = false;
  std::string tree;  // a tree the build links beside its own; "": its own
};

int Run(const TrampolineArgs& args, const Settings& settings) {
  auto factory = MachineFactoryNamed(args.executor);
  if (!factory) {
    fmt::print(stderr, "bpfdiff trampoline: {}\n", factory.message());
    return kExitBadInput;
  }
  trampoline::RunnerOptions options;
  options.machine_factory = *factory;
  options.shim_bugs = settings.bugs.kernel_shims;
  if (!args.tree.empty()) {
    options.tree = kernelsrc::FindLinkedTree(args.tree);
    if (options.tree == nullptr) {
      fmt::print(stderr, "bpfdiff trampoline: --tree {}: this build links no such Linux tree (bpfdiff engines lists "
                         "each tree's engines, kernel-jit@<version>)\n",
                 args.tree);
      return kExitBadInput;
    }
  }
  auto runner = trampoline::KernelTrampolineRunner::Create(options);
  if (!runner) {
    fmt::print(stderr, "bpfdiff trampoline: {}\n", runner.message());
    return kExitBadInput;
  }
  std::vector<std::filesystem::path> files;
  for (const std::string& input : args.inputs) {
    auto listed = ListFiles(input);
    if (!listed) {
      fmt::print(stderr, "bpfdiff trampoline: {}\n", listed.message());
      return kExitBadInput;
    }
    files.insert(files.end(), listed->begin(), listed->end());
  }
  size_t matched = 0, not_comparable = 0, failed = 0;
  for (const auto& file : files) {
    auto bytes = ReadBinaryFile(file);
    if (!bytes) {
      fmt::print(stderr, "bpfdiff trampoline: {}\n", bytes.message());
      return kExitBadInput;
    }
    const trampoline::TrampolineCase c = fuzz::DecodeTrampolineInput(*bytes);
    auto verdict = (*runner)->Run(c);
    if (auto failure = (*runner)->sandbox().UnicornFailure()) {
      fmt::print(stderr, "bpfdiff trampoline: {}: the machine failed: {}\n", file.string(), *failure);
      return kExitBadInput;
    }
    std::string line;
    bool show = args.show;
    if (!verdict) {
      ++failed;
      show = true;
      line = fmt::format("FAIL {}: refused: {}", file.string(), verdict.message());
    } else if (verdict->match()) {
      ++matched;
      const std::string through =
          c.attachment.freplace ? fmt::format("the entry jumped to extension program {}", *c.attachment.freplace)
                                : fmt::format("trampoline of {} words at 0x{:x}", verdict->trampoline_words,
                                              verdict->trampoline_entry);
      line = fmt::format("ok   {}: r0 0x{:x}, {} events logged, {}", file.string(), verdict->outcome.r0,
                         verdict->log.size(), through);
    } else if (verdict->before.kind == Verdict::Kind::kDivergence ||
               verdict->attached.kind == Verdict::Kind::kDivergence ||
               verdict->detached.kind == Verdict::Kind::kDivergence) {
      ++failed;
      show = true;
      line = fmt::format("FAIL {}: {}", file.string(), verdict->Describe());
    } else {
      ++not_comparable;
      line = fmt::format("n/c  {}: {}", file.string(), verdict->Describe());
    }
    fmt::print("{}\n", line);
    if (show) fmt::print("{}", fuzz::DescribeTrampolineCase(c));
  }
  fmt::print("bpfdiff trampoline ({}): {} cases, {} matched, {} not comparable, {} failed\n", args.executor,
             files.size(), matched, not_comparable, failed);
  return failed == 0 ? kExitOk : kExitFailed;
}

}  // namespace

void AddTrampolineCommand(CLI::App& app, const Settings& settings, int& exit_code) {
  auto args = std::make_shared<TrampolineArgs>();
  CLI::App* command = app.add_subcommand(
      "trampoline", "trampoline_fuzzer inputs: the kernel's own trampolines against the oracle's composition");
  command->add_option("inputs", args->inputs, "files or directories of trampoline_fuzzer inputs")->required();
  AddExecutorOption(command, &args->executor);
  command->add_flag("--show", args->show, "print each case (a failing one is always printed)");
  command->add_option("--tree", args->tree,
                      "the Linux tree whose arch code builds the trampolines, by version (6.1): one the build links "
                      "beside its own; default its own");
  command->callback([args, &settings, &exit_code] { exit_code = Run(*args, settings); });
}

}  // namespace bpfdiff::cli
