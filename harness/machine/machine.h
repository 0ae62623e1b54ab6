// One simulated arm64 CPU: a Unicorn engine over the shared guest memory,
// or a CPU the machine steps (SteppedCpu: VIXL's simulator), behind the
// same interface.
//
// Set up once and reused for every run (UNICORN.md: opening an engine costs
// about a millisecond; a warm run a few microseconds). Every hook is added
// before any code is translated, because Unicorn does not apply a hook to
// blocks it translated earlier:
//
//  - (precise machines) a code hook over the JIT regions (packs, oversize),
//    which keeps the PC exact at every instruction (Unicorn otherwise
//    reports the start of the translated block on a fault), counts
//    instructions for the budget and the step limit, and stops *before* an
//    instruction when asked. It doubles the cost of translating code;
//  - (fast machines) no such hook: the budget counts whole blocks, and on a
//    fault the faulting instruction is found by decoding the block that
//    was running (its registers are exact up to the fault): the one memory
//    access whose range holds the faulting address. When that is not one
//    instruction, Resume() says so (kImpreciseFault) and the caller runs the
//    call again on a precise machine;
//  - a code hook over the helper stubs, which performs the helper with the
//    shared implementation (oracle/helpers.h) and lets the stub's RET return;
//  - a code hook on the stop page, the return address of the outermost call;
//  - a block hook that reports executed blocks to an observer, for the pack
//    lifecycle checks;
//  - unmapped and protection hooks that record the first faulting address.
//
// Every Unicorn call is checked. A failure becomes an error value carrying
// uc_strerror's text and the call's name: Create() and PrepareCall() return
// it, and a failure anywhere else (a register access, a context save, a
// cache removal) is kept as the machine's failure, which the next Resume()
// reports as kError without running anything. Nothing here aborts.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <unicorn/unicorn.h>

#include "harness/machine/a64_access.h"
#include "oracle/guest_memory.h"
#include "oracle/helpers.h"
#include "oracle/outcome.h"
#include "support/result.h"

namespace bpfdiff {

// Why Resume() returned.
struct MachineStop {
  enum class Kind : uint8_t {
    kReturned,   // reached the stop page: the outermost call returned (x0 = result)
    kFault,      // an access to unmapped or protected memory (address, access)
    kException,  // a CPU exception: BRK, UDF, an alignment fault (pc)
    kHelper,     // a helper unwound the program or refused its arguments
    kBudget,     // the instruction budget ran out
    kStep,       // the step limit of this Resume() was reached (pc = next insn)
    kHelperTrap, // a trapped helper was called (helper_id); it has not run, x0..x4 hold its arguments
    kImpreciseFault,  // fast machine: a fault whose instruction could not be told apart
    kError,      // Unicorn failed
  };
  Kind kind = Kind::kError;
  uint64_t pc = 0;
  uint64_t address = 0;
  AccessKind access = AccessKind::kRead;
  HelperResult helper;  // for kHelper
  int helper_id = 0;    // for kHelperTrap and kHelper: the helper called (-1: a callx that named none)
  std::string message;
};

// A CPU's complete register state, for delivering an interrupt or
// switching tasks and coming back.
class MachineContext {
 public:
  MachineContext() = default;
  ~MachineContext();
  MachineContext(MachineContext&& other) noexcept
      : context_(other.context_), stepped_(std::move(other.stepped_)), steps_(other.steps_) {
    other.context_ = nullptr;
  }
  MachineContext& operator=(MachineContext&& other) noexcept;
  MachineContext(const MachineContext&) = delete;
  MachineContext& operator=(const MachineContext&) = delete;

