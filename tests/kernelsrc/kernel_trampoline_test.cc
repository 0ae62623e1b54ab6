// Trampolines built by the kernel's own arch code (arch_prepare_bpf_trampoline,
// bpf_arch_text_poke), attached to a program the kernel's JIT compiled, run
// on both executors against the oracle's composition.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cstring>

#include "harness/diff/code_generator.h"
#include "harness/machine/jit_call.h"
#include "harness/machine/vixl_cpu.h"
#include "harness/trampoline/kernel_trampoline.h"
#include "harness/trampoline/stubs.h"
#include "jit/a64/aliases.h"
#include "kernelsrc/kernel_jit.h"
#include "oracle/guest_layout.h"
#include "oracle/trampoline.h"
#include "tests/jit/jit_test_support.h"
#include "tests/kernelsrc/kernel_run.h"

namespace bpfdiff::trampoline {
namespace {

using jit_testing::Asm;

// Every program writes what it saw into the one map value, so that the
// comparison covers each one (not only the traced program's r0).
// The traced program: r0 = r1 * 3 + r2; it records r1..r3 at value[0..24).
constexpr std::string_view kTraced = R"(
  lddw %r6, map_value:1
  stxdw [%r6], %r1
  stxdw [%r6+8], %r2
  stxdw [%r6+16], %r3
  mov %r0, %r1
  mul %r0, 3
  add %r0, %r2
  exit)";

// An attached program that records ctx[slot] at value[at] and returns it
// plus `add`.
std::string Recorder(int slot, int at, int add) {
  return fmt::format(R"(
  mov %r0, 0
  ldxdw %r2, [%r1{:+d}]
  lddw %r6, map_value:1
  stxdw [%r6+{}], %r2
  mov %r0, %r2
  add %r0, {}
  exit)",
                     8 * slot, at, add);
}

// A program that returns `value`, after writing it at value[at].
std::string Returns(int64_t value, int at) {
  return fmt::format(R"(
  lddw %r6, map_value:1
  mov %r0, {}
  stxdw [%r6+{}], %r0
  exit)",
                     value, at);
}

TrampolineCase MakeCase(const std::vector<std::string>& programs, Attachment attachment,
                        std::array<uint64_t, 5> args) {
  TrampolineCase c;
  for (const auto& text : programs) c.source.programs.push_back(Asm(text));
  isa::MapSpec map;
  map.fd = 1;
  map.type = isa::MapType::kArray;
  map.key_size = 4;
  map.value_size = 64;
  map.max_entries = 1;
  c.source.maps.push_back(map);
  c.attachment = std::move(attachment);
  c.args = args;
  return c;
}

struct Executor {
  const char* name;
  MachineFactory factory;
};

std::vector<Executor> Executors() { return {{"unicorn", nullptr}, {"vixl", CreateVixlMachine}}; }

TrampolineVerdict MustRun(const TrampolineCase& c, const Executor& executor, bool replace = false) {
  RunnerOptions options;
  options.machine_factory = executor.factory;
  auto runner = KernelTrampolineRunner::Create(options);
  EXPECT_TRUE(runner.ok()) << runner.message();
  if (!runner) return {};
  TrampolineCase copy = c;
  copy.replace = replace;
  auto verdict = (*runner)->Run(copy);
  EXPECT_TRUE(verdict.ok()) << verdict.message();
  return verdict ? *verdict : TrampolineVerdict{};
}

// The kernel's JIT over `sandbox`'s pack, in the guest's world.
Result<std::unique_ptr<kernelsrc::KernelJit>> KernelJitOver(Sandbox& sandbox) {
  return kernelsrc::KernelJit::Create(sandbox.pack(), sandbox.patcher(), KernelJitWorldOf(sandbox),
                                      jit::AtomicLowering::kLse);
}

// A trampoline of one fentry link (program `attached`) on `traced`, one argument.
kernelsrc::TrampolineRequest OneFentryRequest(uint64_t traced, uint64_t attached) {
  kernelsrc::TrampolineRequest request;
  request.fentry = {{attached, 0, guest::kTrampProgEnterAddress, guest::kTrampProgExitAddress}};
  request.nr_args = 1;
  request.flags = kRestoreRegs;
  request.traced_entry = traced;
  request.tramp_enter = guest::kTrampImageEnterAddress;
  request.tramp_exit = guest::kTrampImageExitAddress;
  return request;
}

// One program, loaded and compiled by the kernel's JIT in a sandbox of its
// own on `executor`.
struct CompiledOne {
  std::unique_ptr<Sandbox> sandbox;
  std::unique_ptr<kernelsrc::KernelJit> jit;
  LoadedCase loaded;
  jit::CompiledProgram compiled;
};

