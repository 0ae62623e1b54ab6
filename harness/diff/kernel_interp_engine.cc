#include "harness/diff/kernel_interp_engine.h"

#include <signal.h>
#include <ucontext.h>

#include <array>
#include <atomic>
#include <csetjmp>
#include <cstring>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "harness/machine/identity_view.h"
#include "kernelsrc/kernel_interpreter.h"
#include "oracle/helpers.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BPFDIFF_FIBER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define BPFDIFF_FIBER_ASAN 1
#endif
#ifdef BPFDIFF_FIBER_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace bpfdiff {
namespace {

// Every function of every program gets MAX_BPF_STACK, as the kernel
// engines give it (kernelsrc::kStackDepth): one interpreter,
// __bpf_prog_run_args512, at every depth, so the frames are evenly spaced.
constexpr uint32_t kFunctionStack = isa::kStackSize;

// ---- The stack the interpreter runs on -------------------------------------

// Why the interpreter's stack (the fiber) gave control back: the end of
// the run, BUG() in the kernel's code, a fault, or a helper that ended it.
enum class FiberStop : uint8_t { kReturned, kStopped, kFault, kHelper };

// What a helper call answers: a value to resume with, or the end of the run.
struct HelperAnswer {
  bool resume = true;
  uint64_t value = 0;
};
using HelperServer = HelperAnswer (*)(void* server, int32_t id, const HelperArgs& args);

struct FiberRun {
  ucontext_t caller{};
  ucontext_t fiber{};
  bool on_fiber = false;  // the interpreter's code is running (not a helper's)
  // In: what to run, and who serves its helper calls.
  const void* insns = nullptr;
  std::array<uint64_t, 5> args{};
  HelperServer serve = nullptr;
  void* server = nullptr;
  GuestMemory* memory = nullptr;  // what the probe reads read
  const kernelsrc::KernelTree* tree = nullptr;  // whose interpreter runs
  // Out: why the fiber stopped.
  FiberStop stop = FiberStop::kReturned;
  uint64_t r0 = 0;
  std::string message;
  uint64_t fault_address = 0;
  bool fault_write = false;
  uint64_t fault_pc = 0;
  // The caller's stack, for AddressSanitizer's account of the switch back,
  // and the two stacks of the run (Impl::RunOnFiber), for its account of
  // the assembly's switches between them.
  const void* caller_bottom = nullptr;
  size_t caller_size = 0;
  const void* fiber_bottom = nullptr;
  size_t fiber_size = 0;
  const void* calls_bottom = nullptr;
  size_t calls_size = 0;
};

thread_local FiberRun* t_run = nullptr;

// AddressSanitizer follows a switch of stacks only when told.
void StartSwitch([[maybe_unused]] void** fake_stack, [[maybe_unused]] const void* bottom,
                 [[maybe_unused]] size_t size) {
#ifdef BPFDIFF_FIBER_ASAN
  __sanitizer_start_switch_fiber(fake_stack, bottom, size);
#endif
}
void FinishSwitch([[maybe_unused]] void* fake_stack, [[maybe_unused]] const void** from_bottom = nullptr,
                  [[maybe_unused]] size_t* from_size = nullptr) {
#ifdef BPFDIFF_FIBER_ASAN
  __sanitizer_finish_switch_fiber(fake_stack, from_bottom, from_size);
#endif
}

// Tells AddressSanitizer that the code now runs on [bottom, bottom +
// size): the assembly switches between the interpreter's stack and the
// calls' without telling it, and a function that does not return (a
// longjmp, setcontext) makes it clean the stack it believes is current.
// The fake stack (use-after-return detection's frames) stays the one in
// use: saved at the start, given back at the finish.
void NowOnStack([[maybe_unused]] const void* bottom, [[maybe_unused]] size_t size) {
#ifdef BPFDIFF_FIBER_ASAN
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, bottom, size);
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
}

// Back to the caller's stack for good, from the fiber (or a stack it
// switched to), with `run.stop` set.
[[noreturn]] void LeaveFiber(FiberRun& run) {
  run.on_fiber = false;
  StartSwitch(nullptr, run.caller_bottom, run.caller_size);
  setcontext(&run.caller);
  __builtin_unreachable();
}