 private:
  friend class Machine;
  uc_context* context_ = nullptr;
  std::vector<uint64_t> stepped_;  // a stepped CPU's x0..x30, sp, pc, nzcv
  uint64_t steps_ = 0;
};

// Sees what a CPU executes, for the pack lifecycle checks. Called for each
// translated block as it starts to run.
class ExecutionObserver {
 public:
  virtual ~ExecutionObserver() = default;
  virtual void OnBlock(int cpu, uint64_t address, uint32_t size) = 0;
};

enum class MachineMode : uint8_t { kPrecise, kFast };

// The second kind of executor: an arm64 CPU that the machine steps one
// instruction at a time (VIXL's simulator, harness/machine/vixl_cpu.h).
// Unicorn runs guest code on its own and calls the machine's hooks; a
// stepped CPU runs nothing the machine did not check first. Before each
// instruction the machine checks, as Unicorn's hooks and MMU would: the
// fetch (mapped, executable, aligned), the helper stubs and the stop page,
// the budget and the step limit, undefined and exception-generating
// words, the memory the instruction will access (MemoryAccessOf: mapped,
// with the permission, naturally aligned when atomic), and performs the
// two system register reads the JITs make (TPIDR_EL1, SP_EL0) and a
// store-exclusive that cannot pass its monitor (it fails without an
// access, as on Unicorn, where VIXL could abort on it). So the
// CPU only ever runs an instruction whose effects are allowed, and a
// fault, a stop or an exception leaves it before that instruction, with
// exact registers, as on the precise Unicorn machine.
class SteppedCpu {
 public:
  virtual ~SteppedCpu() = default;
  // For reports: "vixl".
  virtual std::string_view name() const = 0;
  // Makes the guest memory the one this CPU's accesses reach, before a
  // run (another memory's CPU may have run since).
  virtual Status Activate() = 0;
  virtual uint64_t X(int reg) const = 0;  // 0..30
  virtual void SetX(int reg, uint64_t value) = 0;
  virtual uint64_t Sp() const = 0;
  virtual void SetSp(uint64_t value) = 0;
  virtual uint64_t Pc() const = 0;
  virtual void SetPc(uint64_t value) = 0;
  virtual uint32_t Nzcv() const = 0;  // N, Z, C, V in bits 31..28
  virtual void SetNzcv(uint32_t value) = 0;
  // An exception return clears the local exclusive monitor: what a task
  // switch or an interrupt's return does to an LL/SC loop.
  virtual void ClearExclusiveMonitor() = 0;

  enum class Step : uint8_t {
    kRan,          // the pc and registers moved on
    kException,    // an undefined or exception-generating instruction; nothing changed
    kUnsupported,  // an instruction the CPU cannot run (why()); nothing changed
  };
  // Runs the instruction at Pc(), which the machine checked.
  virtual Step RunOne() = 0;
  virtual std::string why() const = 0;  // after kUnsupported
};

// A Unicorn call made to fail on purpose, to show that such a failure is
// reported and loses nothing (tests, and the mains that take
// BPFDIFF_UNICORN_FAULT). The call fails as Unicorn fails for lack of
// memory (UC_ERR_NOMEM), after `skip` calls of that kind succeeded.
enum class UnicornCall : uint8_t { kNone, kOpen, kMapMemory, kStartEmulation };
std::string_view UnicornCallName(UnicornCall call);  // "open", "map", "start"
std::optional<UnicornCall> ParseUnicornCall(std::string_view name);

struct UnicornFault {
  UnicornCall call = UnicornCall::kNone;
  uint64_t skip = 0;
};
// "CALL" or "CALL:SKIP" (the form BPFDIFF_UNICORN_FAULT takes): CALL is
// open, map or start; SKIP how many such calls succeed first (default 0).
Result<UnicornFault> ParseUnicornFault(std::string_view text);

class Machine {
 public:
  // Maps every region of `memory` (the same host buffers) into a new engine.
  static Result<std::unique_ptr<Machine>> Create(GuestMemory& memory, int cpu,
                                                 MachineMode mode = MachineMode::kPrecise,
                                                 UnicornFault fault = {});
  // A machine whose executor is `stepped` (always precise; see SteppedCpu)
  // instead of Unicorn. Everything below means the same on either, but the
  // Unicorn-only counters (translations, cache removals, engines) stay 0:
  // a stepped CPU fetches every instruction from memory as it runs it, so
  // a flush has no translation to drop (RemoveCache does nothing), and
  // stale code never runs.
  static Result<std::unique_ptr<Machine>> CreateStepped(GuestMemory& memory, int cpu,
                                                        std::unique_ptr<SteppedCpu> stepped);
  // "unicorn", or the stepped CPU's name: for reports only.
  std::string_view executor() const;
  MachineMode mode() const { return mode_; }
  ~Machine();
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  int cpu() const { return cpu_; }

