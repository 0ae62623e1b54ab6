// Per-function frames (StackGeometry::per_function, oracle/frame_window.h):
// r10 follows the run's path through prologues of different sizes, and the
// stack is compared only where the engines hold it alike. Expected
// addresses are worked out by hand from the kernel's prologue: a callee is
// entered 512 bytes below its caller's r10 and pushes its prologue's bytes.
#include <gtest/gtest.h>

#include "oracle/frame_window.h"
#include "tests/oracle/oracle_test_support.h"

namespace bpfdiff::testing {
namespace {

constexpr uint64_t kTop = 0x0401'0000;  // the top of CPU 0's stack

// The window's keep bit of the byte at `address`.
bool Kept(const StackWindow& window, uint64_t address) {
  return address >= window.low && address < window.low + window.keep.size() && window.keep[address - window.low];
}
bool Stable(const StackWindow& window, uint64_t address) {
  return address >= window.low && address < window.low + window.stable.size() &&
         window.stable[address - window.low];
}

TEST(oracle_frames, AFunctionsSavedRegistersAreNotInTheWindow) {
  FrameWindow window(kTop, 16 * 1024);
  window.Enter(kTop - 48, 512, 48);
  const StackWindow w = window.Window();
  EXPECT_EQ(w.low, kTop - 48 - 512);
  EXPECT_EQ(w.keep.size(), 48u + 512u);
  EXPECT_TRUE(Kept(w, kTop - 48 - 512));
  EXPECT_TRUE(Kept(w, kTop - 49));
  EXPECT_FALSE(Kept(w, kTop - 48));
  EXPECT_FALSE(window.ReadIsPrivate(kTop - 56, 8));
  EXPECT_TRUE(window.ReadIsPrivate(kTop - 52, 8));      // four bytes of a saved register
  EXPECT_TRUE(window.ReadIsPrivate(kTop - 48 - 520, 8));  // below the frame
  EXPECT_TRUE(window.WriteIsPrivate(kTop - 48, 8));
  EXPECT_FALSE(window.WriteIsPrivate(kTop - 48 - 512, 8));
}

TEST(oracle_frames, ACalleeWritingWhereAnotherSavedRegistersKeepsThoseBytes) {
  FrameWindow window(kTop, 16 * 1024);
  const uint64_t main_fp = kTop - 64;
  window.Enter(main_fp, 512, 64);
  const uint64_t entry = main_fp - 512;  // what each callee is entered with
  window.Enter(entry - 48, 512, 48);     // big: saves 48 bytes
  window.Leave();
  window.Enter(entry - 16, 512, 16);  // small: its frame's top 32 bytes were big's saved registers
  EXPECT_TRUE(window.ReadIsPrivate(entry - 24, 8));   // a stale saved register
  EXPECT_FALSE(window.WriteIsPrivate(entry - 24, 8));  // big is no longer running
  EXPECT_TRUE(window.WriteIsPrivate(entry - 16, 8));   // small's own saved register
  window.Written(entry - 24, 8);
  EXPECT_FALSE(window.ReadIsPrivate(entry - 24, 8));
  window.Leave();
  const StackWindow w = window.Window();
  EXPECT_EQ(w.low, entry - 48 - 512);
  EXPECT_TRUE(Kept(w, entry - 24));     // written after big's registers
  EXPECT_FALSE(Stable(w, entry - 24));  // but it held one for a while
  EXPECT_FALSE(Kept(w, entry - 32));    // big's register, never written over
  EXPECT_FALSE(Kept(w, entry - 8));     // small's own saved register
  EXPECT_TRUE(Stable(w, entry - 49));
  EXPECT_FALSE(Kept(w, main_fp));  // main's saved registers
  EXPECT_TRUE(window.WriteIsPrivate(main_fp + 8, 8));
}

// The kernel's frames for a main program at slot 0 and a function at
// `entry`, each with its own prologue.
StackGeometry PerFunction(uint64_t main_prologue, uint32_t entry, uint64_t callee_prologue) {
  StackGeometry geometry{main_prologue, 512 + main_prologue};
  geometry.functions = {{0, 0, main_prologue}, {0, entry, callee_prologue}};
  return geometry;
}

Outcome RunWith(const Case& c, const StackGeometry& geometry) {
  auto prepared = Prepare(SourceOf(c));
  if (!prepared) return {};
  return Interpreter(*prepared->env, prepared->loaded, InterpreterOptions{100'000, 0, geometry}).Run();
}

TEST(oracle_frames, ACalleesFramePointerFollowsItsOwnPrologue) {
  Case c;
  c.programs = {"call local f\nexit\nf:\nmov %r0, %r10\nexit"};
  EXPECT_TRUE(ExitsWith(RunWith(c, PerFunction(64, 2, 16)), kTop - 64 - 512 - 16));
  EXPECT_TRUE(ExitsWith(RunWith(c, PerFunction(16, 2, 64)), kTop - 16 - 512 - 64));
  // Back in main, r10 is main's again.
  c.programs = {"call local f\nmov %r0, %r10\nexit\nf:\nexit"};
  EXPECT_TRUE(ExitsWith(RunWith(c, PerFunction(64, 3, 16)), kTop - 64));
}

TEST(oracle_frames, ATailCallMovesR10ByTheDifferenceOfThePrologues) {
  Case c;
  c.maps = {ProgArray(5, 1, {1})};
  c.programs = {"lddw %r2, map:5\nmov %r3, 0\ntail_call\nmov %r0, 1\nexit", "mov %r0, %r10\nexit"};
  StackGeometry geometry{64, 576};
  geometry.functions = {{0, 0, 64}, {1, 0, 32}};
  // Entered past its tail-call entry, program 1 pushes 32 bytes where
  // program 0 had pushed 64: its r10 is 32 bytes higher.
  EXPECT_TRUE(ExitsWith(RunWith(c, geometry), kTop - 32));
}

TEST(oracle_frames, TheStackIsCapturedThroughTheWindowOfThePath) {
  Case c;
  c.programs = {"stdw [%r10-8], 1\ncall local f\nexit\nf:\nstdw [%r10-512], 2\nmov %r0, 0\nexit"};
  const Outcome outcome = RunWith(c, PerFunction(48, 3, 16));
  ASSERT_TRUE(ExitsWith(outcome, 0));
  const StackWindow& window = outcome.memory.window;
  const uint64_t callee_fp = kTop - 48 - 512 - 16;
  EXPECT_EQ(window.low, callee_fp - 512);
  ASSERT_EQ(outcome.memory.stack.size(), window.keep.size());
  EXPECT_EQ(Read64(outcome.memory.stack, kTop - 48 - 8 - window.low), 1u);
  EXPECT_EQ(Read64(outcome.memory.stack, callee_fp - 512 - window.low), 2u);
  EXPECT_FALSE(outcome.read_engine_private);
}

TEST(oracle_frames, AReadOfAStaleSavedRegisterIsEnginePrivate) {
  Case c;
  // f saves 64 bytes, g 16: g's r10-40 is where f saved a register.
  c.programs = {"call local f\ncall local g\nexit\nf:\nexit\ng:\nldxdw %r0, [%r10-40]\nexit"};
  StackGeometry geometry{16, 528};
  geometry.functions = {{0, 0, 16}, {0, 3, 64}, {0, 4, 16}};
  EXPECT_TRUE(RunWith(c, geometry).read_engine_private);
  // With the model's frames the same read is within g's frame, like any other.
  EXPECT_FALSE(RunWith(c, kGeometry).read_engine_private);
}

// A helper that reads the stack is held to the same rule as a load:
// kptr_xchg of the stale saved register (which the kernel's JIT inlines as
// an exchange on that word).
TEST(oracle_frames, AHelperReadingAStaleSavedRegisterIsEnginePrivate) {
  Case c;
  c.programs = {"call local f\ncall local g\nexit\nf:\nexit\n"
                "g:\nmov %r1, %r10\nadd %r1, -40\nmov %r2, 0\ncall 194\nexit"};
  StackGeometry geometry{16, 528};
  geometry.functions = {{0, 0, 16}, {0, 3, 64}, {0, 4, 16}};
  EXPECT_TRUE(RunWith(c, geometry).read_engine_private);
  // The same exchange on a word g wrote first is the program's own.
  c.programs = {"call local f\ncall local g\nexit\nf:\nexit\n"
                "g:\nstdw [%r10-40], 7\nmov %r1, %r10\nadd %r1, -40\nmov %r2, 0\ncall 194\nexit"};
  const Outcome own = RunWith(c, geometry);
  EXPECT_TRUE(ExitsWith(own, 7));
  EXPECT_FALSE(own.read_engine_private);
}

}  // namespace
}  // namespace bpfdiff::testing
