#include "oracle/trampoline.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "oracle/guest_layout.h"
#include "oracle/interpreter.h"

namespace bpfdiff::trampoline {

uint32_t Flags(const Attachment& attachment) {
  // bpf_struct_ops_prepare_trampoline(): called through a pointer, and its
  // program's r0 returned (every model here returns a u64).
  if (attachment.struct_ops) return kIndirect | kRetFentryRet;
  // bpf_trampoline_update(): with fexit or fmod_ret programs the
  // trampoline calls the original itself and returns past it.
  uint32_t flags = (!attachment.fexit.empty() || !attachment.fmod_ret.empty()) ? kCallOrig | kSkipFrame
                                                                               : kRestoreRegs;
  if (attachment.ip_arg) flags |= kIpArg;
  return flags;
}

uint32_t ArgumentRegisters(const Attachment& attachment) {
  const uint32_t own = attachment.nr_args >= 8 ? 0xffu : (1u << attachment.nr_args) - 1;
  return attachment.nr_args + static_cast<uint32_t>(std::popcount(attachment.struct_args & own));
}

Frame FrameOf(const Attachment& attachment) {
  // prepare_trampoline(), from the SP up: struct bpf_tramp_run_ctx (u64
  // cookie, saved run_ctx), the traced function's address (IP_ARG), the
  // argument count, the arguments, the return value (when the original is
  // called, or the fentry program's is returned), x19 and x20; rounded up
  // to 16.
  constexpr uint32_t kRunCtxBytes = 16;
  const uint32_t flags = Flags(attachment);
  Frame frame;
  frame.pushed_bytes = attachment.struct_ops ? 16 : 32;
  uint32_t size = 0;
  frame.run_ctx_off = size;
  size += kRunCtxBytes;
  frame.ip_off = size;
  if ((flags & kIpArg) != 0) size += 8;
  frame.nregs_off = size;
  size += 8;
  frame.args_off = size;
  size += 8u * ArgumentRegisters(attachment);
  frame.retval_off = size;
  if ((flags & (kCallOrig | kRetFentryRet)) != 0) size += 8;
  size += 16;  // x19, x20
  frame.stack_size = (size + 15) & ~15u;
  return frame;
}

namespace {

uint64_t LoadU64(const GuestMemory& memory, uint64_t address) {
  uint64_t value = 0;
  if (const uint8_t* p = memory.HostPointer(address, 8)) std::memcpy(&value, p, 8);
  return value;
}

uint64_t LogBase(int cpu) { return guest::PerCpuArea(cpu) + guest::kTrampLogOffset; }

void Log(GuestMemory& memory, int cpu, uint64_t event) {
  const uint64_t base = LogBase(cpu);
  const uint64_t count = LoadU64(memory, base);
  memory.Store<uint64_t>(base + 8 + 8 * (count % guest::kTrampLogEntries), event);
  memory.Store<uint64_t>(base, count + 1);
}

// One run of the trampoline's sequence.
class Composition {
 public:
  Composition(GuestEnvironment& env, const LoadedCase& loaded, const Attachment& attachment, const RunSpec& spec)
      : env_(env), loaded_(loaded), attachment_(attachment), spec_(spec), flags_(Flags(attachment)),
        frame_(FrameOf(attachment)), top_(guest::StackTop(spec.cpu)),
        sp_(top_ - frame_.pushed_bytes - frame_.stack_size), ctx_(sp_ + frame_.args_off) {
    for (size_t i = 0; i < spec.args.size(); ++i) registers_[i] = spec.args[i];
    outcome_.end = EndKind::kExit;
  }

  AttachedRun Go() {
    GuestMemory& memory = env_.memory();
    ResetLog(memory, spec_.cpu);
    if (attachment_.freplace) {
      // No trampoline, no frame: the extension runs as the traced program.
      RunProgram(*attachment_.freplace, spec_.args, top_, nullptr);
      return Finish();
    }
    if ((flags_ & kIpArg) != 0) memory.Store<uint64_t>(sp_ + frame_.ip_off, KernelAddress(spec_.traced_entry));
    const uint32_t nregs = ArgumentRegisters(attachment_);
    memory.Store<uint64_t>(sp_ + frame_.nregs_off, nregs);
    for (uint32_t i = 0; i < nregs && i < kMaxArgs; ++i) memory.Store<uint64_t>(ctx_ + 8u * i, registers_[i]);
    if (Body()) {
      if (SavesReturn()) outcome_.r0 = LoadU64(memory, sp_ + frame_.retval_off);
    }
    return Finish();
  }

 private:
  AttachedRun Finish() {
    GuestMemory& memory = env_.memory();
    AttachedRun run;
    run.log = ReadLog(memory, spec_.cpu);
    outcome_.memory = env_.Capture(StackWindow{});
    run.outcome = std::move(outcome_);
    return run;
  }

