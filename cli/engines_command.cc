// bpfdiff engines: the engines this build has, one per line (name, whose
// JIT, what), and the Linux tree the kernel's come from: what the nightly
// names in its report, and what a maintainer checks first.
//
//   engines            the table; the kernel's engines say whether this
//                      build has them and from which tree, then those
//                      of every tree linked beside it (kernel-jit@6.1.192)
//   engines --kernel   only the tree ("linux 6.12.118 at PATH"); exit 1
//                      when the build has no kernel engines
//   engines --trees    the trees linked beside it, one a line
//                      ("6.1.192<TAB>linux 6.1.192 at PATH")
#include <fmt/format.h>

#include "cli/commands.h"
#include "harness/diff/engines.h"
#include "kernelsrc/kernel_jit.h"

namespace bpfdiff::cli {

void AddEnginesCommand(CLI::App& app, const Settings& /*settings*/, int& exit_code) {
  CLI::App* engines = app.add_subcommand("engines", "The engines of this build, and the Linux tree of the kernel's");
  auto kernel_only = std::make_shared<bool>(false);
  engines->add_flag("--kernel", *kernel_only, "Only the tree of the kernel's JIT; exit 1 when the build has none");
  auto trees_only = std::make_shared<bool>(false);
  engines->add_flag("--trees", *trees_only,
                    "Only the trees linked beside the build's own, one a line: VERSION, a tab, \"linux VERSION at "
                    "PATH\" (their engines are <engine>@VERSION)");
  engines->callback([kernel_only, trees_only, &exit_code] {
    if (*trees_only) {
      const auto trees = kernelsrc::LinkedKernelTrees();
      for (size_t t = 1; t < trees.size(); ++t) {
        fmt::print("{}\tlinux {} at {}\n", trees[t].version, trees[t].version, trees[t].path);
      }
      exit_code = kExitOk;
      return;
    }
    const auto tree = kernelsrc::BuiltKernelTree();
    const std::string where =
        tree ? fmt::format("linux {} at {}", tree->version.empty() ? "(version unknown)" : tree->version, tree->path)
             : "not built: no Linux tree (ci/kernel_source.sh, or BPFDIFF_KERNEL_SOURCE)";
    if (*kernel_only) {
      fmt::print("{}\n", where);
      exit_code = tree ? kExitOk : kExitFailed;
      return;
    }
    for (const auto& spec : EngineSpecs()) {
      const bool kernel = spec.source == JitSource::kKernel && spec.kind == EngineKind::kJit;
      fmt::print("{}\t{}\n", spec.name, kernel ? fmt::format("{} ({})", spec.what, where) : std::string(spec.what));
    }
    // The kernel engines of the trees linked beside the build's own.
    for (const auto& spec : LinkedTreeEngineSpecs()) {
      const bool kernel_jit = spec.kind == EngineKind::kJit;
      fmt::print("{}\t{}\n", spec.name,
                 kernel_jit ? fmt::format("{} (linux {} at {})", spec.what, spec.tree->version, spec.tree->path)
                            : std::string(spec.what));
    }
    exit_code = kExitOk;
  });
}

}  // namespace bpfdiff::cli
