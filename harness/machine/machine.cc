#include "harness/machine/machine.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "harness/machine/a64_access.h"
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

Error UnicornError(std::string_view what, uc_err err) {
  return Fail("unicorn: {}: {}", what, uc_strerror(err));
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

constexpr int kXRegs[] = {
    UC_ARM64_REG_X0,  UC_ARM64_REG_X1,  UC_ARM64_REG_X2,  UC_ARM64_REG_X3,  UC_ARM64_REG_X4,
    UC_ARM64_REG_X5,  UC_ARM64_REG_X6,  UC_ARM64_REG_X7,  UC_ARM64_REG_X8,  UC_ARM64_REG_X9,
    UC_ARM64_REG_X10, UC_ARM64_REG_X11, UC_ARM64_REG_X12, UC_ARM64_REG_X13, UC_ARM64_REG_X14,
    UC_ARM64_REG_X15, UC_ARM64_REG_X16, UC_ARM64_REG_X17, UC_ARM64_REG_X18, UC_ARM64_REG_X19,
    UC_ARM64_REG_X20, UC_ARM64_REG_X21, UC_ARM64_REG_X22, UC_ARM64_REG_X23, UC_ARM64_REG_X24,
    UC_ARM64_REG_X25, UC_ARM64_REG_X26, UC_ARM64_REG_X27, UC_ARM64_REG_X28, UC_ARM64_REG_X29,
    UC_ARM64_REG_X30,
};

}  // namespace

Result<std::unique_ptr<Machine>> Machine::Create(GuestMemory& memory, int cpu, MachineMode mode) {
  std::unique_ptr<Machine> machine(new Machine(memory, cpu, mode));
  if (auto status = machine->Initialize(); !status) return status.error();
  return machine;
}

Machine::~Machine() { Close(); }

void Machine::Close() {
  if (pristine_ != nullptr) uc_context_free(pristine_);
  if (uc_ != nullptr) uc_close(uc_);
  pristine_ = nullptr;
  uc_ = nullptr;
}

Status Machine::Initialize() {
  ++engines_opened_;
  translated_instructions_ = 0;
  uc_err err = uc_open(UC_ARCH_ARM64, UC_MODE_ARM, &uc_);
  if (err != UC_ERR_OK) return UnicornError("open", err);
  // LSE atomics (CASAL, SWPAL, LDADDAL) need the MAX model; the default
  // Cortex-A72 raises undefined instruction for them.
  err = uc_ctl_set_cpu_model(uc_, UC_CPU_ARM64_MAX);
  if (err != UC_ERR_OK) return UnicornError("set CPU model", err);
  for (const auto& region : memory_.regions()) {
    err = uc_mem_map_ptr(uc_, region->base, region->size, UnicornProtection(region->permissions),
                         region->host);
    if (err != UC_ERR_OK) return UnicornError(fmt::format("map region {}", region->name), err);
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
    err = uc_hook_add(uc_, &hook, UC_HOOK_CODE, reinterpret_cast<void*>(h.fn), this, h.begin, h.end);
    if (err != UC_ERR_OK) return UnicornError("add code hook", err);
  }
  err = uc_hook_add(uc_, &hook, UC_HOOK_BLOCK, reinterpret_cast<void*>(&Machine::OnBlock), this,
                    kJitBegin, kJitEnd - 1);
  if (err != UC_ERR_OK) return UnicornError("add block hook", err);
  err = uc_hook_add(uc_, &hook, UC_HOOK_MEM_UNMAPPED | UC_HOOK_MEM_PROT,
                    reinterpret_cast<void*>(&Machine::OnBadAccess), this, 1, 0);
  if (err != UC_ERR_OK) return UnicornError("add memory hook", err);
  translated_.assign((kJitEnd - kJitBegin) / kChunk / 64, 0);
  // this_cpu_ptr(): per-CPU variables are offsets from TPIDR_EL1, as in the
  // kernel. Part of the pristine context, so every call starts with it.
  uint64_t per_cpu = guest::PerCpuArea(cpu_);
  err = uc_reg_write(uc_, UC_ARM64_REG_TPIDR_EL1, &per_cpu);
  if (err != UC_ERR_OK) return UnicornError("set TPIDR_EL1", err);
  err = uc_context_alloc(uc_, &pristine_);
  if (err != UC_ERR_OK) return UnicornError("allocate context", err);
  err = uc_context_save(uc_, pristine_);
  if (err != UC_ERR_OK) return UnicornError("save context", err);
  return {};
}