  static uint64_t KernelAddress(uint64_t guest) { return 0xffff'0000'0000'0000 | guest; }
  bool SavesReturn() const { return (flags_ & (kCallOrig | kRetFentryRet)) != 0; }

  // False once a program's run ended the whole call (outcome_ is its end).
  bool Body() {
    GuestMemory& memory = env_.memory();
    const bool call_orig = (flags_ & kCallOrig) != 0;
    if (call_orig) Log(memory, spec_.cpu, kImageEnterMark);
    for (const Link& link : attachment_.fentry) {
      if (!Invoke(link, (flags_ & kRetFentryRet) != 0)) return false;
    }
    // struct_ops: the caller gets the retval slot; nothing was traced.
    if ((flags_ & kIndirect) != 0) return true;
    bool skip_original = false;
    if (!attachment_.fmod_ret.empty()) {
      memory.Store<uint64_t>(sp_ + frame_.retval_off, 0);
      for (const Link& link : attachment_.fmod_ret) {
        if (!Invoke(link, true)) return false;
        if (LoadU64(memory, sp_ + frame_.retval_off) != 0) {
          skip_original = true;
          break;
        }
      }
    }
    if (!call_orig) {
      // The trampoline returns into the traced program, which runs as if
      // it had been called: from the caller's SP, with the argument
      // registers restored.
      return RunTraced(top_);
    }
    if (!skip_original) {
      if (!RunTraced(sp_)) return false;
      memory.Store<uint64_t>(sp_ + frame_.retval_off, outcome_.r0);
    }
    for (const Link& link : attachment_.fexit) {
      if (!Invoke(link, false)) return false;
    }
    Log(memory, spec_.cpu, kImageExitMark);
    return true;
  }

  // The argument registers the traced program starts with: the saved ones
  // restored, the others as the last stub called left them.
  bool RunTraced(uint64_t entry_sp) {
    std::array<uint64_t, 5> args{};
    for (int i = 0; i < 5; ++i) {
      args[i] = static_cast<uint32_t>(i) < ArgumentRegisters(attachment_) ? LoadU64(env_.memory(), ctx_ + 8u * i) : StubClobber(i);
    }
    return RunProgram(attachment_.traced, args, entry_sp, nullptr);
  }

  // invoke_bpf_prog(): enter, the program unless enter said no, exit.
  bool Invoke(const Link& link, bool save_ret) {
    GuestMemory& memory = env_.memory();
    memory.Store<uint64_t>(sp_ + frame_.run_ctx_off, link.cookie);
    Log(memory, spec_.cpu, link.cookie);
    if (link.runs) {
      // r1 = ctx; r2..r5 are what the enter stub left in x1..x4.
      const std::array<uint64_t, 5> args = {ctx_, StubClobber(1), StubClobber(2), StubClobber(3), StubClobber(4)};
      uint64_t r0 = 0;
      if (!RunProgram(link.program, args, sp_, &r0)) return false;
      if (save_ret) memory.Store<uint64_t>(sp_ + frame_.retval_off, r0);
    }
    Log(memory, spec_.cpu, ~link.cookie);
    return true;
  }

  // Runs one program entered with SP = `entry_sp`; false when its end
  // ends the call (anything but a return). Its r0 goes to *r0, or, for the
  // traced program, to the outcome.
  bool RunProgram(size_t index, const std::array<uint64_t, 5>& args, uint64_t entry_sp, uint64_t* r0) {
    InterpreterOptions options;
    options.budget = spec_.budget;
    options.cpu = spec_.cpu;
    options.geometry = spec_.geometry;
    options.geometry.entry_below_top = top_ - entry_sp;
    // The context the trampoline wrote: the traced function's address (or
    // the count), the arguments and the return value. An extension has
    // no trampoline under it.
    if (!attachment_.freplace) {
      options.shared_stack_low = sp_ + std::min(frame_.ip_off, frame_.nregs_off);
      options.shared_stack_high = sp_ + frame_.retval_off + (SavesReturn() ? 8 : 0);
    }
    Interpreter interpreter(env_, loaded_, options);
    Outcome run = interpreter.RunProgram(index, args);
    outcome_.helper_calls.insert(outcome_.helper_calls.end(), run.helper_calls.begin(), run.helper_calls.end());
    outcome_.steps += run.steps;
    outcome_.read_engine_private |= run.read_engine_private;
    if (run.end != EndKind::kExit) {
      outcome_.end = run.end;
      outcome_.r0 = run.r0;
      outcome_.fault = run.fault;
      outcome_.message = std::move(run.message);
      outcome_.refusing_helper = run.refusing_helper;
      return false;
    }
    if (r0 != nullptr) {
      *r0 = run.r0;
    } else {
      outcome_.r0 = run.r0;
    }
    return true;
  }

  GuestEnvironment& env_;
  const LoadedCase& loaded_;
  const Attachment& attachment_;
  const RunSpec& spec_;
  const uint32_t flags_;
  const Frame frame_;
  const uint64_t top_;  // the traced program's caller's SP
  const uint64_t sp_;   // the SP the trampoline calls programs with
  const uint64_t ctx_;
  std::array<uint64_t, kMaxArgs> registers_{};  // x0..x7 at the call
  Outcome outcome_;
};

}  // namespace

AttachedRun RunAttached(GuestEnvironment& env, const LoadedCase& loaded, const Attachment& attachment, const RunSpec& spec) {
  return Composition(env, loaded, attachment, spec).Go();
}

std::vector<uint64_t> ReadLog(const GuestMemory& memory, int cpu) {
  const uint64_t base = LogBase(cpu);
  const uint64_t count = LoadU64(memory, base);
  std::vector<uint64_t> log;
  const uint64_t first = count > guest::kTrampLogEntries ? count - guest::kTrampLogEntries : 0;
  for (uint64_t c = first; c < count; ++c) {
    log.push_back(LoadU64(memory, base + 8 + 8 * (c % guest::kTrampLogEntries)));
  }
  return log;
}

void ResetLog(GuestMemory& memory, int cpu) { memory.Store<uint64_t>(LogBase(cpu), 0); }

}  // namespace bpfdiff::trampoline
