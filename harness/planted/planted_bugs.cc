#include "harness/planted/planted_bugs.h"

#include <fmt/format.h>

namespace bpfdiff {
namespace {

constexpr PlantedBugInfo kCatalog[] = {
    {"alu32-add-no-zext", BugArea::kExtension,
     "JIT: a 32-bit add is done as a 64-bit add (no zero-extension)",
     "diff_fuzzer", "1e692f09e091 bpf, riscv: clear high 32 bits for ALU32 add/sub/neg/lsh/rsh/arsh (riscv)", true,
     [](PlantedBugs& b) { b.jit.alu32_add_no_zext = true; }},
    {"alu32-identity-no-zext", BugArea::kExtension,
     "JIT: 32-bit ops with an identity constant (add 0, and -1, mul 1, ...) emit nothing",
     "diff_fuzzer", "db7bee653859 s390/bpf: Fix optimizing out zero-extensions (s390)", true,
     [](PlantedBugs& b) { b.jit.alu32_identity_no_zext = true; }},
    {"movsx32-no-zext", BugArea::kExtension,
     "JIT: 32-bit movsx (s8, s16) sign-extends into the upper half",
     "diff_fuzzer", "772cbe948fb0 LoongArch: BPF: Fix sign-extension mov instructions (loongarch)", true,
     [](PlantedBugs& b) { b.jit.movsx32_no_zext = true; }},
    {"sdiv32-sign-extended", BugArea::kExtension,
     "JIT: signed 32-bit div and mod leave their result sign-extended",
     "diff_fuzzer", "dacd348b8a99 LoongArch: BPF: Zero-extend signed ALU32 div/mod results (loongarch)", true,
     [](PlantedBugs& b) { b.jit.sdiv32_sign_extended = true; }},
    {"le-no-truncation", BugArea::kExtension,
     "JIT: le16 and le32 emit nothing (no truncation on a little-endian CPU)",
     "diff_fuzzer", "d63903bbc30c arm64: bpf: fix endianness conversion bugs (arm64)", true,
     [](PlantedBugs& b) { b.jit.le_no_truncation = true; }},
    {"bswap32-no-zext", BugArea::kExtension,
     "JIT: bswap32 (ALU64) as rev32 xd: the upper word stays, swapped",
     "diff_fuzzer", "a51cd6bf8e10 arm64: bpf: fix 32bit unconditional bswap (arm64)", true,
     [](PlantedBugs& b) { b.jit.bswap32_no_zext = true; }},
    {"mod32-zero-no-zext", BugArea::kExtension,
     "JIT: 32-bit mod by a zero register skips the zero-extension of dst",
     "diff_fuzzer", "9b00f1b78809 bpf: Fix truncation handling for mod32 dst reg wrt zero (verifier, every JIT)", true,
     [](PlantedBugs& b) { b.jit.mod32_zero_no_zext = true; }},
    {"ldx-sign-extended", BugArea::kExtension,
     "JIT: zero-extending byte, half and word loads done as sign-extending ones",
     "diff_fuzzer", "fe5757553bf9 LoongArch: BPF: Don't sign extend memory load operand (loongarch)", true,
     [](PlantedBugs& b) { b.jit.ldx_sign_extended = true; }},
    {"helper-return-sign-extended", BugArea::kExtension,
     "JIT: r0 = (s32)x0 after a helper call, not the whole x0",
     "diff_fuzzer", "5d47ec2e6f4c LoongArch: BPF: Don't sign extend function return value (loongarch)", true,
     [](PlantedBugs& b) { b.jit.helper_return_sign_extended = true; }},
    {"logical-imm32-all-ones", BugArea::kAlu,
     "JIT: a 32-bit and/or/xor/jset with -1 gets the reserved all-ones logical-immediate encoding",
     "diff_fuzzer", "579d1b3faa37 arm64: insn: Fix two bugs in encoding 32-bit logical immediates (arm64)", true,
     [](PlantedBugs& b) { b.jit.logical_imm32_all_ones = true; }},
    {"divmod-imm1-skipped", BugArea::kAlu,
     "JIT: div and mod by the constant 1 emit nothing (mod leaves dst, div32 its upper half)",
     "diff_fuzzer", "8bbc9d822421 powerpc/bpf: Fix BPF_MOD when imm == 1 (powerpc)", true,
     [](PlantedBugs& b) { b.jit.divmod_imm1_skipped = true; }},
    {"sub-imm-intmin", BugArea::kAlu,
     "JIT: dst -= imm done as dst += -imm with -imm in 32 bits, wrong for INT_MIN",
     "diff_fuzzer", "5855c4c1f415 powerpc/bpf: Fix BPF_SUB when imm == 0x80000000 (powerpc)", true,
     [](PlantedBugs& b) { b.jit.sub_imm_negated = true; }},
    {"shift-imm0-full-width", BugArea::kAlu,
     "JIT: rsh and arsh by the constant 0 shift by the full width",
     "diff_fuzzer", "bb9562cf5c67 arm, bpf: Fix bugs with ALU64 {RSH, ARSH} BPF_K shift by 0 (arm)", true,
     [](PlantedBugs& b) { b.jit.shift_imm0_full_width = true; }},
    {"ldrsw-offset-as-register", BugArea::kMemory,
     "JIT: a 32-bit sign-extending load whose offset needs a register names the offset's value as the register",
     "diff_fuzzer", "114b5b3b4bde bpf, arm64: fix bug in BPF_LDX_MEMSX (arm64)", true,
     [](PlantedBugs& b) { b.jit.ldrsw_offset_as_register = true; }},
    {"jmp32-jset-64bit", BugArea::kJump,
     "JIT: jmp32 jset with a register tests all 64 bits",
     "diff_fuzzer", "80f1f8503635 bpf, x32: Fix bug with JMP32 JSET BPF_X checking upper bits (x86-32)", true,
     [](PlantedBugs& b) { b.jit.jmp32_jset_64bit = true; }},
    {"jset-clobbers-dst", BugArea::kJump,
     "JIT: jset with a register done as dst &= src and a compare with 0",
     "diff_fuzzer", "50fe7ebb6475 bpf, x86_32: Fix clobbering of dst for BPF_JSET (x86-32)", false,
     [](PlantedBugs& b) { b.jit.jset_clobbers_dst = true; }},
    {"jsigned-imm-32bit", BugArea::kJump,
     "JIT: 64-bit signed jumps against a constant compare only the low 32 bits",
     "diff_fuzzer", "711aef1bbf88 bpf, x32: Fix bug for BPF_JMP | {BPF_JSGT, BPF_JSLE, BPF_JSLT, BPF_JSGE} (x86-32)", true,
     [](PlantedBugs& b) { b.jit.jsigned_imm_32bit = true; }},
    {"jump-imm-zero-extended", BugArea::kJump,
     "JIT: 64-bit unsigned jumps zero-extend a negative constant",
     "diff_fuzzer", "7477d43be5b1 s390/bpf: Fix sign extension in branch_ku (s390)", true,
     [](PlantedBugs& b) { b.jit.jump_imm_zero_extended = true; }},
    {"extra-pass-grows", BugArea::kJump,
     "JIT: the extra pass emits one more word than the sizing pass, so the JIT refuses programs with subprograms",
     "diff_fuzzer", "a552e2ef5fd1 bpf, arm64: Fix address emission with tag-based KASAN enabled (arm64)", false,
     [](PlantedBugs& b) { b.jit.extra_pass_grows = true; }},
    {"tail-call-limit-34", BugArea::kCall,
     "JIT: the tail-call counter is checked against 34 instead of 33",
     "diff_fuzzer", "745abfaa9eaf bpf, riscv: Fix tail call count off by one in RV32 BPF JIT (riscv)", true,
     [](PlantedBugs& b) { b.jit.tail_call_limit_34 = true; }},
    {"tail-call-index-64bit", BugArea::kCall,
     "JIT: the tail-call index is compared as 64 bits, not as the u32 it is",
     "diff_fuzzer", "eb71f5c433e1 LoongArch: BPF: Zero-extend bpf_tail_call() index (loongarch; arm64 16338a9b3ac3, x86 90caccdd8cc0)", true,
     [](PlantedBugs& b) { b.jit.tail_call_index_64bit = true; }},
    {"subprogram-fp-unset", BugArea::kFrame,
     "JIT: subprograms do not set r10, which keeps the caller's frame",
     "diff_fuzzer", "b114fcee766d bpf, arm64: Fix fp initialization for exception boundary (arm64)", false,
     [](PlantedBugs& b) { b.jit.subprogram_fp_unset = true; }},
    {"extable-insn-after-load", BugArea::kProbeMem,
     "JIT: an exception-table entry points at the instruction after its load",
     "diff_fuzzer", "328aac5ecd11 bpf, x86: Fix extable offset calculation (x86)", false,
     [](PlantedBugs& b) { b.jit.extable_insn_after_load = true; }},
    {"extable-fixup-base-register", BugArea::kProbeMem,
     "JIT: the fixup of a faulting PROBE_MEM load zeroes its base register, not dst",
     "diff_fuzzer", "af22d273aa1f bpf, arm64: Fix exception table metadata for arena load-acquire (arm64)", false,
     [](PlantedBugs& b) { b.jit.extable_fixup_base_register = true; }},
    {"cmpxchg32-r0-upper-kept", BugArea::kAtomic,
     "JIT: a 32-bit cmpxchg leaves r0's upper half as it was",
     "diff_fuzzer", "39491867ace5 bpf: Explicitly zero-extend R0 after 32-bit cmpxchg (verifier, every JIT)", true,
     [](PlantedBugs& b) { b.jit.cmpxchg32_r0_upper_kept = true; }},
    {"xchg-as-fetch-add", BugArea::kAtomic,
     "JIT: xchg is dispatched as an atomic fetch-add",
     "diff_fuzzer", "419ac821766c powerpc/bpf: Fix detecting BPF atomic instructions (powerpc)", false,
     [](PlantedBugs& b) { b.jit.xchg_as_fetch_add = true; }},
    {"new-pack-unfilled", BugArea::kPack,
     "pack: a new pack is not filled with illegal instructions",
     "pack_fuzzer", "d88bb5eed04c bpf: Fill new bpf_prog_pack with illegal instructions (core)", false,
     [](PlantedBugs& b) { b.pack.new_pack_unfilled = true; }},
    {"skip-invalidate-on-free", BugArea::kPack,
     "pack: free leaves the old code in the slot",
     "pack_fuzzer", "fe736565efb7 bpf: Introduce bpf_arch_text_invalidate for bpf_prog_pack (core)", false,
     [](PlantedBugs& b) { b.pack.skip_invalidate_on_free = true; }},
    {"flush-quarter-range", BugArea::kIcache,
     "pack: finalize flushes a quarter of the range it wrote (the range in the wrong unit)",
     "pack_fuzzer", "d1a2930d8a99 MIPS: eBPF: Fix icache flush end address (mips)", false,
     [](PlantedBugs& b) { b.pack.flush_quarter_range = true; }},
    {"poke-without-flush", BugArea::kIcache,
     "kernel shims: a text poke (attaching a trampoline) writes its word without the cache maintenance after it",
     "trampoline_fuzzer", "review: arch/arm64/kernel/patching.c (aarch64_insn_patch_text_nosync flushes what it wrote)",
     false, [](PlantedBugs& b) { b.kernel_shims.poke_without_flush = true; }, true},
    {"first-fit-checks-ends", BugArea::kPack,
     "pack: first fit takes a run whose first and last chunks are free, live chunks between them",
     "pack_fuzzer",
     "36845663843f lib/genalloc: fix the overflow when size is too big (core: a chunk bitmap allocator handed out "
     "and cleared the wrong ranges)",
     false, [](PlantedBugs& b) { b.pack.first_fit_checks_ends = true; }},
    {"copy-stops-at-page-end", BugArea::kPack,
     "pack: finalize copies an image only up to the end of its slot's first 4 KiB page",
     "pack_fuzzer",
     "9721873c3c02 riscv: extend patch_text_nosync() for multiple pages (riscv: the BPF pack's copy across a "
     "page)",
     false, [](PlantedBugs& b) { b.pack.copy_stops_at_page_end = true; }},
    {"free-without-grace-period", BugArea::kGracePeriod,
     "pack lifecycle: a program is freed while a CPU may still run it",
     "pack_fuzzer", "4121d4481b72 bpf: Synchronize dispatcher update with bpf_dispatcher_xdp_func (core)", false,
     [](PlantedBugs& b) { b.lifecycle.free_without_grace_period = true; }},
    {"grace-period-for-entry-only", BugArea::kGracePeriod,
     "pack lifecycle: a free waits only for calls that began in the program, not for a CPU that came in by a tail call",
     "pack_fuzzer",
     "ef1b808e3b7c bpf: Fix UAF via mismatching bpf_prog/attachment RCU flavors (core: the free waited for some "
     "of the CPUs that run the program)",
     false, [](PlantedBugs& b) { b.lifecycle.grace_period_for_entry_only = true; }},
    {"no-recursion-check", BugArea::kRecursion,
     "trampoline: no recursion check at all, the program always runs",
     "recursion_fuzzer", "ca06f55b9002 bpf: Add per-program recursion prevention mechanism (core)", false,
     [](PlantedBugs& b) { b.trampoline.no_recursion_check = true; }},
    {"recursion-check-then-increment", BugArea::kRecursion,
     "trampoline: rawtp-style check, then increment, preemptible between (two tasks pass)",
     "recursion_fuzzer", "c89e843a11f1 bpf: Use this_cpu_{inc_return|dec} for prog->active (core)", false,
     [](PlantedBugs& b) { b.trampoline.check_then_increment = true; }},
    {"llsc-address-overwritten", BugArea::kAtomic,
     "JIT: LL/SC fetch atomics reuse dst as the address after loading src",
     "diff_fuzzer", "review: bpfdiff's reading of the kernel's emit_ll_sc_atomic (off == 0 and src == dst)", false,
     [](PlantedBugs& b) { b.jit.llsc_address_overwritten = true; }},
    {"extable-against-rw", BugArea::kProbeMem,
     "JIT: exception-table offsets computed against the RW image",
     "pack_fuzzer", "review: the arm64 prog pack series (offsets must be against the RX image)", false,
     [](PlantedBugs& b) { b.jit.extable_against_rw = true; }},
    {"flush-before-copy", BugArea::kIcache,
     "pack: finalize flushes the caches before copying the image",
     "pack_fuzzer", "review: v3 of the arm64 prog pack series (the flush must follow the copy)", false,
     [](PlantedBugs& b) { b.pack.flush_before_copy = true; }},
    {"per-word-invalidate", BugArea::kIcache,
     "pack: free fills and flushes one word at a time",
     "pack_fuzzer", "review: the arm64 prog pack series (one bulk invalidation per range; test_tag took 3 minutes)", false,
     [](PlantedBugs& b) { b.pack.per_word_invalidate = true; }},
    {"recursion-exit-wrong-context", BugArea::kRecursion,
     "trampoline: the exit path decrements active[rctx ^ 1] instead of active[rctx] (percontext, landed)",
     "recursion_fuzzer", "review: bpfdiff's controls for the per-context recursion counters series", false,
     [](PlantedBugs& b) { b.trampoline.exit_wrong_context = true; }},
    {"recursion-rctx-wrong-bits", BugArea::kRecursion,
     "trampoline: rctx tests SOFTIRQ_MASK instead of SOFTIRQ_OFFSET (a bh-disabled task counts as softirq)",
     "recursion_fuzzer", "review: bpfdiff's controls for the per-context recursion counters series", false,
     [](PlantedBugs& b) { b.trampoline.rctx_wrong_bits = true; }},
    {"recursion-hardirq-as-interrupted", BugArea::kRecursion,
     "trampoline: rctx leaves out HARDIRQ_MASK, a hardirq counts (and uncounts) the interrupted context's byte",
     "recursion_fuzzer",
     "726b3d3f141f ftrace: Handle tracing when switching between context (core tracing: an interrupt charged to the "
     "context it interrupted)",
     false, [](PlantedBugs& b) { b.trampoline.hardirq_as_interrupted = true; }},
};

}  // namespace

std::string_view BugAreaName(BugArea area) {
  switch (area) {
    case BugArea::kAlu: return "ALU and encodings";
    case BugArea::kExtension: return "sign and zero extension";
    case BugArea::kJump: return "jumps";
    case BugArea::kMemory: return "loads and stores";
    case BugArea::kProbeMem: return "PROBE_MEM and the exception table";
    case BugArea::kAtomic: return "atomics";
    case BugArea::kCall: return "calls and tail calls";
    case BugArea::kFrame: return "the frame";
    case BugArea::kPack: return "the prog pack";
    case BugArea::kIcache: return "i-cache maintenance";
    case BugArea::kGracePeriod: return "grace periods";
    case BugArea::kRecursion: return "recursion";
  }
  return "?";
}

std::span<const PlantedBugInfo> PlantedBugCatalog() { return kCatalog; }

bool FixedUpstream(const PlantedBugInfo& bug) { return !bug.fixed_by.starts_with("review:"); }

const PlantedBugInfo* FindPlantedBug(std::string_view name) {
  for (const auto& bug : kCatalog) {
    if (bug.name == name) return &bug;
  }
  return nullptr;
}

Result<PlantedBugs> PlantedBugsNamed(std::string_view name) {
  PlantedBugs bugs;
  if (name.empty()) return bugs;
  const PlantedBugInfo* bug = FindPlantedBug(name);
  if (bug == nullptr) {
    std::string names;
    for (const auto& known : kCatalog) names += fmt::format("\n  {}: {}", known.name, known.what);
    return Fail("unknown planted bug '{}'; known:{}", name, names);
  }
  bugs.name = std::string(name);
  bug->plant(bugs);
  return bugs;
}

std::string PlantedBugBanner(const PlantedBugs& bugs) {
  const PlantedBugInfo* bug = FindPlantedBug(bugs.name);
  if (bug == nullptr) return "";
  return fmt::format(
      "******************************************************************\n"
      "* BPFDIFF_PLANTED_BUG={}: a known bug is switched on on purpose.\n"
      "* {}\n"
      "* Divergences are expected; this is a negative control, not a test.\n"
      "******************************************************************\n",
      bug->name, bug->what);
}

}  // namespace bpfdiff
