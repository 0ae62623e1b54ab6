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
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "isa/program.h"
#include "jit/jit.h"
#include "jit/prog_pack.h"
#include "kernelsrc/kernel_loader.h"
#include "kernelsrc/verifier_answers.h"
#include "support/result.h"

// One tree's code, as kernelsrc/bridge.h lays out its entry points.
struct bpfdiff_ktree_code;

namespace bpfdiff::kernelsrc {

// What the tree's files do where trees differ (kernelsrc/CMakeLists.txt
// probes them, by what the code does, not by its version).
struct TreeFeatures {
  // The JIT writes into the prog pack (6.2+), or in place into pages of
  // its own (6.1: kernelsrc/in_place_images.c).
  bool prog_pack = true;
  // The verifier and interpreter know the cpu v4 instructions (6.6+).
  bool cpu_v4 = true;
  // The arch sizes and allocates its trampolines (arch_bpf_trampoline_size,
  // 6.8+), or writes them in place into a page.
  bool arch_sizes_trampolines = true;
  // Its trampolines take struct arguments (6.12); 6.1's refuse them with
  // -ENOTSUPP.
  bool trampoline_struct_args = true;
  // The arch has its own bpf_jit_free(), which frees jit_data (6.12); 6.1's
  // relies on core.c's __weak one, which frees the image alone.
  bool arch_jit_free = true;
  // Its JIT counts a tail call only once the slot holds a program (6.12:
  // "Update tail_call_cnt if the slot is populated"); 6.1's counts first.
  bool tail_call_empty_slot_uncounted = true;
};

// A Linux tree whose code this executable holds.
struct KernelTree {
  std::string path;     // the tree the build read
  std::string version;  // "6.12.118" from its Makefile, or "" if unknown
  TreeFeatures features;
  // Its entry points (bridge.h); nullptr in a build without a tree.
  const bpfdiff_ktree_code* code = nullptr;
};

// The BPF stack every subprogram gets (prog->aux->stack_depth): MAX_BPF_STACK,
// the most the verifier allows. bpfdiff's load step does not compute a depth
// per subprogram as the verifier does, and its interpreter gives every frame
// 512 bytes.
inline constexpr uint32_t kStackDepth = 512;

// Whether this build has the kernel's JIT, and from which tree.
std::optional<KernelTree> BuiltKernelTree();

// Every tree whose code this executable holds, the build's own first: a
// further tree is linked beside it with its symbols made local
// (kernelsrc/CMakeLists.txt, "Trees linked beside the build's"). Empty in a
// build without a tree. The entries live as long as the process.
std::span<const KernelTree> LinkedKernelTrees();

// The linked tree whose version is `version` ("6.1.192"), or, when exactly
// one tree's version starts with `version` and a dot ("6.1"), that one;
// nullptr otherwise.
const KernelTree* FindLinkedTree(std::string_view version);

// The tree a kernel engine or JIT of `tree` runs: `tree`, or the build's
// own for nullptr (nullptr in a build without one).
const KernelTree* TreeOrBuilt(const KernelTree* tree);

// Bugs the shims can be told to have, for negative controls (the registry
// in harness/planted/ is the only way to switch one on outside tests).
struct ShimBugs {
  // A text poke writes its word without the cache maintenance that
  // aarch64_insn_patch_text_nosync() does after it.
  bool poke_without_flush = false;
};

// What the kernel's JIT must know of bpfdiff's world beyond the model's
// environment: where the guest's stand-in for dummy_tramp is, and where the
// guest's `current` keeps the CPU number (checked against the shims').
// What core.c's pack needs of the caller. core.c writes a new pack's
// illegal instructions and reads a slot's header through plain pointers
// at their guest addresses: `show_at_guest_addresses` must map the pack's
// regions there in this process (harness/machine/identity_view.h), and is
// called before any of the kernel's code runs. core.c keeps its packs in
// one list per process: one KernelJit at a time may use it.
struct KernelPack {
  std::function<Status()> show_at_guest_addresses;
};

struct KernelJitWorld {
  jit::JitEnvironment environment;
  uint64_t dummy_tramp = 0;
  uint32_t thread_info_cpu_offset = 0;
  ShimBugs bugs;
  // Set: the JIT's prog pack is kernel/bpf/core.c's own (its
  // bpf_jit_binary_pack_*() and bpf_prog_pack_*()), running on executable
  // memory from the regions of the jit::ProgPack given to Create
  // (ProgPack::MapExternal: execmem_alloc) and on the text patcher; what
  // it hands out is recorded in that pack (ProgPack::Adopt) and checked
  // from outside (TakePackProblems()). Unset: bpfdiff's pack, the model.
  // A tree without the prog pack (TreeFeatures::prog_pack false) needs it
  // set: its JIT writes in place into pages of core.c's
  // bpf_jit_binary_alloc(), mapped the same way (in_place_images.c).
  std::optional<KernelPack> kernel_pack = std::nullopt;
};

// One program a trampoline runs (struct bpf_tramp_link), and the guest's
// __bpf_prog_enter*()/__bpf_prog_exit*() that bpf_trampoline_enter() and
// bpf_trampoline_exit() answer for it.
struct TrampolineLink {
  uint64_t entry = 0;  // the program's bpf_func
  uint64_t cookie = 0;
  uint64_t enter = 0;
  uint64_t exit = 0;
};

// What kernel/bpf/trampoline.c's bpf_trampoline_update() asks
// arch_prepare_bpf_trampoline() for (flags: oracle/trampoline.h).
struct TrampolineRequest {
  std::vector<TrampolineLink> fentry, fexit, fmod_ret;
  uint8_t nr_args = 0;        // btf_func_model.nr_args
  uint8_t struct_args = 0;    // bit i: argument i a 16-byte struct (BTF_FMODEL_STRUCT_ARG), else 8 bytes
  uint32_t flags = 0;         // BPF_TRAMP_F_*
  bool struct_ops = false;    // the one fentry link is a struct_ops program's
  uint64_t traced_entry = 0;  // func_addr: the traced function (struct_ops: its stub)
  uint64_t tramp_enter = 0;   // the guest's __bpf_tramp_enter
  uint64_t tramp_exit = 0;    // and __bpf_tramp_exit
  // Where its image lies: kFar puts it beyond a `bl` from every program
  // (jit::Placement), so that attaching it takes the PLT.
  jit::Placement placement = jit::Placement::kPacked;
  // The fail_call-th failable service call of the build (from 1) fails:
  // kcalloc, kvmalloc, bpf_prog_pack_alloc (bridge.h). 0: none.
  uint32_t fail_call = 0;
};

// What a trampoline build's error paths did (bridge.h,
// bpfdiff_kjit_error_path): the service made to fail ("" when the build
// made fewer failable calls), and a promise broken, or "".
struct TrampolineErrorPath {
  std::string injected;
  uint32_t failable_calls = 0;
  std::string breach;
};

// A trampoline the kernel's code built into bpfdiff's pack.
struct KernelTrampoline {
  uint64_t entry = 0;
  uint32_t size = 0;        // bytes allocated (arch_bpf_trampoline_size)
  uint32_t code_bytes = 0;  // bytes of code (arch_prepare_bpf_trampoline)
  uint64_t ip_after_call = 0;  // struct bpf_tramp_image's, with BPF_TRAMP_F_CALL_ORIG
  uint64_t ip_epilogue = 0;
  // The struct bpf_tramp_image its code passes to __bpf_tramp_enter/exit
  // (a host address, fixed: kernelsrc/trampoline.c).
  uint64_t image_object = 0;
  std::vector<uint32_t> words;  // the code as it lies in RX memory
  std::unique_ptr<jit::PackAllocation> allocation;
};

// A compile in which one kernel service the JIT checks for failure fails
// (bridge.h, fail_call: an allocation, the pack's allocation, a callee's
// address in the extra pass), and what the kernel's error paths did then.
struct FailingCompile {
  Result<jit::CompiledProgram> compiled = Error{"not compiled"};
  std::string injected;          // the service made to fail; "" when the compile made fewer calls
  uint32_t failable_calls = 0;   // the failable calls the compile made, up to the one that failed
  // A promise the kernel broke on the path it took, or "" (bridge.h,
  // bpfdiff_kjit_error_path): what is held or freed twice after a failed
  // compile, or a program the verifier takes as JITed whose image is gone.
  std::string breach;
  std::string breach_kind;  // its shape: "leak", "double-free", "jit-free-leaks-offset-table", ...
};

// The breaches of 6.12's code that bpfdiff has explained (SHIMS.md,
// "Findings in the kernel's code"), by shape: the explanation, or nullopt
// for a shape not explained (a new finding).
// Of `tree`'s code (nullptr: the build's own tree).
std::optional<std::string_view> KnownErrorPathBreach(std::string_view breach_kind,
                                                     const KernelTree* tree = nullptr);

class KernelJit {
 public:
  // Fails when the build has no kernel tree, or when the layouts the
  // kernel's code bakes in (struct bpf_array, bpf_prog) disagree with the
  // guest's.
  // `tree` is one of LinkedKernelTrees(); nullptr: the build's own.
  static Result<std::unique_ptr<KernelJit>> Create(jit::ProgPack& pack, jit::TextPatcher& patcher,
                                                   const KernelJitWorld& world,
                                                   jit::AtomicLowering atomics,
                                                   const KernelTree* tree = nullptr);
  ~KernelJit();

