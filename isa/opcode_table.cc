#include "isa/opcode_table.h"

#include <array>
#include <cassert>
#include <map>
#include <vector>

#include <fmt/core.h>

namespace bpfdiff::isa {
namespace {

using enum CpuVersion;

// What Classify needs of a form, packed: the forms of one opcode lie next to
// each other (Classify runs for every slot of every program loaded).
struct Matcher {
  Discriminant discriminant;
  int32_t value;
  FormId id;
};

struct Table {
  std::vector<Form> forms;
  // opcode -> forms with that opcode (at most a handful).
  std::array<std::vector<FormId>, 256> by_opcode;
  // The same, flat: matchers[matcher_begin[op] .. matcher_begin[op + 1]).
  std::vector<Matcher> matchers;
  std::array<uint16_t, 257> matcher_begin{};
  std::map<std::string, std::vector<FormId>, std::less<>> by_mnemonic;

  void Add(std::string name, std::string mnemonic, uint8_t opcode, Discriminant disc,
           int32_t disc_value, Shape shape, CpuVersion cpu, Group group, bool internal,
           std::string semantics) {
    auto id = static_cast<FormId>(forms.size());
    forms.push_back(Form{id, std::move(name), std::move(mnemonic), opcode, disc, disc_value,
                         shape, cpu, group, internal, std::move(semantics), 0});
    by_opcode[opcode].push_back(id);
    by_mnemonic[forms.back().mnemonic].push_back(id);
  }
  void Add(std::string mnemonic, uint8_t opcode, Discriminant disc, int32_t disc_value,
           Shape shape, CpuVersion cpu, Group group, std::string semantics) {
    std::string name = mnemonic;
    Add(std::move(name), std::move(mnemonic), opcode, disc, disc_value, shape, cpu, group,
        false, std::move(semantics));
  }
};

struct AluOpInfo {
  const char* name;
  uint8_t op;
  int16_t offset;       // discriminating offset (sdiv/smod = 1)
  bool divmul;          // in the divmul groups
  CpuVersion cpu;
  const char* expr;     // C expression over dst and src
};

constexpr AluOpInfo kAluOps[] = {
    {"add", kAluAdd, 0, false, kV1, "dst + src"},
    {"sub", kAluSub, 0, false, kV1, "dst - src"},
    {"mul", kAluMul, 0, true, kV1, "dst * src"},
    {"div", kAluDiv, 0, true, kV1, "src ? dst / src : 0 (unsigned)"},
    {"sdiv", kAluDiv, 1, true, kV4, "src ? dst / src : 0 (signed)"},
    {"or", kAluOr, 0, false, kV1, "dst | src"},
    {"and", kAluAnd, 0, false, kV1, "dst & src"},
    {"lsh", kAluLsh, 0, false, kV1, "dst << (src & mask)"},
    {"rsh", kAluRsh, 0, false, kV1, "dst >> (src & mask) (logical)"},
    {"mod", kAluMod, 0, true, kV1, "src ? dst % src : dst (unsigned)"},
    {"smod", kAluMod, 1, true, kV4, "src ? dst % src : dst (signed, sign of dst)"},
    {"xor", kAluXor, 0, false, kV1, "dst ^ src"},
    {"mov", kAluMov, 0, false, kV1, "src"},
    {"arsh", kAluArsh, 0, false, kV1, "dst >> (src & mask) (arithmetic)"},
};

struct JmpOpInfo {
  const char* name;
  uint8_t op;
  CpuVersion cpu64;  // version of the 64-bit form; JMP32 forms are all v3
  const char* cond;
};

constexpr JmpOpInfo kJmpOps[] = {
    {"jeq", kJmpJeq, kV1, "dst == src"},         {"jgt", kJmpJgt, kV1, "dst > src (unsigned)"},
    {"jge", kJmpJge, kV1, "dst >= src (unsigned)"}, {"jset", kJmpJset, kV1, "dst & src"},
    {"jne", kJmpJne, kV1, "dst != src"},         {"jsgt", kJmpJsgt, kV1, "dst > src (signed)"},
    {"jsge", kJmpJsge, kV1, "dst >= src (signed)"}, {"jlt", kJmpJlt, kV2, "dst < src (unsigned)"},
    {"jle", kJmpJle, kV2, "dst <= src (unsigned)"}, {"jslt", kJmpJslt, kV2, "dst < src (signed)"},
    {"jsle", kJmpJsle, kV2, "dst <= src (signed)"},
};

struct SizeInfo {
  const char* suffix;
  uint8_t size;
  bool wide;  // 64-bit: in the base64 group
};

constexpr SizeInfo kSizes[] = {
    {"w", kSizeW, false}, {"h", kSizeH, false}, {"b", kSizeB, false}, {"dw", kSizeDW, true}};

std::string Replace(std::string text, std::string_view from, std::string_view to) {
  for (size_t pos = text.find(from); pos != std::string::npos;
       pos = text.find(from, pos + to.size())) {
    text.replace(pos, from.size(), to);
  }
  return text;
}

void AddAlu(Table& t) {
  for (bool is64 : {false, true}) {
    const uint8_t cls = is64 ? kClassAlu64 : kClassAlu;
    const char* suffix = is64 ? "" : "32";
    const Group base = is64 ? kGroupBase64 : kGroupBase32;
    const Group divmul = is64 ? kGroupDivMul64 : kGroupDivMul32;
    const std::string wrap_open = is64 ? "dst = " : "dst = (u32)(";
    const std::string wrap_close = is64 ? "" : ")";
    for (const auto& op : kAluOps) {
      const auto disc = op.offset != 0 || op.op == kAluDiv || op.op == kAluMod || op.op == kAluMov
                            ? Discriminant::kOffset
                            : Discriminant::kNone;
      const Group group = op.divmul ? divmul : base;
      const std::string mnemonic = std::string(op.name) + suffix;
      std::string expr = op.expr;
      if (!is64) expr = Replace(Replace(expr, "dst", "(u32)dst"), "src", "(u32)src");
      expr = Replace(expr, "mask", is64 ? "63" : "31");
      t.Add(mnemonic + " imm", mnemonic, cls | kSrcK | op.op, disc, op.offset, Shape::kAluImm,
            op.cpu, group, false, wrap_open + Replace(expr, "src", "imm") + wrap_close);
      t.Add(mnemonic + " reg", mnemonic, cls | kSrcX | op.op, disc, op.offset, Shape::kAluReg,
            op.cpu, group, false, wrap_open + expr + wrap_close);
    }
    t.Add(std::string("neg") + suffix, cls | kSrcK | kAluNeg, Discriminant::kNone, 0,
          Shape::kAluUnary, kV1, base, is64 ? "dst = -dst" : "dst = (u32)-(u32)dst");
    // Sign-extending moves: offset is the source width.
    for (int width : {8, 16, 32}) {
      if (!is64 && width == 32) continue;
      t.Add(fmt::format("movsx{}{}", width, is64 ? 64 : 32), cls | kSrcX | kAluMov,
            Discriminant::kOffset, width, Shape::kMovSx, kV4, base,
            fmt::format("dst = {}(s{})src", is64 ? "(s64)" : "(u32)(s32)", width));
    }
  }
  // The per-CPU address move, which the verifier writes where a program
  // takes the address of a per-CPU variable (this_cpu_ptr(), an inlined
  // per-CPU map lookup) when the JIT supports it.
  t.Add("addr_percpu", "addr_percpu", kClassAlu64 | kSrcX | kAluMov, Discriminant::kOffset, kAddrPerCpu,
        Shape::kMovPerCpu, kV4, kGroupBase64, true, "dst = src + this CPU's per-CPU offset (this_cpu_ptr)");
  // Byte swaps. ALU|K|END = to little endian, ALU|X|END = to big endian,
  // ALU64|K|END = unconditional swap (v4).
  for (int width : {16, 32, 64}) {
    const Group group = width == 64 ? kGroupBase64 : kGroupBase32;
    t.Add(fmt::format("le{}", width), kClassAlu | kSrcK | kAluEnd, Discriminant::kImm, width,
          Shape::kEndian, kV1, group, fmt::format("dst = htole{}(dst)", width));
    t.Add(fmt::format("be{}", width), kClassAlu | kSrcX | kAluEnd, Discriminant::kImm, width,
          Shape::kEndian, kV1, group, fmt::format("dst = htobe{}(dst)", width));
    t.Add(fmt::format("bswap{}", width), kClassAlu64 | kSrcK | kAluEnd, Discriminant::kImm, width,
          Shape::kEndian, kV4, group, fmt::format("dst = bswap{}(dst)", width));
  }
}

void AddJumps(Table& t) {
  t.Add("ja", kClassJmp | kJmpJa, Discriminant::kNone, 0, Shape::kJa, kV1, kGroupBase32,
        "pc += offset");
  t.Add("ja32", kClassJmp32 | kJmpJa, Discriminant::kNone, 0, Shape::kJa32, kV4, kGroupBase32,
        "pc += imm (gotol)");
  for (bool is32 : {false, true}) {
    const uint8_t cls = is32 ? kClassJmp32 : kClassJmp;
    const char* suffix = is32 ? "32" : "";
    for (const auto& op : kJmpOps) {
      const CpuVersion cpu = is32 ? kV3 : op.cpu64;
      const Group group = is32 ? kGroupBase32 : kGroupBase64;
      const std::string mnemonic = std::string(op.name) + suffix;
      std::string cond = op.cond;
      if (is32) cond = Replace(Replace(cond, "dst", "(u32)dst"), "src", "(u32)src");
      t.Add(mnemonic + " imm", mnemonic, cls | kSrcK | op.op, Discriminant::kNone, 0,
            Shape::kJumpImm, cpu, group, false,
            "if " + Replace(cond, "src", is32 ? "imm" : "(s64)imm") + ": pc += offset");
      t.Add(mnemonic + " reg", mnemonic, cls | kSrcX | op.op, Discriminant::kNone, 0,
            Shape::kJumpReg, cpu, group, false, "if " + cond + ": pc += offset");
    }
  }
  t.Add("call helper", "call", kOpCall, Discriminant::kSrc, 0, Shape::kCallHelper, kV1,
        kGroupBase32, false, "r0 = helper[imm](r1, r2, r3, r4, r5)");
  t.Add("call local", "call local", kOpCall, Discriminant::kSrc, kPseudoCall, Shape::kCallLocal,
        kV3, kGroupBase32, false, "call subprogram at pc + imm + 1");
  t.Add("call kfunc", "call kfunc", kOpCall, Discriminant::kSrc, kPseudoKfuncCall, Shape::kCallKfunc,
        kV3, kGroupBase32, false, "r0 = kfunc[imm](r1, r2, r3, r4, r5); bpf_throw (1) does not return");
  t.Add("callx", "call", kOpCallX, Discriminant::kNone, 0, Shape::kCallReg, kV1, kGroupCallx,
        false, "r0 = helper[dst](r1, r2, r3, r4, r5)");
  t.Add("exit", kOpExit, Discriminant::kNone, 0, Shape::kExit, kV1, kGroupBase32,
        "return r0 to the caller");
  t.Add("tail_call", "tail_call", kOpTailCall, Discriminant::kNone, 0, Shape::kTailCall, kV1,
        kGroupBase32, true, "if r3 < r2->max_entries && tcc < 33 && r2->ptrs[r3]: jump to it");
}

void AddLoadsAndStores(Table& t) {
  t.Add("lddw", "lddw", kOpLddw, Discriminant::kSrc, 0, Shape::kLddw, kV1, kGroupBase64, false,
        "dst = imm64");
  t.Add("lddw map_fd", "lddw", kOpLddw, Discriminant::kSrc, kPseudoMapFd, Shape::kLddwMapFd, kV1,
        kGroupBase64, false, "dst = address of map imm");
  t.Add("lddw map_value", "lddw", kOpLddw, Discriminant::kSrc, kPseudoMapValue,
        Shape::kLddwMapValue, kV1, kGroupBase64, false,
        "dst = address of map imm's value + next imm");
  t.Add("lddw func", "lddw_func", kOpLddw, Discriminant::kSrc, kPseudoFunc, Shape::kLddwFunc, kV3,
        kGroupBase64, false, "dst = address of the subprogram at pc + imm + 1 (a callback)");
  for (const auto& size : kSizes) {
    if (size.wide) continue;  // legacy packet access has no dw form
    const unsigned bits = SizeBytes(size.size) * 8;
    t.Add(std::string("ldabs") + size.suffix, kClassLd | kModeAbs | size.size,
          Discriminant::kNone, 0, Shape::kLdAbs, kV1, kGroupPacket,
          fmt::format("r0 = ntoh{}(*(u{} *)(packet + imm))", bits, bits));
    t.Add(std::string("ldind") + size.suffix, kClassLd | kModeInd | size.size,
          Discriminant::kNone, 0, Shape::kLdInd, kV1, kGroupPacket,
          fmt::format("r0 = ntoh{}(*(u{} *)(packet + src + imm))", bits, bits));
  }
  for (const auto& size : kSizes) {
    const Group group = size.wide ? kGroupBase64 : kGroupBase32;
    const unsigned bits = SizeBytes(size.size) * 8;
    const std::string ldx = std::string("ldx") + size.suffix;
    t.Add(ldx, kClassLdx | kModeMem | size.size, Discriminant::kNone, 0, Shape::kLoad, kV1, group,
          fmt::format("dst = *(u{} *)(src + offset)", bits));
    t.Add("probe " + ldx, "probe " + ldx, kClassLdx | kModeProbeMem | size.size,
          Discriminant::kNone, 0, Shape::kLoad, kV1, group, true,
          fmt::format("dst = *(u{} *)(src + offset), or 0 if that faults", bits));
    if (!size.wide) {
      const std::string ldxs = std::string("ldxs") + size.suffix;
      t.Add(ldxs, kClassLdx | kModeMemSx | size.size, Discriminant::kNone, 0, Shape::kLoad, kV4,
            kGroupBase32, fmt::format("dst = *(s{} *)(src + offset)", bits));
      t.Add("probe " + ldxs, "probe " + ldxs, kClassLdx | kModeProbeMemSx | size.size,
            Discriminant::kNone, 0, Shape::kLoad, kV4, kGroupBase32, true,
            fmt::format("dst = *(s{} *)(src + offset), or 0 if that faults", bits));
    }
    t.Add(std::string("st") + size.suffix, kClassSt | kModeMem | size.size, Discriminant::kNone, 0,
          Shape::kStoreImm, kV1, group, fmt::format("*(u{} *)(dst + offset) = imm", bits));
    t.Add(std::string("stx") + size.suffix, kClassStx | kModeMem | size.size,
          Discriminant::kNone, 0, Shape::kStoreReg, kV1, group,
          fmt::format("*(u{} *)(dst + offset) = src", bits));
  }
}

void AddAtomics(Table& t) {
  struct AtomicInfo {
    const char* name;
    int32_t imm;
    const char* semantics;
  };
  constexpr AtomicInfo kOps[] = {
      {"add", kAtomicAdd, "*p += src"},
      {"or", kAtomicOr, "*p |= src"},
      {"and", kAtomicAnd, "*p &= src"},
      {"xor", kAtomicXor, "*p ^= src"},
      {"fetch add", kAtomicAdd | kAtomicFetch, "src = atomic_fetch_add(p, src)"},
      {"fetch or", kAtomicOr | kAtomicFetch, "src = atomic_fetch_or(p, src)"},
      {"fetch and", kAtomicAnd | kAtomicFetch, "src = atomic_fetch_and(p, src)"},
      {"fetch xor", kAtomicXor | kAtomicFetch, "src = atomic_fetch_xor(p, src)"},
      {"xchg", kAtomicXchg, "src = xchg(p, src)"},
      {"cmpxchg", kAtomicCmpXchg, "r0 = cmpxchg(p, r0, src)"},
  };
  for (bool is64 : {false, true}) {
    for (const auto& op : kOps) {
      const std::string mnemonic = std::string("lock ") + op.name + (is64 ? "" : "32");
      t.Add(mnemonic, kClassStx | kModeAtomic | (is64 ? kSizeDW : kSizeW), Discriminant::kImm,
            op.imm, Shape::kAtomic, kV3, is64 ? kGroupAtomic64 : kGroupAtomic32,
            fmt::format("p = (u{} *)(dst + offset); {}", is64 ? 64 : 32, op.semantics));
    }
  }
}

// Arena accesses (kernel-internal): what the verifier makes of a load, a
// store or an atomic through an arena pointer. The address is the arena's
// kernel mapping plus the register plus the offset; where nothing is
// mapped the access faults and the exception table makes a load give 0
// and a store or an atomic do nothing.
void AddArena(Table& t) {
  for (const auto& size : kSizes) {
    const Group group = size.wide ? kGroupBase64 : kGroupBase32;
    const unsigned bits = SizeBytes(size.size) * 8;
    const std::string ldx = std::string("probe32 ldx") + size.suffix;
    t.Add(ldx, ldx, kClassLdx | kModeProbeMem32 | size.size, Discriminant::kNone, 0, Shape::kLoad, kV1, group, true,
          fmt::format("dst = *(u{} *)(arena + src + offset), or 0 if that faults", bits));
    const std::string st = std::string("probe32 st") + size.suffix;
    t.Add(st, st, kClassSt | kModeProbeMem32 | size.size, Discriminant::kNone, 0, Shape::kStoreImm, kV1, group,
          true, fmt::format("*(u{} *)(arena + dst + offset) = imm, unless that faults", bits));
    const std::string stx = std::string("probe32 stx") + size.suffix;
    t.Add(stx, stx, kClassStx | kModeProbeMem32 | size.size, Discriminant::kNone, 0, Shape::kStoreReg, kV1, group,
          true, fmt::format("*(u{} *)(arena + dst + offset) = src, unless that faults", bits));
  }
  // The cast of an arena pointer to the user address the program's
  // process sees (its imm is fixed: the other direction never reaches the
  // JIT).
  t.Add("addr_space_cast", "addr_space_cast", kClassAlu64 | kSrcX | kAluMov, Discriminant::kOffset,
        kAddrSpaceCastOffset, Shape::kAddrSpaceCast, kV4, kGroupBase64, true,
        "dst = (u32)src ? user_vm_start's upper half << 32 | (u32)src : 0");
  t.forms.back().fixed_imm = kCastUserImm;
  for (const Form& atomic : std::vector<Form>(t.forms)) {
    if (atomic.shape != Shape::kAtomic) continue;
    const bool is64 = SizeOf(atomic.opcode) == kSizeDW;
    t.Add("probe32 " + atomic.name, "probe32 " + atomic.mnemonic,
          static_cast<uint8_t>(kClassStx | kModeProbeAtomic | (is64 ? kSizeDW : kSizeW)), Discriminant::kImm,
          atomic.discriminant_value, Shape::kAtomic, kV3, atomic.group, true,
          Replace(atomic.semantics, "(dst + offset)", "(arena + dst + offset)") + ", unless that faults");
  }
}

const Table& GetTable() {
  static const Table table = [] {
    Table t;
    AddAlu(t);
    AddJumps(t);
    AddLoadsAndStores(t);
    AddAtomics(t);
    AddArena(t);  // last: the forms before keep their ids
    for (size_t op = 0; op < 256; ++op) {
      t.matcher_begin[op] = static_cast<uint16_t>(t.matchers.size());
      for (FormId id : t.by_opcode[op]) {
        t.matchers.push_back({t.forms[id].discriminant, t.forms[id].discriminant_value, id});
      }
    }
    t.matcher_begin[256] = static_cast<uint16_t>(t.matchers.size());
    return t;
  }();
  return table;
}

bool Matches(const Matcher& matcher, const Insn& insn) {
  switch (matcher.discriminant) {
    case Discriminant::kNone: return true;
    case Discriminant::kSrc: return insn.src == matcher.value;
    case Discriminant::kOffset: return insn.offset == matcher.value;
    case Discriminant::kImm: return insn.imm == matcher.value;
  }
  return false;
}

}  // namespace

std::span<const Form> AllForms() { return GetTable().forms; }

const Form& FormById(FormId id) {
  const auto& forms = GetTable().forms;
  assert(id < forms.size());
  return forms[id];
}

std::optional<FormId> Classify(const Insn& insn) {
  const Table& table = GetTable();
  const uint16_t end = table.matcher_begin[insn.opcode + 1u];
  for (uint16_t i = table.matcher_begin[insn.opcode]; i < end; ++i) {
    if (Matches(table.matchers[i], insn)) return table.matchers[i].id;
  }
  return std::nullopt;
}

std::span<const FormId> FormsWithMnemonic(std::string_view mnemonic) {
  const auto& index = GetTable().by_mnemonic;
  auto it = index.find(mnemonic);
  if (it == index.end()) return {};
  return it->second;
}

bool IsKnownOpcode(uint8_t opcode) { return !GetTable().by_opcode[opcode].empty(); }

std::string_view CpuVersionName(CpuVersion cpu) {
  switch (cpu) {
    case kV1: return "v1";
    case kV2: return "v2";
    case kV3: return "v3";
    case kV4: return "v4";
  }
  return "?";
}

std::optional<CpuVersion> ParseCpuVersion(std::string_view name) {
  for (CpuVersion cpu : {kV1, kV2, kV3, kV4}) {
    if (name == CpuVersionName(cpu)) return cpu;
  }
  return std::nullopt;
}

namespace {
constexpr std::pair<Group, std::string_view> kGroupNames[] = {
    {kGroupBase32, "base32"},     {kGroupBase64, "base64"},     {kGroupAtomic32, "atomic32"},
    {kGroupAtomic64, "atomic64"}, {kGroupDivMul32, "divmul32"}, {kGroupDivMul64, "divmul64"},
    {kGroupPacket, "packet"},     {kGroupCallx, "callx"},
};
}  // namespace

std::string GroupNames(uint32_t groups) {
  std::string out;
  for (auto [group, name] : kGroupNames) {
    if (!(groups & group)) continue;
    if (!out.empty()) out += '|';
    out += name;
  }
  return out.empty() ? "none" : out;
}

std::optional<Group> ParseGroup(std::string_view name) {
  for (auto [group, group_name] : kGroupNames) {
    if (name == group_name) return group;
  }
  return std::nullopt;
}

}  // namespace bpfdiff::isa