Result<CompiledOne> CompileOn(const Executor& executor, std::string_view text) {
  SandboxOptions options;
  options.machine_factory = executor.factory;
  CompiledOne made;
  made.sandbox = jit_testing::MakeSandbox(options);
  auto jit = KernelJitOver(*made.sandbox);
  if (!jit) return jit.error();
  made.jit = std::move(jit).value();
  CaseSource source;
  source.programs.push_back(Asm(text));
  auto loaded = LoadCase(source);
  if (!loaded) return loaded.error();
  made.loaded = std::move(loaded).value();
  auto compiled = made.jit->Compile(made.loaded.programs[0].program);
  if (!compiled) return compiled.error();
  made.compiled = std::move(compiled).value();
  return made;
}

// The u64 at `offset` of the map value the programs write.
uint64_t ValueAt(const Outcome& outcome, size_t offset) {
  uint64_t value = 0;
  if (offset + 8 <= outcome.memory.map_values.size()) {
    std::memcpy(&value, outcome.memory.map_values.data() + offset, 8);
  }
  return value;
}

// A failure of each service the build calls (the trampoline's slot, the
// arch code's RW image) is the kernel's -ENOMEM, and leaves nothing behind:
// no heap block, no slot in the pack; a failure asked for past the calls
// the build makes is none, and the build succeeds.
TEST(kernel_trampoline, EveryFailingAllocationOfABuildLeavesNothing) {
  auto made = CompileOn(Executors()[0], "mov %r0, %r1\nexit");
  ASSERT_TRUE(made) << made.message();
  const uint64_t traced = made->compiled.entry();
  const jit::PackAccounting before = made->sandbox->pack().Accounting();
  std::vector<std::string> injected;
  for (uint32_t fail_call = 1; fail_call < 10; ++fail_call) {
    kernelsrc::TrampolineRequest request = OneFentryRequest(traced, traced);
    request.fail_call = fail_call;
    kernelsrc::TrampolineErrorPath path;
    auto built = made->jit->BuildTrampoline(request, &path);
    EXPECT_EQ(path.breach, "") << "fail_call " << fail_call;
    if (path.injected.empty()) {
      ASSERT_TRUE(built) << built.message();
      EXPECT_EQ(path.failable_calls, fail_call - 1) << "every failable call counted, none failed";
      made->jit->ReleaseTrampoline(*built);
      break;
    }
    injected.push_back(path.injected);
    ASSERT_FALSE(built) << "a build whose " << path.injected << " failed";
    EXPECT_NE(built.message().find("-12"), std::string::npos) << built.message();  // -ENOMEM
    const jit::PackAccounting after = made->sandbox->pack().Accounting();
    EXPECT_EQ(after.chunks_used, before.chunks_used) << "no slot left after a failed " << path.injected;
    EXPECT_EQ(after.live_rw_buffers, before.live_rw_buffers);
  }
  EXPECT_EQ(injected, (std::vector<std::string>{"bpf_prog_pack_alloc", "kvmalloc"}));
}

TEST(kernel_trampoline, FlagsAndFrameAreTheKernels) {
  Attachment fentry_only;
  fentry_only.fentry = {{1, 0, true}};
  fentry_only.nr_args = 2;
  EXPECT_EQ(Flags(fentry_only), kRestoreRegs);
  // run_ctx 16, count 8, two arguments, x19/x20: 56 bytes, rounded to 64.
  EXPECT_EQ(FrameOf(fentry_only).args_off, 24u);
  EXPECT_EQ(FrameOf(fentry_only).stack_size, 64u);
  Attachment fexit = fentry_only;
  fexit.fexit = {{2, 0, true}};
  fexit.ip_arg = true;
  EXPECT_EQ(Flags(fexit), kCallOrig | kSkipFrame | kIpArg);
  // run_ctx 16, ip 8, count 8, arguments 16, retval 8, x19/x20 16 = 72 -> 80.
  EXPECT_EQ(FrameOf(fexit).ip_off, 16u);
  EXPECT_EQ(FrameOf(fexit).args_off, 32u);
  EXPECT_EQ(FrameOf(fexit).retval_off, 48u);
  EXPECT_EQ(FrameOf(fexit).stack_size, 80u);
  // bpf_struct_ops_prepare_trampoline(): called through a pointer, one
  // frame record, the program's r0 returned (RET_FENTRY_RET): run_ctx 16,
  // count 8, two arguments, retval 8, x19/x20 16 = 64.
  Attachment struct_ops = fentry_only;
  struct_ops.struct_ops = true;
  EXPECT_EQ(Flags(struct_ops), kIndirect | kRetFentryRet);
  EXPECT_EQ(FrameOf(fentry_only).pushed_bytes, 32u);
  EXPECT_EQ(FrameOf(struct_ops).pushed_bytes, 16u);
  EXPECT_EQ(FrameOf(struct_ops).retval_off, 40u);
  EXPECT_EQ(FrameOf(struct_ops).stack_size, 64u);
}

