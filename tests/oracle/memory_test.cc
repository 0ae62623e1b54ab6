// Loads, stores and atomics (RFC 9669 section 5), the kernel-internal
// PROBE_MEM loads, and faults: which instruction, which address (the first
// byte that may not be accessed, as a CPU reports it), which access.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "oracle/guest_layout.h"
#include "tests/oracle/oracle_test_support.h"

namespace bpfdiff::testing {
namespace {

constexpr uint64_t kFp0 = FramePointer(0);  // 0x0400ffb0

// --- Loads ---

TEST(oracle_memory, LoadsOfEveryWidthZeroExtend) {
  const std::string store = "lddw %r1, 0x8877665544332211\nstxdw [%r10-8], %r1\n";
  EXPECT_TRUE(ExitsWith(RunAsm(store + "mov %r0, -1\nldxb %r0, [%r10-8]\nexit"), 0x11));
  EXPECT_TRUE(ExitsWith(RunAsm(store + "mov %r0, -1\nldxh %r0, [%r10-8]\nexit"), 0x2211));
  EXPECT_TRUE(ExitsWith(RunAsm(store + "mov %r0, -1\nldxw %r0, [%r10-8]\nexit"), 0x44332211));
  EXPECT_TRUE(ExitsWith(RunAsm(store + "ldxdw %r0, [%r10-8]\nexit"), 0x8877665544332211));
  // The high bytes, whose top bits are set: still zero-extended.
  EXPECT_TRUE(ExitsWith(RunAsm(store + "ldxb %r0, [%r10-1]\nexit"), 0x88));
  EXPECT_TRUE(ExitsWith(RunAsm(store + "ldxh %r0, [%r10-2]\nexit"), 0x8877));
  EXPECT_TRUE(ExitsWith(RunAsm(store + "ldxw %r0, [%r10-4]\nexit"), 0x88776655));
}

TEST(oracle_memory, SignExtendingLoads) {
  const std::string store = "lddw %r1, 0x8877665544332211\nstxdw [%r10-8], %r1\n";
  EXPECT_TRUE(ExitsWith(RunAsm(store + "ldxsb %r0, [%r10-1]\nexit"), 0xffffffffffffff88));
  EXPECT_TRUE(ExitsWith(RunAsm(store + "ldxsh %r0, [%r10-2]\nexit"), 0xffffffffffff8877));
  EXPECT_TRUE(ExitsWith(RunAsm(store + "ldxsw %r0, [%r10-4]\nexit"), 0xffffffff88776655));
  // Positive values stay positive.
  EXPECT_TRUE(ExitsWith(RunAsm(store + "ldxsb %r0, [%r10-8]\nexit"), 0x11));
  EXPECT_TRUE(ExitsWith(RunAsm(store + "ldxsh %r0, [%r10-8]\nexit"), 0x2211));
  EXPECT_TRUE(ExitsWith(RunAsm(store + "ldxsw %r0, [%r10-8]\nexit"), 0x44332211));
}

TEST(oracle_memory, LoadsFromTheContextWithAnOffset) {
  // r1 is the input memory; the offset is a signed 16-bit displacement.
  EXPECT_TRUE(ExitsWith(RunAsm("ldxh %r0, [%r1+2]\nexit", {0x01, 0x02, 0x03, 0x04}), 0x0403));
  EXPECT_TRUE(ExitsWith(RunAsm("add %r1, 4\nldxb %r0, [%r1-3]\nexit", {0x01, 0x02, 0x03, 0x04}), 0x02));
}

// --- Stores ---

TEST(oracle_memory, StoresOfEveryWidthWriteOnlyTheirBytes) {
  const Outcome outcome = RunAsm(
      "lddw %r1, 0x8877665544332211\n"
      "stb [%r10-8], 0x1aa\n"  // only 0xaa is stored
      "sth [%r10-16], -2\n"
      "stw [%r10-24], -1\n"
      "stxb [%r10-32], %r1\n"
      "stxh [%r10-40], %r1\n"
      "stxw [%r10-48], %r1\n"
      "stxdw [%r10-56], %r1\n"
      "mov %r0, 0\n"
      "exit");
  ASSERT_TRUE(ExitsWith(outcome, 0));
  const auto& stack = outcome.memory.stack;
  EXPECT_EQ(Read64(stack, StackIndex(0, -8)), 0xaau);
  EXPECT_EQ(Read64(stack, StackIndex(0, -16)), 0xfffeu);
  EXPECT_EQ(Read64(stack, StackIndex(0, -24)), 0xffffffffu);
  EXPECT_EQ(Read64(stack, StackIndex(0, -32)), 0x11u);
  EXPECT_EQ(Read64(stack, StackIndex(0, -40)), 0x2211u);
  EXPECT_EQ(Read64(stack, StackIndex(0, -48)), 0x44332211u);
  EXPECT_EQ(Read64(stack, StackIndex(0, -56)), 0x8877665544332211u);
}

TEST(oracle_memory, StdwSignExtendsItsImm) {
  // *(u64 *)(dst + off) = imm: imm is sign-extended to 64 bits.
  EXPECT_TRUE(ExitsWith(RunAsm("stdw [%r10-8], -2\nldxdw %r0, [%r10-8]\nexit"), 0xfffffffffffffffe));
  EXPECT_TRUE(ExitsWith(RunAsm("stdw [%r10-8], 0x80000000\nldxdw %r0, [%r10-8]\nexit"),
                        0xffffffff80000000));
  EXPECT_TRUE(ExitsWith(RunAsm("stdw [%r10-8], 0x7fffffff\nldxdw %r0, [%r10-8]\nexit"), 0x7fffffff));
}

TEST(oracle_memory, StoresToTheContextAreInTheSnapshot) {
  const Outcome outcome = RunAsm("sth [%r1+1], 0x4321\nmov %r0, 0\nexit", {0, 0, 0, 0});
  ASSERT_TRUE(ExitsWith(outcome, 0));
  EXPECT_EQ(outcome.memory.context, (std::vector<uint8_t>{0x00, 0x21, 0x43, 0x00}));
}

// --- Atomics ---

struct AtomicCase {
  std::string_view op;     // the assembler's mnemonic
  uint64_t memory;         // the 8 bytes at r10-8 before
  uint64_t src;            // r2 before
  uint64_t r0;             // r0 before (cmpxchg compares with it)
  uint64_t memory_after;   // the 8 bytes at r10-8 after
  uint64_t src_after;      // r2 after
  uint64_t r0_after;       // r0 after
};

constexpr AtomicCase kAtomicCases[] = {
    // 64-bit. Without FETCH, src is left alone.
    {"lock add", 0x7fffffffffffffff, 1, 0, 0x8000000000000000, 1, 0},
    {"lock or", 0xf0, 0x0f, 0, 0xff, 0x0f, 0},
    {"lock and", 0xff00ff00ff00ff00, 0x0ff00ff00ff00ff0, 0, 0x0f000f000f000f00, 0x0ff00ff00ff00ff0, 0},
    {"lock xor", 0xffffffff00000000, 0xffffffffffffffff, 0, 0x00000000ffffffff, 0xffffffffffffffff, 0},
    // With FETCH, src receives the old value.
    {"lock fetch add", 0xffffffffffffffff, 2, 0, 1, 0xffffffffffffffff, 0},
    {"lock fetch or", 0x100000000, 1, 0, 0x100000001, 0x100000000, 0},
    {"lock fetch and", 0x1234567887654321, 0xffff0000ffff0000, 0, 0x1234000087650000, 0x1234567887654321, 0},
    {"lock fetch xor", 0xaaaaaaaaaaaaaaaa, 0xffffffffffffffff, 0, 0x5555555555555555, 0xaaaaaaaaaaaaaaaa, 0},
    {"lock xchg", 0x1111111111111111, 0x2222222222222222, 0, 0x2222222222222222, 0x1111111111111111, 0},
    // cmpxchg: r0 receives the old value; memory changes only on a match.
    {"lock cmpxchg", 0x1111111111111111, 0x2222222222222222, 0x1111111111111111, 0x2222222222222222,
     0x2222222222222222, 0x1111111111111111},
    {"lock cmpxchg", 0x1111111111111111, 0x2222222222222222, 0x1111111111111112, 0x1111111111111111,
     0x2222222222222222, 0x1111111111111111},
    {"lock cmpxchg", 0x1111111111111111, 0x2222222222222222, 0x0000000011111111, 0x1111111111111111,
     0x2222222222222222, 0x1111111111111111},  // all 64 bits are compared
    // 32-bit: the low 4 bytes at r10-8; the upper 4 (0xaaaaaaaa) stay. Only
    // the low half of src takes part; fetched values are zero-extended.
    {"lock add32", 0xaaaaaaaaffffffff, 0x1234567800000002, 0, 0xaaaaaaaa00000001, 0x1234567800000002, 0},
    {"lock or32", 0xaaaaaaaa000000f0, 0xffffffff0000000f, 0, 0xaaaaaaaa000000ff, 0xffffffff0000000f, 0},
    {"lock and32", 0xaaaaaaaaffff0000, 0xffffffff00ff00ff, 0, 0xaaaaaaaa00ff0000, 0xffffffff00ff00ff, 0},
    {"lock xor32", 0xaaaaaaaa0000ffff, 0xffffffffffffffff, 0, 0xaaaaaaaaffff0000, 0xffffffffffffffff, 0},
    {"lock fetch add32", 0xaaaaaaaaffffffff, 0x1234567800000002, 0, 0xaaaaaaaa00000001, 0xffffffff, 0},
    {"lock fetch or32", 0xaaaaaaaa80000000, 0xffffffff00000001, 0, 0xaaaaaaaa80000001, 0x80000000, 0},
    {"lock fetch and32", 0xaaaaaaaa12345678, 0x0f0f0f0f, 0, 0xaaaaaaaa02040608, 0x12345678, 0},
    {"lock fetch xor32", 0xaaaaaaaa00000001, 0x3, 0, 0xaaaaaaaa00000002, 1, 0},
    {"lock xchg32", 0xaaaaaaaa11111111, 0x3333333322222222, 0, 0xaaaaaaaa22222222, 0x11111111, 0},
    // 32-bit cmpxchg compares only the low half of r0 and zero-extends it.
    {"lock cmpxchg32", 0xaaaaaaaa00000005, 0x3333333322222222, 0xdeadbeef00000005, 0xaaaaaaaa22222222,
     0x3333333322222222, 5},
    {"lock cmpxchg32", 0xaaaaaaaa00000005, 0x3333333322222222, 0x0000000000000006, 0xaaaaaaaa00000005,
     0x3333333322222222, 5},
    {"lock cmpxchg32", 0xaaaaaaaaf0000005, 0x22222222, 0xfffffffff0000005, 0xaaaaaaaa22222222, 0x22222222,
     0xf0000005},
};

TEST(oracle_memory, EveryAtomicOperation) {
  for (const AtomicCase& c : kAtomicCases) {
    // Memory after -> r10-8, src after -> r10-16, r0 after -> r10-24.
    const std::string text = fmt::format(
        "lddw %r1, 0x{:x}\n"
        "stxdw [%r10-8], %r1\n"
        "lddw %r2, 0x{:x}\n"
        "lddw %r0, 0x{:x}\n"
        "{} [%r10-8], %r2\n"
        "stxdw [%r10-16], %r2\n"
        "stxdw [%r10-24], %r0\n"
        "mov %r0, 0\n"
        "exit",
        c.memory, c.src, c.r0, c.op);
    const Outcome outcome = RunAsm(text);
    ASSERT_TRUE(ExitsWith(outcome, 0)) << text;
    const auto& stack = outcome.memory.stack;
    EXPECT_EQ(Read64(stack, StackIndex(0, -8)), c.memory_after) << c.op << ": memory\n" << text;
    EXPECT_EQ(Read64(stack, StackIndex(0, -16)), c.src_after) << c.op << ": src\n" << text;
    EXPECT_EQ(Read64(stack, StackIndex(0, -24)), c.r0_after) << c.op << ": r0\n" << text;
  }
}

TEST(oracle_memory, EveryAtomicFormHasACase) {
  int atomic_forms = 0;
  for (const isa::Form& form : isa::AllForms()) {
    // The arena's atomics (probe32 lock ...) are these operations at
    // another address: tests/conformance/arena-atomics.data.
    if (form.shape != isa::Shape::kAtomic || form.kernel_internal) continue;
    ++atomic_forms;
    bool found = false;
    for (const AtomicCase& c : kAtomicCases) found |= c.op == form.mnemonic;
    EXPECT_TRUE(found) << form.name;
  }
  EXPECT_EQ(atomic_forms, 20);
}

TEST(oracle_memory, MisalignedAtomicsFault) {
  // 64-bit atomics need 8-byte alignment, 32-bit ones 4-byte alignment.
  const Outcome a = RunAsm("mov %r1, 1\nlock add [%r10-20], %r1\nmov %r0, 0\nexit");
  EXPECT_TRUE(FaultsAt(a, 1, kFp0 - 20, AccessKind::kMisaligned));
  const Outcome b = RunAsm("mov %r1, 1\nmov %r0, 0\nlock cmpxchg32 [%r10-6], %r1\nexit");
  EXPECT_TRUE(FaultsAt(b, 2, kFp0 - 6, AccessKind::kMisaligned));
  const Outcome c = RunAsm("mov %r1, 1\nlock fetch xor [%r10-12], %r1\nmov %r0, 0\nexit");
  EXPECT_TRUE(FaultsAt(c, 1, kFp0 - 12, AccessKind::kMisaligned));
  // A 4-aligned address is fine for a 32-bit atomic.
  EXPECT_TRUE(ExitsWith(RunAsm("mov %r1, 1\nlock add32 [%r10-4], %r1\nldxw %r0, [%r10-4]\nexit"), 1));
}

TEST(oracle_memory, AtomicsOnMemoryTheyMayNotAccessFault) {
  // Read-only (map objects): the read succeeds, the write faults.
  EXPECT_TRUE(FaultsAt(RunAsm("lddw %r1, 0x3000000\nmov %r2, 1\nlock add [%r1], %r2\nexit"), 3,
                       0x3000000, AccessKind::kWrite));
  // Unmapped: the read part faults first.
  EXPECT_TRUE(FaultsAt(RunAsm("mov %r1, 0\nmov %r2, 1\nlock xchg [%r1+8], %r2\nexit"), 2, 8,
                       AccessKind::kRead));
}

// --- PROBE_MEM ---

TEST(oracle_memory, ProbeLoadOfNullGivesZeroAndContinues) {
  EXPECT_TRUE(ExitsWith(RunAsm("mov %r0, 7\nmov %r1, 0\nprobe ldxdw %r0, [%r1+0]\nadd %r0, 1\nexit"), 1));
  EXPECT_TRUE(ExitsWith(RunAsm("mov %r0, 7\nmov %r1, 0\nprobe ldxsb %r0, [%r1+16]\nadd %r0, 1\nexit"), 1));
}

TEST(oracle_memory, ProbeLoadOfAnUnmappedOrStraddlingAddressGivesZero) {
  // A guard gap between regions.
  EXPECT_TRUE(ExitsWith(RunAsm("mov %r0, 7\nlddw %r1, 0x1800000\nprobe ldxw %r0, [%r1]\nexit"), 0));
  // Straddling the end of the context region: partly readable is not readable.
  EXPECT_TRUE(ExitsWith(RunAsm("mov %r0, 7\nprobe ldxdw %r0, [%r1+4]\nexit", {1, 2, 3, 4, 5, 6, 7, 8}), 0));
  // Into a different destination register than r0.
  EXPECT_TRUE(ExitsWith(
      RunAsm("mov %r3, 7\nmov %r1, 0\nprobe ldxh %r3, [%r1]\nmov %r0, %r3\nadd %r0, 5\nexit"), 5));
}

TEST(oracle_memory, ProbeLoadOfReadableMemoryIsANormalLoad) {
  const std::string store = "lddw %r1, 0x8877665544332211\nstxdw [%r10-8], %r1\n";
  EXPECT_TRUE(ExitsWith(RunAsm(store + "probe ldxdw %r0, [%r10-8]\nexit"), 0x8877665544332211));
  EXPECT_TRUE(ExitsWith(RunAsm(store + "probe ldxw %r0, [%r10-4]\nexit"), 0x88776655));
  EXPECT_TRUE(ExitsWith(RunAsm(store + "probe ldxh %r0, [%r10-8]\nexit"), 0x2211));
  EXPECT_TRUE(ExitsWith(RunAsm(store + "probe ldxb %r0, [%r10-1]\nexit"), 0x88));
  EXPECT_TRUE(ExitsWith(RunAsm(store + "probe ldxsb %r0, [%r10-1]\nexit"), 0xffffffffffffff88));
  EXPECT_TRUE(ExitsWith(RunAsm(store + "probe ldxsh %r0, [%r10-2]\nexit"), 0xffffffffffff8877));
  EXPECT_TRUE(ExitsWith(RunAsm(store + "probe ldxsw %r0, [%r10-4]\nexit"), 0xffffffff88776655));
  // Executable code is readable too (the helper stubs hold `ret`).
  EXPECT_TRUE(ExitsWith(RunAsm("lddw %r1, 0x100000\nprobe ldxw %r0, [%r1]\nexit"), 0xd65f03c0));
}

// --- Faults ---

TEST(oracle_memory, NullLoadFaults) {
  const Outcome outcome = RunAsm("mov %r1, 0\nldxw %r0, [%r1+16]\nexit");
  EXPECT_TRUE(FaultsAt(outcome, 1, 16, AccessKind::kRead));
  ASSERT_TRUE(outcome.fault.has_value());
  EXPECT_FALSE(outcome.fault->partial);
  // Instruction indices count slots: lddw takes two.
  EXPECT_TRUE(FaultsAt(RunAsm("lddw %r1, 0\nmov %r2, 0\nldxdw %r0, [%r1]\nexit"), 3, 0, AccessKind::kRead));
}

TEST(oracle_memory, StoresToReadOnlyRegionsFault) {
  // Map objects (0x03000000) and program objects are read-only, as is code.
  EXPECT_TRUE(FaultsAt(RunAsm("lddw %r1, 0x3000000\nstw [%r1], 1\nexit"), 2, 0x3000000, AccessKind::kWrite));
  EXPECT_TRUE(FaultsAt(RunAsm("lddw %r1, 0x3100000\nmov %r2, 1\nstxdw [%r1+8], %r2\nexit"), 3, 0x3100008,
                       AccessKind::kWrite));
  EXPECT_TRUE(FaultsAt(RunAsm("lddw %r1, 0x10000000\nstb [%r1+3], 1\nexit"), 2, 0x10000003, AccessKind::kWrite));
  EXPECT_TRUE(FaultsAt(RunAsm("lddw %r1, 0x100000\nsth [%r1], 1\nexit"), 2, 0x100000, AccessKind::kWrite));
  // A store into unmapped memory is a write fault as well.
  EXPECT_TRUE(FaultsAt(RunAsm("mov %r1, 0\nstdw [%r1+24], 1\nexit"), 1, 24, AccessKind::kWrite));
}

TEST(oracle_memory, AccessesStraddlingTheEndOfTheContextArePartial) {
  // 8 bytes of input end exactly at the context region's end (0x01010000).
  const std::vector<uint8_t> memory = {1, 2, 3, 4, 5, 6, 7, 8};
  const Outcome load = RunAsm("ldxdw %r0, [%r1+4]\nexit", memory);
  EXPECT_TRUE(FaultsAt(load, 0, 0x1010000, AccessKind::kRead));  // the first byte past the end
  ASSERT_TRUE(load.fault.has_value());
  EXPECT_TRUE(load.fault->partial);
  const Outcome store = RunAsm("mov %r2, -1\nstxw [%r1+6], %r2\nmov %r0, 0\nexit", memory);
  EXPECT_TRUE(FaultsAt(store, 1, 0x1010000, AccessKind::kWrite));
  ASSERT_TRUE(store.fault.has_value());
  EXPECT_TRUE(store.fault->partial);
  // Entirely past the end: not partial, and the address is the access's own.
  const Outcome past = RunAsm("ldxb %r0, [%r1+8]\nexit", memory);
  EXPECT_TRUE(FaultsAt(past, 0, 0x1010000, AccessKind::kRead));
  ASSERT_TRUE(past.fault.has_value());
  EXPECT_FALSE(past.fault->partial);
}

TEST(oracle_memory, InputShorterThanEightBytesEndsAlignedAtTheRegionEnd) {
  // 5 bytes start at 0x0100fff8; bytes 5..7 are readable padding (zero).
  const Outcome padding = RunAsm("ldxdw %r0, [%r1]\nexit", {1, 2, 3, 4, 5});
  EXPECT_TRUE(ExitsWith(padding, 0x0504030201));
  EXPECT_TRUE(FaultsAt(RunAsm("ldxb %r0, [%r1+8]\nexit", {1, 2, 3, 4, 5}), 0, 0x1010000, AccessKind::kRead));
}

TEST(oracle_memory, StackBelowTheFrameIsStillStackMemory) {
  // The verifier-lite only checks r10-relative offsets; a computed pointer
  // below the frame lands in the (mapped) stack region, not in a fault.
  EXPECT_TRUE(ExitsWith(
      RunAsm("mov %r1, %r10\nadd %r1, -1024\nstdw [%r1], 9\nldxdw %r0, [%r1]\nexit"), 9));
}

}  // namespace
}  // namespace bpfdiff::testing
