// --executor unicorn|vixl: which arm64 emulator runs the JITs' code (the
// Machine's executor). Unicorn is the default; VIXL's simulator is the
// second one (harness/machine/vixl_cpu.h), to check that a verdict does
// not depend on the emulator.
#pragma once

#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "harness/machine/sandbox.h"
#include "support/result.h"

namespace bpfdiff::cli {

void AddExecutorOption(CLI::App* command, std::string* executor);

// nullptr for unicorn (Sandbox's default); an error naming the choices.
Result<MachineFactory> MachineFactoryNamed(std::string_view executor);

}  // namespace bpfdiff::cli
