#include "harness/diff/code_generator.h"

#include <algorithm>

#include <fmt/format.h>

#include "harness/diff/blinding_check.h"
#include "harness/machine/identity_view.h"
#include "kernelsrc/kernel_jit.h"
#include "oracle/guest_layout.h"

namespace bpfdiff {
namespace {

class ModelGenerator final : public CodeGenerator {
 public:
  ModelGenerator(Sandbox& sandbox, const jit::JitOptions& options)
      : jit_(sandbox.pack(), Sandbox::JitEnvironment(), options) {
    // The model lowers what 6.12's arm64 JIT does (bpf_throw included), and
    // as it does refuses arena atomics without LSE.
    answers_.percpu_insn = answers_.subprog_tailcalls = answers_.arena = answers_.exceptions = true;
    answers_.arena_atomics = options.atomics == jit::AtomicLowering::kLse;
  }
  std::optional<std::string> VerifierRefusal(const isa::Program& program) const override {
    return kernelsrc::VerifierRefusal(answers_, program);
  }
  Result<jit::CompiledProgram> Compile(const LoadedProgram& program) override { return jit_.Compile(program.program); }
  Status Release(jit::CompiledProgram& program) override {
    jit_.Release(program);
    return {};
  }
  Result<CodeConventions> Conventions(std::span<const jit::CompiledProgram* const>) const override {
    return ModelConventions();
  }

 private:
  jit::Jit jit_;
  kernelsrc::VerifierAnswers answers_;
};

// The longest program (in slots) a case blinds; a longer one is loaded by
// the hardened loader that does not blind. Blinding's paths (the clone, a
// patch that outgrows the clone's pages and reallocates it, their
// failures) are all reached below it. Measured on 197 pack_fuzzer_kernel
// scripts (bpfdiff pack replay): 4096 made the replay 4.3x slower than
// without blinding, 1024 1.5x, 512 the same.
constexpr size_t kLongestBlinded = 512;

const kernelsrc::KernelLoader& NotBlindingHardenedLoader() {
  for (const kernelsrc::KernelLoader& loader : kernelsrc::HardenedLoaders()) {
    if (!kernelsrc::BlindsConstants(loader)) return loader;
  }
  return kernelsrc::kRootLoader;
}

const kernelsrc::KernelLoader& BlindingRootLoader() {
  for (const kernelsrc::KernelLoader& loader : kernelsrc::HardenedLoaders()) {
    if (loader.capable && kernelsrc::BlindsConstants(loader)) return loader;
  }
  return kernelsrc::kRootLoader;
}

class KernelGenerator final : public CodeGenerator {
 public:
  KernelGenerator(std::unique_ptr<kernelsrc::KernelJit> jit, KernelLoaders loaders)
      : jit_(std::move(jit)), loaders_(loaders) {}
  void BeginCase(const isa::Program& main_program) override {
    const uint64_t fingerprint = ProgramFingerprint(main_program.insns);
    if (loaders_ == KernelLoaders::kClassic) loader_ = &kernelsrc::ClassicLoaderFor(fingerprint);
    if (loaders_ == KernelLoaders::kHardened) {
      loader_ = &kernelsrc::HardenedLoaderFor(fingerprint);
      // Blinding patches one instruction at a time, each patch copying the
      // program and walking every branch (bpf_patch_insn_single): its cost
      // grows with the square of the length, minutes for the MiB-sized
      // programs the pack scripts load. Longer programs go to the hardened
      // loader that does not blind.
      if (main_program.insns.size() > kLongestBlinded && kernelsrc::BlindsConstants(*loader_)) {
        loader_ = &NotBlindingHardenedLoader();
      }
      // A program only a loader with CAP_BPF can load (a subprogram call,
      // a loop, a tracing helper) is blinded as root loads it under
      // bpf_jit_harden=2: the unprivileged row never reaches its JIT.
      if (!loader_->capable && kernelsrc::UnprivilegedRefusal(main_program)) loader_ = &BlindingRootLoader();
    }
  }
  const kernelsrc::KernelLoader* loader() const override { return loader_; }
  Result<jit::CompiledProgram> Compile(const LoadedProgram& program) override {
    return CompileFailing(program, 0).compiled;
  }
  // Under the case's loader (BeginCase, else root), as Compile.
  kernelsrc::FailingCompile CompileFailing(const LoadedProgram& loaded, uint32_t fail_call) override {
    const isa::Program& program = loaded.program;
    const kernelsrc::KernelLoader& loader = loader_ != nullptr ? *loader_ : kernelsrc::kRootLoader;
    kernelsrc::FailingCompile attempt = jit_->CompileFailing(program, loader, fail_call, loaded.stack_depth);
    Result<jit::CompiledProgram>& compiled = attempt.compiled;
    if (compiled && kernelsrc::BlindsConstants(loader)) {
      if (auto left = ConstantLeftByBlinding(program, *compiled)) {
        // A finding of its own kind, not an outcome: the code computes the
        // same either way.
        Status released = jit_->Release(*compiled);
        compiled = Fail("{}{}", *left, released ? "" : fmt::format(" (then its release failed: {})", released.message()));
      }
    }
    return attempt;
  }
  Status Release(jit::CompiledProgram& program) override { return jit_->Release(program); }
  Result<CodeConventions> Conventions(std::span<const jit::CompiledProgram* const> compiled) const override {
    auto conventions = KernelConventions(compiled, &jit_->tree());
    if (conventions && loader_ != nullptr) {
      conventions->firmware = kernelsrc::FirmwareCallOf(*loader_);
      conventions->per_cpu_in_tpidr_el2 = loader_->vhe;
    }
    return conventions;
  }
  std::span<const int32_t> InlinedHelpers() const override { return jit_->answers().inlined_helpers; }
  std::vector<std::string> TakePackProblems() override { return jit_->TakePackProblems(); }
  std::optional<std::string> VerifierRefusal(const isa::Program& program) const override {
    if (loaders_ == KernelLoaders::kClassic) {
      for (size_t pc = 0; pc < program.insns.size(); ++pc) {
        if (program.insns[pc].opcode != isa::kOpTailCall) continue;
        // bpf_convert_filter() emits none, and a classic program is in no
        // program array: its prologue has no landing pad for one
        // (build_prologue, ebpf_from_cbpf).
        return fmt::format("the tail call at slot {}: a program converted from classic BPF makes none and is "
                           "no tail call's target",
                           pc);
      }
    }
    return kernelsrc::VerifierRefusal(jit_->answers(), program);
  }