void Machine::PrepareCall(uint64_t entry, const std::array<uint64_t, 5>& args, uint64_t sp) {
  if (translated_instructions_ > recycle_after_) {
    // Between calls no block runs: the old engine can go. A new one that
    // would not open is a harness failure nothing downstream can handle.
    Close();
    if (auto status = Initialize(); !status) {
      std::fprintf(stderr, "bpfdiff: cannot reopen a Unicorn engine: %s\n", status.message().c_str());
      std::abort();
    }
  }
  uc_context_restore(uc_, pristine_);
  int regs[] = {UC_ARM64_REG_X0, UC_ARM64_REG_X1, UC_ARM64_REG_X2, UC_ARM64_REG_X3,
                UC_ARM64_REG_X4, UC_ARM64_REG_SP,  UC_ARM64_REG_LR, UC_ARM64_REG_PC};
  uint64_t values[] = {args[0], args[1], args[2], args[3], args[4], sp, guest::kStopAddress, entry};
  void* pointers[8];
  for (int i = 0; i < 8; ++i) pointers[i] = &values[i];
  uc_reg_write_batch(uc_, regs, pointers, 8);
  steps_ = 0;
  atomic_instructions_ = 0;
}

MachineStop Machine::Resume(uint64_t max_steps) {
  returned_ = budget_hit_ = step_hit_ = fault_seen_ = helper_stopped_ = helper_trapped_ = false;
  step_limit_ = max_steps == ~uint64_t{0} ? max_steps : steps_ + max_steps;
  const uint64_t start = ReadPc();
  // Translation starts here, before any hook runs; the block that starts
  // here is new if its first chunk was (see OnBlock).
  fresh_start_ = MarkTranslated(start, start + 4) ? start : 0;
  const uc_err err = uc_emu_start(uc_, start, 0, 0, 0);
  MachineStop stop;
  stop.pc = ReadPc();
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
    if (mode_ == MachineMode::kFast && fault_access_ != AccessKind::kExec) LocateFault(stop);
  } else if (budget_hit_) {
    stop.kind = MachineStop::Kind::kBudget;
  } else if (step_hit_) {
    stop.kind = MachineStop::Kind::kStep;
  } else if (err == UC_ERR_EXCEPTION) {
    stop.kind = MachineStop::Kind::kException;
  } else if (err != UC_ERR_OK) {
    stop.kind = MachineStop::Kind::kError;
    stop.message = fmt::format("unicorn stopped at 0x{:x}: {}", stop.pc, uc_strerror(err));
  } else {
    stop.kind = MachineStop::Kind::kError;
    stop.message = fmt::format("unicorn stopped at 0x{:x} for no recorded reason", stop.pc);
  }
  return stop;
}