extern "C" [[noreturn]] void bpfdiff_kinterp_enter(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
                                                  const void* insns);

// The fiber's function: the run's session, then the interpreter through
// bpfdiff_kinterp_enter, which leaves the fiber for good when it returns
// (bpfdiff_kinterp_finished), so that nothing runs on the interpreter's
// stack after it and over its frames, which the comparison reads.
void FiberMain() {
  FiberRun& run = *t_run;
  FinishSwitch(nullptr, &run.caller_bottom, &run.caller_size);
  if (setjmp(kernelsrc::BeginInterpreterRun(run.tree)) != 0) {  // BUG() in the kernel's code
    run.message = kernelsrc::EndInterpreterRun(run.tree);
    run.stop = FiberStop::kStopped;
    LeaveFiber(run);
  }
  bpfdiff_kinterp_enter(run.args[0], run.args[1], run.args[2], run.args[3], run.args[4], run.insns);
}

extern "C" [[noreturn]] void bpfdiff_kinterp_finished(uint64_t r0) {
  FiberRun& run = *t_run;
  NowOnStack(run.calls_bottom, run.calls_size);
  run.on_fiber = false;
  run.r0 = r0;
  run.stop = FiberStop::kReturned;
  run.message = kernelsrc::EndInterpreterRun(run.tree);
  LeaveFiber(run);
}

// A plain access of the interpreter that faults: the kernel would oops.
// The run ends there; any other fault is not the interpreter's, and gets
// the handler that was there before.
struct sigaction g_previous_segv, g_previous_bus;

void OnFault(int signal, siginfo_t* info, void* context) {
  FiberRun* run = t_run;
  if (run == nullptr || !run->on_fiber) {
    sigaction(signal, signal == SIGSEGV ? &g_previous_segv : &g_previous_bus, nullptr);
    return;  // the access faults again, under the previous handler
  }
  run->stop = FiberStop::kFault;
  run->fault_address = reinterpret_cast<uint64_t>(info->si_addr);
#if defined(__x86_64__)
  const auto* uc = static_cast<const ucontext_t*>(context);
  run->fault_write = (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;  // the page fault's W/R bit
  run->fault_pc = static_cast<uint64_t>(uc->uc_mcontext.gregs[REG_RIP]);
#else
  (void)context;
#endif
  LeaveFiber(*run);
}

// The fault handler for the runs of one scope.
class FaultHandlerScope {
 public:
  FaultHandlerScope() {
    struct sigaction action {};
    action.sa_sigaction = OnFault;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, &g_previous_segv);
    sigaction(SIGBUS, &action, &g_previous_bus);
  }
  ~FaultHandlerScope() {
    sigaction(SIGSEGV, &g_previous_segv, nullptr);
    sigaction(SIGBUS, &g_previous_bus, nullptr);
  }
  FaultHandlerScope(const FaultHandlerScope&) = delete;
  FaultHandlerScope& operator=(const FaultHandlerScope&) = delete;
};

// ---- Calls out of the interpreter -----------------------------------------
//
// The interpreter's stack is where the comparison reads its BPF frames, and
// each frame is core.c's `u64 stack[]` of a __bpf_prog_run_args512, right
// below the ___bpf_prog_run that calls it: measured, 16 bytes below that
// caller's stack pointer. Whatever else ___bpf_prog_run calls (a helper,
// bpf_probe_read_kernel_common) would leave its frame where the BPF stack
// of a callee is or will be. The kernel's verifier never lets a program
// read it, but the comparison of the final stack does: the reference's
// frames hold what the program wrote, and the zeros of the reset. So:
//  - each helper's host function, and the probe read, are a few
//    instructions of assembly that leave the interpreter's stack at once,
//    for a stack of their own, and call bpfdiff's function there: the
//    interpreter's stack gets only the return address its own `call`
//    pushes, where a callee's goes too;
//  - the run enters the tree's __bpf_prog_run_args512 through a stub that
//    first zeroes the stack below it (what the run's session and setjmp
//    left there: the reset gives the reference zeros), and leaves the
//    interpreter's stack for good when it returns;
//  - bpf-to-bpf calls go to the tree's interpreter directly, and a callee
//    finds in its frame what an earlier call at its depth wrote there, as
//    the reference's does.
// Create() checks it with a probe program, and fails when this build's
// code of core.c calls out otherwise (instrumentation that makes calls).