 private:
  std::unique_ptr<kernelsrc::KernelJit> jit_;
  KernelLoaders loaders_;
  const kernelsrc::KernelLoader* loader_ = nullptr;  // the case's, for kClassic and kHardened
};

}  // namespace

uint64_t ProgramFingerprint(std::span<const isa::Insn> insns) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  const auto mix = [&](uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) hash = (hash ^ ((value >> (8 * i)) & 0xff)) * 0x100000001b3ULL;
  };
  for (const isa::Insn& insn : insns) {
    mix(insn.opcode, 1);
    mix(static_cast<uint64_t>((insn.src << 4) | insn.dst), 1);
    mix(static_cast<uint16_t>(insn.offset), 2);
    mix(static_cast<uint32_t>(insn.imm), 4);
  }
  return hash;
}

std::unique_ptr<CodeGenerator> MakeModelGenerator(Sandbox& sandbox, const jit::JitOptions& options) {
  return std::make_unique<ModelGenerator>(sandbox, options);
}

kernelsrc::KernelJitWorld KernelJitWorldOf(Sandbox& sandbox, KernelPackSource pack, const kernelsrc::ShimBugs& bugs,
                                           const kernelsrc::KernelTree* tree) {
  kernelsrc::KernelJitWorld world{Sandbox::JitEnvironment(), guest::kDummyTrampAddress,
                                  static_cast<uint32_t>(guest::kThreadInfoCpuOffset), bugs, std::nullopt};
  // A tree without the prog pack has one allocator, core.c's
  // bpf_jit_binary_alloc(), whose pages the JIT writes in place.
  const kernelsrc::KernelTree* const of = kernelsrc::TreeOrBuilt(tree);
  if (pack == KernelPackSource::kCoreC || (of != nullptr && !of->features.prog_pack)) {
    Sandbox* const shown = &sandbox;
    world.kernel_pack = kernelsrc::KernelPack{[shown] { return ShowAtGuestAddresses(shown->env().memory()); }};
  }
  return world;
}