// The struct_ops trampoline, called directly with the arguments: its one
// program sees them as its context, and the caller gets the program's r0.
// Program 0 is not called through it.
TEST(kernel_trampoline, AStructOpsTrampolineReturnsItsProgramsR0) {
  Attachment a;
  a.struct_ops = true;
  a.nr_args = 3;
  a.fentry = {{1, 0x5151, true}};
  const TrampolineCase c = MakeCase({std::string(kTraced), Recorder(2, 32, 1000)}, a, {7, 100, 5, 0, 0});
  for (const Executor& e : Executors()) {
    const TrampolineVerdict v = MustRun(c, e);
    EXPECT_TRUE(v.match()) << e.name << ": " << v.Describe();
    EXPECT_EQ(v.outcome.end, EndKind::kExit) << v.outcome.Summary();
    EXPECT_EQ(v.outcome.r0, 1005u) << e.name;
    EXPECT_EQ(ValueAt(v.outcome, 32), 5u) << e.name;
    EXPECT_EQ(ValueAt(v.outcome, 0), 0u) << e.name << ": program 0 ran";
    EXPECT_EQ(v.log, (std::vector<uint64_t>{0x5151, ~uint64_t{0x5151}})) << e.name;
  }
  // What a struct_ops trampoline cannot hold is refused with the reason.
  RunnerOptions options;
  auto runner = KernelTrampolineRunner::Create(options);
  ASSERT_TRUE(runner.ok()) << runner.message();
  TrampolineCase two = c;
  two.source.programs.push_back(two.source.programs[1]);
  two.attachment.fentry.push_back({2, 0, true});
  auto refused = (*runner)->Run(two);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("exactly one program"), std::string::npos) << refused.message();
  TrampolineCase missing = c;
  missing.attachment.fentry[0].runs = false;
  refused = (*runner)->Run(missing);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("recursion miss"), std::string::npos) << refused.message();
}

// freplace: the traced program's entry becomes a `b` to the extension
// (BPF_MOD_JUMP), which runs in its place with its arguments and returns
// to its caller; detached, the traced program runs again.
TEST(kernel_trampoline, AnExtensionReplacesTheTracedProgram) {
  // The extension: r0 = r1 - r2, and r1..r3 recorded at value[32..56).
  constexpr std::string_view kExtension = R"(
  lddw %r6, map_value:1
  stxdw [%r6+32], %r1
  stxdw [%r6+40], %r2
  stxdw [%r6+48], %r3
  mov %r0, %r1
  sub %r0, %r2
  exit)";
  Attachment a;
  a.nr_args = 3;
  a.freplace = 1;
  const TrampolineCase c = MakeCase({std::string(kTraced), std::string(kExtension)}, a, {700, 100, 5, 0, 0});
  for (const Executor& e : Executors()) {
    const TrampolineVerdict v = MustRun(c, e);
    EXPECT_TRUE(v.match()) << e.name << ": " << v.Describe();
    EXPECT_EQ(v.outcome.end, EndKind::kExit) << v.outcome.Summary();
    EXPECT_EQ(v.outcome.r0, 600u) << e.name;
    EXPECT_EQ(ValueAt(v.outcome, 48), 5u) << e.name;
    EXPECT_EQ(ValueAt(v.outcome, 0), 0u) << e.name << ": the traced program ran";
    EXPECT_TRUE(v.log.empty()) << e.name << ": no trampoline, nothing logged";
    EXPECT_EQ(v.trampoline_entry, 0u);
  }
  // An extension is the only program attached to its target.
  RunnerOptions options;
  auto runner = KernelTrampolineRunner::Create(options);
  ASSERT_TRUE(runner.ok()) << runner.message();
  TrampolineCase with_fentry = c;
  with_fentry.source.programs.push_back(Asm(Recorder(0, 8, 0)));
  with_fentry.attachment.fentry = {{2, 0, true}};
  auto refused = (*runner)->Run(with_fentry);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("only program attached"), std::string::npos) << refused.message();
}

