#include "harness/machine/machine.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "harness/machine/a64_access.h"
#include "support/hex.h"
#include "oracle/guest_layout.h"

namespace bpfdiff {
namespace {

uint32_t UnicornProtection(uint8_t permissions) {
  uint32_t prot = 0;
  if (permissions & kPermRead) prot |= UC_PROT_READ;
  if (permissions & kPermWrite) prot |= UC_PROT_WRITE;
  if (permissions & kPermExec) prot |= UC_PROT_EXEC;
  return prot;
}

// LSE atomics, compare-and-swap, and load/store exclusive, by encoding class.
bool IsAtomicInstruction(uint32_t word) {
  const bool lse_atomic = (word & 0x3f200c00) == 0x38200000;
  const bool exclusive_or_cas = (word & 0x3f000000) == 0x08000000;
  return lse_atomic || exclusive_or_cas;
}

// The JIT regions (packs and oversize images), for translation tracking.
constexpr uint64_t kJitBegin = guest::kPackBase;
constexpr uint64_t kJitEnd = guest::kOversizeBase + guest::kOversizeSize;
constexpr uint64_t kChunk = 64;

// Whether two chunks of code hold the same bytes. Not memcmp: libFuzzer
// intercepts that, and would take the code's bytes for a dictionary entry
// of the fuzz target's input.
bool SameChunk(const uint8_t* a, const uint8_t* b) {
  uint64_t differ = 0;
  for (uint64_t i = 0; i < kChunk; i += 8) {
    uint64_t x, y;
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    differ |= x ^ y;
  }
  return differ == 0;
}

constexpr int kXRegs[] = {
    UC_ARM64_REG_X0,  UC_ARM64_REG_X1,  UC_ARM64_REG_X2,  UC_ARM64_REG_X3,  UC_ARM64_REG_X4,
    UC_ARM64_REG_X5,  UC_ARM64_REG_X6,  UC_ARM64_REG_X7,  UC_ARM64_REG_X8,  UC_ARM64_REG_X9,
    UC_ARM64_REG_X10, UC_ARM64_REG_X11, UC_ARM64_REG_X12, UC_ARM64_REG_X13, UC_ARM64_REG_X14,
    UC_ARM64_REG_X15, UC_ARM64_REG_X16, UC_ARM64_REG_X17, UC_ARM64_REG_X18, UC_ARM64_REG_X19,
    UC_ARM64_REG_X20, UC_ARM64_REG_X21, UC_ARM64_REG_X22, UC_ARM64_REG_X23, UC_ARM64_REG_X24,
    UC_ARM64_REG_X25, UC_ARM64_REG_X26, UC_ARM64_REG_X27, UC_ARM64_REG_X28, UC_ARM64_REG_X29,
    UC_ARM64_REG_X30,
};

constexpr std::string_view kCallNames[] = {"none", "open", "map", "start"};

}  // namespace

std::string_view UnicornCallName(UnicornCall call) { return kCallNames[static_cast<size_t>(call)]; }

std::optional<UnicornCall> ParseUnicornCall(std::string_view name) {
  for (size_t i = 1; i < std::size(kCallNames); ++i) {
    if (kCallNames[i] == name) return static_cast<UnicornCall>(i);
  }
  return std::nullopt;
}

Result<UnicornFault> ParseUnicornFault(std::string_view text) {
  const size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  const auto call = ParseUnicornCall(name);
  if (!call) {
    return Fail("unknown Unicorn call '{}' in fault '{}': expected open, map or start, optionally followed by :SKIP",
                name, text);
  }
  UnicornFault fault{*call, 0};
  if (colon != std::string_view::npos) {
    auto skip = ParseUnsigned(text.substr(colon + 1));
    if (!skip) return Fail("fault '{}': SKIP: {}", text, skip.message());
    fault.skip = *skip;
  }
  return fault;
}

Result<std::unique_ptr<Machine>> Machine::Create(GuestMemory& memory, int cpu, MachineMode mode,
                                                 UnicornFault fault) {
  std::unique_ptr<Machine> machine(new Machine(memory, cpu, mode, fault));
  if (auto status = machine->Initialize(); !status) return status.error();
  return machine;
}

Result<std::unique_ptr<Machine>> Machine::CreateStepped(GuestMemory& memory, int cpu,
                                                        std::unique_ptr<SteppedCpu> stepped) {
  if (stepped == nullptr) return Fail("a stepped machine needs a CPU");
  std::unique_ptr<Machine> machine(new Machine(memory, cpu, MachineMode::kPrecise, {}));
  machine->stepped_ = std::move(stepped);
  return machine;
}

std::string_view Machine::executor() const { return stepped_ ? stepped_->name() : "unicorn"; }

// A failure to close is checked like every call, but a destructor has no
// one to tell: the machine is going away either way.
Machine::~Machine() { static_cast<void>(Close()); }

Status Machine::Close() {
  Status status;
  if (pristine_ != nullptr) status = Check(uc_context_free(pristine_), "free context");
  if (uc_ != nullptr) {
    if (auto closed = Check(uc_close(uc_), "close"); !closed && status) status = closed;
  }
  pristine_ = nullptr;
  uc_ = nullptr;
  return status;
}

Status Machine::Check(uc_err err, std::string_view call) const {
  if (err == UC_ERR_OK) return {};
  Error error = Fail("unicorn: {}: {}{}", call, uc_strerror(err),
                     err == UC_ERR_NOMEM && fault_.call != UnicornCall::kNone ? " (injected)" : "");
  if (!failure_) failure_ = error.message;
  return error;
}

uc_err Machine::Injected(UnicornCall call) {
  if (fault_.call != call) return UC_ERR_OK;
  if (fault_.skip > 0) {
    --fault_.skip;
    return UC_ERR_OK;
  }
  return UC_ERR_NOMEM;
}

Status Machine::Initialize() {
  ++engines_opened_;
  translated_instructions_ = 0;
  if (auto s = Check(Injected(UnicornCall::kOpen), "open"); !s) return s;
  if (auto s = Check(uc_open(UC_ARCH_ARM64, UC_MODE_ARM, &uc_), "open"); !s) return s;
  // LSE atomics (CASAL, SWPAL, LDADDAL) need the MAX model; the default
  // Cortex-A72 raises undefined instruction for them.
  if (auto s = Check(uc_ctl_set_cpu_model(uc_, UC_CPU_ARM64_MAX), "set CPU model"); !s) return s;
  for (const auto& region : memory_.regions()) {
    const std::string call = fmt::format("map region {}", region->name);
    if (auto s = Check(Injected(UnicornCall::kMapMemory), call); !s) return s;
    const uc_err err = uc_mem_map_ptr(uc_, region->base, region->size, UnicornProtection(region->permissions),
                                      region->host);
    if (auto s = Check(err, call); !s) return s;
  }
  uc_hook hook;
  struct CodeHook {
    void (*fn)(uc_engine*, uint64_t, uint32_t, void*);
    uint64_t begin, end;  // inclusive
  };
  const CodeHook code_hooks[] = {
      {&Machine::OnHelperCode, guest::kHelperBase, guest::kHelperBase + guest::kHelperRegionSize - 1},
      {&Machine::OnStopCode, guest::kStopAddress, guest::kStopAddress + 3},
      {&Machine::OnJitCode, kJitBegin, kJitEnd - 1},
  };
  for (const auto& h : code_hooks) {
    if (h.fn == &Machine::OnJitCode && mode_ == MachineMode::kFast) continue;
    const uc_err err = uc_hook_add(uc_, &hook, UC_HOOK_CODE, reinterpret_cast<void*>(h.fn), this, h.begin, h.end);
    if (auto s = Check(err, "add code hook"); !s) return s;
  }
  uc_err err = uc_hook_add(uc_, &hook, UC_HOOK_BLOCK, reinterpret_cast<void*>(&Machine::OnBlock), this,
                           kJitBegin, kJitEnd - 1);
  if (auto s = Check(err, "add block hook"); !s) return s;
  err = uc_hook_add(uc_, &hook, UC_HOOK_MEM_UNMAPPED | UC_HOOK_MEM_PROT,
                    reinterpret_cast<void*>(&Machine::OnBadAccess), this, 1, 0);
  if (auto s = Check(err, "add memory hook"); !s) return s;
  err = uc_hook_add(uc_, &hook, UC_HOOK_INTR, reinterpret_cast<void*>(&Machine::OnInterrupt), this, 1, 0);
  if (auto s = Check(err, "add interrupt hook"); !s) return s;
  translated_.assign((kJitEnd - kJitBegin) / kChunk / 64, 0);
  pending_bits_.assign(translated_.size(), 0);
  pending_.clear();
  translated_bytes_.clear();
  // this_cpu_ptr(): per-CPU variables are offsets from TPIDR_EL1, as in the
  // kernel. Part of the pristine context, so every call starts with it.
  uint64_t per_cpu = guest::PerCpuArea(cpu_);
  if (auto s = Check(uc_reg_write(uc_, UC_ARM64_REG_TPIDR_EL1, &per_cpu), "set TPIDR_EL1"); !s) return s;
  // `current`: the kernel's JIT reads the CPU number through it.
  uint64_t current = guest::ThreadInfo(cpu_);
  if (auto s = Check(uc_reg_write(uc_, UC_ARM64_REG_SP_EL0, &current), "set SP_EL0"); !s) return s;
  if (auto s = Check(uc_context_alloc(uc_, &pristine_), "allocate context"); !s) return s;
  return Check(uc_context_save(uc_, pristine_), "save context");
}

Status Machine::PrepareCall(uint64_t entry, const std::array<uint64_t, 5>& args, uint64_t sp) {
  if (failure_) return Fail("{}", *failure_);
  if (stepped_) {
    for (int reg = 0; reg < 31; ++reg) stepped_->SetX(reg, reg < 5 ? args[static_cast<size_t>(reg)] : 0);
    stepped_->SetX(30, guest::kStopAddress);
    stepped_->SetSp(sp);
    stepped_->SetNzcv(0);
    stepped_->SetPc(entry);
    stepped_->ClearExclusiveMonitor();
    exclusive_address_ = kNoAddress;
    steps_ = 0;
    atomic_instructions_ = 0;
    stopped_before_ = kNoAddress;
    return {};
  }
  if (translated_instructions_ > recycle_after_) {
    // Between calls no block runs: the old engine can go.
    if (auto closed = Close(); !closed) return closed;
    if (auto opened = Initialize(); !opened) return Fail("a fresh Unicorn engine: {}", opened.message());
  }
  if (auto s = Check(uc_context_restore(uc_, pristine_), "restore context"); !s) return s;
  int regs[] = {UC_ARM64_REG_X0, UC_ARM64_REG_X1, UC_ARM64_REG_X2, UC_ARM64_REG_X3,
                UC_ARM64_REG_X4, UC_ARM64_REG_SP,  UC_ARM64_REG_LR, UC_ARM64_REG_PC};
  uint64_t values[] = {args[0], args[1], args[2], args[3], args[4], sp, guest::kStopAddress, entry};
  void* pointers[8];
  for (int i = 0; i < 8; ++i) pointers[i] = &values[i];
  if (auto s = Check(uc_reg_write_batch(uc_, regs, pointers, 8), "write registers"); !s) return s;
  steps_ = 0;
  atomic_instructions_ = 0;
  stopped_before_ = kNoAddress;
  return {};
}

MachineStop Machine::Resume(uint64_t max_steps) {
  MachineStop stop;
  stop.kind = MachineStop::Kind::kError;
  if (failure_) {
    stop.message = *failure_;
    return stop;
  }
  returned_ = budget_hit_ = step_hit_ = fault_seen_ = helper_stopped_ = helper_trapped_ = false;
  exception_number_ = -1;
  stop_requested_ = false;
  step_limit_ = max_steps == ~uint64_t{0} ? max_steps : steps_ + max_steps;
  if (stepped_) return ResumeStepped(ReadPc());
  if (!pending_.empty()) ApplyPendingFlushes();
  const uint64_t start = ReadPc();
  pass_once_ = start == stopped_before_ ? start : kNoAddress;
  // Translation starts here, before any hook runs; the block that starts
  // here is new if its first chunk was (see OnBlock).
  fresh_start_ = MarkTranslated(start, start + 4) ? start : 0;
  uc_err err = Injected(UnicornCall::kStartEmulation);
  if (err == UC_ERR_OK) err = uc_emu_start(uc_, start, 0, 0, 0);
  stop.pc = ReadPc();
  if (failure_) {  // a Unicorn call in a hook failed: nothing the run did can be trusted
    stop.message = *failure_;
    return stop;
  }
  if (StopFromHooks(stop)) {
    if (stop.kind == MachineStop::Kind::kFault && mode_ == MachineMode::kFast && fault_access_ != AccessKind::kExec) {
      LocateFault(stop);
    }
  } else if (exception_number_ >= 0 || err == UC_ERR_EXCEPTION) {
    stop.kind = MachineStop::Kind::kException;
    // QEMU leaves the pc after an SVC, HVC or SMC (their preferred return
    // address); a stepped CPU stops before it. Both report the
    // instruction.
    constexpr int kExcpSwi = 2, kExcpHvc = 11, kExcpSmc = 13;
    if (exception_number_ == kExcpSwi || exception_number_ == kExcpHvc || exception_number_ == kExcpSmc) {
      stop.pc -= 4;
      WritePc(stop.pc);
    }
  } else if (err != UC_ERR_OK) {
    stop.kind = MachineStop::Kind::kError;
    stop.message = Check(err, fmt::format("start emulation at 0x{:x}", start)).message();
  } else if (stop.pc == 0) {
    // uc_emu_start's `until` is 0: a branch to address 0 ends the run as
    // if asked to, where the CPU takes an instruction abort (nothing is
    // mapped there).
    stop.kind = MachineStop::Kind::kFault;
    stop.access = AccessKind::kExec;
    stop.address = 0;
  } else {
    stop.kind = MachineStop::Kind::kError;
    stop.message = fmt::format("unicorn stopped at 0x{:x} for no recorded reason", stop.pc);
  }
  return stop;
}

bool Machine::StopFromHooks(MachineStop& stop) {
  if (returned_) {
    stop.kind = MachineStop::Kind::kReturned;
  } else if (helper_trapped_) {
    stop.kind = MachineStop::Kind::kHelperTrap;
    stop.helper_id = helper_id_;
  } else if (helper_stopped_) {
    stop.kind = MachineStop::Kind::kHelper;
    stop.helper = std::move(helper_result_);
    stop.helper_id = helper_id_;
  } else if (fault_seen_) {
    stop.kind = MachineStop::Kind::kFault;
    stop.address = fault_address_;
    stop.access = fault_access_;
  } else if (budget_hit_) {
    stop.kind = MachineStop::Kind::kBudget;
  } else if (step_hit_) {
    stop.kind = MachineStop::Kind::kStep;
  } else {
    return false;
  }
  return true;
}

MachineStop Machine::ResumeStepped(uint64_t start) {
  MachineStop stop;
  stop.kind = MachineStop::Kind::kError;
  stop.pc = start;
  if (auto active = stepped_->Activate(); !active) {
    failure_ = fmt::format("{}: {}", stepped_->name(), active.message());
    stop.message = *failure_;
    return stop;
  }
  pass_once_ = start == stopped_before_ ? start : kNoAddress;
  for (;;) {
    const uint64_t pc = stepped_->Pc();
    stop.pc = pc;
    if (pc - guest::kStopAddress < 4) {
      OnStopCode(nullptr, pc, 4, this);
      break;
    }
    // The fetch: Unicorn's fetch hooks report an unmapped or non-executable
    // pc as a fault at it; a misaligned pc is a PC alignment exception.
    if (pc % 4 != 0) {
      stop.kind = MachineStop::Kind::kException;
      stop.message = fmt::format("pc 0x{:x} is not word aligned", pc);
      return stop;
    }
    const uint8_t* code = FetchableWord(pc);
    if (code == nullptr) {
      fault_seen_ = true;
      fault_address_ = pc;
      fault_access_ = AccessKind::kExec;
      break;
    }
    if (pc - guest::kHelperBase < guest::kHelperRegionSize) {
      OnHelperCode(nullptr, pc, 4, this);
    } else if (pc >= kJitBegin && pc < kJitEnd) {
      OnJitCode(nullptr, pc, 4, this);
      if (!stop_requested_ && observer_ != nullptr) observer_->OnBlock(cpu_, pc, 4);
    }
    if (stop_requested_) break;
    uint32_t word;
    std::memcpy(&word, code, 4);
    const SteppedCheck check = CheckStepped(pc, word, stop);
    if (check == SteppedCheck::kStop) break;
    if (check == SteppedCheck::kPerformed) continue;
    switch (stepped_->RunOne()) {
      case SteppedCpu::Step::kRan: continue;
      case SteppedCpu::Step::kException:
        stop.kind = MachineStop::Kind::kException;
        return stop;
      case SteppedCpu::Step::kUnsupported:
        stop.kind = MachineStop::Kind::kError;
        stop.message = fmt::format("{} cannot run the instruction 0x{:08x} at 0x{:x}: {}", stepped_->name(), word,
                                   pc, stepped_->why());
        return stop;
    }
  }
  if (!StopFromHooks(stop) && stop.kind == MachineStop::Kind::kError && stop.message.empty()) {
    stop.message = fmt::format("{} stopped at 0x{:x} for no recorded reason", stepped_->name(), stop.pc);
  }
  return stop;
}

const uint8_t* Machine::FetchableWord(uint64_t pc) {
  const Region* region = fetch_region_;
  if (region == nullptr || !region->Contains(pc, 4)) {
    region = memory_.Find(pc, 4);
    if (region == nullptr) return nullptr;
    fetch_region_ = region;  // regions live as long as their memory
  }
  if ((region->permissions & kPermExec) == 0) return nullptr;
  return region->host + (pc - region->base);
}

namespace {

// MRS: 1101 0101 0011 o0 op1 CRn CRm op2 Rt; the system register is bits
// 19..5 (o0:op1:CRn:CRm:op2 as op0 - 2, op1, CRn, CRm, op2).
constexpr uint32_t kMrsMask = 0xfff00000;
constexpr uint32_t kMrs = 0xd5300000;
constexpr uint32_t SystemRegister(uint32_t op0, uint32_t op1, uint32_t crn, uint32_t crm, uint32_t op2) {
  return ((op0 - 2) << 14) | (op1 << 11) | (crn << 7) | (crm << 3) | op2;
}
constexpr uint32_t kTpidrEl1 = SystemRegister(3, 0, 13, 0, 4);
constexpr uint32_t kTpidrEl2 = SystemRegister(3, 4, 13, 0, 2);
constexpr uint32_t kSpEl0 = SystemRegister(3, 0, 4, 1, 0);
constexpr uint32_t kNzcv = SystemRegister(3, 3, 4, 2, 0);

// The system instructions a stepped CPU runs itself: hints (NOP, YIELD,
// CSDB, BTI ...: HINT #imm), CLREX, DSB, DMB, ISB, and MRS of NZCV.
bool SteppedCpuRunsSystem(uint32_t word) {
  if ((word & 0xfffff01f) == 0xd503201f) return true;  // HINT
  if ((word & 0xfffff01f) == 0xd503301f) {             // CLREX, DSB, DMB, ISB (op2 010, 100, 101, 110)
    const uint32_t op2 = (word >> 5) & 7;
    return op2 == 2 || op2 == 4 || op2 == 5 || op2 == 6;
  }
  return (word & kMrsMask) == kMrs && ((word >> 5) & 0x7fff) == kNzcv;
}

}  // namespace

Machine::SteppedCheck Machine::CheckStepped(uint64_t pc, uint32_t word, MachineStop& stop) {
  // The reserved space (op0 = 0000: UDF) and exception generation (BRK,
  // HLT, SVC, HVC, SMC, DCPS): an exception, as Unicorn raises. VIXL would
  // treat some HLT immediates as its own pseudo-instructions.
  if (((word >> 25) & 0xf) == 0 || (word & 0xff000000) == 0xd4000000) {
    stop.kind = MachineStop::Kind::kException;
    return SteppedCheck::kStop;
  }
  if ((word & 0xffc00000) == 0xd5000000 && !SteppedCpuRunsSystem(word)) {
    // The per-CPU base and `current`, as Machine::Initialize gives Unicorn.
    const uint32_t reg = (word >> 5) & 0x7fff;
    if ((word & kMrsMask) == kMrs && (reg == kTpidrEl1 || reg == kSpEl0)) {
      const int rt = static_cast<int>(word & 31);
      if (rt != 31) stepped_->SetX(rt, reg == kTpidrEl1 ? guest::PerCpuArea(cpu_) : guest::ThreadInfo(cpu_));
      stepped_->SetPc(pc + 4);
      return SteppedCheck::kPerformed;
    }
    // An EL2 register read at EL1 is undefined, as Unicorn raises it (the
    // call may stand for a kernel at EL2: JitCall answers TPIDR_EL2).
    if ((word & kMrsMask) == kMrs && reg == kTpidrEl2) {
      stop.kind = MachineStop::Kind::kException;
      return SteppedCheck::kStop;
    }
    stop.kind = MachineStop::Kind::kError;
    stop.message = fmt::format("{} is not given the system instruction 0x{:08x} at 0x{:x}", stepped_->name(), word, pc);
    return SteppedCheck::kStop;
  }
  if ((word & 0xfffff0ff) == 0xd503305f) exclusive_address_ = kNoAddress;  // CLREX
  const MachineRegisters registers(*this);
  const auto access = MemoryAccessOf(word, pc, registers);
  if (!access) return SteppedCheck::kRun;
  // A store-exclusive to an address other than the last load-exclusive's
  // fails without an access (the local monitor; QEMU checks the address
  // first too), so it cannot fault, misaligned or not: on Unicorn the
  // loop's next load-exclusive faults instead. It is performed here: Ws =
  // 1, the monitor cleared (VIXL would abort on a misaligned one). One to
  // the monitored address is checked as a store.
  // o2 = 0, L = 0 or 1; not CASP (o1 = 1 with bit 31 clear), an atomic.
  const bool casp = (word & (1u << 21)) != 0 && (word & (1u << 31)) == 0;
  const bool exclusive = (word & 0x3f800000) == 0x08000000 && !casp;
  const bool exclusive_load = exclusive && (word & (1u << 22)) != 0;
  if (exclusive && !exclusive_load) {
    const bool monitored = access->begin == exclusive_address_;
    exclusive_address_ = kNoAddress;
    if (!monitored) {
      const int rs = static_cast<int>((word >> 16) & 31);
      if (rs != 31) stepped_->SetX(rs, 1);
      stepped_->ClearExclusiveMonitor();
      stepped_->SetPc(pc + 4);
      return SteppedCheck::kPerformed;
    }
  }
  const uint64_t bytes = access->end - access->begin;
  // VIXL aborts on an access through a misaligned SP (the architecture's
  // optional SP alignment check, which Unicorn does not make). The JITs
  // keep SP 16-byte aligned; should one not, this says so instead.
  const bool sp_based = (word & 0x3a000000) == 0x38000000 || (word & 0x3a000000) == 0x28000000 ||
                        (word & 0x3f000000) == 0x08000000;  // single and pair, exclusive
  if (sp_based && ((word >> 5) & 31) == 31 && stepped_->Sp() % 16 != 0) {
    stop.kind = MachineStop::Kind::kError;
    stop.message = fmt::format("{} is not given an access through the misaligned SP 0x{:x} at 0x{:x}",
                               stepped_->name(), stepped_->Sp(), pc);
    return SteppedCheck::kStop;
  }
  if (access->atomic && access->begin % bytes != 0) {  // an alignment fault
    stop.kind = MachineStop::Kind::kException;
    stop.message = fmt::format("misaligned atomic access of {} bytes at 0x{:x}", bytes, access->begin);
    return SteppedCheck::kStop;
  }
  // Byte by byte, as Unicorn's MMU maps adjacent regions; Inspect, so that
  // the check is not counted as a read of engine-private bytes. A
  // read-modify-write is checked as a read first, as Unicorn reports it
  // (an atomic on unmapped memory faults as a read; on read-only memory,
  // as a write).
  const auto first_denied = [&](AccessKind kind) -> std::optional<uint64_t> {
    if (memory_.Inspect(access->begin, bytes, kind) != nullptr) return std::nullopt;  // one region allows it all
    for (uint64_t i = 0; i < bytes; ++i) {
      if (memory_.Inspect(access->begin + i, 1, kind) == nullptr) return access->begin + i;
    }
    return std::nullopt;
  };
  for (const AccessKind kind : {AccessKind::kRead, AccessKind::kWrite}) {
    if (kind == AccessKind::kWrite ? !access->writes : !access->reads) continue;
    if (const auto denied = first_denied(kind)) {
      fault_seen_ = true;
      fault_address_ = *denied;
      fault_access_ = kind;
      return SteppedCheck::kStop;
    }
  }
  if (exclusive_load) exclusive_address_ = access->begin;
  return SteppedCheck::kRun;
}

void Machine::OnJitCode(uc_engine* uc, uint64_t address, uint32_t, void* self) {
  auto* m = static_cast<Machine*>(self);
  if (m->steps_ >= m->budget_) {
    m->budget_hit_ = true;
    m->StopEmulation(uc);
    return;
  }
  if (m->steps_ >= m->step_limit_) {
    m->step_hit_ = true;
    m->StopEmulation(uc);  // stops before this instruction runs
    return;
  }
  if (m->stop_before_ != nullptr) {
    if (address != m->pass_once_ &&
        std::binary_search(m->stop_before_->begin(), m->stop_before_->end(), address)) {
      m->step_hit_ = true;
      m->stopped_before_ = address;
      m->StopEmulation(uc);
      return;
    }
    m->pass_once_ = kNoAddress;
  }
  ++m->steps_;
  if (m->count_atomics_) {
    if (const uint8_t* p = m->memory_.HostPointer(address, 4)) {
      uint32_t word;
      std::memcpy(&word, p, 4);
      if (IsAtomicInstruction(word)) ++m->atomic_instructions_;
    }
  }
}

void Machine::OnHelperCode(uc_engine* uc, uint64_t address, uint32_t, void* self) {
  auto* m = static_cast<Machine*>(self);
  m->helper_id_ = -1;  // until the address names a helper
  if (m->helper_context_ == nullptr) {
    m->helper_stopped_ = true;
    m->helper_result_ = {HelperResult::Kind::kError, 0, "helper called with no helper context"};
    m->StopEmulation(uc);
    return;
  }
  if (address == guest::kBadCallxStub) {
    m->helper_stopped_ = true;
    m->helper_result_ = {HelperResult::Kind::kError, 0, BadCallxMessage()};
    m->StopEmulation(uc);
    return;
  }
  const uint64_t id = (address - guest::kHelperBase) / guest::kHelperStubSize;
  m->helper_id_ = static_cast<int>(id);
  if (m->trapped_helpers_ != nullptr && id < m->trapped_helpers_->size() && (*m->trapped_helpers_)[id]) {
    m->helper_trapped_ = true;
    m->StopEmulation(uc);  // before the stub's RET: the harness completes the call
    return;
  }
  HelperArgs args;
  for (int i = 0; i < 5; ++i) args[static_cast<size_t>(i)] = m->ReadX(i);
  HelperResult result = InvokeHelper(static_cast<int64_t>(id), *m->helper_context_, args, *m->helper_trace_);
  if (result.kind == HelperResult::Kind::kReturn) {
    m->WriteX(0, result.value);  // the stub's RET returns it
    return;
  }
  m->helper_stopped_ = true;
  m->helper_result_ = std::move(result);
  m->StopEmulation(uc);
}

void Machine::OnStopCode(uc_engine* uc, uint64_t, uint32_t, void* self) {
  auto* m = static_cast<Machine*>(self);
  m->returned_ = true;
  m->StopEmulation(uc);
}

void Machine::OnBlock(uc_engine* uc, uint64_t address, uint32_t size, void* self) {
  auto* m = static_cast<Machine*>(self);
  if (m->MarkTranslated(address, address + size) || address == m->fresh_start_) {
    m->translated_instructions_ += size / 4;
    m->translated_total_ += size / 4;
  }
  m->fresh_start_ = 0;
  if (m->mode_ == MachineMode::kFast) {
    // The budget in whole blocks: enough to stop a program that loops.
    m->last_block_ = address;
    m->last_block_size_ = size;
    m->steps_ += size / 4;
    if (m->steps_ > m->budget_) {
      m->budget_hit_ = true;
      m->StopEmulation(uc);
    }
  }
  if (m->observer_ != nullptr) m->observer_->OnBlock(m->cpu_, address, size);
}

bool Machine::MarkTranslated(uint64_t begin, uint64_t end) {
  if (end <= kJitBegin || begin >= kJitEnd) return false;
  begin = std::max(begin, kJitBegin);
  end = std::min(end, kJitEnd);
  uint64_t fresh = 0;
  for (uint64_t c = (begin - kJitBegin) / kChunk; c <= (end - 1 - kJitBegin) / kChunk; ++c) {
    const uint64_t bit = uint64_t{1} << (c % 64);
    const bool new_chunk = (translated_[c / 64] & bit) == 0;
    fresh |= new_chunk ? bit : 0;
    translated_[c / 64] |= bit;
    // Nothing writes code while a CPU runs: these are the bytes translated.
    if (new_chunk && keep_unchanged_) {
      if (const uint8_t* host = memory_.HostPointer(kJitBegin + c * kChunk, kChunk)) {
        std::memcpy(translated_bytes_[c].data(), host, kChunk);
      } else {
        translated_bytes_.erase(c);
      }
    }
  }
  return fresh != 0;
}

void Machine::ApplyPendingFlushes() {
  static_assert(kCacheChunk == kChunk, "a kept chunk's bytes are those of one mark");
  std::sort(pending_.begin(), pending_.end());
  // Changed chunks next to each other are dropped in one call.
  uint64_t run_begin = 0, run_end = 0;
  const auto drop_run = [&] {
    if (run_end == run_begin) return;
    if (Check(uc_ctl_remove_cache(uc_, kJitBegin + run_begin * kChunk, kJitBegin + run_end * kChunk),
              "remove cached translations")) {
      ++unicorn_cache_removals_;
    }
    run_begin = run_end = 0;
  };
  for (const uint64_t c : pending_) {
    pending_bits_[c / 64] &= ~(uint64_t{1} << (c % 64));
    const auto kept = translated_bytes_.find(c);
    const uint8_t* host = memory_.HostPointer(kJitBegin + c * kChunk, kChunk);
    if (kept != translated_bytes_.end() && host != nullptr && SameChunk(kept->second.data(), host)) {
      ++translations_kept_;
      continue;
    }
    translated_[c / 64] &= ~(uint64_t{1} << (c % 64));
    if (kept != translated_bytes_.end()) translated_bytes_.erase(kept);
    if (run_end != c) drop_run();
    if (run_end == run_begin) run_begin = c;
    run_end = c + 1;
  }
  drop_run();
  pending_.clear();
}

bool Machine::OnBadAccess(uc_engine*, uc_mem_type type, uint64_t address, int, int64_t, void* self) {
  auto* m = static_cast<Machine*>(self);
  if (!m->fault_seen_) {  // a straddling store reports each byte; keep the first
    m->fault_seen_ = true;
    m->fault_address_ = address;
    switch (type) {
      case UC_MEM_WRITE_UNMAPPED:
      case UC_MEM_WRITE_PROT: m->fault_access_ = AccessKind::kWrite; break;
      case UC_MEM_FETCH_UNMAPPED:
      case UC_MEM_FETCH_PROT: m->fault_access_ = AccessKind::kExec; break;
      default: m->fault_access_ = AccessKind::kRead; break;
    }
  }
  return false;
}

// A CPU exception (BRK, UDF, SVC, HVC, SMC, an alignment fault): noted, and
// the run stops there, as without the hook; the number tells where QEMU
// left the pc.
void Machine::OnInterrupt(uc_engine* uc, uint32_t number, void* self) {
  auto* m = static_cast<Machine*>(self);
  m->exception_number_ = static_cast<int>(number);
  m->StopEmulation(uc);
}

// Freeing a saved context only releases host memory; a destructor or a
// move has no one to report a failure to.
MachineContext::~MachineContext() {
  if (context_ != nullptr) static_cast<void>(uc_context_free(context_));
}

MachineContext& MachineContext::operator=(MachineContext&& other) noexcept {
  if (this != &other) {
    if (context_ != nullptr) static_cast<void>(uc_context_free(context_));
    context_ = other.context_;
    stepped_ = std::move(other.stepped_);
    steps_ = other.steps_;
    other.context_ = nullptr;
  }
  return *this;
}

MachineContext Machine::SaveContext() {
  MachineContext saved;
  if (stepped_) {
    for (int reg = 0; reg < 31; ++reg) saved.stepped_.push_back(stepped_->X(reg));
    saved.stepped_.push_back(stepped_->Sp());
    saved.stepped_.push_back(stepped_->Pc());
    saved.stepped_.push_back(stepped_->Nzcv());
    saved.steps_ = steps_;
    return saved;
  }
  if (Check(uc_context_alloc(uc_, &saved.context_), "allocate context")) {
    static_cast<void>(Check(uc_context_save(uc_, saved.context_), "save context"));
  }
  saved.steps_ = steps_;
  return saved;
}

void Machine::RestoreContext(const MachineContext& context) {
  if (stepped_) {
    if (context.stepped_.size() != 34) {
      if (!failure_) failure_ = "restore context: the context was not saved from a stepped machine";
      return;
    }
    for (int reg = 0; reg < 31; ++reg) stepped_->SetX(reg, context.stepped_[static_cast<size_t>(reg)]);
    stepped_->SetSp(context.stepped_[31]);
    stepped_->SetPc(context.stepped_[32]);
    stepped_->SetNzcv(static_cast<uint32_t>(context.stepped_[33]));
    stepped_->ClearExclusiveMonitor();  // the exception return of a switch back
    exclusive_address_ = kNoAddress;
    steps_ = context.steps_;
    return;
  }
  if (context.context_ == nullptr) {
    if (!failure_) failure_ = "restore context: the context was never saved";
    return;
  }
  static_cast<void>(Check(uc_context_restore(uc_, context.context_), "restore context"));
  steps_ = context.steps_;
}

void Machine::LocateFault(MachineStop& stop) {
  // The registers are exact up to the faulting instruction; the pc is the
  // start of some block. The faulting instruction is in the block that
  // was running, and is the one whose access holds the faulting address.
  const MachineRegisters registers(*this);
  int matches = 0;
  uint64_t found = 0;
  for (uint64_t pc = last_block_; pc < last_block_ + last_block_size_; pc += 4) {
    const uint8_t* p = memory_.HostPointer(pc, 4);
    if (p == nullptr) break;
    uint32_t word;
    std::memcpy(&word, p, 4);
    const auto range = MemoryAccessOf(word, pc, registers);
    if (range && range->Contains(stop.address)) {
      ++matches;
      found = pc;
    }
  }
  if (matches == 1) {
    stop.pc = found;
    WritePc(found);
    return;
  }
  stop.kind = MachineStop::Kind::kImpreciseFault;
  stop.message = fmt::format("{} accesses of the block at 0x{:x} may have faulted at 0x{:x}", matches,
                             last_block_, stop.address);
}

uint64_t Machine::ReadSp() const {
  if (stepped_) return stepped_->Sp();
  uint64_t sp = 0;
  static_cast<void>(Check(uc_reg_read(uc_, UC_ARM64_REG_SP, &sp), "read SP"));
  return sp;
}

uint64_t Machine::ReadX(int reg) const {
  if (stepped_) return stepped_->X(reg);
  uint64_t value = 0;
  static_cast<void>(Check(uc_reg_read(uc_, kXRegs[reg], &value), "read X register"));
  return value;
}

void Machine::WriteX(int reg, uint64_t value) {
  if (stepped_) return stepped_->SetX(reg, value);
  static_cast<void>(Check(uc_reg_write(uc_, kXRegs[reg], &value), "write X register"));
}

uint64_t Machine::ReadPc() const {
  if (stepped_) return stepped_->Pc();
  uint64_t pc = 0;
  static_cast<void>(Check(uc_reg_read(uc_, UC_ARM64_REG_PC, &pc), "read PC"));
  return pc;
}

void Machine::WritePc(uint64_t pc) {
  if (stepped_) return stepped_->SetPc(pc);
  static_cast<void>(Check(uc_reg_write(uc_, UC_ARM64_REG_PC, &pc), "write PC"));
}

void Machine::StopEmulation(uc_engine* uc) {
  if (stepped_) {
    stop_requested_ = true;
    return;
  }
  static_cast<void>(Check(uc_emu_stop(uc), "stop emulation"));
}

void Machine::RemoveCache(uint64_t begin, uint64_t end) {
  if (end <= begin || stepped_) return;  // a stepped CPU fetches every instruction afresh
  const bool tracked = begin >= kJitBegin && end <= kJitEnd;
  bool translated = !tracked;  // outside the tracked regions: always ask Unicorn
  if (tracked) {
    for (uint64_t c = (begin - kJitBegin) / kChunk; c <= (end - 1 - kJitBegin) / kChunk && !translated; ++c) {
      translated = (translated_[c / 64] >> (c % 64)) & 1;
    }
  }
  if (!translated) return;
  if (keep_unchanged_ && tracked) {
    for (uint64_t c = (begin - kJitBegin) / kChunk; c <= (end - 1 - kJitBegin) / kChunk; ++c) {
      const uint64_t bit = uint64_t{1} << (c % 64);
      if ((translated_[c / 64] & bit) == 0 || (pending_bits_[c / 64] & bit) != 0) continue;
      pending_bits_[c / 64] |= bit;
      pending_.push_back(c);
    }
    return;
  }
  if (!Check(uc_ctl_remove_cache(uc_, begin, end), "remove cached translations")) return;
  ++unicorn_cache_removals_;
  if (!tracked) return;
  // Every block overlapping [begin, end) is gone; chunks wholly inside the
  // range hold no translation any more.
  for (uint64_t c = (begin - kJitBegin + kChunk - 1) / kChunk; c < (end - kJitBegin) / kChunk; ++c) {
    translated_[c / 64] &= ~(uint64_t{1} << (c % 64));
  }
}

}  // namespace bpfdiff
