// bpfdiff planted: the catalog of planted bugs (harness/planted/).
//
//   planted list          one line per bug: name, the fuzz target that must
//                         catch it, its area, whether it is value-dependent,
//                         the upstream fix and what it does (tab-separated,
//                         for ci/ scripts and for people); a bug of the
//                         kernel's JIT's shims only in a build that has it
//   planted table FILE    the bug-finding benchmark ci/planted_benchmark.sh
//                         measured, as the Markdown table the README shows
#include <fmt/format.h>

#include "cli/commands.h"
#include "kernelsrc/kernel_jit.h"
#include "report/planted_results.h"

namespace bpfdiff::cli {

void AddPlantedCommand(CLI::App& app, const Settings& /*settings*/, int& exit_code) {
  CLI::App* planted = app.add_subcommand("planted", "The catalog of planted bugs (negative controls)");
  planted->require_subcommand(1);
  CLI::App* list = planted->add_subcommand(
      "list", "One line per bug: name, target, area, value-dependent, fixed by, what (tab-separated)");
  list->callback([&exit_code] {
    const bool kernel_jit = kernelsrc::BuiltKernelTree().has_value();
    for (const auto& bug : PlantedBugCatalog()) {
      if (bug.needs_kernel_jit && !kernel_jit) continue;  // nor has this build its target
      fmt::print("{}\t{}\t{}\t{}\t{}\t{}\n", bug.name, bug.target, BugAreaName(bug.area),
                 bug.value_dependent ? "value-dependent" : "-", bug.fixed_by, bug.what);
    }
    exit_code = kExitOk;
  });

  auto file = std::make_shared<std::string>();
  CLI::App* table = planted->add_subcommand("table", "The benchmark in a planted.json, as a Markdown table");
  table->add_option("file", *file, "planted.json (ci/planted_benchmark.sh)")->required();
  table->callback([file, &exit_code] {
    auto benchmark = report::LoadPlanted(*file);
    if (!benchmark) {
      fmt::print(stderr, "bpfdiff planted table: {}\n", benchmark.message());
      exit_code = kExitBadInput;
      return;
    }
    fmt::print("{}", report::PlantedMarkdown(*benchmark));
    exit_code = kExitOk;
  });
}

}  // namespace bpfdiff::cli
