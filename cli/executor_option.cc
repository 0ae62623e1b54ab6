#include "cli/executor_option.h"

#include "harness/machine/vixl_cpu.h"

namespace bpfdiff::cli {

void AddExecutorOption(CLI::App* command, std::string* executor) {
  command
      ->add_option("--executor", *executor,
                   "The arm64 emulator that runs the JITs' code: unicorn, or vixl (Arm's VIXL simulator)")
      ->capture_default_str();
}

Result<MachineFactory> MachineFactoryNamed(std::string_view executor) {
  if (executor == "unicorn") return MachineFactory{nullptr};
  if (executor == "vixl") return MachineFactory{&CreateVixlMachine};
  return Fail("unknown executor '{}': unicorn or vixl", executor);
}

}  // namespace bpfdiff::cli
