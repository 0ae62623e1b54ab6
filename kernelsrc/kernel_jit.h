// The kernel's own arm64 JIT (arch/arm64/net/bpf_jit_comp.c and
// arch/arm64/lib/insn.c of a Linux tree, compiled unmodified under the shims
// in kernelsrc/include), writing its images into bpfdiff's prog pack.
//
// It answers the same question as jit::Jit, with the same artifact
// (jit::CompiledProgram: images, offset tables, exception tables), so that
// an engine can run either. What differs from the model is the code, the
// frame (the kernel pushes only the callee-saved registers a program uses)
// and the fixup (ex_handler_bpf's "register to clear" is x5 for none).
//
// Built only when CMake found a tree (BPFDIFF_KERNEL_SOURCE); otherwise
// Create() says how to get one.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "isa/program.h"
#include "jit/jit.h"
#include "jit/prog_pack.h"
#include "support/result.h"

namespace bpfdiff::kernelsrc {

// Where the kernel's JIT came from (for reports: the version or tree a
// night tested).
struct KernelTree {
  std::string path;     // the tree the build read
  std::string version;  // "6.12.118" from its Makefile, or "" if unknown
};

// The BPF stack every subprogram gets (prog->aux->stack_depth): MAX_BPF_STACK,
// the most the verifier allows. bpfdiff's load step does not compute a depth
// per subprogram as the verifier does, and its interpreter gives every frame
// 512 bytes.
inline constexpr uint32_t kStackDepth = 512;

// Whether this build has the kernel's JIT, and from which tree.
std::optional<KernelTree> BuiltKernelTree();

// What the kernel's JIT must know of bpfdiff's world beyond the model's
// environment: where the guest's stand-in for dummy_tramp is, and where the
// guest's `current` keeps the CPU number (checked against the shims').
struct KernelJitWorld {
  jit::JitEnvironment environment;
  uint64_t dummy_tramp = 0;
  uint32_t thread_info_cpu_offset = 0;
};

class KernelJit {
 public:
  // Fails when the build has no kernel tree, or when the layouts the
  // kernel's code bakes in (struct bpf_array, bpf_prog) disagree with the
  // guest's.
  static Result<std::unique_ptr<KernelJit>> Create(jit::ProgPack& pack, jit::TextPatcher& patcher,
                                                   const KernelJitWorld& world,
                                                   jit::AtomicLowering atomics);
  ~KernelJit();

  // Compiles `program` into the pack as the verifier drives the JIT. On
  // success every image is finalized; on failure nothing stays allocated.
  Result<jit::CompiledProgram> Compile(const isa::Program& program);

  // Frees every image of `program` (bpf_jit_binary_pack_free).
  void Release(jit::CompiledProgram& program);

  // The kernel's ex_handler_bpf for a fault at `pc` in `subprogram`, reading
  // its exception table from RX memory at `rx_extable`.
  static std::optional<jit::Fixup> Fixup(const uint8_t* rx_extable, uint64_t rx_extable_address,
                                         uint32_t entries, uint64_t pc);

  struct Impl;

 private:
  explicit KernelJit(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Read from the kernel's code of one subprogram (bpf_jit_comp.c's
// build_prologue): the bytes its prologue pushes below the SP it is entered
// with (frame record, tail-call count, the callee-saved registers in use),
// where it sets r10 (x25) if it does. nullopt when the prologue is not of
// that shape.
std::optional<uint64_t> PrologueFrameBytes(const jit::CompiledSubprogram& subprogram);

// Read from a main program's prologue: the words before where a tail call
// enters it (PROLOGUE_OFFSET, after `mov x26, sp`); nullopt when the
// prologue is not of that shape.
std::optional<uint32_t> TailCallEntryWords(const jit::CompiledSubprogram& main_subprogram);

}  // namespace bpfdiff::kernelsrc