void Machine::OnJitCode(uc_engine* uc, uint64_t address, uint32_t, void* self) {
  auto* m = static_cast<Machine*>(self);
  if (m->steps_ >= m->budget_) {
    m->budget_hit_ = true;
    uc_emu_stop(uc);
    return;
  }
  if (m->steps_ >= m->step_limit_) {
    m->step_hit_ = true;
    uc_emu_stop(uc);  // stops before this instruction runs
    return;
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
    uc_emu_stop(uc);
    return;
  }
  if (address == guest::kBadCallxStub) {
    m->helper_stopped_ = true;
    m->helper_result_ = {HelperResult::Kind::kError, 0, BadCallxMessage()};
    uc_emu_stop(uc);
    return;
  }
  const uint64_t id = (address - guest::kHelperBase) / guest::kHelperStubSize;
  m->helper_id_ = static_cast<int>(id);
  if (m->trapped_helpers_ != nullptr && id < m->trapped_helpers_->size() && (*m->trapped_helpers_)[id]) {
    m->helper_trapped_ = true;
    uc_emu_stop(uc);  // before the stub's RET: the harness completes the call
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
  uc_emu_stop(uc);
}

void Machine::OnStopCode(uc_engine* uc, uint64_t, uint32_t, void* self) {
  static_cast<Machine*>(self)->returned_ = true;
  uc_emu_stop(uc);
}

void Machine::OnBlock(uc_engine* uc, uint64_t address, uint32_t size, void* self) {
  auto* m = static_cast<Machine*>(self);
  if (m->MarkTranslated(address, address + size) || address == m->fresh_start_) {
    m->translated_instructions_ += size / 4;
  }
  m->fresh_start_ = 0;
  if (m->mode_ == MachineMode::kFast) {
    // The budget in whole blocks: enough to stop a program that loops.
    m->last_block_ = address;
    m->last_block_size_ = size;
    m->steps_ += size / 4;
    if (m->steps_ > m->budget_) {
      m->budget_hit_ = true;
      uc_emu_stop(uc);
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
    fresh |= ~translated_[c / 64] & bit;
    translated_[c / 64] |= bit;
  }
  return fresh != 0;
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

MachineContext::~MachineContext() {
  if (context_ != nullptr) uc_context_free(context_);
}

MachineContext& MachineContext::operator=(MachineContext&& other) noexcept {
  if (this != &other) {
    if (context_ != nullptr) uc_context_free(context_);
    context_ = other.context_;
    steps_ = other.steps_;
    other.context_ = nullptr;
  }
  return *this;
}

MachineContext Machine::SaveContext() {
  MachineContext saved;
  uc_context_alloc(uc_, &saved.context_);
  uc_context_save(uc_, saved.context_);
  saved.steps_ = steps_;
  return saved;
}

void Machine::RestoreContext(const MachineContext& context) {
  uc_context_restore(uc_, context.context_);
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
  uint64_t sp = 0;
  uc_reg_read(uc_, UC_ARM64_REG_SP, &sp);
  return sp;
}

uint64_t Machine::ReadX(int reg) const {
  uint64_t value = 0;
  uc_reg_read(uc_, kXRegs[reg], &value);
  return value;
}

void Machine::WriteX(int reg, uint64_t value) { uc_reg_write(uc_, kXRegs[reg], &value); }

uint64_t Machine::ReadPc() const {
  uint64_t pc = 0;
  uc_reg_read(uc_, UC_ARM64_REG_PC, &pc);
  return pc;
}

void Machine::WritePc(uint64_t pc) { uc_reg_write(uc_, UC_ARM64_REG_PC, &pc); }

void Machine::RemoveCache(uint64_t begin, uint64_t end) {
  if (end <= begin) return;
  const bool tracked = begin >= kJitBegin && end <= kJitEnd;
  bool translated = !tracked;  // outside the tracked regions: always ask Unicorn
  if (tracked) {
    for (uint64_t c = (begin - kJitBegin) / kChunk; c <= (end - 1 - kJitBegin) / kChunk && !translated; ++c) {
      translated = (translated_[c / 64] >> (c % 64)) & 1;
    }
  }
  if (!translated) return;
  uc_ctl_remove_cache(uc_, begin, end);
  ++unicorn_cache_removals_;
  if (!tracked) return;
  // Every block overlapping [begin, end) is gone; chunks wholly inside the
  // range hold no translation any more.
  for (uint64_t c = (begin - kJitBegin + kChunk - 1) / kChunk; c < (end - kJitBegin) / kChunk; ++c) {
    translated_[c / 64] &= ~(uint64_t{1} << (c % 64));
  }
}

}  // namespace bpfdiff