  // The tree whose code this JIT runs.
  const KernelTree& tree() const;

  // What the tree's JIT answers the verifier's questions (asked once, at
  // Create; verifier_answers.h).
  const VerifierAnswers& answers() const;

  // With KernelJitWorld::kernel_pack: what core.c's pack did wrong since
  // the last call, seen from outside (a slot outside the memory mapped for
  // it or overlapping a live one, memory unmapped while slots lie in it,
  // a compile or free its pack refused to run for), oldest first.
  std::vector<std::string> TakePackProblems();

  // Compiles `program` into the pack as the verifier drives the JIT. On
  // success every image is finalized; on failure nothing stays allocated
  // (the message says what the kernel's code left, if it left anything).
  Result<jit::CompiledProgram> Compile(const isa::Program& program);
  // Compile, every image placed as `placement` says (jit::Placement::kFar:
  // an extension program that a BPF_MOD_JUMP reaches through the PLT).
  Result<jit::CompiledProgram> Compile(const isa::Program& program, jit::Placement placement);
  // Compile, as `loader` loads it on its CPU (kernel_loader.h: a classic
  // program gets the Spectre-BHB mitigation that CPU needs).
  Result<jit::CompiledProgram> Compile(const isa::Program& program, const KernelLoader& loader);
  // Compile, with the `fail_call`-th failable service call (from 1) made
  // to fail; 0 makes none fail.
  FailingCompile CompileFailing(const isa::Program& program, uint32_t fail_call);
  // CompileFailing, as `loader` loads the program.
  FailingCompile CompileFailing(const isa::Program& program, const KernelLoader& loader, uint32_t fail_call);
  // CompileFailing, as `loader` loads the program, each of its functions
  // with `stack_depth` bytes of BPF stack (prog->aux->stack_depth; the
  // others give kStackDepth).
  FailingCompile CompileFailing(const isa::Program& program, const KernelLoader& loader, uint32_t fail_call,
                                uint32_t stack_depth);

