// The kernel's interpreter in a build that found no Linux tree: nothing
// runs it (the engine table refuses kernel-interp first), and a load says
// how to get one.
#include "kernelsrc/kernel_interpreter.h"

namespace bpfdiff::kernelsrc {

bool KernelInterpreterAvailable() { return false; }

InterpreterEntry InterpreterEntryFor(uint32_t, const KernelTree*) { return nullptr; }

std::jmp_buf& BeginInterpreterRun(const KernelTree*) {
  static std::jmp_buf none;
  return none;
}
std::string EndInterpreterRun(const KernelTree*) { return ""; }

std::optional<std::string> InterpreterRefusal(const isa::Program&, const KernelTree*) {
  return "this bpfdiff was built without a Linux tree, so it has no kernel interpreter";
}

InterpreterProgram::~InterpreterProgram() = default;
const void* InterpreterProgram::insns() const { return nullptr; }

Result<std::unique_ptr<InterpreterProgram>> InterpreterProgram::Load(const isa::Program&, uint32_t,
                                                                     HostHelper (*)(int32_t), const KernelTree*) {
  return Fail("this bpfdiff was built without a Linux tree, so it has no kernel interpreter: run "
              "ci/kernel_source.sh (Debian's linux-source-6.12) or configure with "
              "-DBPFDIFF_KERNEL_SOURCE=<tree>, then build again");
}

void SetProbeHook(const void*, const KernelTree*) {}

}  // namespace bpfdiff::kernelsrc