constexpr size_t kHelperSlots = 32;
// The last slot is the probe that measures the frames (no helper's).
constexpr size_t kProbeSlot = kHelperSlots - 1;
constexpr int32_t kFrameProbe = -1;
// The slot number bpf_probe_read_kernel_common's stub passes.
constexpr uint64_t kProbeReadSlot = 64;
// The stack the entry stub zeroes below it: the first frames, and what the
// session left beneath them.
constexpr uint64_t kClearBytes = 4096;

struct HelperSlots {
  std::array<int32_t, kHelperSlots> ids{};
  size_t count = 0;
};

const HelperSlots& Slots() {
  static const HelperSlots slots = [] {
    HelperSlots s;
    for (int32_t id = 1; id < 1024 && s.count < kProbeSlot; ++id) {
      if (FindHelper(id) != nullptr && id != kHelperTailCall) s.ids[s.count++] = id;
    }
    s.ids[kProbeSlot] = kFrameProbe;
    return s;
  }();
  return slots;
}

// What bpf_probe_read_kernel_common() does (copy_from_kernel_nofault):
// guest memory where the guest may read it; on the rest it fails, and the
// caller zeroes.
int ProbeRead(GuestMemory& memory, void* dst, uint32_t size, uint64_t address) {
  if (!memory.Accessible(address, size, AccessKind::kRead)) {
    std::memset(dst, 0, size);
    return -static_cast<int>(kEFAULT);
  }
  std::memcpy(dst, memory.HostPointer(address, size), size);
  return 0;
}

}  // namespace

// The assembly's globals, for the run in progress: one at a time per
// process (Impl::RunOnFiber).
extern "C" {
uint64_t bpfdiff_kinterp_helper_stack = 0;  // the top of the calls' stack, 16-byte aligned
uint64_t bpfdiff_kinterp_clear_bytes = kClearBytes;
uint64_t bpfdiff_kinterp_args_entry = 0;  // the tree's __bpf_prog_run_args512
uint64_t bpfdiff_kinterp_dispatch(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5, uint64_t slot);
}

#if defined(__x86_64__)
// bpfdiff_kinterp_switch: r11 = the interpreter's rsp; rsp = the calls'
// stack; push r11; dispatch(rdi, rsi, rdx, rcx, r8: the caller's
// arguments, r9: the slot); pop rsp; ret, with dispatch's value in rax.
// Helper slot k is at bpfdiff_kinterp_thunks + 16 * k: it sets r9 = k.
// bpfdiff_kinterp_enter, the run's entry: zeroes [rsp - clear_bytes, rsp)
// (rdi and rcx, two of the interpreter's arguments, kept in r10 and r11),
// calls the tree's interpreter, and with its r0 leaves for the calls'
// stack and bpfdiff_kinterp_finished, never to come back.
asm(R"(
        .text
        .p2align 4
bpfdiff_kinterp_switch:
        mov %rsp, %r11
        mov bpfdiff_kinterp_helper_stack(%rip), %rsp
        push %r11
        sub $8, %rsp
        call bpfdiff_kinterp_dispatch@PLT
        add $8, %rsp
        pop %rsp
        ret
        .p2align 4
        .globl bpfdiff_kinterp_probe_read
bpfdiff_kinterp_probe_read:
        endbr64
        mov $64, %r9d
        jmp bpfdiff_kinterp_switch
        .p2align 4
        .globl bpfdiff_kinterp_enter
bpfdiff_kinterp_enter:
        endbr64
        mov %rdi, %r10
        mov %rcx, %r11
        mov bpfdiff_kinterp_clear_bytes(%rip), %rcx
        mov %rsp, %rdi
        sub %rcx, %rdi
        xor %eax, %eax
        rep stosb
        mov %r10, %rdi
        mov %r11, %rcx
        sub $8, %rsp
        call *bpfdiff_kinterp_args_entry(%rip)
        mov bpfdiff_kinterp_helper_stack(%rip), %rsp
        mov %rax, %rdi
        call bpfdiff_kinterp_finished@PLT
        ud2
        .p2align 4
        .globl bpfdiff_kinterp_thunks
bpfdiff_kinterp_thunks:
        .set bpfdiff_kinterp_slot, 0
        .rept 32
        .p2align 4
        endbr64
        mov $bpfdiff_kinterp_slot, %r9d
        jmp bpfdiff_kinterp_switch
        .set bpfdiff_kinterp_slot, bpfdiff_kinterp_slot + 1
        .endr
)");
extern "C" char bpfdiff_kinterp_thunks[];
extern "C" char bpfdiff_kinterp_probe_read[];
static_assert(kHelperSlots == 32 && kProbeReadSlot == 64, "the assembly above has 32 slots and the probe read's 64");
#endif