  // Starts a call of `entry` with x0..x4 = args, SP = `sp`, LR = the stop
  // page; every other register starts at 0. Resets the instruction count.
  // Fails when the machine has failed before, or when Unicorn does (a fresh
  // engine that will not open, see set_recycle_after).
  Status PrepareCall(uint64_t entry, const std::array<uint64_t, 5>& args, uint64_t sp);

  // The machine's first Unicorn failure since it was created, if any. A
  // failed register access or context save also lands here (their
  // callers get a value either way, and the next Resume() fails).
  const std::optional<std::string>& failure() const { return failure_; }

  // Runs until the call returns or something stops it; at most
  // `max_steps` more instructions of JIT code in this call (then kStep;
  // precise machines only).
  MachineStop Resume(uint64_t max_steps = ~uint64_t{0});

  // Saves / restores every register (and the instruction count), so that
  // another call can run on this CPU in between.
  MachineContext SaveContext();
  void RestoreContext(const MachineContext& context);

  // Helper ids whose calls stop the machine (kHelperTrap) instead of being
  // performed, so that the harness can act in the caller's context. To
  // complete such a call: write x0 and set the pc to x30 (the stub's RET).
  void set_trapped_helpers(const std::array<bool, 256>* trapped) { trapped_helpers_ = trapped; }

  // Stops (kStep) before any instruction of the JIT regions at one of
  // `addresses` (sorted), except the first of a Resume that starts where
  // the last one stopped this way, so that each Resume moves on to the
  // next. Precise machines only: the lockstep localization of a divergence
  // stops at every BPF instruction boundary. nullptr: no such stops.
  void set_stop_before(const std::vector<uint64_t>* addresses) { stop_before_ = addresses; }

  // Total instruction budget of the current call (kBudget when exceeded).
  void set_budget(uint64_t budget) { budget_ = budget; }
  uint64_t steps() const { return steps_; }

  // Where helper calls are recorded and what state they use.
  void set_helper_context(HelperContext* context, std::vector<HelperCall>* trace) {
    helper_context_ = context;
    helper_trace_ = trace;
  }
  void set_observer(ExecutionObserver* observer) { observer_ = observer; }

  uint64_t ReadX(int reg) const;
  uint64_t ReadSp() const;
  void WriteX(int reg, uint64_t value);
  uint64_t ReadPc() const;
  void WritePc(uint64_t pc);

  // Drops translated blocks for [begin, end): the simulated instruction
  // cache invalidation. Unicorn never does this on its own. Unicorn is only
  // asked when this CPU may hold a translation of the range: every block
  // it runs in the JIT regions marks the 64-byte chunks it covers, and a
  // chunk is unmarked when its translations are dropped (a translation
  // only ever exists for code that started to run).
  void RemoveCache(uint64_t begin, uint64_t end);
  uint64_t unicorn_cache_removals() const { return unicorn_cache_removals_; }

