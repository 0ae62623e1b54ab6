// The kernel's JIT when a service it checks for failure fails: every
// failable call of a compile made to fail in turn, one compile each, in the
// lifecycle world (whose invariants watch the pack through every error
// path). The kernel must refuse the program and hold nothing afterwards, or
// load it whole; the two breaches 6.12 has are known findings (SHIMS.md).
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/lifecycle/world.h"
#include "kernelsrc/kernel_jit.h"
#include "tests/harness/lifecycle/world_test_support.h"

namespace bpfdiff::lifecycle {
namespace {

using namespace world_testing;

std::unique_ptr<World> MakeKernelWorld(std::string_view engine = "kernel-jit") {
  WorldOptions options;
  options.cpus = 1;
  options.jit_engine = engine;
  auto world = World::Create(options);
  EXPECT_TRUE(world) << world.message();
  return world ? std::move(world).value() : nullptr;
}

constexpr std::string_view kOneFunction = R"(
  mov %r0, 7
  exit
)";

// Three functions, two calls: main calls f, f calls g.
constexpr std::string_view kThreeFunctions = R"(
  mov %r1, 2
  call local f
  add %r0, 1
  exit
f:
  mov %r6, %r1
  call local g
  add %r0, %r6
  exit
g:
  mov %r0, 40
  exit
)";

// What failing each failable call in turn did: the service made to fail,
// by call, and whether the program loaded.
struct Sweep {
  std::vector<std::string> injected;  // by call, from 1
  std::vector<std::string> known;     // the known finding met, by call
  uint32_t calls = 0;  // the first call past the compile's: nothing failed
};

Sweep FailEachCall(World& world, std::string_view text) {
  Sweep sweep;
  for (uint32_t call = 1; call < 64; ++call) {
    const World::FailingLoad load = world.LoadFailing(Asm(text), call);
    EXPECT_TRUE(world.violations().empty()) << "call " << call << ": " << Violations(world);
    if (load.id) {
      world.Step(0, *load.id, 1'000'000);
      world.Free(*load.id);
    }
    if (load.injected.empty()) {
      EXPECT_TRUE(load.id) << "nothing failed, yet: " << load.id.message();
      sweep.calls = call;
      return sweep;
    }
    EXPECT_FALSE(load.id) << "call " << call << " (" << load.injected << ") failed, yet the program loaded";
    EXPECT_NE(load.id.message().find(load.injected + " was made to fail"), std::string::npos) << load.id.message();
    sweep.injected.push_back(load.injected);
    sweep.known.push_back(load.known_breach);
  }
  ADD_FAILURE() << "a compile made more than 63 failable calls";
  return sweep;
}