extern "C" uint64_t bpfdiff_kinterp_dispatch(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
                                             uint64_t slot) {
  FiberRun& run = *t_run;
  run.on_fiber = false;
  NowOnStack(run.calls_bottom, run.calls_size);
  uint64_t value = 0;
  if (slot == kProbeReadSlot) {
    const int result = ProbeRead(*run.memory, reinterpret_cast<void*>(r1), static_cast<uint32_t>(r2), r3);
    value = static_cast<uint64_t>(static_cast<int64_t>(result));
  } else {
    const HelperAnswer answer = run.serve(run.server, Slots().ids[slot], {r1, r2, r3, r4, r5});
    if (!answer.resume) {
      run.stop = FiberStop::kHelper;
      LeaveFiber(run);
    }
    value = answer.value;
  }
  NowOnStack(run.fiber_bottom, run.fiber_size);  // where the assembly returns
  run.on_fiber = true;
  return value;
}

namespace {

kernelsrc::HostHelper HostHelperFor(int32_t id) {
#if defined(__x86_64__)
  const HelperSlots& slots = Slots();
  for (size_t i = 0; i < kHelperSlots; ++i) {
    if ((i < slots.count || i == kProbeSlot) && slots.ids[i] == id) {
      return reinterpret_cast<kernelsrc::HostHelper>(bpfdiff_kinterp_thunks + 16 * i);
    }
  }
#else
  (void)id;
#endif
  return nullptr;
}


}  // namespace

// ---- The engine -------------------------------------------------------------------

struct KernelInterpreterEngine::Impl {
  const kernelsrc::KernelTree* tree = nullptr;
  const LoadedCase* loaded = nullptr;
  std::vector<std::unique_ptr<kernelsrc::InterpreterProgram>> programs;
  kernelsrc::InterpreterEntry entry = nullptr;
  uint64_t stack_bottom = 0;
  uint64_t stack_bytes = 0;
  std::vector<uint64_t> helper_stack = std::vector<uint64_t>(kHelperStackBytes / 8);

  static constexpr size_t kHelperStackBytes = 512 * 1024;

  // One run of `insns` from the fiber's base; `serve(id, args)` answers
  // each helper call, on the helper stack.
  template <typename Serve>
  FiberRun RunOnFiber(GuestMemory& memory, const void* insns, const std::array<uint64_t, 5>& args, Serve& serve);
};

namespace {
// Whether a kernel-interp run is in progress in this process (the helper
// stack's address is one global, for the assembly).
std::atomic<bool> g_running{false};
}  // namespace