  // What the tree's constant blinding under `loader` leaves of the line
  // info of `program`, one line per instruction (line i at instruction i),
  // laid out as the verifier lays it out for the JIT: one array for the
  // whole program, shared by its functions (line_info.c). Entry i is where
  // line i says it starts afterwards.
  Result<std::vector<uint32_t>> BlindedLineInfo(const isa::Program& program, const KernelLoader& loader);

  // Frees every image of `program` through the kernel's bpf_jit_free(), as
  // the kernel frees a program. Fails, naming it, when the kernel's code
  // frees other slots than the program's (what it left is freed anyway).
  Status Release(jit::CompiledProgram& program);

  // Builds a trampoline with the kernel's own arch code, in the pack, as
  // bpf_trampoline_update() does. Fails with the kernel's answer.
  // A broken promise (TrampolineErrorPath::breach) fails it too, whether
  // the build failed or not; `path`, when given, gets what the error paths
  // did.
  Result<KernelTrampoline> BuildTrampoline(const TrampolineRequest& request, TrampolineErrorPath* path = nullptr);
  // Frees it (arch_free_bpf_trampoline), invalidating its slot.
  void ReleaseTrampoline(KernelTrampoline& trampoline);

  // bpf_arch_text_poke(program entry, BPF_MOD_CALL, old, new): what
  // register_fentry()/unregister_fentry() do to a traced BPF program
  // (`traced` its main subprogram). 0 for old or new is the nop. A target
  // more than 128 MiB away is reached through the image's PLT, whose
  // target the kernel rewrites (WRITE_ONCE: kernelsrc/include/linux/
  // compiler.h). Fails with the kernel's error.
  Status PokeEntry(const jit::CompiledSubprogram& traced, uint64_t old_target, uint64_t new_target);
  // bpf_arch_text_poke(program entry, BPF_MOD_JUMP, old, new): what
  // bpf_trampoline_link_prog() does for an extension program (freplace,
  // BPF_TRAMP_REPLACE), a `b` to the extension's bpf_func in place of the
  // entry's nop; the same limits.
  Status JumpEntry(const jit::CompiledSubprogram& traced, uint64_t old_target, uint64_t new_target);

