#include "tests/jit/a64_cross_check_cases.h"

#include <fmt/core.h>

#include <array>
#include <span>
#include <string_view>
#include <tuple>
#include <utility>

#include "jit/a64/aliases.h"

namespace bpfdiff::a64::testing {
namespace {

using enum Reg;
using enum Width;
using enum EncoderClass;

constexpr std::array kWidths = {kW, kX};

constexpr std::array<std::string_view, 16> kCondNames = {
    "eq", "ne", "hs", "lo", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt", "le", "al", "nv"};

constexpr std::array<std::string_view, 4> kShiftNames = {"lsl", "lsr", "asr", "ror"};

constexpr std::array<std::string_view, 8> kExtendNames = {"uxtb", "uxth", "uxtw", "uxtx",
                                                          "sxtb", "sxth", "sxtw", "sxtx"};

Cond CondAt(unsigned i) { return static_cast<Cond>(i); }

class Table {
 public:
  void Add(EncoderClass encoder_class, uint32_t word, std::string syntax) {
    cases_.push_back({encoder_class, word, std::move(syntax)});
  }
  std::vector<CrossCheckCase> Take() { return std::move(cases_); }

 private:
  std::vector<CrossCheckCase> cases_;
};

std::string R(Width width, Reg reg) { return RegName(width, reg); }

// --- Data processing (immediate) -------------------------------------------

void AddSubImmediateCases(Table& t) {
  constexpr std::array<std::string_view, 4> kNames = {"add", "adds", "sub", "subs"};
  for (unsigned op = 0; op < 4; ++op) {
    const bool flags = (op & 1) != 0;
    for (Width w : kWidths) {
      for (Reg rd : {kX0, kX30, flags ? kZr : kSp}) {
        for (Reg rn : {kX1, kX30, kSp}) {
          for (uint32_t imm : {0u, 1u, 4095u}) {
            for (bool shift : {false, true}) {
              t.Add(kAddSubImmediate,
                    AddSubImmediate(static_cast<AddSubOp>(op), w, rd, rn, imm, shift),
                    fmt::format("{} {}, {}, #{}{}", kNames[op], R(w, rd), R(w, rn), imm,
                                shift ? ", lsl #12" : ""));
            }
          }
        }
      }
    }
  }
}

void LogicalImmediateCases(Table& t) {
  constexpr std::array<std::string_view, 4> kNames = {"and", "orr", "eor", "ands"};
  constexpr std::array<uint64_t, 9> kW32 = {
      1, 0xff, 0x80000000, 0xfffffffe, 0x55555555, 0x0f0f0f0f, 0x7fffffff, 0x3fc, 0x80000001};
  constexpr std::array<uint64_t, 11> kW64 = {1,
                                             0xff,
                                             0x8000000000000000,
                                             0xfffffffffffffffe,
                                             0x5555555555555555,
                                             0x00ff00ff00ff00ff,
                                             0x7fffffffffffffff,
                                             0xffff0000ffff0000,
                                             0x0000000100000001,
                                             0x8000000000000001,
                                             0x00000000ffffffff};
  for (unsigned op = 0; op < 4; ++op) {
    for (Width w : kWidths) {
      const auto values =
          w == kX ? std::span<const uint64_t>(kW64) : std::span<const uint64_t>(kW32);
      for (uint64_t value : values) {
        for (auto [rd, rn] :
             {std::pair{kX0, kX1}, std::pair{kX30, kZr}, std::pair{op == 3 ? kZr : kSp, kX30}}) {
          t.Add(kLogicalImmediate,
                LogicalImmediate(static_cast<LogicalImmOp>(op), w, rd, rn, value),
                fmt::format("{} {}, {}, #{:#x}", kNames[op], R(w, rd), R(w, rn), value));
        }
      }
    }
  }
}

void MoveWideImmediateCases(Table& t) {
  for (auto [op, name] :
       {std::pair{MoveWideOp::kMovn, "movn"}, std::pair{MoveWideOp::kMovz, "movz"},
        std::pair{MoveWideOp::kMovk, "movk"}}) {
    for (Width w : kWidths) {
      for (unsigned shift = 0; shift < Bits(w); shift += 16) {
        for (uint32_t imm : {0u, 1u, 0x1234u, 0xffffu}) {
          for (Reg rd : {kX0, kX30, kZr}) {
            t.Add(kMoveWideImmediate, MoveWideImmediate(op, w, rd, imm, shift),
                  fmt::format("{} {}, #{:#x}, lsl #{}", name, R(w, rd), imm, shift));
          }
        }
      }
    }
  }
}

void BitfieldCases(Table& t) {
  constexpr std::array<std::string_view, 3> kNames = {"sbfm", "bfm", "ubfm"};
  for (unsigned op = 0; op < 3; ++op) {
    for (Width w : kWidths) {
      const unsigned top = Bits(w) - 1;
      for (auto [immr, imms] :
           {std::pair{0u, 0u}, std::pair{0u, top}, std::pair{top, 0u}, std::pair{top, top},
            std::pair{1u, 7u}, std::pair{7u, 3u}, std::pair{top / 2 + 1, top / 2}}) {
        for (auto [rd, rn] : {std::pair{kX0, kX1}, std::pair{kX30, kZr}, std::pair{kZr, kX30}}) {
          t.Add(kBitfield, Bitfield(static_cast<BitfieldOp>(op), w, rd, rn, immr, imms),
                fmt::format("{} {}, {}, #{}, #{}", kNames[op], R(w, rd), R(w, rn), immr, imms));
        }
      }
    }
  }
}

void PcRelAddressingCases(Table& t) {
  for (Reg rd : {kX0, kX30, kZr}) {
    for (int64_t offset : {0, 1, -1, 4, 1048575, -1048576}) {
      t.Add(kPcRelAddressing, PcRelAddressing(PcRelOp::kAdr, rd, offset),
            fmt::format("adr {}, #{}", R(kX, rd), offset));
    }
    for (int64_t offset :
         {int64_t{0}, int64_t{4096}, int64_t{-4096}, int64_t{4294963200}, int64_t{-4294967296}}) {
      t.Add(kPcRelAddressing, PcRelAddressing(PcRelOp::kAdrp, rd, offset),
            fmt::format("adrp {}, #{}", R(kX, rd), offset));
    }
  }
}

// --- Data processing (register) ----------------------------------------------

constexpr std::array<std::tuple<Reg, Reg, Reg>, 3> kThreeRegs = {
    std::tuple{kX0, kX1, kX2}, std::tuple{kX30, kZr, kX30}, std::tuple{kZr, kX30, kZr}};

void AddSubShiftedRegisterCases(Table& t) {
  constexpr std::array<std::string_view, 4> kNames = {"add", "adds", "sub", "subs"};
  for (unsigned op = 0; op < 4; ++op) {
    for (Width w : kWidths) {
      for (unsigned shift = 0; shift < 3; ++shift) {
        for (unsigned amount : {0u, 1u, Bits(w) - 1}) {
          for (auto [rd, rn, rm] : kThreeRegs) {
            t.Add(kAddSubShiftedRegister,
                  AddSubShiftedRegister(static_cast<AddSubOp>(op), w, rd, rn, rm,
                                        static_cast<Shift>(shift), amount),
                  fmt::format("{} {}, {}, {}, {} #{}", kNames[op], R(w, rd), R(w, rn), R(w, rm),
                              kShiftNames[shift], amount));
          }
        }
      }
    }
  }
}

void AddSubExtendedRegisterCases(Table& t) {
  constexpr std::array<std::string_view, 4> kNames = {"add", "adds", "sub", "subs"};
  for (unsigned op = 0; op < 4; ++op) {
    const bool flags = (op & 1) != 0;
    for (Width w : kWidths) {
      for (unsigned extend = 0; extend < 8; ++extend) {
        const Width rm_width = w == kX && (extend & 3) == 3 ? kX : kW;
        for (unsigned amount : {0u, 2u, 4u}) {
          for (auto [rd, rn, rm] :
               {std::tuple{kX0, kX1, kX2}, std::tuple{flags ? kZr : kSp, kX30, kZr},
                std::tuple{kX30, kSp, kX3}}) {
            t.Add(kAddSubExtendedRegister,
                  AddSubExtendedRegister(static_cast<AddSubOp>(op), w, rd, rn, rm,
                                         static_cast<Extend>(extend), amount),
                  fmt::format("{} {}, {}, {}, {} #{}", kNames[op], R(w, rd), R(w, rn),
                              R(rm_width, rm), kExtendNames[extend], amount));
          }
        }
      }
    }
  }
}

void LogicalShiftedRegisterCases(Table& t) {
  constexpr std::array<std::string_view, 8> kNames = {"and", "bic", "orr",  "orn",
                                                      "eor", "eon", "ands", "bics"};
  for (unsigned op = 0; op < 8; ++op) {
    for (Width w : kWidths) {
      for (unsigned shift = 0; shift < 4; ++shift) {
        for (unsigned amount : {0u, 1u, Bits(w) - 1}) {
          for (auto [rd, rn, rm] : kThreeRegs) {
            t.Add(kLogicalShiftedRegister,
                  LogicalShiftedRegister(static_cast<LogicalRegOp>(op), w, rd, rn, rm,
                                         static_cast<Shift>(shift), amount),
                  fmt::format("{} {}, {}, {}, {} #{}", kNames[op], R(w, rd), R(w, rn), R(w, rm),
                              kShiftNames[shift], amount));
          }
        }
      }
    }
  }
}

void DataProcessing1SourceCases(Table& t) {
  for (Width w : kWidths) {
    const std::array<std::pair<DataProc1Op, std::string_view>, 6> ops = {
        std::pair{DataProc1Op::kRbit, "rbit"},
        std::pair{DataProc1Op::kRev16, "rev16"},
        std::pair{DataProc1Op::kRev32, w == kX ? "rev32" : "rev"},
        std::pair{DataProc1Op::kRev, "rev"},
        std::pair{DataProc1Op::kClz, "clz"},
        std::pair{DataProc1Op::kCls, "cls"}};
    for (auto [op, name] : ops) {
      if (op == DataProc1Op::kRev && w == kW) continue;
      for (auto [rd, rn] : {std::pair{kX0, kX1}, std::pair{kX30, kZr}, std::pair{kZr, kX30}}) {
        t.Add(kDataProcessing1Source, DataProcessing1Source(op, w, rd, rn),
              fmt::format("{} {}, {}", name, R(w, rd), R(w, rn)));
      }
    }
  }
}

void DataProcessing2SourceCases(Table& t) {
  for (auto [op, name] :
       {std::pair{DataProc2Op::kUdiv, "udiv"}, std::pair{DataProc2Op::kSdiv, "sdiv"},
        std::pair{DataProc2Op::kLslv, "lslv"}, std::pair{DataProc2Op::kLsrv, "lsrv"},
        std::pair{DataProc2Op::kAsrv, "asrv"}, std::pair{DataProc2Op::kRorv, "rorv"}}) {
    for (Width w : kWidths) {
      for (auto [rd, rn, rm] : kThreeRegs) {
        t.Add(kDataProcessing2Source, DataProcessing2Source(op, w, rd, rn, rm),
              fmt::format("{} {}, {}, {}", name, R(w, rd), R(w, rn), R(w, rm)));
      }
    }
  }
}

void DataProcessing3SourceCases(Table& t) {
  constexpr std::array<std::tuple<Reg, Reg, Reg, Reg>, 3> kRegs = {
      std::tuple{kX0, kX1, kX2, kX3}, std::tuple{kX30, kZr, kX30, kZr},
      std::tuple{kZr, kX30, kZr, kX30}};
  for (Width w : kWidths) {
    for (auto [op, name] :
         {std::pair{DataProc3Op::kMadd, "madd"}, std::pair{DataProc3Op::kMsub, "msub"}}) {
      for (auto [rd, rn, rm, ra] : kRegs) {
        t.Add(kDataProcessing3Source, DataProcessing3Source(op, w, rd, rn, rm, ra),
              fmt::format("{} {}, {}, {}, {}", name, R(w, rd), R(w, rn), R(w, rm), R(w, ra)));
      }
    }
  }
  for (auto [op, name] :
       {std::pair{DataProc3Op::kSmaddl, "smaddl"}, std::pair{DataProc3Op::kSmsubl, "smsubl"},
        std::pair{DataProc3Op::kUmaddl, "umaddl"}, std::pair{DataProc3Op::kUmsubl, "umsubl"}}) {
    for (auto [rd, rn, rm, ra] : kRegs) {
      t.Add(kDataProcessing3Source, DataProcessing3Source(op, kX, rd, rn, rm, ra),
            fmt::format("{} {}, {}, {}, {}", name, R(kX, rd), R(kW, rn), R(kW, rm), R(kX, ra)));
    }
  }
  for (auto [op, name] :
       {std::pair{DataProc3Op::kSmulh, "smulh"}, std::pair{DataProc3Op::kUmulh, "umulh"}}) {
    for (auto [rd, rn, rm] : kThreeRegs) {
      t.Add(kDataProcessing3Source, DataProcessing3Source(op, kX, rd, rn, rm, kZr),
            fmt::format("{} {}, {}, {}", name, R(kX, rd), R(kX, rn), R(kX, rm)));
    }
  }
}

void ConditionalSelectCases(Table& t) {
  constexpr std::array<std::string_view, 4> kNames = {"csel", "csinc", "csinv", "csneg"};
  for (unsigned op = 0; op < 4; ++op) {
    for (Width w : kWidths) {
      for (unsigned cond = 0; cond < 16; ++cond) {
        for (auto [rd, rn, rm] : {std::tuple{kX0, kX1, kX2}, std::tuple{kX30, kZr, kX30}}) {
          t.Add(kConditionalSelect,
                ConditionalSelect(static_cast<CondSelectOp>(op), w, rd, rn, rm, CondAt(cond)),
                fmt::format("{} {}, {}, {}, {}", kNames[op], R(w, rd), R(w, rn), R(w, rm),
                            kCondNames[cond]));
        }
      }
    }
  }
}

// --- Loads and stores ---------------------------------------------------------

void LoadRegisterLiteralCases(Table& t) {
  for (auto [op, name, width] :
       {std::tuple{LiteralOp::kLdrW, "ldr", kW}, std::tuple{LiteralOp::kLdrX, "ldr", kX},
        std::tuple{LiteralOp::kLdrsw, "ldrsw", kX}}) {
    for (Reg rt : {kX0, kX30, kZr}) {
      for (int64_t offset : {0, 4, -4, 1048572, -1048576}) {
        t.Add(kLoadRegisterLiteral, LoadRegisterLiteral(op, rt, offset),
              fmt::format("{} {}, #{}", name, R(width, rt), offset));
      }
    }
  }
}

// Every (operation, size) pair of a general-register load or store, with the
// mnemonic's tail after "ldr"/"str"/"ldur"/"stur" and the width of Rt.
struct LoadStoreForm {
  LoadStoreOp op;
  Size size;
  std::string_view tail;
  Width rt_width;
};
constexpr std::array<LoadStoreForm, 13> kLoadStoreForms = {{
    {LoadStoreOp::kStore, Size::k8, "b", kW},
    {LoadStoreOp::kStore, Size::k16, "h", kW},
    {LoadStoreOp::kStore, Size::k32, "", kW},
    {LoadStoreOp::kStore, Size::k64, "", kX},
    {LoadStoreOp::kLoad, Size::k8, "b", kW},
    {LoadStoreOp::kLoad, Size::k16, "h", kW},
    {LoadStoreOp::kLoad, Size::k32, "", kW},
    {LoadStoreOp::kLoad, Size::k64, "", kX},
    {LoadStoreOp::kLoadSigned64, Size::k8, "sb", kX},
    {LoadStoreOp::kLoadSigned64, Size::k16, "sh", kX},
    {LoadStoreOp::kLoadSigned64, Size::k32, "sw", kX},
    {LoadStoreOp::kLoadSigned32, Size::k8, "sb", kW},
    {LoadStoreOp::kLoadSigned32, Size::k16, "sh", kW},
}};

std::string Mnemonic(const LoadStoreForm& form, bool unscaled) {
  return fmt::format("{}{}{}", form.op == LoadStoreOp::kStore ? "st" : "ld", unscaled ? "ur" : "r",
                     form.tail);
}

constexpr std::array<std::pair<Reg, Reg>, 3> kRtRn = {std::pair{kX0, kX1}, std::pair{kX30, kSp},
                                                      std::pair{kZr, kX30}};

void LoadStoreUnsignedImmediateCases(Table& t) {
  for (const LoadStoreForm& form : kLoadStoreForms) {
    const int64_t bytes = Bytes(form.size);
    for (int64_t offset : {int64_t{0}, bytes, 4095 * bytes}) {
      for (auto [rt, rn] : kRtRn) {
        t.Add(kLoadStoreUnsignedImmediate,
              LoadStoreUnsignedImmediate(form.op, form.size, rt, rn, offset),
              fmt::format("{} {}, [{}, #{}]", Mnemonic(form, false), R(form.rt_width, rt),
                          R(kX, rn), offset));
      }
    }
  }
}

void LoadStoreUnscaledImmediateCases(Table& t) {
  for (const LoadStoreForm& form : kLoadStoreForms) {
    for (int64_t offset : {-256, -1, 0, 255}) {
      for (auto [rt, rn] : kRtRn) {
        t.Add(kLoadStoreUnscaledImmediate,
              LoadStoreUnscaledImmediate(form.op, form.size, rt, rn, offset),
              fmt::format("{} {}, [{}, #{}]", Mnemonic(form, true), R(form.rt_width, rt), R(kX, rn),
                          offset));
      }
    }
  }
}

void LoadStoreImmediateIndexedCases(Table& t) {
  for (const LoadStoreForm& form : kLoadStoreForms) {
    for (int64_t offset : {-256, -1, 0, 255}) {
      for (auto [rt, rn] : kRtRn) {
        const std::string head =
            fmt::format("{} {}, [{}", Mnemonic(form, false), R(form.rt_width, rt), R(kX, rn));
        t.Add(kLoadStoreImmediateIndexed,
              LoadStoreImmediateIndexed(form.op, form.size, rt, rn, offset, Indexing::kPreIndex),
              fmt::format("{}, #{}]!", head, offset));
        t.Add(kLoadStoreImmediateIndexed,
              LoadStoreImmediateIndexed(form.op, form.size, rt, rn, offset, Indexing::kPostIndex),
              fmt::format("{}], #{}", head, offset));
      }
    }
  }
}

void LoadStoreRegisterOffsetCases(Table& t) {
  for (const LoadStoreForm& form : kLoadStoreForms) {
    const unsigned scale = static_cast<unsigned>(form.size);
    for (Extend extend : {Extend::kUxtw, Extend::kUxtx, Extend::kSxtw, Extend::kSxtx}) {
      const bool x_index = extend == Extend::kUxtx || extend == Extend::kSxtx;
      const std::string_view name =
          extend == Extend::kUxtx ? "lsl" : kExtendNames[static_cast<unsigned>(extend)];
      for (bool scaled : {false, true}) {
        for (auto [rt, rn, rm] :
             {std::tuple{kX0, kX1, kX2}, std::tuple{kX30, kSp, kX30}, std::tuple{kZr, kX30, kZr}}) {
          std::string suffix;
          if (scaled) {
            suffix = fmt::format(", {} #{}", name, scale);
          } else if (extend != Extend::kUxtx) {
            suffix = fmt::format(", {}", name);
          }
          t.Add(kLoadStoreRegisterOffset,
                LoadStoreRegisterOffset(form.op, form.size, rt, rn, rm, extend, scaled),
                fmt::format("{} {}, [{}, {}{}]", Mnemonic(form, false), R(form.rt_width, rt),
                            R(kX, rn), R(x_index ? kX : kW, rm), suffix));
        }
      }
    }
  }
}

void LoadStorePairCases(Table& t) {
  for (auto [op, name, width] :
       {std::tuple{PairOp::kStore, "stp", kW}, std::tuple{PairOp::kStore, "stp", kX},
        std::tuple{PairOp::kLoad, "ldp", kW}, std::tuple{PairOp::kLoad, "ldp", kX},
        std::tuple{PairOp::kLoadSignedWords, "ldpsw", kX}}) {
    const int64_t scale = op == PairOp::kLoadSignedWords || width == kW ? 4 : 8;
    for (int64_t offset : {-64 * scale, -scale, int64_t{0}, 63 * scale}) {
      for (auto [rt, rt2, rn] :
           {std::tuple{kX0, kX1, kX2}, std::tuple{kX30, kZr, kSp}, std::tuple{kZr, kX29, kX30}}) {
        const std::string head =
            fmt::format("{} {}, {}, [{}", name, R(width, rt), R(width, rt2), R(kX, rn));
        t.Add(kLoadStorePair, LoadStorePair(op, width, rt, rt2, rn, offset, Indexing::kOffset),
              fmt::format("{}, #{}]", head, offset));
        t.Add(kLoadStorePair, LoadStorePair(op, width, rt, rt2, rn, offset, Indexing::kPreIndex),
              fmt::format("{}, #{}]!", head, offset));
        t.Add(kLoadStorePair, LoadStorePair(op, width, rt, rt2, rn, offset, Indexing::kPostIndex),
              fmt::format("{}], #{}", head, offset));
      }
    }
  }
}

constexpr std::array<std::string_view, 4> kSizeSuffix = {"b", "h", "", ""};

Width RegWidth(Size size) { return size == Size::k64 ? kX : kW; }

void LoadStoreExclusiveCases(Table& t) {
  for (auto [op, name] :
       {std::pair{ExclusiveOp::kStxr, "stxr"}, std::pair{ExclusiveOp::kStlxr, "stlxr"},
        std::pair{ExclusiveOp::kLdxr, "ldxr"}, std::pair{ExclusiveOp::kLdaxr, "ldaxr"},
        std::pair{ExclusiveOp::kStlr, "stlr"}, std::pair{ExclusiveOp::kLdar, "ldar"}}) {
    const bool status = op == ExclusiveOp::kStxr || op == ExclusiveOp::kStlxr;
    for (unsigned size = 0; size < 4; ++size) {
      const Size s = static_cast<Size>(size);
      const Width w = RegWidth(s);
      if (status) {
        for (auto [rs, rt, rn] :
             {std::tuple{kX2, kX0, kX1}, std::tuple{kX30, kZr, kSp}, std::tuple{kZr, kX30, kX29}}) {
          t.Add(kLoadStoreExclusive, LoadStoreExclusive(op, s, rs, rt, rn),
                fmt::format("{}{} {}, {}, [{}]", name, kSizeSuffix[size], R(kW, rs), R(w, rt),
                            R(kX, rn)));
        }
      } else {
        for (auto [rt, rn] : {std::pair{kX0, kX1}, std::pair{kX30, kSp}, std::pair{kZr, kX30}}) {
          t.Add(kLoadStoreExclusive, LoadStoreExclusive(op, s, kZr, rt, rn),
                fmt::format("{}{} {}, [{}]", name, kSizeSuffix[size], R(w, rt), R(kX, rn)));
        }
      }
    }
  }
}

constexpr std::array<std::string_view, 4> kOrderSuffix = {"", "a", "l", "al"};
constexpr std::array<std::tuple<Reg, Reg, Reg>, 3> kAtomicRegs = {
    std::tuple{kX0, kX1, kX2}, std::tuple{kX30, kZr, kSp}, std::tuple{kZr, kX30, kX29}};

void AtomicMemoryOperationCases(Table& t) {
  constexpr std::array<std::string_view, 9> kNames = {
      "ldadd", "ldclr", "ldeor", "ldset", "ldsmax", "ldsmin", "ldumax", "ldumin", "swp"};
  for (unsigned op = 0; op < 9; ++op) {
    for (unsigned size = 0; size < 4; ++size) {
      const Width w = RegWidth(static_cast<Size>(size));
      for (unsigned order = 0; order < 4; ++order) {
        for (auto [rs, rt, rn] : kAtomicRegs) {
          t.Add(kAtomicMemoryOperation,
                AtomicMemoryOperation(static_cast<AtomicOp>(op), static_cast<Size>(size),
                                      static_cast<MemOrder>(order), rs, rt, rn),
                fmt::format("{}{}{} {}, {}, [{}]", kNames[op], kOrderSuffix[order],
                            kSizeSuffix[size], R(w, rs), R(w, rt), R(kX, rn)));
        }
      }
    }
  }
}

void CompareAndSwapCases(Table& t) {
  for (unsigned size = 0; size < 4; ++size) {
    const Width w = RegWidth(static_cast<Size>(size));
    for (unsigned order = 0; order < 4; ++order) {
      for (auto [rs, rt, rn] : kAtomicRegs) {
        t.Add(kCompareAndSwap,
              CompareAndSwap(static_cast<Size>(size), static_cast<MemOrder>(order), rs, rt, rn),
              fmt::format("cas{}{} {}, {}, [{}]", kOrderSuffix[order], kSizeSuffix[size], R(w, rs),
                          R(w, rt), R(kX, rn)));
      }
    }
  }
}

// --- Branches, exceptions, system ----------------------------------------------

void BranchCases(Table& t) {
  for (auto [op, name] : {std::pair{BranchOp::kB, "b"}, std::pair{BranchOp::kBl, "bl"}}) {
    for (int64_t offset : {0, 4, -4, 134217724, -134217728}) {
      t.Add(kUnconditionalBranchImmediate, UnconditionalBranchImmediate(op, offset),
            fmt::format("{} #{}", name, offset));
    }
  }
  for (auto [op, name] : {std::pair{BranchRegOp::kBr, "br"}, std::pair{BranchRegOp::kBlr, "blr"},
                          std::pair{BranchRegOp::kRet, "ret"}}) {
    for (Reg rn : {kX0, kX17, kX30}) {
      t.Add(kUnconditionalBranchRegister, UnconditionalBranchRegister(op, rn),
            fmt::format("{} {}", name, R(kX, rn)));
    }
  }
  for (unsigned cond = 0; cond < 16; ++cond) {
    for (int64_t offset : {-1048576, -4, 0, 8, 1048572}) {
      t.Add(kConditionalBranchImmediate, ConditionalBranchImmediate(CondAt(cond), offset),
            fmt::format("b.{} #{}", kCondNames[cond], offset));
    }
  }
  for (auto [op, name] :
       {std::pair{CompareBranchOp::kCbz, "cbz"}, std::pair{CompareBranchOp::kCbnz, "cbnz"}}) {
    for (Width w : kWidths) {
      for (Reg rt : {kX0, kX30, kZr}) {
        for (int64_t offset : {-1048576, -8, 0, 1048572}) {
          t.Add(kCompareAndBranchImmediate, CompareAndBranchImmediate(op, w, rt, offset),
                fmt::format("{} {}, #{}", name, R(w, rt), offset));
        }
      }
    }
  }
  for (auto [op, name] :
       {std::pair{TestBranchOp::kTbz, "tbz"}, std::pair{TestBranchOp::kTbnz, "tbnz"}}) {
    for (unsigned bit : {0u, 3u, 31u, 32u, 63u}) {
      for (Reg rt : {kX1, kX30, kZr}) {
        for (int64_t offset : {-32768, 0, 32764}) {
          t.Add(kTestAndBranchImmediate, TestAndBranchImmediate(op, rt, bit, offset),
                fmt::format("{} {}, #{}, #{}", name, R(bit < 32 ? kW : kX, rt), bit, offset));
        }
      }
    }
  }
}

void ExceptionCases(Table& t) {
  for (auto [op, name] : {std::pair{ExceptionOp::kSvc, "svc"}, std::pair{ExceptionOp::kHvc, "hvc"},
                          std::pair{ExceptionOp::kSmc, "smc"}, std::pair{ExceptionOp::kBrk, "brk"},
                          std::pair{ExceptionOp::kHlt, "hlt"}}) {
    for (uint32_t imm : {0u, 1u, 0x100u, 0xffffu}) {
      t.Add(kExceptionGeneration, ExceptionGeneration(op, imm),
            fmt::format("{} #{:#x}", name, imm));
    }
  }
  for (uint32_t imm : {0u, 1u, 0xffffu}) {
    t.Add(kPermanentlyUndefined, PermanentlyUndefined(imm), fmt::format("udf #{}", imm));
  }
}

void SystemCases(Table& t) {
  constexpr std::array<std::pair<BarrierOption, std::string_view>, 12> kOptions = {{
      {BarrierOption::kOshld, "oshld"},
      {BarrierOption::kOshst, "oshst"},
      {BarrierOption::kOsh, "osh"},
      {BarrierOption::kNshld, "nshld"},
      {BarrierOption::kNshst, "nshst"},
      {BarrierOption::kNsh, "nsh"},
      {BarrierOption::kIshld, "ishld"},
      {BarrierOption::kIshst, "ishst"},
      {BarrierOption::kIsh, "ish"},
      {BarrierOption::kLd, "ld"},
      {BarrierOption::kSt, "st"},
      {BarrierOption::kSy, "sy"},
  }};
  for (auto [option, name] : kOptions) {
    t.Add(kBarrier, Barrier(BarrierOp::kDmb, option), fmt::format("dmb {}", name));
    t.Add(kBarrier, Barrier(BarrierOp::kDsb, option), fmt::format("dsb {}", name));
  }
  t.Add(kBarrier, Barrier(BarrierOp::kIsb, BarrierOption::kSy), "isb");

  for (auto [op, name] : std::initializer_list<std::pair<HintOp, std::string_view>>{
           {HintOp::kNop, "nop"},
           {HintOp::kYield, "yield"},
           {HintOp::kWfe, "wfe"},
           {HintOp::kWfi, "wfi"},
           {HintOp::kSev, "sev"},
           {HintOp::kSevl, "sevl"},
           {HintOp::kPaciasp, "paciasp"},
           {HintOp::kAutiasp, "autiasp"},
           {HintOp::kBti, "bti"},
           {HintOp::kBtiC, "bti c"},
           {HintOp::kBtiJ, "bti j"},
           {HintOp::kBtiJc, "bti jc"},
           {static_cast<HintOp>(127), "hint #127"}}) {
    t.Add(kHint, Hint(op), std::string(name));
  }

  const std::array<std::tuple<SystemRegister, std::string_view, bool>, 7> kRegisters = {{
      {kNzcv, "nzcv", true},
      {kTpidrEl0, "tpidr_el0", true},
      {kTpidrEl1, "tpidr_el1", true},
      {kTpidrEl2, "tpidr_el2", true},
      {kCntvctEl0, "cntvct_el0", false},
      {SystemRegister{3, 7, 15, 15, 7}, "s3_7_c15_c15_7", true},
      {SystemRegister{2, 0, 0, 0, 2}, "s2_0_c0_c0_2", true},
  }};
  for (auto [reg, name, writable] : kRegisters) {
    for (Reg rt : {kX0, kX30, kZr}) {
      t.Add(kSystemRegisterMove, SystemRegisterMove(SystemRegisterDirection::kMrs, reg, rt),
            fmt::format("mrs {}, {}", R(kX, rt), name));
      if (writable) {
        t.Add(kSystemRegisterMove, SystemRegisterMove(SystemRegisterDirection::kMsr, reg, rt),
              fmt::format("msr {}, {}", name, R(kX, rt)));
      }
    }
  }

  for (auto [op, name] : {std::pair{kDcCvau, "dc cvau"}, std::pair{kDcCvac, "dc cvac"},
                          std::pair{kDcCivac, "dc civac"}, std::pair{kIcIvau, "ic ivau"},
                          std::pair{SystemOperation{7, 15, 15, 7, true}, "sys #7, c15, c15, #7"}}) {
    for (Reg rt : {kX0, kX30}) {
      t.Add(kSystemInstruction, SystemInstruction(op, rt), fmt::format("{}, {}", name, R(kX, rt)));
    }
  }
  t.Add(kSystemInstruction, SystemInstruction(kIcIallu, kZr), "ic iallu");
  t.Add(kSystemInstruction, SystemInstruction(kIcIalluis, kZr), "ic ialluis");
}

// --- aliases.h, under the class each one expands to ------------------------------

void AliasCases(Table& t) {
  t.Add(kLogicalShiftedRegister, Mov(kX, kX0, kX1), "mov x0, x1");
  t.Add(kLogicalShiftedRegister, Mov(kW, kX30, kZr), "mov w30, wzr");
  t.Add(kAddSubImmediate, MovSp(kX, kSp, kX0), "mov sp, x0");
  t.Add(kAddSubImmediate, MovSp(kX, kX30, kSp), "mov x30, sp");
  t.Add(kAddSubImmediate, MovSp(kW, kSp, kX3), "mov wsp, w3");
  t.Add(kLogicalShiftedRegister, Mvn(kX, kX0, kX1), "mvn x0, x1");
  t.Add(kLogicalShiftedRegister, Mvn(kW, kX30, kZr), "mvn w30, wzr");
  t.Add(kAddSubShiftedRegister, Neg(kX, kX0, kX30), "neg x0, x30");
  t.Add(kAddSubShiftedRegister, Neg(kW, kX1, kX2), "neg w1, w2");
  t.Add(kAddSubShiftedRegister, Cmp(kX, kX0, kX30), "cmp x0, x30");
  t.Add(kAddSubShiftedRegister, Cmp(kW, kZr, kX2), "cmp wzr, w2");
  t.Add(kAddSubShiftedRegister, Cmn(kX, kX7, kX8), "cmn x7, x8");
  t.Add(kAddSubImmediate, CmpImm(kX, kSp, 4095), "cmp sp, #4095");
  t.Add(kAddSubImmediate, CmpImm(kW, kX1, 1, true), "cmp w1, #1, lsl #12");
  t.Add(kAddSubImmediate, CmnImm(kX, kX30, 0), "cmn x30, #0");
  t.Add(kLogicalShiftedRegister, Tst(kX, kX0, kX1), "tst x0, x1");
  t.Add(kLogicalImmediate, TstImm(kW, kX0, 0xff), "tst w0, #0xff");
  t.Add(kLogicalImmediate, TstImm(kX, kX30, 0x8000000000000000), "tst x30, #0x8000000000000000");
  t.Add(kDataProcessing3Source, Mul(kX, kX0, kX1, kX2), "mul x0, x1, x2");
  t.Add(kDataProcessing3Source, Mul(kW, kX30, kZr, kX3), "mul w30, wzr, w3");
  for (Width w : kWidths) {
    for (unsigned shift = 0; shift < Bits(w); ++shift) {
      t.Add(kBitfield, LslImm(w, kX0, kX1, shift),
            fmt::format("lsl {}, {}, #{}", R(w, kX0), R(w, kX1), shift));
      t.Add(kBitfield, LsrImm(w, kX2, kX3, shift),
            fmt::format("lsr {}, {}, #{}", R(w, kX2), R(w, kX3), shift));
      t.Add(kBitfield, AsrImm(w, kX30, kZr, shift),
            fmt::format("asr {}, {}, #{}", R(w, kX30), R(w, kZr), shift));
    }
    t.Add(kDataProcessing2Source, LslReg(w, kX0, kX1, kX2),
          fmt::format("lsl {}, {}, {}", R(w, kX0), R(w, kX1), R(w, kX2)));
    t.Add(kDataProcessing2Source, LsrReg(w, kX0, kX1, kX2),
          fmt::format("lsr {}, {}, {}", R(w, kX0), R(w, kX1), R(w, kX2)));
    t.Add(kDataProcessing2Source, AsrReg(w, kX0, kX1, kX2),
          fmt::format("asr {}, {}, {}", R(w, kX0), R(w, kX1), R(w, kX2)));
    t.Add(kBitfield, Sxtb(w, kX0, kX1), fmt::format("sxtb {}, w1", R(w, kX0)));
    t.Add(kBitfield, Sxth(w, kX30, kX29), fmt::format("sxth {}, w29", R(w, kX30)));
    for (unsigned cond = 0; cond < 14; ++cond) {
      t.Add(kConditionalSelect, Cset(w, kX5, CondAt(cond)),
            fmt::format("cset {}, {}", R(w, kX5), kCondNames[cond]));
    }
  }
  t.Add(kBitfield, Sxtw(kX0, kX1), "sxtw x0, w1");
  t.Add(kBitfield, Uxtb(kX0, kX1), "uxtb w0, w1");
  t.Add(kBitfield, Uxth(kX30, kZr), "uxth w30, wzr");
  t.Add(kUnconditionalBranchImmediate, B(-8), "b #-8");
  t.Add(kUnconditionalBranchImmediate, Bl(1024), "bl #1024");
  t.Add(kUnconditionalBranchRegister, Br(kX16), "br x16");
  t.Add(kUnconditionalBranchRegister, Blr(kX10), "blr x10");
  t.Add(kUnconditionalBranchRegister, Ret(), "ret");
  t.Add(kUnconditionalBranchRegister, Ret(kX1), "ret x1");
  t.Add(kHint, Nop(), "nop");
  t.Add(kExceptionGeneration, Brk(0x100), "brk #0x100");
  t.Add(kExceptionGeneration, kBreakFault, "brk #256");
  t.Add(kBarrier, Dmb(BarrierOption::kIsh), "dmb ish");
  t.Add(kBarrier, Dsb(BarrierOption::kSy), "dsb sy");
  t.Add(kBarrier, Isb(), "isb sy");
  t.Add(kSystemRegisterMove, Mrs(kX10, kTpidrEl1), "mrs x10, tpidr_el1");
  t.Add(kSystemRegisterMove, Msr(kTpidrEl0, kX3), "msr tpidr_el0, x3");
  t.Add(kLoadStoreExclusive, Ldxr(Size::k64, kX0, kX1), "ldxr x0, [x1]");
  t.Add(kLoadStoreExclusive, Ldaxr(Size::k32, kX0, kSp), "ldaxr w0, [sp]");
  t.Add(kLoadStoreExclusive, Ldar(Size::k8, kX2, kX3), "ldarb w2, [x3]");
  t.Add(kLoadStoreExclusive, Stlr(Size::k16, kX2, kX3), "stlrh w2, [x3]");
  t.Add(kLoadStoreExclusive, Stxr(Size::k64, kX4, kX0, kX1), "stxr w4, x0, [x1]");
  t.Add(kLoadStoreExclusive, Stlxr(Size::k32, kX4, kX0, kX1), "stlxr w4, w0, [x1]");
  for (auto [op, name] :
       {std::pair{AtomicOp::kLdadd, "stadd"}, std::pair{AtomicOp::kLdclr, "stclr"},
        std::pair{AtomicOp::kLdeor, "steor"}, std::pair{AtomicOp::kLdset, "stset"}}) {
    t.Add(kAtomicMemoryOperation, StAtomic(op, Size::k32, MemOrder::kRelaxed, kX0, kX1),
          fmt::format("{} w0, [x1]", name));
    t.Add(kAtomicMemoryOperation, StAtomic(op, Size::k64, MemOrder::kRelease, kX30, kSp),
          fmt::format("{}l x30, [sp]", name));
    t.Add(kAtomicMemoryOperation, StAtomic(op, Size::k8, MemOrder::kRelaxed, kX2, kX3),
          fmt::format("{}b w2, [x3]", name));
  }
}

}  // namespace

std::string RegName(Width width, Reg reg) {
  if (reg == Reg::kZr) return width == kX ? "xzr" : "wzr";
  if (reg == Reg::kSp) return width == kX ? "sp" : "wsp";
  return fmt::format("{}{}", width == kX ? 'x' : 'w', static_cast<unsigned>(reg));
}

std::vector<CrossCheckCase> CrossCheckCases() {
  Table table;
  AddSubImmediateCases(table);
  AddSubShiftedRegisterCases(table);
  AddSubExtendedRegisterCases(table);
  LogicalImmediateCases(table);
  LogicalShiftedRegisterCases(table);
  MoveWideImmediateCases(table);
  BitfieldCases(table);
  DataProcessing1SourceCases(table);
  DataProcessing2SourceCases(table);
  DataProcessing3SourceCases(table);
  ConditionalSelectCases(table);
  PcRelAddressingCases(table);
  LoadRegisterLiteralCases(table);
  LoadStoreUnsignedImmediateCases(table);
  LoadStoreUnscaledImmediateCases(table);
  LoadStoreImmediateIndexedCases(table);
  LoadStoreRegisterOffsetCases(table);
  LoadStorePairCases(table);
  LoadStoreExclusiveCases(table);
  AtomicMemoryOperationCases(table);
  CompareAndSwapCases(table);
  BranchCases(table);
  ExceptionCases(table);
  SystemCases(table);
  AliasCases(table);
  return table.Take();
}

}  // namespace bpfdiff::a64::testing
