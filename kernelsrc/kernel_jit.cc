#include "kernelsrc/kernel_jit.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <map>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "kernelsrc/bridge.h"

namespace bpfdiff::kernelsrc {

namespace {

TreeFeatures FeaturesOf(const bpfdiff_ktree_code& code) {
  const bpfdiff_kjit_tree_features probed = code.tree_features();
  return {probed.prog_pack != 0, probed.cpu_v4 != 0, probed.arch_sizes_trampolines != 0,
          probed.trampoline_struct_args != 0, probed.arch_jit_free != 0,
          probed.tail_call_empty_slot_uncounted != 0};
}

// Read once, for the life of the process.
const std::vector<KernelTree>& Linked() {
  static const std::vector<KernelTree> trees = [] {
    std::vector<KernelTree> linked;
    for (const bpfdiff_ktree_code* const* code = bpfdiff_linked_trees; *code != nullptr; ++code) {
      linked.push_back({(*code)->path, (*code)->version, FeaturesOf(**code), *code});
    }
    return linked;
  }();
  return trees;
}

}  // namespace

std::optional<KernelTree> BuiltKernelTree() { return Linked().front(); }

std::span<const KernelTree> LinkedKernelTrees() { return Linked(); }

const KernelTree* FindLinkedTree(std::string_view version) {
  const KernelTree* prefixed = nullptr;
  int prefixes = 0;
  for (const KernelTree& tree : Linked()) {
    if (tree.version == version) return &tree;
    if (tree.version.size() > version.size() && tree.version.starts_with(version) &&
        tree.version[version.size()] == '.') {
      prefixed = &tree;
      ++prefixes;
    }
  }
  return prefixes == 1 ? prefixed : nullptr;
}

const KernelTree* TreeOrBuilt(const KernelTree* tree) { return tree != nullptr ? tree : &Linked().front(); }

struct KernelJit::Impl {
  const KernelTree& tree;
  jit::ProgPack& pack;
  jit::TextPatcher& patcher;
  KernelJitWorld world;
  jit::AtomicLowering atomics;
  VerifierAnswers answers;

  // Slots of the compile in progress, by RX header address, and what each
  // held when it was finalized (the RW buffer goes at finalize).
  std::map<uint64_t, std::unique_ptr<jit::PackAllocation>> slots;
  std::map<uint64_t, std::vector<uint8_t>> finalized_images;  // by RX image
  std::string pack_error;
  // Whose text operations the kernel's code makes now: a program's
  // (finalize, free) or a trampoline's (its copy, a text poke).
  bool trampoline_work = false;
  // What the last write was for, which the flush after it is for too
  // (a program's copy at finalize, its invalidation at free).
  jit::TextOrigin last_write = jit::TextOrigin::kFinalize;
  // Where the pack places the images of the compile or build in progress.
  jit::Placement placement = jit::Placement::kPacked;
  // Who loads the program of the compile in progress, on what CPU.
  KernelLoader loader = kRootLoader;
  // The BPF stack of each function of the compile in progress.
  uint32_t stack_depth = kStackDepth;
  // With core.c's pack (world.kernel_pack): the slots it handed out and
  // has not taken back, by RX address, with the size they were allocated
  // with (what bpf_prog_pack_free() is given), and what it did wrong.
  std::map<uint64_t, uint32_t> core_pack_slots{};
  std::vector<std::string> pack_problems{};