  // The kernel's ex_handler_bpf for a fault at `pc` in `subprogram`, reading
  // its exception table from RX memory at `rx_extable` (the build's own
  // tree's; trees differ: 6.1's clears the register it names whatever it
  // is, 6.12's not DONT_CLEAR).
  static std::optional<jit::Fixup> Fixup(const uint8_t* rx_extable, uint64_t rx_extable_address,
                                         uint32_t entries, uint64_t pc);
  using FixupFunction = std::optional<jit::Fixup> (*)(const uint8_t* rx_extable, uint64_t rx_extable_address,
                                                      uint32_t entries, uint64_t pc);
  // Fixup of `tree`'s code (one of LinkedKernelTrees(), nullptr: the
  // build's own), as a plain function for CodeConventions.
  static FixupFunction FixupOf(const KernelTree* tree);

  struct Impl;

 private:
  explicit KernelJit(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Read from the kernel's code of one subprogram (bpf_jit_comp.c's
// build_prologue, the words before its first BPF instruction's): the bytes
// its prologue pushes below the SP it is entered with (frame record,
// tail-call count, the callee-saved registers in use), where it sets r10
// (x25) if it does. nullopt when the prologue is not of that shape.
std::optional<uint64_t> PrologueFrameBytes(const jit::CompiledSubprogram& subprogram);
// Read from the same prologue: the BPF stack it reserves below r10 (`sub
// sp, sp, #N`, N = round_up(stack_depth, 16)); 0 when it reserves none, as
// for a stack depth of 0.
uint64_t StackReservationBytes(const jit::CompiledSubprogram& subprogram);

// Read from a main program's prologue: the words before where a tail call
// enters it (PROLOGUE_OFFSET, after the tail-call counter is set up: `mov
// x26, sp` in 6.12, `mov x26, #0` in 6.1); nullopt when the prologue is not
// of that shape.
std::optional<uint32_t> TailCallEntryWords(const jit::CompiledSubprogram& main_subprogram);

}  // namespace bpfdiff::kernelsrc
