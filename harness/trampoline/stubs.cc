#include "harness/trampoline/stubs.h"

#include <initializer_list>

#include "jit/a64/aliases.h"
#include "jit/a64/encoder.h"
#include "oracle/guest_layout.h"
#include "oracle/trampoline.h"

namespace bpfdiff::trampoline {

namespace {

using namespace ::bpfdiff::a64;

Reg X(int n) { return static_cast<Reg>(n); }

// log(x12): the entry at count % kTrampLogEntries of this CPU's log, then
// count + 1. Uses x9..x11.
void AppendLog(std::vector<uint32_t>& code) {
  constexpr int64_t kCount = static_cast<int64_t>(guest::kTrampLogOffset);
  code.push_back(Mrs(Reg::kX9, kTpidrEl1));
  code.push_back(LoadStoreUnsignedImmediate(LoadStoreOp::kLoad, Size::k64, Reg::kX10, Reg::kX9, kCount));
  code.push_back(LogicalImmediate(LogicalImmOp::kAnd, Width::kX, Reg::kX11, Reg::kX10, guest::kTrampLogEntries - 1));
  code.push_back(AddSubShiftedRegister(AddSubOp::kAdd, Width::kX, Reg::kX11, Reg::kX9, Reg::kX11, Shift::kLsl, 3));
  code.push_back(LoadStoreUnsignedImmediate(LoadStoreOp::kStore, Size::k64, Reg::kX12, Reg::kX11, kCount + 8));
  code.push_back(AddSubImmediate(AddSubOp::kAdd, Width::kX, Reg::kX10, Reg::kX10, 1));
  code.push_back(LoadStoreUnsignedImmediate(LoadStoreOp::kStore, Size::k64, Reg::kX10, Reg::kX9, kCount));
}

// if (x0 != *(u64 *)(per-CPU + offset)) goto trap; the branch's index is
// returned, for the caller to point at its trap. Uses x9, x10.
size_t CheckFirstArgument(std::vector<uint32_t>& code, uint64_t offset) {
  code.push_back(Mrs(Reg::kX9, kTpidrEl1));
  code.push_back(LoadStoreUnsignedImmediate(LoadStoreOp::kLoad, Size::k64, Reg::kX10, Reg::kX9,
                                            static_cast<int64_t>(offset)));
  code.push_back(Cmp(Width::kX, Reg::kX0, Reg::kX10));
  code.push_back(0);  // b.ne trap
  return code.size() - 1;
}

// Ends the code with its trap, and points the branches at it.
void Trap(std::vector<uint32_t>& code, std::initializer_list<size_t> branches) {
  const size_t trap = code.size();
  code.push_back(Brk(kStubCheckBrk));
  for (const size_t at : branches) {
    code[at] = ConditionalBranchImmediate(Cond::kNe, 4 * (static_cast<int64_t>(trap) - static_cast<int64_t>(at)));
  }
}

// x12 = a 64-bit constant.
void MoveConstant(std::vector<uint32_t>& code, uint64_t value) {
  code.push_back(MoveWideImmediate(MoveWideOp::kMovz, Width::kX, Reg::kX12, value & 0xffff, 0));
  for (unsigned shift = 16; shift < 64; shift += 16) {
    code.push_back(MoveWideImmediate(MoveWideOp::kMovk, Width::kX, Reg::kX12, (value >> shift) & 0xffff, shift));
  }
}

// Every register a callee may clobber, but `keep` (the return value).
void Clobber(std::vector<uint32_t>& code, int keep) {
  for (int reg = 0; reg <= 17; ++reg) {
    if (!StubClobbers(reg) || reg == keep) continue;
    const uint64_t value = StubClobber(reg);
    code.push_back(MoveWideImmediate(MoveWideOp::kMovz, Width::kX, X(reg), (value >> 16) & 0xffff, 16));
    if ((value & 0xffff) != 0) {
      code.push_back(MoveWideImmediate(MoveWideOp::kMovk, Width::kX, X(reg), value & 0xffff, 0));
    }
  }
}

// u64 enter(struct bpf_prog *prog, struct bpf_tramp_run_ctx *run_ctx)
std::vector<uint32_t> ProgEnter(bool runs) {
  std::vector<uint32_t> code;
  code.push_back(LoadStoreUnsignedImmediate(LoadStoreOp::kLoad, Size::k64, Reg::kX12, Reg::kX1, 0));  // cookie
  AppendLog(code);  // x9 = the per-CPU area, x10 = the log's count, this call's
  code.push_back(LoadStoreUnsignedImmediate(LoadStoreOp::kStore, Size::k64, Reg::kX1, Reg::kX1, 8));  // saved_run_ctx
  code.push_back(LoadStoreUnsignedImmediate(LoadStoreOp::kStore, Size::k64, Reg::kX0, Reg::kX9,
                                            static_cast<int64_t>(guest::kTrampProgObjectOffset)));
  // The start time: kTrampStartTag | count (the count stays below 2^48).
  if (runs) {
    code.push_back(MoveWideImmediate(MoveWideOp::kMovk, Width::kX, Reg::kX10, guest::kTrampStartTag >> 48, 48));
    code.push_back(Mov(Width::kX, Reg::kX0, Reg::kX10));
  } else {
    code.push_back(MoveWideImmediate(MoveWideOp::kMovz, Width::kX, Reg::kX0, 0));
  }
  code.push_back(LoadStoreUnsignedImmediate(LoadStoreOp::kStore, Size::k64, Reg::kX0, Reg::kX9,
                                            static_cast<int64_t>(guest::kTrampStartOffset)));
  Clobber(code, 0);
  code.push_back(Ret());
  return code;
}

// void exit(struct bpf_prog *prog, u64 start, struct bpf_tramp_run_ctx *run_ctx)
std::vector<uint32_t> ProgExit() {
  std::vector<uint32_t> code;
  // if (prog != the enter's) trap; if (start != the enter's answer) trap;
  // if (run_ctx->saved_run_ctx != run_ctx) trap;
  const size_t to_trap_0 = CheckFirstArgument(code, guest::kTrampProgObjectOffset);  // x9 = per-CPU
  code.push_back(LoadStoreUnsignedImmediate(LoadStoreOp::kLoad, Size::k64, Reg::kX10, Reg::kX9,
                                            static_cast<int64_t>(guest::kTrampStartOffset)));
  code.push_back(Cmp(Width::kX, Reg::kX1, Reg::kX10));
  const size_t to_trap_1 = code.size();
  code.push_back(0);
  code.push_back(LoadStoreUnsignedImmediate(LoadStoreOp::kLoad, Size::k64, Reg::kX9, Reg::kX2, 8));
  code.push_back(Cmp(Width::kX, Reg::kX9, Reg::kX2));
  const size_t to_trap_2 = code.size();
  code.push_back(0);
  code.push_back(LoadStoreUnsignedImmediate(LoadStoreOp::kLoad, Size::k64, Reg::kX12, Reg::kX2, 0));
  code.push_back(Mvn(Width::kX, Reg::kX12, Reg::kX12));
  AppendLog(code);
  Clobber(code, -1);
  code.push_back(Ret());
  Trap(code, {to_trap_0, to_trap_1, to_trap_2});
  return code;
}

// void __bpf_tramp_enter/exit(struct bpf_tramp_image *tr)
std::vector<uint32_t> ImageCall(uint64_t mark) {
  std::vector<uint32_t> code;
  const size_t to_trap = CheckFirstArgument(code, guest::kTrampImageObjectOffset);
  MoveConstant(code, mark);
  AppendLog(code);
  Clobber(code, -1);
  code.push_back(Ret());
  Trap(code, {to_trap});
  return code;
}

uint64_t AddressOf(Stub stub) {
  switch (stub) {
    case Stub::kProgEnter: return guest::kTrampProgEnterAddress;
    case Stub::kProgEnterMiss: return guest::kTrampProgEnterMissAddress;
    case Stub::kProgExit: return guest::kTrampProgExitAddress;
    case Stub::kImageEnter: return guest::kTrampImageEnterAddress;
    case Stub::kImageExit: return guest::kTrampImageExitAddress;
  }
  return 0;
}

}  // namespace

std::vector<uint32_t> StubCode(Stub stub) {
  switch (stub) {
    case Stub::kProgEnter: return ProgEnter(true);
    case Stub::kProgEnterMiss: return ProgEnter(false);
    case Stub::kProgExit: return ProgExit();
    case Stub::kImageEnter: return ImageCall(kImageEnterMark);
    case Stub::kImageExit: return ImageCall(kImageExitMark);
  }
  return {};
}

Status InstallStubs(GuestMemory& memory) {
  for (const Stub stub : {Stub::kProgEnter, Stub::kProgEnterMiss, Stub::kProgExit, Stub::kImageEnter,
                          Stub::kImageExit}) {
    const std::vector<uint32_t> code = StubCode(stub);
    if (code.size() * 4 > guest::kTrampStubBytes) {
      return Fail("the trampoline stub at 0x{:x} has {} words, more than its {} bytes", AddressOf(stub),
                  code.size(), guest::kTrampStubBytes);
    }
    for (size_t i = 0; i < code.size(); ++i) {
      if (code[i] == a64::kBreakFault) {
        return Fail("the trampoline stub at 0x{:x} has an operand that cannot be encoded (word {})",
                    AddressOf(stub), i);
      }
      if (!memory.Store<uint32_t>(AddressOf(stub) + 4 * i, code[i])) {
        return Fail("no guest memory at 0x{:x} for the trampoline stubs", AddressOf(stub) + 4 * i);
      }
    }
  }
  return {};
}

}  // namespace bpfdiff::trampoline