// A trampoline, or an extension, more than 128 MiB from the traced program
// (a far slot, jit::Placement::kFar) is reached through the traced image's
// PLT: `bl` (or `b`) to the PLT, whose `ldr x10; br x10` lands on the
// target's `bti jc`. The outcome is the same as near; so after a replace
// from a far first trampoline to a near one, and back.
TEST(kernel_trampoline, AFarTrampolineOrExtensionIsReachedThroughThePlt) {
  Attachment fexit;
  fexit.nr_args = 2;
  fexit.fentry = {{1, 0x11, true}};
  fexit.fexit = {{2, 0x22, true}};
  const TrampolineCase traced =
      MakeCase({std::string(kTraced), Recorder(1, 32, 0), Recorder(2, 40, 0)}, fexit, {7, 100, 0, 0, 0});
  Attachment replace;
  replace.nr_args = 3;
  replace.freplace = 1;
  const TrampolineCase extended = MakeCase({std::string(kTraced), Returns(77, 48)}, replace, {7, 100, 5, 0, 0});
  for (const Executor& e : Executors()) {
    for (const auto& [far, first_far] : {std::pair{true, false}, std::pair{true, true}, std::pair{false, true}}) {
      TrampolineCase c = traced;
      c.far = far;
      c.first_far = first_far;
      const TrampolineVerdict v = MustRun(c, e, /*replace=*/first_far);
      EXPECT_TRUE(v.match()) << e.name << " far " << far << " first far " << first_far << ": " << v.Describe();
      EXPECT_EQ(v.outcome.r0, 121u) << e.name;
      EXPECT_EQ(ValueAt(v.outcome, 32), 100u) << e.name << ": the fentry program did not run";
      EXPECT_EQ(ValueAt(v.outcome, 40), 121u) << e.name << ": the fexit program did not run";
      const uint64_t distance = v.trampoline_entry > v.trampoline_traced ? v.trampoline_entry - v.trampoline_traced
                                                                          : v.trampoline_traced - v.trampoline_entry;
      EXPECT_EQ(distance > (uint64_t{128} << 20), far) << e.name << ": 0x" << std::hex << distance;
    }
    TrampolineCase c = extended;
    c.far = true;
    const TrampolineVerdict v = MustRun(c, e);
    EXPECT_TRUE(v.match()) << e.name << ": " << v.Describe();
    EXPECT_EQ(v.outcome.r0, 77u) << e.name;
    EXPECT_EQ(ValueAt(v.outcome, 0), 0u) << e.name << ": the traced program ran";
  }
}

// BTI on guarded pages (jit/a64/branch_targets.h): a program is called by
// bpf_prog_run's `blr`, which must land on its entry's `bti jc`; with that
// word made a nop, the call ends in a Branch Target trap on both
// executors. 6.12 calls a subprogram with a direct `bl` (emit_call, in
// range), which sets no BTYPE: a nop at the callee's entry is no fault.
TEST(kernel_trampoline, ABlrOntoAWordThatIsNoLandingPadIsABranchTargetTrap) {
  for (const Executor& e : Executors()) {
    for (const int broken : {-1, 0, 1}) {  // none, the entry's pad, the callee's
      auto made = CompileOn(e, "mov %r1, 5\ncall local f\nadd %r0, 1\nexit\nf:\nmov %r0, %r1\nexit");
      ASSERT_TRUE(made.ok()) << made.message();
      auto& [sandbox, jit, loaded, compiled] = *made;
      ASSERT_EQ(compiled.subprograms.size(), 2u);
      GuestEnvironment& env = sandbox->env();
      for (const auto& sub : compiled.subprograms) {
        uint32_t entry_word = 0;
        std::memcpy(&entry_word, env.memory().HostPointer(sub.rx_image, 4), 4);
        EXPECT_EQ(entry_word, 0xd50324dfu) << "bti jc";
      }
      const uint64_t nop_at = broken < 0 ? 0 : compiled.subprograms[static_cast<size_t>(broken)].rx_image;
      if (nop_at != 0) env.memory().Store<uint32_t>(nop_at, 0xd503201f);
      auto run = RunOnKernelConventions(*sandbox, loaded, compiled);
      ASSERT_TRUE(run.ok()) << run.message();
      const Outcome& outcome = *run;
      if (broken != 0) {
        EXPECT_EQ(outcome.end, EndKind::kExit) << e.name << " " << broken << ": " << outcome.Summary();
        EXPECT_EQ(outcome.r0, 6u) << e.name;
      } else {
        EXPECT_EQ(outcome.end, EndKind::kTrap) << e.name << ": " << outcome.Summary();
        EXPECT_NE(outcome.message.find("the call's entry: Branch Target exception: the blr (BTYPE 10)"),
                  std::string::npos) << e.name << ": " << outcome.message;
        EXPECT_NE(outcome.message.find(fmt::format("landed on 0x{:x} (0xd503201f)", nop_at)), std::string::npos)
            << e.name << ": " << outcome.message;
      }
      (void)jit->Release(compiled);
    }
  }
}

