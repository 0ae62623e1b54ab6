#include "harness/machine/loop_helper.h"

#include "harness/machine/guest_code.h"
#include "jit/a64/aliases.h"
#include "jit/a64/encoder.h"
#include "oracle/guest_layout.h"
#include "oracle/helpers.h"

namespace bpfdiff {
namespace {

using namespace ::bpfdiff::a64;

// The frame, from sp: x29, x30, then the state.
constexpr int64_t kIterations = 16, kCallback = 24, kContext = 32, kIndex = 40;
static_assert(kIndex + 8 == static_cast<int64_t>(guest::kLoopHelperFrameBytes));

uint32_t Load(Reg rt, int64_t offset) {
  return LoadStoreUnsignedImmediate(LoadStoreOp::kLoad, Size::k64, rt, Reg::kSp, offset);
}
uint32_t Store(Reg rt, int64_t offset) {
  return LoadStoreUnsignedImmediate(LoadStoreOp::kStore, Size::k64, rt, Reg::kSp, offset);
}
uint32_t MoveNegative(Reg rd, int64_t errno_value) {
  // movn rd, #(errno - 1): rd = -errno
  return MoveWideImmediate(MoveWideOp::kMovn, Width::kX, rd, static_cast<uint32_t>(errno_value - 1), 0);
}

void Clobber(std::vector<uint32_t>& code) {
  for (int reg : {5, 6, 7, 8, 12, 13, 14, 15, 16, 17}) {
    const uint64_t value = guest::kLoopHelperClobber | static_cast<uint64_t>(reg);
    const auto rd = static_cast<Reg>(reg);
    code.push_back(MoveWideImmediate(MoveWideOp::kMovz, Width::kX, rd, static_cast<uint32_t>(value & 0xffff), 0));
    code.push_back(MoveWideImmediate(MoveWideOp::kMovk, Width::kX, rd, static_cast<uint32_t>((value >> 32) & 0xffff), 32));
    code.push_back(MoveWideImmediate(MoveWideOp::kMovk, Width::kX, rd, static_cast<uint32_t>(value >> 48), 48));
  }
}

// A branch at `from` to `to`, both word indexes.
int64_t Distance(size_t from, size_t to) { return 4 * (static_cast<int64_t>(to) - static_cast<int64_t>(from)); }

}  // namespace

std::vector<uint32_t> LoopHelperCode() {
  std::vector<uint32_t> code;
  const size_t to_einval = code.size();
  code.push_back(0);  // cbnz x3, einval
  code.push_back(MoveWideImmediate(MoveWideOp::kMovz, Width::kW, Reg::kX9, guest::kMaxLoops >> 16, 16));
  code.push_back(Cmp(Width::kW, Reg::kX0, Reg::kX9));
  const size_t to_e2big = code.size();
  code.push_back(0);  // b.hi e2big
  code.push_back(LoadStorePair(PairOp::kStore, Width::kX, kFp, kLr, Reg::kSp,
                               -static_cast<int64_t>(guest::kLoopHelperFrameBytes), Indexing::kPreIndex));
  code.push_back(MovSp(Width::kX, kFp, Reg::kSp));
  code.push_back(Mov(Width::kW, Reg::kX9, Reg::kX0));  // nr_loops is a u32
  code.push_back(Store(Reg::kX9, kIterations));
  code.push_back(Store(Reg::kX1, kCallback));
  code.push_back(Store(Reg::kX2, kContext));
  code.push_back(Store(Reg::kZr, kIndex));
  const size_t loop = code.size();
  code.push_back(Load(Reg::kX9, kIterations));
  code.push_back(Load(Reg::kX10, kIndex));
  code.push_back(Cmp(Width::kX, Reg::kX10, Reg::kX9));
  const size_t to_done = code.size();
  code.push_back(0);  // b.hs done
  Clobber(code);
  code.push_back(Load(Reg::kX11, kCallback));
  code.push_back(Load(Reg::kX1, kContext));
  code.push_back(Mov(Width::kX, Reg::kX0, Reg::kX10));
  for (Reg r : {Reg::kX2, Reg::kX3, Reg::kX4}) code.push_back(MoveWideImmediate(MoveWideOp::kMovz, Width::kX, r, 0, 0));
  code.push_back(Blr(Reg::kX11));
  code.push_back(Load(Reg::kX10, kIndex));
  code.push_back(AddSubImmediate(AddSubOp::kAdd, Width::kX, Reg::kX10, Reg::kX10, 1));
  code.push_back(Store(Reg::kX10, kIndex));
  code.push_back(CompareAndBranchImmediate(CompareBranchOp::kCbz, Width::kX, Reg::kX0, Distance(code.size(), loop)));
  const size_t done = code.size();
  code.push_back(Load(Reg::kX0, kIndex));  // i, or i + 1 after the callback asked to stop
  code.push_back(LoadStorePair(PairOp::kLoad, Width::kX, kFp, kLr, Reg::kSp,
                               static_cast<int64_t>(guest::kLoopHelperFrameBytes), Indexing::kPostIndex));
  Clobber(code);
  code.push_back(Ret());
  const size_t einval = code.size();
  code.push_back(MoveNegative(Reg::kX0, kEINVAL));
  code.push_back(Ret());
  const size_t e2big = code.size();
  code.push_back(MoveNegative(Reg::kX0, kE2BIG));
  code.push_back(Ret());
  code[to_einval] = CompareAndBranchImmediate(CompareBranchOp::kCbnz, Width::kX, Reg::kX3, Distance(to_einval, einval));
  code[to_e2big] = ConditionalBranchImmediate(Cond::kHi, Distance(to_e2big, e2big));
  code[to_done] = ConditionalBranchImmediate(Cond::kHs, Distance(to_done, done));
  return code;
}

Status InstallLoopHelper(GuestMemory& memory) {
  return InstallGuestCode(memory, guest::kLoopHelperAddress, guest::kLoopHelperBytes, LoopHelperCode(), "bpf_loop");
}

}  // namespace bpfdiff