Result<std::unique_ptr<CodeGenerator>> MakeKernelGenerator(Sandbox& sandbox, jit::AtomicLowering atomics,
                                                           KernelLoaders loaders, KernelPackSource pack,
                                                           const kernelsrc::KernelTree* tree) {
  if (kernelsrc::KernelJit::FixupOf(tree) == nullptr) {
    return Fail("Linux {}: more trees are linked than bpfdiff has exception-table fixups for "
                "(kernelsrc::kMaxLinkedTrees)",
                tree->version);
  }
  auto jit = kernelsrc::KernelJit::Create(sandbox.pack(), sandbox.patcher(), KernelJitWorldOf(sandbox, pack, {}, tree),
                                          atomics, tree);
  if (!jit) return jit.error();
  return std::unique_ptr<CodeGenerator>(std::make_unique<KernelGenerator>(std::move(jit).value(), loaders));
}

std::vector<const jit::CompiledProgram*> Pointers(const std::vector<jit::CompiledProgram>& compiled) {
  std::vector<const jit::CompiledProgram*> pointers;
  pointers.reserve(compiled.size());
  for (const auto& program : compiled) pointers.push_back(&program);
  return pointers;
}

Result<CodeConventions> KernelConventions(const std::vector<jit::CompiledProgram>& compiled,
                                          const kernelsrc::KernelTree* tree) {
  return KernelConventions(Pointers(compiled), tree);
}

Result<CodeConventions> KernelConventions(std::span<const jit::CompiledProgram* const> compiled,
                                          const kernelsrc::KernelTree* tree) {
  CodeConventions conventions;
  conventions.search_extable = kernelsrc::KernelJit::FixupOf(tree);
  if (conventions.search_extable == nullptr) return Fail("no exception-table fixup for Linux {}", tree->version);
  conventions.kernel_virtual_calls = true;
  conventions.tail_call_restores_registers = true;
  conventions.guarded_pages = true;
  conventions.frame_records = true;
  // The kernel pushes only the callee-saved registers a function uses, so
  // its frames differ in size: each function's prologue is read from its
  // code, and the interpreter follows the run's path with them. A case
  // whose prologues all agree keeps the one layout of every call depth.
  std::vector<FunctionFrame> functions;
  for (size_t p = 0; p < compiled.size(); ++p) {
    if (compiled[p] == nullptr) continue;
    for (size_t s = 0; s < compiled[p]->subprograms.size(); ++s) {
      const jit::CompiledSubprogram& sub = compiled[p]->subprograms[s];
      const auto bytes = kernelsrc::PrologueFrameBytes(sub);
      if (!bytes) return Fail("the kernel's prologue of program {} subprogram {} is not of the shape bpfdiff reads", p, s);
      functions.push_back({static_cast<uint32_t>(p), sub.first_slot, *bytes, kernelsrc::StackReservationBytes(sub)});
    }
    if (!compiled[p]->subprograms.empty()) {
      // A program converted from classic BPF has none in 6.1 (its
      // prologue sets up no tail-call counter): it is in no program array,
      // so no tail call lands in it (KernelGenerator refuses a classic
      // case with one).
      const auto words = kernelsrc::TailCallEntryWords(compiled[p]->subprograms.front());
      if (words) conventions.tail_call_entry_offset = uint64_t{*words} * 4;
    }
  }
  if (functions.empty()) return Fail("nothing compiled");
  const uint64_t main_frame = functions.front().prologue_bytes;
  // A callee's r10 lies its caller's BPF stack and its own pushes below its
  // caller's, and the frames compared hold the BPF stack below each r10.
  // Every function of a program reserves the program's stack depth
  // (LoadedProgram::stack_depth), read from the code; the deepest is the
  // case's. Programs that reserve different depths (a test_bpf tail-call
  // group) make no calls, and every function of a case with calls
  // reserves 512 bytes (oracle/load.h).
  uint64_t stack = 0;
  for (const jit::CompiledProgram* program : compiled) {
    if (program == nullptr || program->subprograms.empty()) continue;
    stack = std::max(stack, kernelsrc::StackReservationBytes(program->subprograms.front()));
  }
  conventions.geometry = {main_frame, stack + main_frame};
  const bool alike = std::all_of(functions.begin(), functions.end(), [&](const FunctionFrame& f) {
    return f.prologue_bytes == main_frame && f.stack_bytes == functions.front().stack_bytes;
  });
  if (!alike) conventions.geometry.functions = std::move(functions);
  return conventions;
}

}  // namespace bpfdiff