template <typename Serve>
FiberRun KernelInterpreterEngine::Impl::RunOnFiber(GuestMemory& memory, const void* insns,
                                                   const std::array<uint64_t, 5>& args, Serve& serve) {
  FiberRun run;
  run.memory = &memory;
  run.tree = tree;
  run.insns = insns;
  run.args = args;
  run.server = &serve;
  run.serve = [](void* server, int32_t id, const HelperArgs& helper_args) {
    return (*static_cast<Serve*>(server))(id, helper_args);
  };
  if (g_running.exchange(true)) {
    run.stop = FiberStop::kStopped;
    run.message = "another kernel-interp run is in progress in this process";
    return run;
  }
  bpfdiff_kinterp_helper_stack = reinterpret_cast<uint64_t>(helper_stack.data() + helper_stack.size());
  run.fiber_bottom = reinterpret_cast<const void*>(stack_bottom);
  run.fiber_size = stack_bytes;
  run.calls_bottom = helper_stack.data();
  run.calls_size = helper_stack.size() * sizeof(helper_stack[0]);
  bpfdiff_kinterp_args_entry = reinterpret_cast<uint64_t>(entry);
#if defined(__x86_64__)
  kernelsrc::SetProbeHook(bpfdiff_kinterp_probe_read, tree);
#endif
  getcontext(&run.fiber);
  run.fiber.uc_stack.ss_sp = reinterpret_cast<void*>(stack_bottom);
  run.fiber.uc_stack.ss_size = stack_bytes;
  run.fiber.uc_link = nullptr;
  makecontext(&run.fiber, FiberMain, 0);
  FiberRun* const outer = t_run;
  t_run = &run;
  {
    FaultHandlerScope faults;
    void* fake_stack = nullptr;
    StartSwitch(&fake_stack, reinterpret_cast<const void*>(stack_bottom), stack_bytes);
    run.on_fiber = true;
    swapcontext(&run.caller, &run.fiber);
    run.on_fiber = false;
    FinishSwitch(fake_stack);
  }
  kernelsrc::SetProbeHook(nullptr, tree);
  t_run = outer;
  g_running = false;
  return run;
}

KernelInterpreterEngine::KernelInterpreterEngine(Sandbox& sandbox, int cpu, std::string name)
    : sandbox_(sandbox), cpu_(cpu), name_(std::move(name)), impl_(std::make_unique<Impl>()) {}

KernelInterpreterEngine::~KernelInterpreterEngine() = default;

