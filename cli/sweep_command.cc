// bpfdiff sweep: the operand-magnitude sweep (fuzz/sweep/operand_sweep.h),
// every form against the magnitude classes on every engine. Prints the
// counts and the first divergences, each with the operands of its
// combination; exit 1 on any divergence. A planted bug applies, so the
// sweep's reach can be seen bug by bug.
#include <fmt/format.h>

#include "cli/commands.h"
#include "fuzz/sweep/operand_sweep.h"

namespace bpfdiff::cli {

void AddSweepCommand(CLI::App& app, const Settings& settings, int& exit_code) {
  auto keep = std::make_shared<size_t>(20);
  CLI::App* cmd = app.add_subcommand("sweep", "Every form against operands of every magnitude class, on every engine");
  cmd->add_option("--keep", *keep, "Divergent cases to show")->capture_default_str();
  cmd->callback([keep, &settings, &exit_code] {
    auto harness = fuzz::DiffHarness::Create(settings.bugs, settings.unicorn_fault);
    if (!harness) {
      fmt::print(stderr, "bpfdiff sweep: {}\n", harness.message());
      exit_code = kExitBadInput;
      return;
    }
    const fuzz::SweepResult result = fuzz::RunSweep(**harness, fuzz::OperandSweep(), *keep);
    if (auto failure = (*harness)->sandbox().UnicornFailure()) {
      fmt::print(stderr, "bpfdiff sweep: could not run: {}\n", *failure);
      exit_code = kExitBadInput;
      return;
    }
    for (const auto& d : result.divergences) {
      fmt::print("DIVERGENCE {}{}: {}\n", d.case_name, d.combo.empty() ? "" : fmt::format(" [{}]", d.combo), d.detail);
    }
    fmt::print("sweep: {} cases, {} operand combinations: {} divergent, {} not comparable\n", result.cases,
               result.combos, result.divergent_cases, result.not_comparable);
    exit_code = result.divergent_cases == 0 ? kExitOk : kExitFailed;
  });
}

}  // namespace bpfdiff::cli
