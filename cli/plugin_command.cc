// bpfdiff plugin [MEMORY_HEX] [--engine E]: the bpf_conformance plugin
// protocol as a subcommand, the same as the bpfdiff_plugin executable (see
// cli/plugin/). Upstream's bpf_conformance_runner puts the memory
// before its --plugin_options, so before the word `plugin`: the runner
// drives bpfdiff_plugin, not this subcommand.
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/plugin/plugin_session.h"

namespace bpfdiff::cli {

void AddPluginCommand(CLI::App& app, const Settings& settings, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "plugin",
      "Speak the bpf_conformance plugin protocol: [MEMORY_HEX] [--engine E], "
      "program hex on stdin; options as bpfdiff_plugin --help lists them");
  // Every argument goes to the protocol's own parser, so that the
  // subcommand and bpfdiff_plugin accept and reject exactly the same ones.
  cmd->prefix_command();
  cmd->allow_extras();
  cmd->callback([cmd, &settings, &exit_code] {
    const std::vector<std::string> args = cmd->remaining();
    exit_code = ServePluginOnStdio(args, "bpfdiff plugin", settings.bugs, settings.unicorn_fault);
  });
}

}  // namespace bpfdiff::cli