// The frame chain (CodeConventions::frame_records): at a helper call the
// kernel's frames unwind to the caller's. With the prologue's frame record
// made to hold x10 (0 here) where lr belongs, the next call out reports the
// record that returns to no code, on both executors, and the run ends in
// that trap (not in the return to 0 that follows).
TEST(kernel_trampoline, AFrameRecordThatReturnsToNoCodeIsReportedAtTheNextCall) {
  constexpr uint32_t kPushFrameRecord = 0xa9bf7bfd;  // stp x29, x30, [sp, #-16]!
  constexpr uint32_t kPushFpAndX10 = 0xa9bf2bfd;     // stp x29, x10, [sp, #-16]!
  for (const Executor& e : Executors()) {
    for (const bool broken : {false, true}) {
      auto made = CompileOn(e, "mov %r0, 0\ncall 7\nmov %r0, 5\nexit");
      ASSERT_TRUE(made.ok()) << made.message();
      auto& [sandbox, jit, loaded, compiled] = *made;
      GuestEnvironment& env = sandbox->env();
      const auto& sub = compiled.subprograms[0];
      uint64_t push_at = 0;
      for (size_t i = 0; i < sub.words.size() && push_at == 0; ++i) {
        if (sub.words[i] == kPushFrameRecord) push_at = sub.rx_image + 4 * i;
      }
      ASSERT_NE(push_at, 0u) << "the prologue pushes a frame record";
      if (broken) env.memory().Store<uint32_t>(push_at, kPushFpAndX10);
      auto run = RunOnKernelConventions(*sandbox, loaded, compiled);
      ASSERT_TRUE(run.ok()) << run.message();
      const Outcome& outcome = *run;
      if (!broken) {
        EXPECT_EQ(outcome.end, EndKind::kExit) << e.name << ": " << outcome.Summary();
        EXPECT_EQ(outcome.r0, 5u) << e.name;
      } else {
        EXPECT_EQ(outcome.end, EndKind::kTrap) << e.name << ": " << outcome.Summary();
        EXPECT_NE(outcome.message.find(fmt::format("the frame chain does not unwind at the call of 0x{:x}",
                                                   guest::HelperAddress(7))),
                  std::string::npos)
            << e.name << ": " << outcome.message;
        EXPECT_NE(outcome.message.find("returns to 0x0, which is not code"), std::string::npos)
            << e.name << ": " << outcome.message;
      }
      (void)jit->Release(compiled);
    }
  }
}

TEST(kernel_trampoline, StubsEncode) {
  for (const Stub stub : {Stub::kProgEnter, Stub::kProgEnterMiss, Stub::kProgExit, Stub::kImageEnter,
                          Stub::kImageExit}) {
    const std::vector<uint32_t> code = StubCode(stub);
    ASSERT_FALSE(code.empty());
    EXPECT_LE(code.size() * 4, guest::kTrampStubBytes);
    for (const uint32_t word : code) EXPECT_NE(word, a64::kBreakFault);
  }
}

// The stubs check what they are handed: an exit whose prog, run_ctx or
// start time is not what its enter got or answered traps, as does an image
// call handed another image; what passes returns and logs.
TEST(kernel_trampoline, StubsCheckWhatTheyAreHanded) {
  for (const Executor& e : Executors()) {
    SandboxOptions options;
    options.machine_factory = e.factory;
    auto sandbox = jit_testing::MakeSandbox(options);
    GuestMemory& memory = sandbox->env().memory();
    ASSERT_TRUE(InstallStubs(memory).ok());
    Machine& machine = sandbox->machine(0);
    const uint64_t run_ctx = guest::StackTop(0) - 0x100;
    const uint64_t per_cpu = guest::PerCpuArea(0);
    const auto call = [&](uint64_t stub, std::array<uint64_t, 5> args) {
      EXPECT_TRUE(machine.PrepareCall(stub, args, guest::StackTop(0)).ok());
      return machine.Resume(1000);
    };
    memory.Store<uint64_t>(run_ctx, 0x77);  // the cookie
    ResetLog(memory, 0);
    EXPECT_EQ(call(guest::kTrampProgEnterAddress, {0x1234, run_ctx, 0, 0, 0}).kind, MachineStop::Kind::kReturned)
        << e.name;
    const uint64_t start = guest::kTrampStartTag | 1;  // the first event of the log
    EXPECT_EQ(machine.ReadX(0), start) << e.name;
    EXPECT_EQ(machine.ReadX(1), StubClobber(1)) << e.name;
    // Another prog, another start time (the run_ctx, what the stubs
    // answered before; 0, a miss's), another run_ctx: each traps.
    for (const auto& args : {std::array<uint64_t, 5>{0x9999, start, run_ctx, 0, 0},
                             std::array<uint64_t, 5>{0x1234, run_ctx, run_ctx, 0, 0},
                             std::array<uint64_t, 5>{0x1234, 0, run_ctx, 0, 0},
                             std::array<uint64_t, 5>{0x1234, start + 1, run_ctx, 0, 0},
                             std::array<uint64_t, 5>{0x1234, start, run_ctx + 16, 0, 0}}) {
      EXPECT_EQ(call(guest::kTrampProgExitAddress, args).kind, MachineStop::Kind::kException) << e.name;
    }
    EXPECT_EQ(call(guest::kTrampProgExitAddress, {0x1234, start, run_ctx, 0, 0}).kind,
              MachineStop::Kind::kReturned) << e.name;
    EXPECT_EQ(ReadLog(memory, 0), (std::vector<uint64_t>{0x77, ~uint64_t{0x77}})) << e.name;
    // A miss answers 0, and its exit must be handed exactly 0.
    EXPECT_EQ(call(guest::kTrampProgEnterMissAddress, {0x1234, run_ctx, 0, 0, 0}).kind,
              MachineStop::Kind::kReturned) << e.name;
    EXPECT_EQ(machine.ReadX(0), 0u) << e.name;
    EXPECT_EQ(call(guest::kTrampProgExitAddress, {0x1234, start, run_ctx, 0, 0}).kind,
              MachineStop::Kind::kException) << e.name;
    EXPECT_EQ(call(guest::kTrampProgExitAddress, {0x1234, 0, run_ctx, 0, 0}).kind,
              MachineStop::Kind::kReturned) << e.name;
    memory.Store<uint64_t>(per_cpu + guest::kTrampImageObjectOffset, 0x3b7000000000);
    EXPECT_EQ(call(guest::kTrampImageEnterAddress, {0x3b7000000000, 0, 0, 0, 0}).kind,
              MachineStop::Kind::kReturned) << e.name;
    EXPECT_EQ(call(guest::kTrampImageExitAddress, {0xffff3b7000000000, 0, 0, 0, 0}).kind,
              MachineStop::Kind::kException) << e.name;
  }
}

