#include "fuzz/findings/culprit_frames.h"

namespace bpfdiff::fuzz {
namespace {

[[gnu::noinline]] void CulpritIsAdd32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsSub32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsMul32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsDiv32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsSdiv32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsOr32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsAnd32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLsh32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsRsh32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsMod32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsSmod32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsXor32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsMov32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsArsh32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsNeg32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsMovsx32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsAdd(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsSub(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsMul(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsDiv(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsSdiv(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsOr(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsAnd(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLsh(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsRsh(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsMod(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsSmod(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsXor(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsMov(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsArsh(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsNeg(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsMovsx(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsAddrPercpu(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsAddrSpaceCast(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLe(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsBe(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsBswap(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsJa(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsJa32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsJeq(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsJgt(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsJge(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsJset(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsJne(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsJsgt(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsJsge(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsJlt(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsJle(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsJslt(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsJsle(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsJeq32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsJgt32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsJge32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsJset32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsJne32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsJsgt32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsJsge32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsJlt32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsJle32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsJslt32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsJsle32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsCallHelper(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsCallLocal(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsCallKfunc(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsCallx(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsTailCall(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsExit(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLddw(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLddwFunc(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLdabs(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLdind(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLdx(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLdxs(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsProbeLdx(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsProbeLdxs(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsProbe32Ldx(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsProbe32St(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsProbe32Stx(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsProbe32Lock(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsSt(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsStx(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLockAdd32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLockOr32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLockAnd32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLockXor32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLockFetchAdd32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLockFetchOr32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLockFetchAnd32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLockFetchXor32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLockXchg32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLockCmpxchg32(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLockAdd(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLockOr(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLockAnd(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLockXor(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLockFetchAdd(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLockFetchOr(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLockFetchAnd(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLockFetchXor(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLockXchg(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsLockCmpxchg(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsPrologue(FindingEnd end) { NoteFindingFrame(__func__); end(); }
[[gnu::noinline]] void CulpritIsEpilogue(FindingEnd end) { NoteFindingFrame(__func__); end(); }

struct NamedFrame {
  std::string_view form;
  CulpritFrame frame;
};
constexpr NamedFrame kCulpritFrames[] = {
    {"add32", CulpritIsAdd32},
    {"sub32", CulpritIsSub32},
    {"mul32", CulpritIsMul32},
    {"div32", CulpritIsDiv32},
    {"sdiv32", CulpritIsSdiv32},
    {"or32", CulpritIsOr32},
    {"and32", CulpritIsAnd32},
    {"lsh32", CulpritIsLsh32},
    {"rsh32", CulpritIsRsh32},
    {"mod32", CulpritIsMod32},
    {"smod32", CulpritIsSmod32},
    {"xor32", CulpritIsXor32},
    {"mov32", CulpritIsMov32},
    {"arsh32", CulpritIsArsh32},
    {"neg32", CulpritIsNeg32},
    {"movsx32", CulpritIsMovsx32},
    {"add", CulpritIsAdd},
    {"sub", CulpritIsSub},
    {"mul", CulpritIsMul},
    {"div", CulpritIsDiv},
    {"sdiv", CulpritIsSdiv},
    {"or", CulpritIsOr},
    {"and", CulpritIsAnd},
    {"lsh", CulpritIsLsh},
    {"rsh", CulpritIsRsh},
    {"mod", CulpritIsMod},
    {"smod", CulpritIsSmod},
    {"xor", CulpritIsXor},
    {"mov", CulpritIsMov},
    {"arsh", CulpritIsArsh},
    {"neg", CulpritIsNeg},
    {"movsx", CulpritIsMovsx},
    {"addr_percpu", CulpritIsAddrPercpu},
    {"addr_space_cast", CulpritIsAddrSpaceCast},
    {"le", CulpritIsLe},
    {"be", CulpritIsBe},
    {"bswap", CulpritIsBswap},
    {"ja", CulpritIsJa},
    {"ja32", CulpritIsJa32},
    {"jeq", CulpritIsJeq},
    {"jgt", CulpritIsJgt},
    {"jge", CulpritIsJge},
    {"jset", CulpritIsJset},
    {"jne", CulpritIsJne},
    {"jsgt", CulpritIsJsgt},
    {"jsge", CulpritIsJsge},
    {"jlt", CulpritIsJlt},
    {"jle", CulpritIsJle},
    {"jslt", CulpritIsJslt},
    {"jsle", CulpritIsJsle},
    {"jeq32", CulpritIsJeq32},
    {"jgt32", CulpritIsJgt32},
    {"jge32", CulpritIsJge32},
    {"jset32", CulpritIsJset32},
    {"jne32", CulpritIsJne32},
    {"jsgt32", CulpritIsJsgt32},
    {"jsge32", CulpritIsJsge32},
    {"jlt32", CulpritIsJlt32},
    {"jle32", CulpritIsJle32},
    {"jslt32", CulpritIsJslt32},
    {"jsle32", CulpritIsJsle32},
    {"call helper", CulpritIsCallHelper},
    {"call local", CulpritIsCallLocal},
    {"call kfunc", CulpritIsCallKfunc},
    {"callx", CulpritIsCallx},
    {"tail_call", CulpritIsTailCall},
    {"exit", CulpritIsExit},
    {"lddw", CulpritIsLddw},
    {"lddw_func", CulpritIsLddwFunc},
    {"ldabs", CulpritIsLdabs},
    {"ldind", CulpritIsLdind},
    {"ldx", CulpritIsLdx},
    {"ldxs", CulpritIsLdxs},
    {"probe ldx", CulpritIsProbeLdx},
    {"probe ldxs", CulpritIsProbeLdxs},
    {"probe32 ldx", CulpritIsProbe32Ldx},
    {"probe32 st", CulpritIsProbe32St},
    {"probe32 stx", CulpritIsProbe32Stx},
    {"probe32 lock", CulpritIsProbe32Lock},
    {"st", CulpritIsSt},
    {"stx", CulpritIsStx},
    {"lock add32", CulpritIsLockAdd32},
    {"lock or32", CulpritIsLockOr32},
    {"lock and32", CulpritIsLockAnd32},
    {"lock xor32", CulpritIsLockXor32},
    {"lock fetch add32", CulpritIsLockFetchAdd32},
    {"lock fetch or32", CulpritIsLockFetchOr32},
    {"lock fetch and32", CulpritIsLockFetchAnd32},
    {"lock fetch xor32", CulpritIsLockFetchXor32},
    {"lock xchg32", CulpritIsLockXchg32},
    {"lock cmpxchg32", CulpritIsLockCmpxchg32},
    {"lock add", CulpritIsLockAdd},
    {"lock or", CulpritIsLockOr},
    {"lock and", CulpritIsLockAnd},
    {"lock xor", CulpritIsLockXor},
    {"lock fetch add", CulpritIsLockFetchAdd},
    {"lock fetch or", CulpritIsLockFetchOr},
    {"lock fetch and", CulpritIsLockFetchAnd},
    {"lock fetch xor", CulpritIsLockFetchXor},
    {"lock xchg", CulpritIsLockXchg},
    {"lock cmpxchg", CulpritIsLockCmpxchg},
    {"prologue", CulpritIsPrologue},
    {"epilogue", CulpritIsEpilogue},
};

}  // namespace

CulpritFrame CulpritFrameOf(std::string_view form) {
  for (const auto& entry : kCulpritFrames) {
    if (entry.form == form) return entry.frame;
  }
  return nullptr;
}

}  // namespace bpfdiff::fuzz