TEST(KernelErrorPaths, EachFailureOfAOneFunctionProgramIsARefusalThatHoldsNothing) {
  auto world = MakeKernelWorld();
  ASSERT_NE(world, nullptr);
  const Sweep sweep = FailEachCall(*world, kOneFunction);
  // jit_data (kzalloc), the offset table (kvcalloc), the image's slot
  // (the charge), and, inside core.c's pack (the world's tail callers made
  // its pack already), the RW buffer (kvmalloc), after which core.c frees
  // the slot it took.
  EXPECT_EQ(sweep.injected,
            (std::vector<std::string>{"kzalloc", "kvcalloc", "bpf_jit_binary_pack_alloc", "kvmalloc"}));
  EXPECT_EQ(sweep.known, (std::vector<std::string>(4, "")));
  world->FreeAll();
  EXPECT_EQ(world->calls_compared(), 1u) << "the load with nothing failed ran";
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

// A failure in the first pass of f or g, after main's first pass: main's
// jit_data goes with bpf_jit_free(), its offset table does not (6.12's
// arm64 bpf_jit_free() has no kvfree of jit_data->ctx.offset). A failure of
// a callee's address in an extra pass frees that function's image and
// leaves it "JITed". Every other failure is a clean refusal.
TEST(KernelErrorPaths, ThreeFunctionsMeetBothKnownFindingsAndNothingElse) {
  auto world = MakeKernelWorld();
  ASSERT_NE(world, nullptr);
  const Sweep sweep = FailEachCall(*world, kThreeFunctions);
  const std::vector<std::string> first_pass = {"kzalloc", "kvcalloc", "bpf_jit_binary_pack_alloc", "kvmalloc"};
  std::vector<std::string> expected;
  for (int function = 0; function < 3; ++function) expected.insert(expected.end(), first_pass.begin(), first_pass.end());
  // The extra passes of main and f each ask for their callee's address,
  // in the pass that measures (2) and in the one that writes (3).
  expected.insert(expected.end(), 4, "bpf_jit_get_func_addr");
  ASSERT_EQ(sweep.injected, expected);

  for (size_t i = 0; i < sweep.injected.size(); ++i) {
    const bool main_first_pass = i < first_pass.size();
    const bool extra_pass = i >= 3 * first_pass.size();
    const std::string want = main_first_pass ? "" : extra_pass ? "freed-image-reported-jited" : "jit-free-leaks-offset-table";
    EXPECT_EQ(sweep.known[i], want) << "call " << i + 1 << " (" << sweep.injected[i] << ")";
    if (!want.empty()) {
      EXPECT_TRUE(kernelsrc::KnownErrorPathBreach(want));
    }
  }
  world->FreeAll();
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

// Under bpf_jit_harden (kernel-jit-blind, the loader chosen by the
// program): core.c's blinding runs first in every bpf_int_jit_compile(),
// and its allocations (the clone, each patch's realloc) can fail too. A
// failure there leaves the program to the interpreter, which bpfdiff's
// world counts as a refusal; a failure after it must release the clone or
// the original, whichever the JIT did not keep (bpf_jit_prog_release_other).
// Either way nothing stays held.
TEST(KernelErrorPaths, BlindingAndItsFailuresHoldNothing) {
  auto world = MakeKernelWorld("kernel-jit-blind");
  ASSERT_NE(world, nullptr);
  std::set<std::string_view> loaders;
  bool blinding_failed = false;
  for (int constant = 1; constant <= 16; ++constant) {
    // Two functions (which no loader without CAP_BPF loads: that row goes
    // to bpf_jit_harden=2), or one.
    const std::string text =
        constant % 2 == 0
            ? fmt::format("mov %r0, {}\nadd %r0, 0x10000\ncall local f\nexit\nf:\nmov %r0, {}\nexit\n",
                          constant * 0x1234567, constant)
            : fmt::format("mov %r0, {}\nadd %r0, 0x10000\nexit\n", constant * 0x1234567);
    const Sweep sweep = FailEachCall(*world, text);
    ASSERT_NE(world->last_loader(), nullptr);
    loaders.insert(world->last_loader()->state);
    const bool blinded = kernelsrc::BlindsConstants(*world->last_loader());
    const auto vmallocs = std::count(sweep.injected.begin(), sweep.injected.end(), "vmalloc");
    // At least each function's clone (bpf_prog_clone_create); a rewrite
    // that outgrows the clone's pages reallocates it too.
    if (blinded) {
      EXPECT_GE(vmallocs, constant % 2 == 0 ? 2 : 1) << text;
      blinding_failed = true;
    } else {
      EXPECT_EQ(vmallocs, 0) << text;
    }
    EXPECT_TRUE(world->violations().empty()) << Violations(*world);
  }
  EXPECT_TRUE(blinding_failed);
  EXPECT_EQ(loaders, (std::set<std::string_view>{"blinded_harden_2", "blinded_harden_1_unprivileged",
                                                  "not_blinded_harden_1_root"}));
  world->FreeAll();
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

// An unknown shape is a finding: the registry explains only the two.
TEST(KernelErrorPaths, OnlyTheExplainedShapesAreKnown) {
  EXPECT_FALSE(kernelsrc::KnownErrorPathBreach("leak"));
  EXPECT_FALSE(kernelsrc::KnownErrorPathBreach("double-free"));
  EXPECT_FALSE(kernelsrc::KnownErrorPathBreach("slot-left-allocated"));
  EXPECT_FALSE(kernelsrc::KnownErrorPathBreach(""));
}

}  // namespace
}  // namespace bpfdiff::lifecycle