Result<std::unique_ptr<KernelInterpreterEngine>> KernelInterpreterEngine::Create(Sandbox& sandbox, int cpu,
                                                                                 const kernelsrc::KernelTree* tree,
                                                                                 std::string name) {
  if (!kernelsrc::KernelInterpreterAvailable()) {
    return Fail("kernel-interp: this bpfdiff was built without a Linux tree, so it has no kernel interpreter: run "
                "ci/kernel_source.sh (Debian's linux-source-6.12) or configure with "
                "-DBPFDIFF_KERNEL_SOURCE=<tree>, then build again");
  }
#if !defined(__x86_64__)
  return Fail("kernel-interp needs an x86-64 host: its helper calls leave the interpreter's stack in assembly");
#endif
  std::unique_ptr<KernelInterpreterEngine> engine(new KernelInterpreterEngine(sandbox, cpu, std::move(name)));
  Impl& impl = *engine->impl_;
  impl.tree = tree;
  impl.entry = kernelsrc::InterpreterEntryFor(kFunctionStack, tree);
  impl.stack_bottom = guest::StackTop(cpu) - guest::kStackStride;
  impl.stack_bytes = guest::kStackStride;
  GuestMemory& memory = sandbox.env().memory();
  if (auto shown = ShowAtGuestAddresses(memory); !shown) return Fail("kernel-interp: {}", shown.message());

  // The frames, measured by a probe program of kDepths functions, each
  // alike but the last, which calls none:
  //   r1 = r10; call probe                 (its r10)
  //   r0 = *(u64 *)probe(r10 - 8)          (a probe read)
  //   call the next function
  //   call probe; r0 = *(u64 *)probe(r10 - 8)
  //   call the next function again; exit
  // It writes none of its stack: after it, every frame must hold the
  // zeros it started with, or the calls out of the interpreter left
  // something where the comparison reads (see "Calls out of the
  // interpreter" above).
  constexpr int kDepths = 3;
  const isa::Insn mov_fp{isa::kClassAlu64 | isa::kAluMov | isa::kSrcX, 1, isa::kFramePointer, 0, 0};
  const isa::Insn probe_call{isa::kOpCall, 0, 0, 0, kFrameProbe};
  const isa::Insn probe_read{isa::kClassLdx | isa::kModeProbeMem | isa::kSizeDW, 0, isa::kFramePointer, -8, 0};
  isa::Program probe;
  for (int depth = 0; depth < kDepths; ++depth) {
    probe.subprogram_starts.push_back(static_cast<uint32_t>(probe.insns.size()));
    const bool calls = depth + 1 < kDepths;
    // Past this function's remaining instructions, to the next's first.
    const auto call_next = [&](int32_t remaining) { return isa::Insn{isa::kOpCall, 0, isa::kPseudoCall, 0, remaining}; };
    probe.insns.insert(probe.insns.end(), {mov_fp, probe_call, probe_read});
    if (calls) probe.insns.push_back(call_next(5));
    probe.insns.insert(probe.insns.end(), {mov_fp, probe_call, probe_read});
    if (calls) probe.insns.push_back(call_next(1));
    probe.insns.push_back({isa::kOpExit, 0, 0, 0, 0});
  }
  auto loaded = kernelsrc::InterpreterProgram::Load(probe, kFunctionStack, HostHelperFor, tree);
  if (!loaded) return Fail("kernel-interp: the probe of its frames: {}", loaded.message());
  uint8_t* stack = memory.HostPointer(impl.stack_bottom, impl.stack_bytes);
  std::memset(stack, 0, impl.stack_bytes);
  std::vector<uint64_t> frame_pointers;
  auto record = [&](int32_t id, const HelperArgs& args) {
    if (id == kFrameProbe) frame_pointers.push_back(args[0]);
    return HelperAnswer{id == kFrameProbe, 0};
  };
  const FiberRun run = impl.RunOnFiber(memory, (*loaded)->insns(), {}, record);
  // Each function calls the probe twice per run of it, and runs once more
  // than the one before.
  if (run.stop != FiberStop::kReturned || frame_pointers.size() != 2 * ((1u << kDepths) - 1)) {
    return Fail("kernel-interp: the probe of its frames did not run through ({})", run.message);
  }
  const uint64_t top = guest::StackTop(cpu);
  const uint64_t fp0 = frame_pointers[0], fp1 = frame_pointers[1], fp2 = frame_pointers[2];
  const uint64_t spacing = fp0 - fp1;
  if (fp1 - fp2 != spacing || spacing < kFunctionStack || spacing + 8 > kClearBytes || fp0 > top) {
    return Fail("kernel-interp: its frames are not evenly spaced below the stack top 0x{:x}: r10 0x{:x}, 0x{:x}, "
                "0x{:x}",
                top, fp0, fp1, fp2);
  }
  // The reference's frames are then these: FP(d) = top - entry_below_top
  // - fp_below_entry_sp - d * call_frame_bytes, each owning 512 bytes.
  StackGeometry geometry;
  geometry.call_frame_bytes = spacing;
  geometry.fp_below_entry_sp = spacing - kFunctionStack;
  geometry.entry_below_top = top - fp0 - geometry.fp_below_entry_sp;
  const uint64_t deepest = geometry.FramePointer(cpu, isa::kMaxCallDepth - 1) - kFunctionStack - kClearBytes;
  if (top - deepest > GuestEnvironment::kResetStackBytes || deepest < impl.stack_bottom) {
    return Fail("kernel-interp: its {} frames take {} bytes of stack, more than the {} a run's reset zeroes",
                isa::kMaxCallDepth, top - deepest, GuestEnvironment::kResetStackBytes);
  }
  for (int depth = 0; depth < isa::kMaxCallDepth; ++depth) {
    const uint64_t fp = geometry.FramePointer(cpu, depth);
    for (uint64_t a = fp - kFunctionStack; a < fp; ++a) {
      if (stack[a - impl.stack_bottom] != 0) {
        return Fail("kernel-interp: the interpreter's calls out (to helpers, probe reads or this build's "
                    "instrumentation) left bytes at 0x{:x}, in the BPF frame of call depth {} (r10 0x{:x})",
                    a, depth, fp);
      }
    }
  }
  std::memset(stack, 0, impl.stack_bytes);
  engine->geometry_ = geometry;
  return engine;
}

Status KernelInterpreterEngine::Prepare(const LoadedCase& loaded) {
  Release();
  impl_->loaded = &loaded;
  for (size_t p = 0; p < loaded.programs.size(); ++p) {
    std::optional<std::string> refusal = kernelsrc::InterpreterRefusal(loaded.programs[p].program, impl_->tree);
    // A callee of the kernel's interpreter gets registers of its own:
    // what a JIT's callee reads of its caller's, it reads uninitialized.
    if (!refusal) refusal = FindReadOfUndefinedAtCalleeEntry(loaded.programs[p].program, p);
    if (refusal) {
      not_comparable_ = fmt::format("the kernel's verifier does not load program {} for its interpreter: {}", p,
                                    *refusal);
      return {};
    }
  }
  for (const LoadedProgram& program : loaded.programs) {
    auto prepared = kernelsrc::InterpreterProgram::Load(program.program, kFunctionStack, HostHelperFor, impl_->tree);
    if (!prepared) return prepared.error();
    impl_->programs.push_back(std::move(prepared).value());
  }
  return {};
}