// fentry programs see the arguments; the traced program then runs with them
// restored, and its r0 is the caller's.
TEST(kernel_trampoline, FentryProgramsSeeTheArgumentsAndTheTracedProgramRuns) {
  Attachment a;
  a.nr_args = 3;
  a.fentry = {{1, 0x1111, true}, {2, 0x2222, true}};
  const TrampolineCase c =
      MakeCase({std::string(kTraced), Recorder(0, 32, 0), Recorder(2, 40, 0)}, a, {7, 100, 5, 0, 0});
  for (const Executor& e : Executors()) {
    const TrampolineVerdict v = MustRun(c, e);
    EXPECT_TRUE(v.match()) << e.name << ": " << v.Describe();
    EXPECT_NE(v.trampoline_entry, 0u);
    EXPECT_GT(v.trampoline_words, 0u);
    EXPECT_EQ(v.outcome.end, EndKind::kExit) << v.outcome.Summary();
    EXPECT_EQ(v.outcome.r0, 7u * 3 + 100);
    EXPECT_EQ(ValueAt(v.outcome, 32), 7u);  // ctx[0]
    EXPECT_EQ(ValueAt(v.outcome, 40), 5u);  // ctx[2]
    EXPECT_EQ(ValueAt(v.outcome, 16), 5u);  // the traced program's r3, restored
    EXPECT_EQ(v.log, (std::vector<uint64_t>{0x1111, ~uint64_t{0x1111}, 0x2222, ~uint64_t{0x2222}}));
  }
}

// fexit programs see the arguments and the return value after them.
TEST(kernel_trampoline, FexitProgramsSeeTheReturnValue) {
  Attachment a;
  a.nr_args = 2;
  a.fentry = {{1, 7, true}};
  a.fexit = {{2, 9, true}, {3, 11, true}};
  const TrampolineCase c = MakeCase(
      {std::string(kTraced), Recorder(1, 32, 0), Recorder(2, 40, 0), Recorder(0, 48, 0)}, a, {7, 100, 0, 0, 0});
  for (const Executor& e : Executors()) {
    const TrampolineVerdict v = MustRun(c, e);
    EXPECT_TRUE(v.match()) << e.name << ": " << v.Describe();
    EXPECT_EQ(v.outcome.r0, 121u) << v.outcome.Summary();
    EXPECT_EQ(ValueAt(v.outcome, 32), 100u);  // fentry: ctx[1]
    EXPECT_EQ(ValueAt(v.outcome, 40), 121u);  // fexit: ctx[2], the return value
    EXPECT_EQ(ValueAt(v.outcome, 48), 7u);
    EXPECT_EQ(v.log, (std::vector<uint64_t>{kImageEnterMark, 7, ~uint64_t{7}, 9, ~uint64_t{9}, 11, ~uint64_t{11},
                                            kImageExitMark}));
  }
}

