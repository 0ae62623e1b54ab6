#include "harness/machine/throw_kfunc.h"

#include <cstring>

#include <fmt/format.h>

#include "harness/machine/guest_code.h"
#include "jit/a64/aliases.h"
#include "jit/a64/encoder.h"
#include "oracle/guest_layout.h"

namespace bpfdiff {
namespace {

using namespace ::bpfdiff::a64;

// The BRK immediates of the kfunc's ends other than the callback's call.
enum Trap : uint32_t {
  kNoBoundary = 0x7401,  // a return address outside BPF code after a BPF frame
  kNoCallback = 0x7402,  // the boundary's program has no exception callback
  kTooDeep = 0x7403,     // more frames than calls can nest
  kReturned = 0x7404,    // the callback returned to bpf_throw
};

// Frames the walk may pass: the thrower's and every caller's, up to the
// deepest call chain (MAX_CALL_FRAMES) and one more.
constexpr uint32_t kMaxFrames = 9;

// A return address signed by paciasp carries its code above bit 47.
constexpr uint64_t kVirtualAddressMask = (uint64_t{1} << 48) - 1;

int64_t Distance(size_t from, size_t to) { return 4 * (static_cast<int64_t>(to) - static_cast<int64_t>(from)); }

uint32_t Load(Reg rt, Reg rn, int64_t offset) {
  return LoadStoreUnsignedImmediate(LoadStoreOp::kLoad, Size::k64, rt, rn, offset);
}

void MoveWide(std::vector<uint32_t>& code, Reg rd, uint64_t value) {
  code.push_back(MoveWideImmediate(MoveWideOp::kMovz, Width::kX, rd, static_cast<uint32_t>(value & 0xffff), 0));
  for (uint32_t shift = 16; shift < 64; shift += 16) {
    const auto part = static_cast<uint32_t>((value >> shift) & 0xffff);
    if (part != 0) code.push_back(MoveWideImmediate(MoveWideOp::kMovk, Width::kX, rd, part, shift));
  }
}

}  // namespace

std::vector<uint32_t> ThrowKfuncCode() {
  // x9: the frame's return address, x10: its frame record, x12: frames
  // left, x13/x14: the table entry and entries left, x15: BPF frames seen,
  // x16/x17: scratch.
  std::vector<uint32_t> code;
  code.push_back(Mov(Width::kX, Reg::kX9, kLr));   // the thrower's pc
  code.push_back(MovSp(Width::kX, Reg::kX10, kFp));  // and its frame
  MoveWide(code, Reg::kX12, kMaxFrames);
  MoveWide(code, Reg::kX15, 0);
  const size_t walk = code.size();
  code.push_back(LogicalImmediate(LogicalImmOp::kAnd, Width::kX, Reg::kX9, Reg::kX9, kVirtualAddressMask));
  MoveWide(code, Reg::kX13, guest::kThrowTableAddress);
  code.push_back(LoadStoreImmediateIndexed(LoadStoreOp::kLoad, Size::k64, Reg::kX14, Reg::kX13, 8,
                                           Indexing::kPostIndex));
  const size_t lookup = code.size();
  const size_t to_not_bpf = code.size();
  code.push_back(0);  // cbz x14, not_bpf
  code.push_back(LoadStorePair(PairOp::kLoad, Width::kX, Reg::kX16, Reg::kX17, Reg::kX13, 0, Indexing::kOffset));
  code.push_back(Cmp(Width::kX, Reg::kX9, Reg::kX16));
  const size_t to_next_low = code.size();
  code.push_back(0);  // b.lo next
  code.push_back(Cmp(Width::kX, Reg::kX9, Reg::kX17));
  const size_t to_next_high = code.size();
  code.push_back(0);  // b.hs next
  code.push_back(Load(Reg::kX16, Reg::kX13, 16));
  code.push_back(AddSubImmediate(AddSubOp::kAdd, Width::kX, Reg::kX15, Reg::kX15, 1));
  const size_t to_found = code.size();
  code.push_back(0);  // cbnz x16, found
  const size_t to_up_from_subprogram = code.size();
  code.push_back(0);  // b up: a subprogram's frame, its caller's next
  const size_t next = code.size();
  code.push_back(AddSubImmediate(AddSubOp::kAdd, Width::kX, Reg::kX13, Reg::kX13, guest::kThrowTableEntryBytes));
  code.push_back(AddSubImmediate(AddSubOp::kSub, Width::kX, Reg::kX14, Reg::kX14, 1));
  code.push_back(B(Distance(code.size(), lookup)));
  const size_t not_bpf = code.size();
  const size_t to_no_boundary = code.size();
  code.push_back(0);  // cbnz x15, no_boundary: the kernel's walk ends at such a frame
  const size_t up = code.size();
  code.push_back(AddSubImmediate(AddSubOp::kSubs, Width::kX, Reg::kX12, Reg::kX12, 1));
  const size_t to_too_deep = code.size();
  code.push_back(0);  // b.eq too_deep
  code.push_back(Load(Reg::kX9, Reg::kX10, 8));  // the caller's pc
  code.push_back(Load(Reg::kX10, Reg::kX10, 0));  // and its frame
  code.push_back(B(Distance(code.size(), walk)));
  const size_t found = code.size();
  code.push_back(AddSubImmediate(AddSubOp::kSubs, Width::kX, Reg::kZr, Reg::kX16, guest::kThrowNoCallback));
  const size_t to_no_callback = code.size();
  code.push_back(0);  // b.eq no_callback
  code.push_back(Mov(Width::kX, Reg::kX17, Reg::kX16));
  code.push_back(MovSp(Width::kX, Reg::kX2, Reg::kX10));
  for (Reg r : {Reg::kX1, Reg::kX3, Reg::kX4}) code.push_back(MoveWideImmediate(MoveWideOp::kMovz, Width::kX, r, 0, 0));
  for (int reg : {5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}) {
    MoveWide(code, static_cast<Reg>(reg), guest::kThrowKfuncClobber | static_cast<uint64_t>(reg));
  }
  code.push_back(Blr(Reg::kX17));
  code.push_back(Brk(kReturned));
  const size_t no_boundary = code.size();
  code.push_back(Brk(kNoBoundary));
  const size_t no_callback = code.size();
  code.push_back(Brk(kNoCallback));
  const size_t too_deep = code.size();
  code.push_back(Brk(kTooDeep));

  code[to_not_bpf] = CompareAndBranchImmediate(CompareBranchOp::kCbz, Width::kX, Reg::kX14, Distance(to_not_bpf, not_bpf));
  code[to_next_low] = ConditionalBranchImmediate(Cond::kLo, Distance(to_next_low, next));
  code[to_next_high] = ConditionalBranchImmediate(Cond::kHs, Distance(to_next_high, next));
  code[to_found] = CompareAndBranchImmediate(CompareBranchOp::kCbnz, Width::kX, Reg::kX16, Distance(to_found, found));
  code[to_up_from_subprogram] = B(Distance(to_up_from_subprogram, up));
  code[to_no_boundary] =
      CompareAndBranchImmediate(CompareBranchOp::kCbnz, Width::kX, Reg::kX15, Distance(to_no_boundary, no_boundary));
  code[to_too_deep] = ConditionalBranchImmediate(Cond::kEq, Distance(to_too_deep, too_deep));
  code[to_no_callback] = ConditionalBranchImmediate(Cond::kEq, Distance(to_no_callback, no_callback));
  return code;
}

Status InstallThrowKfunc(GuestMemory& memory) {
  return InstallGuestCode(memory, guest::kThrowKfuncAddress, guest::kThrowKfuncBytes, ThrowKfuncCode(), "bpf_throw");
}

Status WriteThrowTable(GuestMemory& memory, std::span<const ThrowTableEntry> entries) {
  if (entries.size() > guest::kThrowTableMaxEntries) {
    return Fail("the case's programs have {} JIT'd functions, more than bpf_throw's table holds ({})", entries.size(),
                guest::kThrowTableMaxEntries);
  }
  const uint64_t bytes = 8 + entries.size() * guest::kThrowTableEntryBytes;
  uint8_t* table = memory.HostPointer(guest::kThrowTableAddress, bytes);
  if (table == nullptr) return Fail("no guest memory at 0x{:x} for bpf_throw's table", guest::kThrowTableAddress);
  const uint64_t count = entries.size();
  std::memcpy(table, &count, 8);
  for (size_t i = 0; i < entries.size(); ++i) {
    const uint64_t words[3] = {entries[i].start, entries[i].end, entries[i].callback};
    std::memcpy(table + 8 + i * guest::kThrowTableEntryBytes, words, sizeof words);
  }
  return {};
}

std::optional<std::string> ThrowKfuncTrap(uint64_t pc) {
  if (pc < guest::kThrowKfuncAddress || pc >= guest::kThrowKfuncAddress + guest::kThrowKfuncBytes || pc % 4 != 0) {
    return std::nullopt;
  }
  const std::vector<uint32_t> code = ThrowKfuncCode();
  const uint64_t index = (pc - guest::kThrowKfuncAddress) / 4;
  if (index >= code.size()) return std::nullopt;
  for (uint32_t trap : {kNoBoundary, kNoCallback, kTooDeep, kReturned}) {
    if (code[index] != Brk(trap)) continue;
    switch (trap) {
      case kNoBoundary:
        return "bpf_throw's frame walk left the BPF frames without reaching a program's own function (the kernel's "
               "bpf_throw WARNs and calls a NULL callback): a frame record of the JIT's is wrong";
      case kNoCallback: return "bpf_throw reached a program without an exception callback";
      case kTooDeep:
        return fmt::format("bpf_throw's frame walk passed {} frames without reaching a program's own function",
                           kMaxFrames);
      case kReturned:
        return "the exception callback returned to bpf_throw (it must return for the program, from the frame "
               "bpf_throw handed it)";
    }
  }
  return std::nullopt;
}

}  // namespace bpfdiff
