// bpfdiff planted list: the catalog of planted bugs (harness/planted/), one
// line each: name, the fuzz target that must catch it, its area, whether it
// is value-dependent, the upstream fix and what it does, separated by tabs,
// for ci/ scripts and for people.
#include <fmt/format.h>

#include "cli/commands.h"

namespace bpfdiff::cli {

void AddPlantedCommand(CLI::App& app, const Settings& /*settings*/, int& exit_code) {
  CLI::App* planted = app.add_subcommand("planted", "The catalog of planted bugs (negative controls)");
  planted->require_subcommand(1);
  CLI::App* list = planted->add_subcommand(
      "list", "One line per bug: name, target, area, value-dependent, fixed by, what (tab-separated)");
  list->callback([&exit_code] {
    for (const auto& bug : PlantedBugCatalog()) {
      fmt::print("{}\t{}\t{}\t{}\t{}\t{}\n", bug.name, bug.target, BugAreaName(bug.area),
                 bug.value_dependent ? "value-dependent" : "-", bug.fixed_by, bug.what);
    }
    exit_code = kExitOk;
  });
}

}  // namespace bpfdiff::cli