  // Lets a flush keep the translations of code that did not change. A
  // flushed 64-byte chunk is then only noted; before the next instruction
  // runs (at the start of Resume), its translations are dropped if its
  // bytes differ from those it was translated from (kept from its first
  // run), and kept if they are the same. What runs is exactly what an
  // eager drop would run: the same bytes translate to the same code, and a
  // chunk nobody flushed still runs stale, as on hardware. It pays when a
  // slot is freed and reloaded with mostly the same words (a fuzzer's
  // mutant): the trap words of the free are gone again by the next run.
  // Off by default: the pack lifecycle world keeps the kernel's discipline
  // (every flush drops) as what it tests.
  void set_keep_unchanged_translations(bool on) { keep_unchanged_ = on; }
  // Flushed chunks whose translations survived because their bytes were
  // the same again when the next run began.
  uint64_t translations_kept() const { return translations_kept_; }

  // Unicorn 2.0.1 misbehaves when its translation buffer (1 GiB) fills
  // during a run: it flushes every block while one is running, and then
  // chains into freed code (upstream #1923, #2048: a crash in
  // tb_set_jmp_target, or stale code run). So a machine that has
  // translated about this many guest instructions (its first runs of
  // blocks in the JIT regions) gets a fresh engine at the start of its
  // next call, long before the buffer can fill. A MachineContext saved
  // from the old engine restores into the new one (an interrupt's call may
  // be the one that recycles): Unicorn's ARM context is CPUARMState up to
  // cpu_watchpoint, whose only pointers (nvic, boot_info, gicv3state,
  // breakpoints) are null here.
  void set_recycle_after(uint64_t instructions) { recycle_after_ = instructions; }
  uint64_t engines_opened() const { return engines_opened_; }
  // Guest instructions translated since the machine was made, engines
  // recycled included, as counted for recycling: a block whose code was
  // new to the engine (its first run, or the first after a cache drop).
  uint64_t instructions_translated() const { return translated_total_; }

  // Instructions executed by class, for the recursion cost figures.
  uint64_t atomic_instructions() const { return atomic_instructions_; }
  void set_count_atomics(bool on) { count_atomics_ = on; }

 private:
  Machine(GuestMemory& memory, int cpu, MachineMode mode, UnicornFault fault)
      : memory_(memory), cpu_(cpu), mode_(mode), fault_(fault) {}
  // Fast machines: finds the faulting instruction in the last block.
  void LocateFault(MachineStop& stop);
  // Resume() on a stepped CPU: the checks of SteppedCpu, then the step.
  MachineStop ResumeStepped(uint64_t start);
  // Before the instruction `word` at `pc` of a stepped CPU: whether the
  // CPU runs it, it was performed here (a system register read, a
  // store-exclusive that fails), or the run stops before it (a fault in
  // the hook state, else `stop`).
  enum class SteppedCheck : uint8_t { kRun, kPerformed, kStop };
  SteppedCheck CheckStepped(uint64_t pc, uint32_t word, MachineStop& stop);
  // The host bytes of the word at `pc` if it may be fetched (mapped and
  // executable), else nullptr: GuestMemory::Inspect for a fetch, with the
  // region of the last fetch tried first, since the data accesses between
  // two fetches move GuestMemory's own last region elsewhere.
  const uint8_t* FetchableWord(uint64_t pc);
  // The stop that the hooks' state describes (returned, helper, fault,
  // budget, step), if any.
  bool StopFromHooks(MachineStop& stop);
  Status Initialize();
  Status Close();
  // An error for a failed Unicorn call (and the machine's failure, if it
  // has none yet); OK for UC_ERR_OK.
  Status Check(uc_err err, std::string_view call) const;
  // uc_emu_stop, from a hook.
  void StopEmulation(uc_engine* uc);
  // UC_ERR_NOMEM when the injected fault says this call fails, else OK.
  uc_err Injected(UnicornCall call);

  static void OnJitCode(uc_engine* uc, uint64_t address, uint32_t size, void* self);
  static void OnHelperCode(uc_engine* uc, uint64_t address, uint32_t size, void* self);
  static void OnStopCode(uc_engine* uc, uint64_t address, uint32_t size, void* self);
  static void OnBlock(uc_engine* uc, uint64_t address, uint32_t size, void* self);
  static bool OnBadAccess(uc_engine* uc, uc_mem_type type, uint64_t address, int size,
                          int64_t value, void* self);
  static void OnInterrupt(uc_engine* uc, uint32_t number, void* self);