Outcome KernelInterpreterEngine::Run(uint64_t budget) {
  (void)budget;  // the interpreter has none: it runs only what the reference ran within its own
  Outcome outcome;
  GuestEnvironment& env = sandbox_.env();
  GuestMemory& memory = env.memory();
  const LoadedCase& loaded = *impl_->loaded;
  if (auto shown = ShowAtGuestAddresses(memory); !shown) {
    outcome.end = EndKind::kHarnessError;
    outcome.message = shown.message();
    return outcome;
  }
  // Every program array's slots point at the interpreter's programs for
  // the run (the guest's program objects are the JITs').
  std::vector<std::pair<uint64_t, uint64_t>> slots;  // address, the guest's value
  for (size_t m = 0; m < loaded.maps.size(); ++m) {
    const isa::MapSpec& map = loaded.maps[m];
    if (map.type != isa::MapType::kProgArray) continue;
    for (size_t e = 0; e < map.programs.size() && e < map.max_entries; ++e) {
      const int32_t target = map.programs[e];
      if (target < 0 || static_cast<size_t>(target) >= impl_->programs.size()) continue;
      const uint64_t address = guest::MapObjectAddress(m) + guest::kMapPtrsOffset + 8 * e;
      uint64_t guest_value = 0;
      std::memcpy(&guest_value, memory.HostPointer(address, 8), 8);
      slots.emplace_back(address, guest_value);
      memory.Store<uint64_t>(address, impl_->programs[static_cast<size_t>(target)]->object());
    }
  }
  HelperContext context(memory, env.helper_state(cpu_));
  auto serve = [&](int32_t id, const HelperArgs& args) {
    const HelperResult result = InvokeHelper(id, context, args, outcome.helper_calls);
    switch (result.kind) {
      case HelperResult::Kind::kReturn: return HelperAnswer{true, result.value};
      case HelperResult::Kind::kUnwind:
        outcome.end = EndKind::kUnwind;
        outcome.r0 = 0;
        break;
      case HelperResult::Kind::kError:
        outcome.end = EndKind::kHelperError;
        outcome.message = result.error;
        outcome.refusing_helper = id;
        break;
    }
    return HelperAnswer{false, 0};
  };
  const FiberRun run = impl_->RunOnFiber(memory, impl_->programs.front()->insns(),
                                         {env.context_address(), env.context_length(), 0, 0, 0}, serve);
  for (const auto& [address, guest_value] : slots) memory.Store<uint64_t>(address, guest_value);
  switch (run.stop) {
    case FiberStop::kHelper: break;  // a helper ended the run: the outcome says how
    case FiberStop::kReturned:
      outcome.end = EndKind::kExit;
      outcome.r0 = run.r0;
      break;
    case FiberStop::kStopped:
      outcome.end = EndKind::kTrap;
      outcome.message = run.message;
      break;
    case FiberStop::kFault:
      outcome.end = EndKind::kTrap;
      outcome.message = fmt::format(
          "the kernel's interpreter faulted on a plain access ({} of 0x{:x} at host pc 0x{:x}); the kernel would oops",
          run.fault_write ? "write" : "read", run.fault_address, run.fault_pc);
      break;
  }
  outcome.memory = env.Capture(cpu_, geometry_);
  return outcome;
}

Outcome KernelInterpreterEngine::RunTraced(uint64_t budget, BoundaryTrace& trace) {
  (void)budget;
  (void)trace;
  Outcome outcome;
  outcome.end = EndKind::kHarnessError;
  outcome.message = "kernel-interp cannot stop at instruction boundaries";
  return outcome;
}

void KernelInterpreterEngine::Release() {
  impl_->programs.clear();
  impl_->loaded = nullptr;
  not_comparable_.reset();
}

}  // namespace bpfdiff
