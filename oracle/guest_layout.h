// The guest address space that the interpreter and the JIT'd code share.
//
// Both engines run over the same regions, at the same addresses, with the
// same permissions, so that a pointer a program computes has the same value
// on both sides and an access outside the regions faults on both sides.
// Every region is page aligned and a whole number of pages, because Unicorn
// maps memory in pages; gaps between regions are unmapped guard space.
//
//   0x0000_0000  unmapped (NULL)
//   0x0010_0000  helper entry points, one 8-byte stub per helper id   R X
//   0x0011_0000  stop page: the return address of the outermost frame R X
//   0x0100_0000  context / packet (input memory ends at the region end) RW
//   0x0200_0000  map values                                          RW
//   0x0300_0000  map objects (struct GuestMap)                       R
//   0x0310_0000  program objects (struct GuestProg)                  R
//   0x0400_0000  stacks, one per CPU                                 RW
//   0x0500_0000  per-CPU data, one page per CPU                      RW
//   0x1000_0000  prog packs, kMaxPacks x 2 MiB                       R X
//   0x2000_0000  oversize JIT images (larger than a pack), and far slots R X
#pragma once

#include <cstdint>

namespace bpfdiff::guest {

inline constexpr uint64_t kPageSize = 4096;

inline constexpr uint64_t kHelperBase = 0x0010'0000;
inline constexpr uint64_t kHelperStubSize = 8;
inline constexpr uint64_t kMaxHelperId = 255;
inline constexpr uint64_t kHelperRegionSize = 0x1000;
// Target of a callx whose register does not name a helper.
inline constexpr uint64_t kBadCallxStub = kHelperBase + (kMaxHelperId + 1) * kHelperStubSize;

inline constexpr uint64_t kStopBase = 0x0011'0000;
inline constexpr uint64_t kStopRegionSize = 0x1000;
inline constexpr uint64_t kStopAddress = kStopBase;
// The kernel symbol dummy_tramp, for code from the kernel's own JIT
// (kernelsrc/): the default target of every image's PLT, which the
// fentry nop at POKE_OFFSET reaches once a trampoline is attached.
inline constexpr uint64_t kDummyTrampAddress = kStopBase + 0x100;

// What a BPF trampoline calls, for trampolines built by the kernel's own
// arch code (kernelsrc/): the guest's __bpf_prog_enter*() (one that runs
// the program, one that reports a recursion miss), __bpf_prog_exit*(),
// and __bpf_tramp_enter()/__bpf_tramp_exit(). harness/trampoline writes
// their code; oracle/trampoline.h says what they do.
inline constexpr uint64_t kTrampProgEnterAddress = kStopBase + 0x200;
inline constexpr uint64_t kTrampProgEnterMissAddress = kStopBase + 0x300;
inline constexpr uint64_t kTrampProgExitAddress = kStopBase + 0x400;
inline constexpr uint64_t kTrampImageEnterAddress = kStopBase + 0x500;
inline constexpr uint64_t kTrampImageExitAddress = kStopBase + 0x600;
inline constexpr uint64_t kTrampStubBytes = 0x100;
// bpf_loop (kernel/bpf/bpf_iter.c) as guest code, for the JITs' direct
// calls of helper 181: it calls the callback (a BPF function, by blr) once
// per iteration, in a frame of kLoopHelperFrameBytes below its caller's
// stack pointer (harness/machine/loop_helper.h). A callx of 181 reaches the
// helper stubs instead, which refuse it.
inline constexpr uint64_t kLoopHelperAddress = kStopBase + 0x700;
inline constexpr uint64_t kLoopHelperBytes = 0x200;
inline constexpr uint64_t kLoopHelperFrameBytes = 48;
// BPF_MAX_LOOPS: bpf_loop refuses more iterations with -E2BIG.
inline constexpr uint32_t kMaxLoops = 8 * 1024 * 1024;
// What bpf_loop leaves in each caller-saved register it does not pass (x5
// to x8, x12 to x17) before every callback and before it returns: this
// pattern, ORed with the register's number. A JIT that keeps a value in
// one across the call, or a callback that reads one, is caught.
inline constexpr uint64_t kLoopHelperClobber = 0x6c6f'6f70'0000'0000ULL;
// bpf_throw (kernel/bpf/helpers.c) as guest code, for the JITs' calls of
// the kfunc (`call kfunc 1`): it walks the frame records from its caller's
// as arch_bpf_stack_walk() does, past every frame of a subprogram (found in
// the throw table below), to the first frame of a program's own function,
// and calls that program's exception callback (by blr) with (cookie, 0,
// that frame's x29, 0, 0); the callback returns for the program, never to
// bpf_throw (harness/machine/throw_kfunc.h).
inline constexpr uint64_t kThrowKfuncAddress = kStopBase + 0x900;
inline constexpr uint64_t kThrowKfuncBytes = 0x200;
// What bpf_throw leaves in each caller-saved register it does not pass
// (x5 to x8, x9 to x17): this pattern, ORed with the register's number. The
// callback finds it in r0 (x7), as the interpreter gives it.
inline constexpr uint64_t kThrowKfuncClobber = 0x7468'726f'0000'0000ULL;

// What lddw_func loads in the interpreter: a token naming the callback's
// first slot (the JITs load its address, which the interpreter does not
// have). A program can only hand it to bpf_loop (load.cc).
inline constexpr uint64_t kCallbackTokenBase = 0x0fc0'0000'0000'0000ULL;

inline constexpr uint64_t kContextBase = 0x0100'0000;
inline constexpr uint64_t kContextSize = 0x10000;

inline constexpr uint64_t kMapValuesBase = 0x0200'0000;
inline constexpr uint64_t kMapValuesSize = 0x100000;

inline constexpr uint64_t kMapObjectsBase = 0x0300'0000;
inline constexpr uint64_t kMapObjectStride = 0x400;
inline constexpr uint64_t kMaxMaps = 16;
inline constexpr uint64_t kMapObjectsSize = kMapObjectStride * kMaxMaps;

inline constexpr uint64_t kProgObjectsBase = 0x0310'0000;
inline constexpr uint64_t kProgObjectStride = 0x40;
inline constexpr uint64_t kMaxPrograms = 64;
inline constexpr uint64_t kProgObjectsSize = 0x2000;
// After the program objects: the throw table, what bpf_throw finds a
// return address in, as the kernel's bpf_prog_ksym_find(): a u64 count,
// then that many entries of three u64s, the code of one JIT'd function
// [start, end) and, for a program's own function, its exception callback
// (the program's aux->bpf_exception_cb; kThrowNoCallback when it has none);
// 0 for a subprogram. Each JIT engine writes its own before it runs a case
// that throws.
inline constexpr uint64_t kThrowTableAddress = kProgObjectsBase + 0x1000;
inline constexpr uint64_t kThrowTableEntryBytes = 24;
inline constexpr uint64_t kThrowTableMaxEntries = (0x1000 - 8) / kThrowTableEntryBytes;
inline constexpr uint64_t kThrowNoCallback = 1;

inline constexpr uint64_t kStackBase = 0x0400'0000;
inline constexpr uint64_t kStackStride = 0x10000;  // per CPU
inline constexpr uint64_t kPerCpuBase = 0x0500'0000;
inline constexpr uint64_t kPerCpuStride = 0x1000;
inline constexpr int kMaxCpus = 4;

// `current` of each CPU, as SP_EL0 holds it in the kernel: a struct
// thread_info (kernelsrc/include/asm/thread_info.h), whose cpu field the
// kernel's JIT reads for an inlined bpf_get_smp_processor_id().
inline constexpr uint64_t kThreadInfoBase = 0x0501'0000;
inline constexpr uint64_t kThreadInfoStride = 0x100;
inline constexpr uint64_t kThreadInfoCpuOffset = 24;

inline constexpr uint64_t kPackBase = 0x1000'0000;
inline constexpr uint64_t kPackSize = 2 << 20;  // 2 MiB, as the kernel's prog pack
inline constexpr uint64_t kMaxPacks = 16;
inline constexpr uint64_t kOversizeBase = 0x2000'0000;
inline constexpr uint64_t kOversizeSize = 64 << 20;
// A far slot (jit::Placement::kFar) stands for a pack beyond the reach of a
// `bl` from every other: the kernel then pokes a call through the PLT.
static_assert(kOversizeBase - (kPackBase + kMaxPacks * kPackSize) > (uint64_t{128} << 20),
              "the oversize region must lie more than 128 MiB from every pack");

// The arena (BPF_MAP_TYPE_ARENA) of every case, as kernel/bpf/arena.c lays
// it out: kern_vm_start lies 32 KiB (half the guard) into a 4 GiB range
// far above the first 4 GiB, so that its address needs all 64 bits; its
// first page is allocated, and the rest, the guards included, faults. The
// range is above AddressSanitizer's shadow (which ends at 0x10007fff8000),
// since VIXL runs guest memory at its own host address. PROBE_MEM32
// and PROBE_ATOMIC accesses add kern_vm_start to their register; the cast
// to a user pointer (addr_space_cast) puts user_vm_start's upper half on a
// non-zero offset. Zeroed before every run, and compared.
inline constexpr uint64_t kArenaKernStart = 0x2000'0000'8000;
inline constexpr uint64_t kArenaMappedBytes = 0x1000;
inline constexpr uint64_t kArenaUserStart = 0x7f12'0000'0000;

inline constexpr uint64_t HelperAddress(uint64_t id) { return kHelperBase + id * kHelperStubSize; }
inline constexpr uint64_t StackTop(int cpu) { return kStackBase + kStackStride * (cpu + 1); }
inline constexpr uint64_t PerCpuArea(int cpu) { return kPerCpuBase + kPerCpuStride * cpu; }
inline constexpr uint64_t ThreadInfo(int cpu) { return kThreadInfoBase + kThreadInfoStride * cpu; }
inline constexpr uint64_t MapObjectAddress(uint64_t index) {
  return kMapObjectsBase + index * kMapObjectStride;
}
inline constexpr uint64_t ProgObjectAddress(uint64_t index) {
  return kProgObjectsBase + index * kProgObjectStride;
}

// struct GuestMap, at MapObjectAddress(i): what lddw map_fd loads.
//   u32 type; u32 key_size; u32 value_size; u32 max_entries;  // offsets 0..15
//   u64 values;                                               // offset 16
//   (offsets 32..63: the host-side fields of the kernel's struct bpf_map
//   that kernel/bpf/core.c uses, zero in the guest)
//   u64 ptrs[max_entries];                                    // offset 64, prog_array only
inline constexpr uint64_t kMapTypeOffset = 0;
inline constexpr uint64_t kMapKeySizeOffset = 4;
inline constexpr uint64_t kMapValueSizeOffset = 8;
inline constexpr uint64_t kMapMaxEntriesOffset = 12;
inline constexpr uint64_t kMapValuesOffset = 16;
inline constexpr uint64_t kMapPtrsOffset = 64;
inline constexpr uint64_t kMaxProgArrayEntries = (kMapObjectStride - kMapPtrsOffset) / 8;

// Map values, from struct GuestMap's `values`. An array map holds
// max_entries values, each at a multiple of round_up(value_size, 8), as the
// kernel's array map; a hash map holds max_entries slots of
//   u64 in_use; key (rounded up to 8 bytes); value (rounded up to 8 bytes).
inline constexpr uint64_t RoundUp(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }
inline constexpr uint64_t ArrayValueStride(uint64_t value_size) { return RoundUp(value_size, 8); }
inline constexpr uint64_t HashValueOffset(uint64_t key_size) { return 8 + RoundUp(key_size, 8); }
inline constexpr uint64_t HashSlotSize(uint64_t key_size, uint64_t value_size) {
  return HashValueOffset(key_size) + RoundUp(value_size, 8);
}

// struct GuestProg, at ProgObjectAddress(i): what a prog_array slot points to.
//   u64 bpf_func;  // offset 0: RX address of the JIT'd image (0 before JIT)
//   u32 index;     // offset 8: the program's index, for the interpreter
inline constexpr uint64_t kProgBpfFuncOffset = 0;
inline constexpr uint64_t kProgIndexOffset = 8;

// Per-CPU area (trampoline and recursion state, see the recursion issue).
inline constexpr uint64_t kPreemptCountOffset = 0;
// The per-CPU variable programs may use (a per-CPU pointer is an offset
// into the page; `addr_percpu` makes it this CPU's address): zeroed before
// every run, like the stack.
inline constexpr uint64_t kPerCpuScratchOffset = 0xc00;
inline constexpr uint64_t kPerCpuScratchSize = 0x400;

inline constexpr int kMaxTailCalls = 33;  // MAX_TAIL_CALL_CNT

// The log the trampoline stubs above keep in each CPU's per-CPU area: a
// u64 count of events, then kTrampLogEntries u64 entries, the event with
// count c at entry c % kTrampLogEntries (oracle/trampoline.h says what an
// event writes).
inline constexpr uint64_t kTrampLogOffset = 0x800;
inline constexpr uint64_t kTrampLogEntries = 64;
// What the stubs check their first argument against: the struct
// bpf_tramp_image the trampoline was built for (the runner writes it), and
// the struct bpf_prog the last enter was given (the enter stub writes it,
// the exit stub compares).
inline constexpr uint64_t kTrampImageObjectOffset = 0x7f0;
inline constexpr uint64_t kTrampProgObjectOffset = 0x7f8;
// The start time the last enter stub answered, which the exit stub demands
// exactly: kTrampStartTag | the log's count after the enter (unique to the
// call on its CPU), or 0 after a recursion miss.
inline constexpr uint64_t kTrampStartOffset = 0x7e8;
inline constexpr uint64_t kTrampStartTag = 0x57a7'0000'0000'0000;

}  // namespace bpfdiff::guest
