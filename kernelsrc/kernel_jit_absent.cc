// The kernel's JIT in a build that found no Linux tree: every request for it
// says how to get one.
#include "kernelsrc/kernel_jit.h"

namespace bpfdiff::kernelsrc {

struct KernelJit::Impl {
  VerifierAnswers answers;
};

std::optional<KernelTree> BuiltKernelTree() { return std::nullopt; }

std::span<const KernelTree> LinkedKernelTrees() { return {}; }

const KernelTree* FindLinkedTree(std::string_view) { return nullptr; }

const KernelTree* TreeOrBuilt(const KernelTree* tree) { return tree; }

KernelJit::KernelJit(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KernelJit::~KernelJit() = default;

const VerifierAnswers& KernelJit::answers() const { return impl_->answers; }

std::vector<std::string> KernelJit::TakePackProblems() { return {}; }

const KernelTree& KernelJit::tree() const {
  static const KernelTree none;
  return none;
}

Result<std::unique_ptr<KernelJit>> KernelJit::Create(jit::ProgPack&, jit::TextPatcher&, const KernelJitWorld&,
                                                     jit::AtomicLowering, const KernelTree*) {
  return Fail("this bpfdiff was built without a Linux tree, so it has no kernel JIT: run "
              "ci/kernel_source.sh (Debian's linux-source-6.12) or configure with "
              "-DBPFDIFF_KERNEL_SOURCE=<tree>, then build again");
}

Result<jit::CompiledProgram> KernelJit::Compile(const isa::Program&) {
  return Fail("this bpfdiff was built without a Linux tree");
}

Result<jit::CompiledProgram> KernelJit::Compile(const isa::Program&, jit::Placement) {
  return Fail("this bpfdiff was built without a Linux tree");
}

Result<jit::CompiledProgram> KernelJit::Compile(const isa::Program&, const KernelLoader&) {
  return Fail("this bpfdiff was built without a Linux tree");
}

Result<std::vector<uint32_t>> KernelJit::BlindedLineInfo(const isa::Program&, const KernelLoader&) {
  return Fail("this bpfdiff was built without a Linux tree");
}

FailingCompile KernelJit::CompileFailing(const isa::Program& program, const KernelLoader&, uint32_t fail_call) {
  return CompileFailing(program, fail_call);
}

FailingCompile KernelJit::CompileFailing(const isa::Program& program, const KernelLoader&, uint32_t fail_call,
                                         uint32_t) {
  return CompileFailing(program, fail_call);
}

FailingCompile KernelJit::CompileFailing(const isa::Program&, uint32_t) {
  FailingCompile attempt;
  attempt.compiled = Fail("this bpfdiff was built without a Linux tree");
  return attempt;
}

std::optional<std::string_view> KnownErrorPathBreach(std::string_view, const KernelTree*) { return std::nullopt; }

Status KernelJit::Release(jit::CompiledProgram& program) {
  program.subprograms.clear();
  return {};
}

Result<KernelTrampoline> KernelJit::BuildTrampoline(const TrampolineRequest&, TrampolineErrorPath*) {
  return Fail("this bpfdiff was built without a Linux tree");
}

void KernelJit::ReleaseTrampoline(KernelTrampoline& trampoline) { trampoline.allocation.reset(); }

Status KernelJit::PokeEntry(const jit::CompiledSubprogram&, uint64_t, uint64_t) {
  return Fail("this bpfdiff was built without a Linux tree");
}

Status KernelJit::JumpEntry(const jit::CompiledSubprogram&, uint64_t, uint64_t) {
  return Fail("this bpfdiff was built without a Linux tree");
}

std::optional<jit::Fixup> KernelJit::Fixup(const uint8_t*, uint64_t, uint32_t, uint64_t) { return std::nullopt; }

KernelJit::FixupFunction KernelJit::FixupOf(const KernelTree*) { return &KernelJit::Fixup; }

std::optional<uint64_t> PrologueFrameBytes(const jit::CompiledSubprogram&) { return std::nullopt; }

uint64_t StackReservationBytes(const jit::CompiledSubprogram&) { return 0; }

std::optional<uint32_t> TailCallEntryWords(const jit::CompiledSubprogram&) { return std::nullopt; }

}  // namespace bpfdiff::kernelsrc