  GuestMemory& memory_;
  int cpu_;
  MachineMode mode_;
  UnicornFault fault_;
  mutable std::optional<std::string> failure_;  // register reads are const, and checked
  std::unique_ptr<SteppedCpu> stepped_;  // the executor, when it is not Unicorn
  bool stop_requested_ = false;          // a hook asked a stepped CPU to stop
  uint64_t exclusive_address_ = ~uint64_t{0};  // a stepped CPU's monitored address (CheckStepped)
  const Region* fetch_region_ = nullptr;        // FetchableWord's last region
  uc_engine* uc_ = nullptr;
  uint64_t last_block_ = 0;  // the block running (fast machines)
  uint32_t last_block_size_ = 0;
  uc_context* pristine_ = nullptr;

  // Per call.
  uint64_t budget_ = ~uint64_t{0};
  uint64_t steps_ = 0;
  uint64_t step_limit_ = ~uint64_t{0};
  bool returned_ = false;
  bool budget_hit_ = false;
  bool step_hit_ = false;
  bool fault_seen_ = false;
  // The exception Unicorn raised (QEMU's EXCP_* number), or -1.
  int exception_number_ = -1;
  uint64_t fault_address_ = 0;
  AccessKind fault_access_ = AccessKind::kRead;
  bool helper_stopped_ = false;
  HelperResult helper_result_;
  bool helper_trapped_ = false;
  int helper_id_ = 0;  // the helper the last helper stop or trap called (-1: none)
  const std::array<bool, 256>* trapped_helpers_ = nullptr;
  const std::vector<uint64_t>* stop_before_ = nullptr;
  static constexpr uint64_t kNoAddress = ~uint64_t{0};
  uint64_t stopped_before_ = kNoAddress;  // where the last stop_before_ stop was
  uint64_t pass_once_ = kNoAddress;       // the address this Resume does not stop at first

  HelperContext* helper_context_ = nullptr;
  std::vector<HelperCall>* helper_trace_ = nullptr;
  ExecutionObserver* observer_ = nullptr;
  bool count_atomics_ = false;
  uint64_t atomic_instructions_ = 0;

  // Chunks of the JIT regions that may have translated blocks. Marks the
  // chunks of [begin, end); true when one of them was not marked yet.
  bool MarkTranslated(uint64_t begin, uint64_t end);
  std::vector<uint64_t> translated_;
  static constexpr uint64_t kCacheChunk = 64;  // the bytes of JIT code one mark covers

  // set_keep_unchanged_translations: the bytes each marked chunk had when
  // it was marked, the flushed chunks not looked at yet (a bit each, and
  // their indices), and the drop of those that changed.
  void ApplyPendingFlushes();
  bool keep_unchanged_ = false;
  std::unordered_map<uint64_t, std::array<uint8_t, kCacheChunk>> translated_bytes_;
  std::vector<uint64_t> pending_;
  std::vector<uint64_t> pending_bits_;
  uint64_t translations_kept_ = 0;
  uint64_t unicorn_cache_removals_ = 0;
  uint64_t translated_instructions_ = 0;
  uint64_t translated_total_ = 0;
  // Where this Resume started, when nothing there was translated since the
  // engine was opened: the first block is then new (see set_recycle_after).
  uint64_t fresh_start_ = 0;
  uint64_t recycle_after_ = 1'000'000;
  uint64_t engines_opened_ = 0;
};

// A machine's registers as MemoryAccessOf reads them.
class MachineRegisters final : public RegisterReader {
 public:
  explicit MachineRegisters(const Machine& machine) : machine_(machine) {}
  uint64_t X(int reg) const override { return machine_.ReadX(reg); }
  uint64_t Sp() const override { return machine_.ReadSp(); }

 private:
  const Machine& machine_;
};

}  // namespace bpfdiff