// An fmod_ret program that returns non-zero skips the traced program and
// the fmod_ret programs after it; its value is the caller's r0; fexit runs.
TEST(kernel_trampoline, FmodRetSkipsTheOriginal) {
  for (const int64_t first : {0, 0x55}) {
    Attachment a;
    a.nr_args = 1;
    a.fmod_ret = {{1, 1, true}, {2, 2, true}};
    a.fexit = {{3, 3, true}};
    const TrampolineCase c =
        MakeCase({std::string(kTraced), Returns(first, 32), Returns(0x66, 40), Recorder(1, 48, 0)}, a,
                 {4, 0, 0, 0, 0});
    for (const Executor& e : Executors()) {
      const TrampolineVerdict v = MustRun(c, e, /*replace=*/first != 0);
      EXPECT_TRUE(v.match()) << e.name << " first=" << first << ": " << v.Describe();
      const uint64_t expected = first != 0 ? first : 0x66;
      EXPECT_EQ(v.outcome.r0, expected) << v.outcome.Summary();
      EXPECT_EQ(ValueAt(v.outcome, 0), 0u);  // the traced program never ran
      EXPECT_EQ(ValueAt(v.outcome, 40), first != 0 ? 0u : 0x66u);
      EXPECT_EQ(ValueAt(v.outcome, 48), expected);  // fexit saw the fmod_ret's value
    }
  }
}