  bpfdiff_kjit_world Bridge();
  // Maps the pack's regions at their guest addresses, for core.c's pack;
  // nothing to do with bpfdiff's.
  Status ShowPack();
};

namespace {

// core.c keeps one list of packs per process (pack_list), one per tree
// linked: the KernelJit that uses a tree's now (none: absent).
std::map<const bpfdiff_ktree_code*, KernelJit::Impl*>& CorePackUsers() {
  static auto* users = new std::map<const bpfdiff_ktree_code*, KernelJit::Impl*>();
  return *users;
}

}  // namespace

Status KernelJit::Impl::ShowPack() {
  if (!world.kernel_pack) return {};
  if (auto shown = world.kernel_pack->show_at_guest_addresses(); !shown) {
    return Fail("core.c's prog pack needs the pack at its guest addresses: {}", shown.message());
  }
  return {};
}

namespace {

KernelJit::Impl& ImplOf(void* owner) { return *static_cast<KernelJit::Impl*>(owner); }

int PackAlloc(void* owner, uint32_t image_bytes, uint32_t alignment, uint64_t* rx_header, uint64_t* rx_image,
              uint8_t** rw_header, uint8_t** rw_image) {
  KernelJit::Impl& impl = ImplOf(owner);
  // The kernel rounds smaller alignments up to the image's natural 4.
  auto allocation = impl.pack.Alloc(image_bytes, alignment < 4 ? 4 : alignment, impl.placement);
  if (!allocation) {
    impl.pack_error = allocation.message();
    return -1;
  }
  jit::PackAllocation& slot = **allocation;
  *rx_header = slot.rx_slot();
  *rx_image = slot.rx_image();
  *rw_image = slot.rw_image();
  *rw_header = slot.rw_image() - (slot.rx_image() - slot.rx_slot());
  impl.slots[slot.rx_slot()] = std::move(allocation).value();
  return 0;
}

void PackFinalize(void* owner, uint64_t rx_header) {
  KernelJit::Impl& impl = ImplOf(owner);
  auto it = impl.slots.find(rx_header);
  if (it == impl.slots.end()) return;
  jit::PackAllocation& slot = *it->second;
  impl.finalized_images[slot.rx_image()].assign(slot.rw_image(), slot.rw_image() + slot.image_bytes());
  impl.pack.Finalize(slot);
}

void PackFree(void* owner, uint64_t rx_header) {
  KernelJit::Impl& impl = ImplOf(owner);
  auto it = impl.slots.find(rx_header);
  if (it == impl.slots.end()) return;
  impl.finalized_images.erase(it->second->rx_image());
  impl.pack.Free(std::move(it->second));
  impl.slots.erase(it);
}

void TextCopy(void* owner, uint64_t rx, const void* bytes, size_t length) {
  KernelJit::Impl& impl = ImplOf(owner);
  impl.last_write = jit::TextOrigin::kFinalize;
  impl.patcher.Copy(rx, {static_cast<const uint8_t*>(bytes), length},
                    impl.trampoline_work ? jit::TextOrigin::kTrampoline : jit::TextOrigin::kFinalize);
}

void TextSet(void* owner, uint64_t rx, uint32_t word, size_t length) {
  KernelJit::Impl& impl = ImplOf(owner);
  impl.last_write = jit::TextOrigin::kFree;
  impl.patcher.Fill(rx, length, word, impl.trampoline_work ? jit::TextOrigin::kTrampoline : jit::TextOrigin::kFree);
}

void FlushIcache(void* owner, uint64_t begin, uint64_t end) {
  KernelJit::Impl& impl = ImplOf(owner);
  impl.patcher.FlushIcache(begin, end, impl.trampoline_work ? jit::TextOrigin::kTrampoline : impl.last_write);
}

// Below core.c's pack: execmem_alloc, execmem_free, set_memory_rox.
uint64_t ExecMap(void* owner, uint64_t bytes) {
  KernelJit::Impl& impl = ImplOf(owner);
  auto mapped = impl.pack.MapExternal(bytes);
  if (!mapped) {
    impl.pack_error = mapped.message();
    return 0;
  }
  return *mapped;
}

// The range is unmapped: any fetch from it faults in the kernel. In the
// guest it stays mapped, so it is filled with AARCH64_BREAK_FAULT (a
// fetch traps all the same) and flushed, as new memory, not as a free
// of the allocator's: core.c invalidates nothing it unmaps.
void ExecUnmap(void* owner, uint64_t address) {
  KernelJit::Impl& impl = ImplOf(owner);
  const uint64_t bytes = impl.pack.ExternalBytes(address);
  if (std::string problem = impl.pack.UnmapExternal(address); !problem.empty()) {
    impl.pack_problems.push_back(std::move(problem));
    return;
  }
  impl.patcher.Fill(address, bytes, jit::kBreakFault, jit::TextOrigin::kNewPack);
  impl.patcher.FlushIcache(address, address + bytes, jit::TextOrigin::kNewPack);
}

// The range core.c filled through the identity view becomes text: none
// of what ran there before (a pack freed at the same address) may still
// be in an instruction cache, as the mapping is new.
int ExecProtect(void* owner, uint64_t address, uint64_t bytes) {
  KernelJit::Impl& impl = ImplOf(owner);
  impl.patcher.FlushIcache(address, address + bytes, jit::TextOrigin::kNewPack);
  return 0;
}

void SlotAdopted(void* owner, uint64_t rx_header, uint64_t slot_bytes, uint64_t rx_image, uint32_t image_bytes) {
  KernelJit::Impl& impl = ImplOf(owner);
  std::string problem;
  auto allocation = impl.pack.Adopt(rx_header, slot_bytes, rx_image, image_bytes, &problem);
  if (!problem.empty()) impl.pack_problems.push_back(fmt::format("core.c's pack handed out a slot: {}", problem));
  if (auto held = impl.slots.find(rx_header); held != impl.slots.end()) {
    impl.pack_problems.push_back(fmt::format("core.c's pack handed out the slot at 0x{:x} twice", rx_header));
    impl.pack.Disown(std::move(held->second));
  }
  impl.slots[rx_header] = std::move(allocation);
  impl.core_pack_slots[rx_header] = static_cast<uint32_t>(slot_bytes);
}

void SlotFinalized(void* owner, uint64_t rx_header, const uint8_t* rw_image, uint32_t image_bytes) {
  KernelJit::Impl& impl = ImplOf(owner);
  auto it = impl.slots.find(rx_header);
  if (it == impl.slots.end()) return;
  if (rw_image != nullptr) {
    impl.finalized_images[it->second->rx_image()].assign(rw_image, rw_image + image_bytes);
  }
  impl.pack.MarkFinalized(*it->second);
}

void SlotReleased(void* owner, uint64_t rx_header) {
  KernelJit::Impl& impl = ImplOf(owner);
  impl.core_pack_slots.erase(rx_header);
  auto it = impl.slots.find(rx_header);
  if (it == impl.slots.end()) return;
  impl.finalized_images.erase(it->second->rx_image());
  impl.pack.Disown(std::move(it->second));
  impl.slots.erase(it);
}

int TextRead(void* owner, uint64_t rx, uint32_t* word) {
  const std::optional<uint32_t> read = ImplOf(owner).pack.ReadWord(rx);
  if (!read) return -1;
  *word = *read;
  return 0;
}

uint64_t HelperAddress(void* owner, int32_t id) { return ImplOf(owner).world.environment.CallTarget(id); }

uint64_t KfuncAddress(void* owner, int32_t id) { return ImplOf(owner).world.environment.KfuncTarget(id); }

// Whether the program calls bpf_throw (the only kfunc the load step lets
// through).
bool Throws(const isa::Program& program) {
  // By the opcode alone (an lddw's second slot has opcode 0).
  return std::any_of(program.insns.begin(), program.insns.end(), [](const isa::Insn& insn) {
    return insn.opcode == isa::kOpCall && insn.src == isa::kPseudoKfuncCall;
  });
}

// The subprogram index of the program's exception callback (0: none).
uint32_t ExceptionCallbackOf(const isa::Program& program) {
  if (program.exception_callback == 0) return 0;
  const auto& starts = program.subprogram_starts;
  return static_cast<uint32_t>(std::lower_bound(starts.begin(), starts.end(), program.exception_callback) -
                               starts.begin());
}

Status CheckLayout(const KernelJitWorld& world, const bpfdiff_ktree_code& code) {
  const jit::JitEnvironment& env = world.environment;
  const bpfdiff_kjit_layout layout = code.layout();
  if (layout.thread_info_cpu != world.thread_info_cpu_offset) {
    return Fail("the kernel shims keep thread_info's cpu at offset {}, the guest at {}: the inlined "
                "bpf_get_smp_processor_id() would read the wrong field (kernelsrc/include/asm/thread_info.h)",
                layout.thread_info_cpu, world.thread_info_cpu_offset);
  }
  if (layout.array_max_entries != env.map_max_entries_offset || layout.array_ptrs != env.map_ptrs_offset ||
      layout.prog_bpf_func != env.prog_bpf_func_offset) {
    return Fail("the kernel shims lay out struct bpf_array (max_entries at {}, ptrs at {}) and struct "
                "bpf_prog (bpf_func at {}) unlike the guest (at {}, {} and {}): the kernel's tail calls "
                "would read the wrong fields (kernelsrc/include/linux/bpf.h)",
                layout.array_max_entries, layout.array_ptrs, layout.prog_bpf_func,
                env.map_max_entries_offset, env.map_ptrs_offset, env.prog_bpf_func_offset);
  }
  if (layout.extable_entry_size != jit::kExtableEntrySize) {
    return Fail("the kernel shims' exception-table entry has {} bytes, the guest reads {}",
                layout.extable_entry_size, jit::kExtableEntrySize);
  }
  return {};
}

}  // namespace

bpfdiff_kjit_world KernelJit::Impl::Bridge() {
  bpfdiff_kjit_world bridge{};
  bridge.owner = this;
  bridge.pack_alloc = PackAlloc;
  bridge.pack_finalize = PackFinalize;
  bridge.pack_free = PackFree;
  bridge.kernel_pack = world.kernel_pack ? 1 : 0;
  bridge.exec_map = ExecMap;
  bridge.exec_unmap = ExecUnmap;
  bridge.exec_protect = ExecProtect;
  bridge.slot_adopted = SlotAdopted;
  bridge.slot_finalized = SlotFinalized;
  bridge.slot_released = SlotReleased;
  bridge.text_copy = TextCopy;
  bridge.text_set = TextSet;
  bridge.flush_icache = FlushIcache;
  bridge.text_read = TextRead;
  bridge.helper_address = HelperAddress;
  bridge.kfunc_address = KfuncAddress;
  bridge.dummy_tramp = world.dummy_tramp;
  bridge.lse_atomics = atomics == jit::AtomicLowering::kLse ? 1 : 0;
  bridge.arena_kern_vm_start = world.environment.arena_kern_vm_start;
  bridge.arena_user_vm_start = world.environment.arena_user_vm_start;
  bridge.poke_without_flush = world.bugs.poke_without_flush ? 1 : 0;
  bridge.capable = loader.capable ? 1 : 0;
  bridge.mitigations_off = loader.mitigations_off ? 1 : 0;
  bridge.spectre_v2_vulnerable = loader.spectre_v2_vulnerable ? 1 : 0;
  bridge.clearbhb = loader.clearbhb ? 1 : 0;
  bridge.bhb_loop_k = loader.bhb_loop_k;
  bridge.bhb_firmware = loader.bhb_firmware ? 1 : 0;
  bridge.smccc_conduit = loader.conduit == SmcccConduit::kSmc ? 1 : loader.conduit == SmcccConduit::kHvc ? 2 : 0;
  bridge.vhe = loader.vhe ? 1 : 0;
  bridge.jit_harden = loader.jit_harden;
  return bridge;
}

namespace {

Result<VerifierAnswers> AskVerifierQuestions(const bpfdiff_kjit_world& world, const KernelTree& tree) {
  bpfdiff_kjit_answers asked;
  tree.code->verifier_answers(&world, &asked);
  if (asked.inlined_count > BPFDIFF_KJIT_MAX_INLINED) {
    return Fail("the tree's JIT inlines {} helpers (bpf_jit_inlines_helper_call), more than the {} that "
                "kernelsrc/bridge.h has room for: raise BPFDIFF_KJIT_MAX_INLINED",
                asked.inlined_count, BPFDIFF_KJIT_MAX_INLINED);
  }
  VerifierAnswers answers;
  answers.kfunc_call = asked.kfunc_call != 0;
  answers.subprog_tailcalls = asked.subprog_tailcalls != 0;
  answers.ptr_xchg = asked.ptr_xchg != 0;
  answers.percpu_insn = asked.percpu_insn != 0;
  answers.exceptions = asked.exceptions != 0;
  answers.arena = asked.arena != 0;
  answers.arena_atomics = asked.arena_atomics != 0;
  answers.bypass_spec_v4 = asked.bypass_spec_v4 != 0;
  answers.inlined_helpers.assign(asked.inlined, asked.inlined + asked.inlined_count);
  answers.cpu_v4 = tree.features.cpu_v4;
  return answers;
}

}  // namespace

KernelJit::KernelJit(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

KernelJit::~KernelJit() {
  Impl& impl = *impl_;
  // (A tree without the prog pack has no list of packs: each KernelJit
  // unmaps its own images.)
  auto& users = CorePackUsers();
  const auto user = users.find(impl.tree.code);
  if (impl.tree.features.prog_pack && (user == users.end() || user->second != &impl)) return;
  // What is still allocated in core.c's packs (programs this JIT compiled
  // and nobody freed) goes back through core.c's own free, so that its
  // list of packs, which outlives this world, holds nothing of it.
  if (!impl.core_pack_slots.empty() && impl.ShowPack()) {
    std::vector<uint64_t> headers;
    std::vector<uint32_t> bytes;
    for (const auto& [header, size] : impl.core_pack_slots) {
      headers.push_back(header);
      bytes.push_back(size);
    }
    const bpfdiff_kjit_world bridge = impl.Bridge();
    impl.tree.code->pack_drain(&bridge, headers.data(), bytes.data(), static_cast<uint32_t>(headers.size()));
  }
  // A pack that could not be drained is left in core.c's list; the next
  // user would allocate into a world that is gone, so there is none.
  if (impl.core_pack_slots.empty() && user != users.end()) users.erase(user);
}

Result<std::unique_ptr<KernelJit>> KernelJit::Create(jit::ProgPack& pack, jit::TextPatcher& patcher,
                                                     const KernelJitWorld& world,
                                                     jit::AtomicLowering atomics, const KernelTree* tree) {
  if (LinkedKernelTrees().empty()) return Fail("this build has no Linux tree");
  const KernelTree& code_of = *TreeOrBuilt(tree);
  if (auto status = CheckLayout(world, *code_of.code); !status) return status.error();
  // core.c charges every image against bpf_jit_limit, which its
  // bpf_jit_charge_init() sets at boot: without it, an unprivileged
  // loader's every allocation would fail.
  if (code_of.code->run_initcalls() <= 0) {
    return Fail("core.c's bpf_jit_charge_init() did not run (the linker dropped the section of the tree's "
                "pure_initcalls, bpfdiff_pure_initcalls?): bpf_jit_limit is 0");
  }
  auto impl = std::make_unique<Impl>(Impl{code_of, pack, patcher, world, atomics, {}, {}, {}, {}});
  const bool prog_pack = code_of.features.prog_pack;
  if (!prog_pack && !world.kernel_pack) {
    return Fail("the tree's JIT writes its images in place, into memory core.c's bpf_jit_binary_alloc() "
                "takes from vmalloc() (it has no prog pack): it needs that memory at its guest addresses "
                "in this process (KernelJitWorld::kernel_pack)");
  }
  if (world.kernel_pack) {
    if (!world.kernel_pack->show_at_guest_addresses) {
      return Fail("core.c's prog pack needs a way to show the pack at its guest addresses");
    }
    if (prog_pack && CorePackUsers().contains(code_of.code)) {
      return Fail("core.c's prog pack is in use by another kernel JIT of this process (its list of packs is "
                  "one per process)");
    }
  }
  auto answers = AskVerifierQuestions(impl->Bridge(), code_of);
  if (!answers) return answers.error();
  impl->answers = std::move(answers).value();
  if (world.kernel_pack && prog_pack) CorePackUsers()[code_of.code] = impl.get();
  return std::unique_ptr<KernelJit>(new KernelJit(std::move(impl)));
}

const KernelTree& KernelJit::tree() const { return impl_->tree; }

const VerifierAnswers& KernelJit::answers() const { return impl_->answers; }

std::vector<std::string> KernelJit::TakePackProblems() { return std::exchange(impl_->pack_problems, {}); }

std::optional<std::string_view> KnownErrorPathBreach(std::string_view breach_kind, const KernelTree* tree) {
  // Each leak is known only on the tree whose code has it: a tree whose
  // arch frees jit_data (6.12) must not leak it, whatever 6.1 does.
  const KernelTree* of = TreeOrBuilt(tree);
  if (of == nullptr) return std::nullopt;
  const bool arch_jit_free = of->features.arch_jit_free;
  if (breach_kind == "jit-free-leaks-offset-table" && arch_jit_free) {
    return "6.12's arm64 bpf_jit_free() frees jit_data but not its ctx.offset table, so a program whose "
           "later subprogram fails its first pass leaks the table of every subprogram compiled before it";
  }
  if (breach_kind == "jit-free-leaks-jit-data" && !arch_jit_free) {
    return "6.1's arm64 JIT has no bpf_jit_free(): core.c's __weak one frees the image alone, so a program "
           "whose later subprogram fails its first pass leaks the jit_data and ctx.offset table of every "
           "subprogram compiled before it (arm64's own bpf_jit_free(), which frees jit_data, came with its "
           "prog pack)";
  }
  if (breach_kind == "freed-image-reported-jited") {
    return "6.12's arm64 bpf_int_jit_compile() frees the image when an extra pass fails (out_free_hdr) but "
           "leaves prog->jited and bpf_func as the first pass set them; latent, since no service the extra "
           "pass calls fails in 6.12";
  }
  return std::nullopt;
}

namespace {

// The program's instructions as struct bpf_insn.
std::vector<bpfdiff_kjit_insn> BridgeInsns(const isa::Program& program) {
  static_assert(sizeof(bpfdiff_kjit_insn) == 8, "struct bpf_insn is 8 bytes");
  std::vector<bpfdiff_kjit_insn> insns(program.insns.size());
  for (size_t i = 0; i < insns.size(); ++i) {
    const isa::Insn& insn = program.insns[i];
    insns[i] = {insn.opcode, static_cast<uint8_t>(((insn.src & 0xf) << 4) | (insn.dst & 0xf)), insn.offset, insn.imm};
  }
  return insns;
}

}  // namespace

Result<jit::CompiledProgram> KernelJit::Compile(const isa::Program& program) {
  return CompileFailing(program, 0).compiled;
}

Result<jit::CompiledProgram> KernelJit::Compile(const isa::Program& program, jit::Placement placement) {
  impl_->placement = placement;
  auto compiled = CompileFailing(program, 0).compiled;
  impl_->placement = jit::Placement::kPacked;
  return compiled;
}

Result<jit::CompiledProgram> KernelJit::Compile(const isa::Program& program, const KernelLoader& loader) {
  return CompileFailing(program, loader, 0).compiled;
}

Result<std::vector<uint32_t>> KernelJit::BlindedLineInfo(const isa::Program& program, const KernelLoader& loader) {
  const std::vector<bpfdiff_kjit_insn> insns = BridgeInsns(program);
  const size_t count = program.subprogram_starts.size();
  const bpfdiff_kjit_program request{insns.data(), static_cast<uint32_t>(insns.size()),
                                     program.subprogram_starts.data(), static_cast<uint32_t>(count), kStackDepth,
                                     loader.classic ? 1 : 0, ExceptionCallbackOf(program),
                                     Throws(program) ? 1 : 0};
  impl_->loader = loader;
  bpfdiff_kjit_world bridge = impl_->Bridge();
  impl_->loader = kRootLoader;
  std::vector<uint32_t> lines(insns.size(), 0);
  std::array<char, 512> message{};
  if (impl_->tree.code->blind_line_info(&bridge, &request, lines.data(), message.data(), message.size()) != 0) {
    return Fail("the line info under blinding: {}", message.data());
  }
  return lines;
}

FailingCompile KernelJit::CompileFailing(const isa::Program& program, const KernelLoader& loader, uint32_t fail_call,
                                         uint32_t stack_depth) {
  impl_->stack_depth = stack_depth;
  FailingCompile attempt = CompileFailing(program, loader, fail_call);
  impl_->stack_depth = kStackDepth;
  return attempt;
}

FailingCompile KernelJit::CompileFailing(const isa::Program& program, const KernelLoader& loader,
                                         uint32_t fail_call) {
  impl_->loader = loader;
  FailingCompile attempt = CompileFailing(program, fail_call);
  impl_->loader = kRootLoader;
  return attempt;
}

FailingCompile KernelJit::CompileFailing(const isa::Program& program, uint32_t fail_call) {
  Impl& impl = *impl_;
  FailingCompile attempt;
  if (auto shown = impl.ShowPack(); !shown) {
    attempt.compiled = shown.error();
    return attempt;
  }
  const std::vector<bpfdiff_kjit_insn> insns = BridgeInsns(program);
  const size_t count = program.subprogram_starts.size();
  std::vector<std::vector<uint32_t>> offsets(count);
  std::vector<bpfdiff_kjit_image> images(count);
  for (size_t sub = 0; sub < count; ++sub) {
    offsets[sub].assign(program.SubprogramEnd(sub) - program.subprogram_starts[sub] + 1, 0);
    images[sub].offsets = offsets[sub].data();
  }
  const bpfdiff_kjit_program request{insns.data(), static_cast<uint32_t>(insns.size()),
                                     program.subprogram_starts.data(), static_cast<uint32_t>(count),
                                     impl.stack_depth, impl.loader.classic ? 1 : 0, ExceptionCallbackOf(program),
                                     Throws(program) ? 1 : 0};
  bpfdiff_kjit_world bridge = impl.Bridge();
  bridge.fail_call = fail_call;
  // What blinding draws depends on the program alone (FNV-1a of its
  // instructions), so that a replay blinds with the same constants.
  bridge.random_seed = 0xcbf29ce484222325ULL;
  for (const bpfdiff_kjit_insn& insn : insns) {
    for (const uint8_t byte : std::bit_cast<std::array<uint8_t, 8>>(insn)) {
      bridge.random_seed = (bridge.random_seed ^ byte) * 0x100000001b3ULL;
    }
  }
  impl.pack_error.clear();
  std::array<char, 1024> message{};
  bpfdiff_kjit_error_path path{};
  const int result =
      impl.tree.code->compile(&bridge, &request, images.data(), message.data(), message.size(), &path);
  attempt.injected = path.injected;
  attempt.failable_calls = path.failable_calls;
  attempt.breach = path.breach;
  attempt.breach_kind = path.breach_kind;
  if (result != 0) {
    // The driver freed what the kernel's code left; nothing is held here.
    for (auto& held : impl.slots) impl.pack.Free(std::move(held.second));
    impl.slots.clear();
    impl.finalized_images.clear();
    std::string why = message.data();
    if (!attempt.injected.empty()) why += fmt::format(" ({} was made to fail)", attempt.injected);
    if (!impl.pack_error.empty()) why += fmt::format(" (the pack: {})", impl.pack_error);
    attempt.compiled = Error{why};
    return attempt;
  }

  jit::CompiledProgram compiled;
  for (size_t sub = 0; sub < count; ++sub) {
    const bpfdiff_kjit_image& image = images[sub];
    jit::CompiledSubprogram out;
    out.first_slot = program.subprogram_starts[sub];
    out.end_slot = program.SubprogramEnd(sub);
    out.rx_image = image.rx_image;
    out.code_words = image.jited_bytes / 4;
    out.rx_extable = image.rx_extable;
    out.extable_entries = image.extable_entries;
    out.offsets.resize(offsets[sub].size());
    std::transform(offsets[sub].begin(), offsets[sub].end(), out.offsets.begin(),
                   [](uint32_t bytes) { return bytes / 4; });
    const std::vector<uint8_t>& bytes = impl.finalized_images[image.rx_image];
    out.words.resize(std::min<size_t>(out.code_words, bytes.size() / 4));
    std::memcpy(out.words.data(), bytes.data(), out.words.size() * 4);
    for (auto it = impl.slots.begin(); it != impl.slots.end(); ++it) {
      if (it->second->rx_image() == image.rx_image) {
        out.allocation = std::move(it->second);
        impl.slots.erase(it);
        break;
      }
    }
    // The PLT target, between the code and the exception table (or the
    // image's end, when it has none).
    const uint64_t data_begin = out.words.size() * 4;
    const uint64_t data_end = std::min<uint64_t>(
        bytes.size(), image.extable_entries != 0 ? image.rx_extable - image.rx_image
                                                  : (out.allocation ? out.allocation->image_bytes() : data_begin));
    if (data_end > data_begin) {
      out.data_words.resize((data_end - data_begin) / 4);
      std::memcpy(out.data_words.data(), bytes.data() + data_begin, out.data_words.size() * 4);
    }
    compiled.subprograms.push_back(std::move(out));
  }
  impl.finalized_images.clear();
  attempt.compiled = std::move(compiled);
  return attempt;
}

Status KernelJit::Release(jit::CompiledProgram& program) {
  Impl& impl = *impl_;
  if (auto shown = impl.ShowPack(); !shown) return shown;
  std::vector<uint64_t> images, headers;
  std::vector<uint32_t> image_bytes, slot_bytes;
  for (auto& sub : program.subprograms) {
    if (!sub.allocation) continue;
    images.push_back(sub.rx_image);
    headers.push_back(sub.allocation->rx_slot());
    image_bytes.push_back(static_cast<uint32_t>(sub.allocation->image_bytes()));
    slot_bytes.push_back(static_cast<uint32_t>(sub.allocation->slot_bytes()));
    impl.slots[sub.allocation->rx_slot()] = std::move(sub.allocation);
  }
  program.subprograms.clear();
  const bpfdiff_kjit_world bridge = impl.Bridge();
  std::array<char, 512> message{};
  const int result =
      impl.tree.code->release(&bridge, images.data(), headers.data(), image_bytes.data(), slot_bytes.data(),
                           static_cast<uint32_t>(images.size()), message.data(), message.size());
  // PackFree took each slot the kernel freed; the driver freed the rest.
  for (auto& held : impl.slots) impl.pack.Free(std::move(held.second));
  impl.slots.clear();
  if (result != 0) return Fail("{}", message.data());
  return {};
}

namespace {

std::vector<bpfdiff_kjit_tramp_link> BridgeLinks(const std::vector<TrampolineLink>& links) {
  std::vector<bpfdiff_kjit_tramp_link> out;
  for (const TrampolineLink& link : links) out.push_back({link.entry, link.cookie, link.enter, link.exit});
  return out;
}

// Sets Impl::trampoline_work for the scope of one trampoline operation.
class TrampolineWork {
 public:
  explicit TrampolineWork(KernelJit::Impl& impl) : impl_(impl) { impl_.trampoline_work = true; }
  ~TrampolineWork() { impl_.trampoline_work = false; }
  TrampolineWork(const TrampolineWork&) = delete;
  TrampolineWork& operator=(const TrampolineWork&) = delete;

 private:
  KernelJit::Impl& impl_;
};

}  // namespace

Result<KernelTrampoline> KernelJit::BuildTrampoline(const TrampolineRequest& request, TrampolineErrorPath* path) {
  Impl& impl = *impl_;
  if (auto shown = impl.ShowPack(); !shown) return shown.error();
  const TrampolineWork work(impl);
  // In the kernel's enum order: BPF_TRAMP_FENTRY, BPF_TRAMP_FEXIT, BPF_TRAMP_MODIFY_RETURN.
  const std::array<std::vector<bpfdiff_kjit_tramp_link>, 3> links = {
      BridgeLinks(request.fentry), BridgeLinks(request.fexit), BridgeLinks(request.fmod_ret)};
  bpfdiff_kjit_tramp_request bridge_request{};
  for (size_t k = 0; k < links.size(); ++k) {
    bridge_request.links[k] = links[k].data();
    bridge_request.counts[k] = static_cast<uint32_t>(links[k].size());
  }
  bridge_request.nr_args = request.nr_args;
  bridge_request.struct_args = request.struct_args;
  bridge_request.flags = request.flags;
  bridge_request.struct_ops = request.struct_ops ? 1 : 0;
  bridge_request.func_addr = request.traced_entry;
  bridge_request.tramp_enter = request.tramp_enter;
  bridge_request.tramp_exit = request.tramp_exit;

  bpfdiff_kjit_world bridge = impl.Bridge();
  bridge.fail_call = request.fail_call;
  impl.pack_error.clear();
  bpfdiff_kjit_tramp_image image{};
  std::array<char, 512> message{};
  bpfdiff_kjit_error_path error_path{};
  impl.placement = request.placement;
  const int result =
      impl.tree.code->trampoline(&bridge, &bridge_request, &image, message.data(), message.size(), &error_path);
  impl.placement = jit::Placement::kPacked;
  impl.finalized_images.clear();
  if (path != nullptr) *path = {error_path.injected, error_path.failable_calls, error_path.breach};
  const std::string breach = error_path.breach;
  if (result != 0 || !breach.empty()) {
    for (auto& held : impl.slots) impl.pack.Free(std::move(held.second));
    impl.slots.clear();
    if (!breach.empty()) return Fail("the kernel's trampoline code broke a promise: {}", breach);
    std::string why = message.data();
    if (!impl.pack_error.empty()) why += fmt::format(" (the pack: {})", impl.pack_error);
    return Fail("{}", why);
  }
  KernelTrampoline trampoline;
  trampoline.entry = image.rx_image;
  trampoline.size = image.size;
  trampoline.code_bytes = image.code_bytes;
  trampoline.ip_after_call = image.ip_after_call;
  trampoline.ip_epilogue = image.ip_epilogue;
  trampoline.image_object = image.image_object;
  auto slot = impl.slots.find(image.rx_header);
  if (slot == impl.slots.end()) return Fail("the trampoline's slot at 0x{:x} is not the pack's", image.rx_header);
  trampoline.allocation = std::move(slot->second);
  impl.slots.erase(slot);
  for (uint64_t at = image.rx_image; at < image.rx_image + image.code_bytes; at += 4) {
    trampoline.words.push_back(impl.pack.ReadWord(at).value_or(jit::kBreakFault));
  }
  return trampoline;
}

void KernelJit::ReleaseTrampoline(KernelTrampoline& trampoline) {
  Impl& impl = *impl_;
  trampoline.words.clear();
  if (!trampoline.allocation) return;
  const uint64_t slot = trampoline.allocation->rx_slot();
  if (!impl.world.kernel_pack) {
    impl.pack.Free(std::move(trampoline.allocation));
    return;
  }
  // arch_free_bpf_trampoline(): core.c's bpf_prog_pack_free().
  const auto held = impl.core_pack_slots.find(slot);
  if (held == impl.core_pack_slots.end()) {
    impl.pack_problems.push_back(fmt::format("the trampoline at 0x{:x} is not a slot of core.c's pack", slot));
    impl.pack.Disown(std::move(trampoline.allocation));
    return;
  }
  if (auto shown = impl.ShowPack(); !shown) {
    impl.pack_problems.push_back(shown.message());
    return;
  }
  const uint32_t bytes = held->second;
  // (A free, as bpfdiff's pack counts a trampoline's.)
  impl.slots[slot] = std::move(trampoline.allocation);
  const bpfdiff_kjit_world bridge = impl.Bridge();
  impl.tree.code->pack_drain(&bridge, &slot, &bytes, 1);
}

namespace {

// bpf_arch_text_poke() at a program's entry; `jump` for BPF_MOD_JUMP.
Status PokeProgramEntry(KernelJit::Impl& impl, const jit::CompiledSubprogram& traced, bool jump,
                        uint64_t old_target, uint64_t new_target) {
  const TrampolineWork work(impl);
  const bpfdiff_kjit_world bridge = impl.Bridge();
  std::array<char, 512> message{};
  // The symbol kallsyms has for a program: bpf_func and jited_len, which
  // ends with the PLT's `br` (its target follows, in the same image).
  const uint32_t image_bytes =
      traced.allocation ? static_cast<uint32_t>(traced.allocation->image_bytes()) : traced.code_words * 4;
  const int result =
      impl.tree.code->text_poke(&bridge, traced.rx_image, traced.code_words * 4, image_bytes, traced.rx_image,
                             jump ? 1 : 0, old_target, new_target, message.data(), message.size());
  if (result != 0) return Fail("{}", message.data());
  return {};
}

}  // namespace

Status KernelJit::PokeEntry(const jit::CompiledSubprogram& traced, uint64_t old_target, uint64_t new_target) {
  return PokeProgramEntry(*impl_, traced, false, old_target, new_target);
}

Status KernelJit::JumpEntry(const jit::CompiledSubprogram& traced, uint64_t old_target, uint64_t new_target) {
  return PokeProgramEntry(*impl_, traced, true, old_target, new_target);
}

namespace {

std::optional<jit::Fixup> FixupWith(const bpfdiff_ktree_code& code, const uint8_t* rx_extable,
                                    uint64_t rx_extable_address, uint32_t entries, uint64_t pc) {
  for (uint32_t e = 0; e < entries; ++e) {
    const uint64_t offset = uint64_t{e} * jit::kExtableEntrySize;
    int32_t insn = 0;
    std::memcpy(&insn, rx_extable + offset, 4);
    if (rx_extable_address + offset + static_cast<int64_t>(insn) != pc) continue;
    int cleared = -1;
    const uint64_t resume = code.fixup(rx_extable + offset, rx_extable_address + offset, &cleared);
    return jit::Fixup{resume, cleared < 0 ? 31 : cleared};
  }
  return std::nullopt;
}

// Fixup of the linked tree at `index`, as a plain function.
template <size_t index>
std::optional<jit::Fixup> FixupOfLinked(const uint8_t* rx_extable, uint64_t rx_extable_address, uint32_t entries,
                                        uint64_t pc) {
  return FixupWith(*Linked()[index].code, rx_extable, rx_extable_address, entries, pc);
}

template <size_t... index>
constexpr std::array<KernelJit::FixupFunction, sizeof...(index)> FixupTable(std::index_sequence<index...>) {
  return {&FixupOfLinked<index>...};
}

// As many trees as one executable links, at most.
constexpr size_t kMaxLinkedTrees = 8;
constexpr auto kFixupOfLinked = FixupTable(std::make_index_sequence<kMaxLinkedTrees>());

}  // namespace

std::optional<jit::Fixup> KernelJit::Fixup(const uint8_t* rx_extable, uint64_t rx_extable_address,
                                           uint32_t entries, uint64_t pc) {
  return FixupOfLinked<0>(rx_extable, rx_extable_address, entries, pc);
}

KernelJit::FixupFunction KernelJit::FixupOf(const KernelTree* tree) {
  if (tree == nullptr) return &KernelJit::Fixup;
  const size_t index = static_cast<size_t>(tree - Linked().data());
  return index < kFixupOfLinked.size() ? kFixupOfLinked[index] : nullptr;
}

namespace {

// The main program's tail-call counter (x26), set up before the entry a
// tail call lands on: a pointer to the count on the stack (6.12,
// add x26, sp, #0), or the count itself (6.1, movz x26, #0).
constexpr uint32_t kMovX26Sp = 0x910003fa;
constexpr uint32_t kMovzX26Zero = 0xd280001a;

// STP (64-bit, pre-index) with Rn = sp: 1010 1001 10 imm7 Rt2 Rn Rt.
std::optional<uint64_t> PushedBytes(uint32_t word) {
  if ((word & 0xffc003e0) != 0xa98003e0) return std::nullopt;
  const int32_t imm7 = static_cast<int32_t>(word << 10) >> 25;
  return static_cast<uint64_t>(-imm7) * 8;
}

// SUB (immediate, 64-bit) sp, sp, #imm12{, lsl #12}: the BPF stack.
// 1101 0001 0 sh imm12 Rn(11111) Rd(11111).
std::optional<uint64_t> ReservedBytes(uint32_t word) {
  if ((word & 0xff8003ff) != 0xd10003ff) return std::nullopt;
  const uint64_t imm12 = (word >> 10) & 0xfff;
  return (word & (1u << 22)) != 0 ? imm12 << 12 : imm12;
}

// More than any prologue of 6.12 (the exception boundary's pushes and the
// arena base included).
constexpr size_t kLongestPrologue = 32;

// The words of a subprogram's prologue: those before its first BPF
// instruction's (offsets[0]); empty when it has no such map.
std::span<const uint32_t> PrologueWords(const jit::CompiledSubprogram& subprogram) {
  if (subprogram.offsets.empty() || subprogram.offsets.front() > subprogram.words.size()) return {};
  return std::span(subprogram.words).first(subprogram.offsets.front());
}

}  // namespace

std::optional<uint64_t> PrologueFrameBytes(const jit::CompiledSubprogram& subprogram) {
  const std::span<const uint32_t> prologue = PrologueWords(subprogram);
  if (prologue.empty() || prologue.size() > kLongestPrologue) return std::nullopt;
  uint64_t pushed = 0;
  for (const uint32_t word : prologue) {
    if (auto bytes = PushedBytes(word)) pushed += *bytes;
  }
  return pushed;
}

uint64_t StackReservationBytes(const jit::CompiledSubprogram& subprogram) {
  uint64_t reserved = 0;
  for (const uint32_t word : PrologueWords(subprogram)) {
    if (auto bytes = ReservedBytes(word)) reserved += *bytes;
  }
  return reserved;
}

std::optional<uint32_t> TailCallEntryWords(const jit::CompiledSubprogram& main_subprogram) {
  for (size_t i = 0; i < main_subprogram.words.size() && i < kLongestPrologue; ++i) {
    const uint32_t word = main_subprogram.words[i];
    if (word == kMovX26Sp || word == kMovzX26Zero) return static_cast<uint32_t>(i + 1);
  }
  return std::nullopt;
}

}  // namespace bpfdiff::kernelsrc