// A program whose enter reports a recursion miss does not run; its exit
// still does; the others run.
TEST(kernel_trampoline, AMissedProgramIsSkipped) {
  Attachment a;
  a.nr_args = 8;
  a.ip_arg = true;
  a.fentry = {{1, 0xaaaa, false}, {2, 0xbbbb, true}};
  a.fmod_ret = {{3, 0xcccc, false}};
  a.fexit = {{4, 0xdddd, true}};
  const TrampolineCase c = MakeCase({std::string(kTraced), Recorder(0, 32, 0), Recorder(-2, 40, 0),
                                     Returns(9, 48), Recorder(-1, 56, 0)},
                                    a, {1, 2, 3, 4, 5});
  for (const Executor& e : Executors()) {
    const TrampolineVerdict v = MustRun(c, e);
    EXPECT_TRUE(v.match()) << e.name << ": " << v.Describe();
    EXPECT_EQ(v.outcome.r0, 5u) << v.outcome.Summary();
    EXPECT_EQ(ValueAt(v.outcome, 32), 0u);  // missed
    EXPECT_EQ(ValueAt(v.outcome, 40), 0xffff'0000'0000'0000 | v.trampoline_traced);  // ctx[-2]: the ip
    EXPECT_EQ(ValueAt(v.outcome, 48), 0u);  // missed
    EXPECT_EQ(ValueAt(v.outcome, 56), 8u);  // ctx[-1]: the argument count
  }
}

// The oracle is not the JIT's echo: a wrong expectation is a divergence.
TEST(kernel_trampoline, TheOracleTellsTheKindsOfLinkApart) {
  // The same program attached as fmod_ret and as fentry composes into
  // different outcomes and logs, so a trampoline that built one for the
  // other could not match the oracle.
  Attachment a;
  a.nr_args = 1;
  a.fmod_ret = {{1, 1, true}};
  const TrampolineCase c = MakeCase({std::string(kTraced), Returns(0x55, 32)}, a, {4, 0, 0, 0, 0});
  Attachment as_fentry = a;
  as_fentry.fentry = as_fentry.fmod_ret;
  as_fentry.fmod_ret.clear();
  auto sandbox = jit_testing::MakeSandbox();
  auto loaded = LoadCase(c.source);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  GuestEnvironment& env = sandbox->env();
  env.Install(*loaded);
  RunSpec spec;
  spec.args = c.args;
  spec.geometry = Sandbox::Geometry();
  env.ResetForRun(0);
  const AttachedRun modret = RunAttached(env, *loaded, a, spec);
  env.ResetForRun(0);
  const AttachedRun fentry = RunAttached(env, *loaded, as_fentry, spec);
  EXPECT_EQ(modret.outcome.r0, 0x55u);
  EXPECT_EQ(modret.log, (std::vector<uint64_t>{kImageEnterMark, 1, ~uint64_t{1}, kImageExitMark}));
  // 4 * 3 + r2, which the trampoline does not restore (one argument):
  // what the last stub left in x1.
  EXPECT_EQ(fentry.outcome.r0, 12u + StubClobber(1));
  EXPECT_EQ(fentry.log, (std::vector<uint64_t>{1, ~uint64_t{1}}));
}

// bpf_arch_text_poke: the entry's nop becomes a bl to the trampoline, and
// the nop again once it is detached; a poke whose old word is not there is
// refused, as the kernel refuses it. A far trampoline is reached through
// the image's PLT.
TEST(kernel_trampoline, PokeWritesTheEntryOrThePltTargetAndChecksTheOldWord) {
  auto sandbox = jit_testing::MakeSandbox();
  auto created = KernelJitOver(*sandbox);
  ASSERT_TRUE(created.ok()) << created.message();
  kernelsrc::KernelJit& jit = **created;
  auto traced = jit.Compile(jit_testing::MustProgram(Asm("mov %r0, 1\nexit")));
  auto attached = jit.Compile(jit_testing::MustProgram(Asm("mov %r0, 2\nexit")));
  ASSERT_TRUE(traced.ok() && attached.ok());
  kernelsrc::TrampolineRequest request = OneFentryRequest(traced->entry(), attached->entry());
  auto trampoline = jit.BuildTrampoline(request);
  ASSERT_TRUE(trampoline.ok()) << trampoline.message();
  EXPECT_GT(trampoline->code_bytes, 0u);
  EXPECT_LE(trampoline->code_bytes, trampoline->size);
  EXPECT_EQ(trampoline->words.size() * 4, trampoline->code_bytes);

  const auto& sub = traced->subprograms[0];
  const uint64_t site = sub.rx_image + 8;  // bti jc; mov x9, x30; nop
  const auto word_at = [&](uint64_t address) {
    uint32_t word = 0;
    std::memcpy(&word, sandbox->env().memory().HostPointer(address, 4), 4);
    return word;
  };
  EXPECT_EQ(word_at(site), a64::Nop());
  ASSERT_TRUE(jit.PokeEntry(sub, 0, trampoline->entry).ok());
  EXPECT_EQ(word_at(site), a64::Bl(static_cast<int64_t>(trampoline->entry - site)));
  // The old word is the nop no longer: poking from nothing again is refused.
  EXPECT_FALSE(jit.PokeEntry(sub, 0, trampoline->entry).ok());
  ASSERT_TRUE(jit.PokeEntry(sub, trampoline->entry, 0).ok());
  EXPECT_EQ(word_at(site), a64::Nop());
  jit.ReleaseTrampoline(*trampoline);

  // A target beyond a `bl`: the entry becomes a `bl` to the image's PLT,
  // and the kernel stores the target into the PLT (WRITE_ONCE, through the
  // world); between two far targets only that store changes; poked back
  // near or to the nop, the target is dummy_tramp again.
  request.placement = jit::Placement::kFar;
  auto far1 = jit.BuildTrampoline(request);
  auto far2 = jit.BuildTrampoline(request);
  request.placement = jit::Placement::kPacked;
  auto near = jit.BuildTrampoline(request);
  ASSERT_TRUE(far1.ok() && far2.ok() && near.ok());
  EXPECT_GE(far1->entry, guest::kOversizeBase);
  EXPECT_LT(near->entry, guest::kOversizeBase);
  const uint64_t plt = sub.rx_image + sub.code_words * 4 - 8;  // ldr x10, #8; br x10; .quad target
  const auto target = [&]() {
    uint64_t value = 0;
    std::memcpy(&value, sandbox->env().memory().HostPointer(plt + 8, 8), 8);
    return value;
  };
  EXPECT_EQ(word_at(plt), 0x5800004au);  // ldr x10, #8
  EXPECT_EQ(target(), guest::kDummyTrampAddress);
  ASSERT_TRUE(jit.PokeEntry(sub, 0, far1->entry).ok());
  EXPECT_EQ(word_at(site), a64::Bl(static_cast<int64_t>(plt - site)));
  EXPECT_EQ(target(), far1->entry);
  ASSERT_TRUE(jit.PokeEntry(sub, far1->entry, far2->entry).ok());
  EXPECT_EQ(word_at(site), a64::Bl(static_cast<int64_t>(plt - site)));
  EXPECT_EQ(target(), far2->entry);
  ASSERT_TRUE(jit.PokeEntry(sub, far2->entry, near->entry).ok());
  EXPECT_EQ(word_at(site), a64::Bl(static_cast<int64_t>(near->entry - site)));
  EXPECT_EQ(target(), guest::kDummyTrampAddress);
  ASSERT_TRUE(jit.PokeEntry(sub, near->entry, far1->entry).ok());
  ASSERT_TRUE(jit.PokeEntry(sub, far1->entry, 0).ok());
  EXPECT_EQ(word_at(site), a64::Nop());
  EXPECT_EQ(target(), guest::kDummyTrampAddress);
  for (auto* t : {&*far1, &*far2, &*near}) jit.ReleaseTrampoline(*t);
  EXPECT_TRUE(jit.Release(*traced).ok());
  EXPECT_TRUE(jit.Release(*attached).ok());
}

}  // namespace
}  // namespace bpfdiff::trampoline
