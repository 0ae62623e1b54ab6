#include "fuzz/generator/trampoline_case.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <vector>

#include "fuzz/generator/data_stream.h"
#include "isa/disassembler.h"
#include "isa/insn.h"

namespace bpfdiff::fuzz {

namespace {

using isa::Insn;

// Reads the input front to back; past its end, zeros.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> data) : data_(data) {}
  uint8_t Byte() { return at_ < data_.size() ? data_[at_++] : 0; }
  size_t position() const { return at_; }
  void Seek(size_t at) { at_ = at; }
  uint64_t U64() {
    uint64_t value = 0;
    for (int i = 0; i < 8; ++i) value |= uint64_t{Byte()} << (8 * i);
    return value;
  }

 private:
  std::span<const uint8_t> data_;
  size_t at_ = 0;
};

constexpr uint8_t kAlu64 = isa::kClassAlu64;
constexpr uint8_t kAlu32 = isa::kClassAlu;

Insn Alu(uint8_t cls, uint8_t op, uint8_t src_kind, uint8_t dst, uint8_t src, int32_t imm) {
  return Insn{static_cast<uint8_t>(cls | op | src_kind), dst, src, 0, imm};
}
Insn MovImm(uint8_t dst, int32_t imm) { return Alu(kAlu64, isa::kAluMov, isa::kSrcK, dst, 0, imm); }
Insn MovReg(uint8_t dst, uint8_t src) { return Alu(kAlu64, isa::kAluMov, isa::kSrcX, dst, src, 0); }
Insn LoadDw(uint8_t dst, uint8_t base, int16_t offset) {
  return Insn{static_cast<uint8_t>(isa::kClassLdx | isa::kModeMem | isa::kSizeDW), dst, base, offset, 0};
}
Insn StoreDw(uint8_t base, int16_t offset, uint8_t src) {
  return Insn{static_cast<uint8_t>(isa::kClassStx | isa::kModeMem | isa::kSizeDW), base, src, offset, 0};
}

// Registers an operation may write: r0 and those the prologue sets.
// r1 (the context, or the first argument) is kept in r6; r8 holds the map
// value's address and is only read as a base.
constexpr uint8_t kWritable[] = {0, 2, 3, 4, 5, 7, 9};
constexpr uint8_t kAluOps[] = {isa::kAluAdd, isa::kAluSub, isa::kAluMul, isa::kAluDiv, isa::kAluOr,
                               isa::kAluAnd, isa::kAluLsh, isa::kAluRsh, isa::kAluMod, isa::kAluXor,
                               isa::kAluMov, isa::kAluArsh};
constexpr uint8_t kJumpOps[] = {isa::kJmpJeq, isa::kJmpJgt, isa::kJmpJge, isa::kJmpJset, isa::kJmpJne,
                                isa::kJmpJsgt, isa::kJmpJsge, isa::kJmpJlt, isa::kJmpJle, isa::kJmpJslt,
                                isa::kJmpJsle};

uint8_t Writable(uint8_t b) { return kWritable[b % std::size(kWritable)]; }
uint8_t Readable(uint8_t b) { return b % 10; }  // r0..r9: every one is set before the first operation

struct ProgramShape {
  bool traced = false;
  int ctx_low = 0;   // the context slots it may read: [ctx_low, ctx_high)
  int ctx_high = 0;
};

// One program: a prologue that sets every register, up to 31 operations of
// 3 bytes, an epilogue that shapes r0.
std::vector<Insn> DecodeProgram(Reader& in, const ProgramShape& shape) {
  std::vector<Insn> out;
  // r0 = 0; r6 = r1; r8 = &value; the others an argument or a constant.
  out.push_back(MovImm(0, 0));
  out.push_back(MovReg(6, 1));
  out.push_back(Insn{static_cast<uint8_t>(isa::kClassLd | isa::kModeImm | isa::kSizeDW), 8, isa::kPseudoMapValue, 0,
                     kTrampolineMapFd});
  out.push_back(Insn{0, 0, 0, 0, 0});
  out.push_back(MovImm(7, static_cast<int8_t>(in.Byte())));
  out.push_back(MovImm(9, static_cast<int8_t>(in.Byte())));
  if (!shape.traced) {
    // An attached program's r2..r5 are what the enter stub left: the
    // verifier lets it read only r1, so they start as constants here.
    for (uint8_t r = 2; r <= 5; ++r) out.push_back(MovImm(r, r));
  }

  const int count = in.Byte() % 32;
  std::vector<std::vector<Insn>> ops(static_cast<size_t>(count));
  std::vector<std::pair<size_t, uint8_t>> jumps;  // (op, how many ops it skips)
  uint8_t last_written = 0;
  for (int i = 0; i < count; ++i) {
    const uint8_t kind = in.Byte(), a = in.Byte(), b = in.Byte();
    std::vector<Insn>& op = ops[static_cast<size_t>(i)];
    // Every operation that writes a register writes Writable(a); a store
    // takes that register, the one the last operation wrote, half the
    // time, so that what a program read tends to reach the map value.
    const uint8_t stored = (a & 0x80) ? last_written : Readable(a);
    if (kind % 8 == 5) {
      last_written = 0;  // the helper's result
    } else if (kind % 8 != 4 && kind % 8 != 6) {
      last_written = Writable(a);
    }
    switch (kind % 8) {
      case 0:  // rA op= rB (64-bit)
        op.push_back(Alu(kAlu64, kAluOps[kind / 8 % std::size(kAluOps)], isa::kSrcX, Writable(a), Readable(b), 0));
        break;
      case 1: {  // rA op= imm (64-bit), an immediate the verifier accepts
        const uint8_t alu = kAluOps[kind / 8 % std::size(kAluOps)];
        int32_t imm = static_cast<int8_t>(b) * ((kind & 0x80) ? 0x10001 : 1);
        if (alu == isa::kAluLsh || alu == isa::kAluRsh || alu == isa::kAluArsh) imm = b % 64;
        if ((alu == isa::kAluDiv || alu == isa::kAluMod) && imm == 0) imm = 1;
        op.push_back(Alu(kAlu64, alu, isa::kSrcK, Writable(a), 0, imm));
        break;
      }
      case 2:  // wA op= wB (32-bit)
        op.push_back(Alu(kAlu32, kAluOps[kind / 8 % std::size(kAluOps)], isa::kSrcX, Writable(a), Readable(b), 0));
        break;
      case 3:  // read the context (attached) or copy an argument (traced)
        if (shape.traced || shape.ctx_high <= shape.ctx_low) {
          op.push_back(MovReg(Writable(a), static_cast<uint8_t>(6 + b % 2 * 1)));  // r6 or r7
        } else {
          // A quarter of the reads take the slots below the arguments (what
          // bpf_get_func_arg_cnt and bpf_get_func_ip read, inlined), the
          // rest any slot of the context.
          const int below = -shape.ctx_low;
          const int slot = below > 0 && (b & 0xc0) == 0xc0 ? -1 - (b & 1) % below
                                                           : shape.ctx_low + b % (shape.ctx_high - shape.ctx_low);
          op.push_back(LoadDw(Writable(a), 6, static_cast<int16_t>(8 * slot)));
        }
        break;
      case 4:  // value[b % 8] = rA
        op.push_back(StoreDw(8, static_cast<int16_t>(8 * (b % (kTrampolineMapValueBytes / 8))), stored));
        break;
      case 5: {  // a helper call; r1..r5 are set again after it
        op.push_back(Insn{static_cast<uint8_t>(isa::kClassJmp | isa::kJmpCall), 0, 0, 0, (a & 1) ? 8 : 7});
        for (uint8_t r = 1; r <= 5; ++r) op.push_back(MovImm(r, static_cast<int32_t>(b) + r));
        break;
      }
      case 6:  // if (rA cond rB) skip the next (b % 4 + 1) operations
        op.push_back(Insn{static_cast<uint8_t>(isa::kClassJmp | kJumpOps[kind / 8 % std::size(kJumpOps)] | isa::kSrcX),
                          Readable(a), Readable(b), 0, 0});
        jumps.push_back({static_cast<size_t>(i), static_cast<uint8_t>(b % 4 + 1)});
        break;
      default:  // rA = -rA, or a byte swap
        if (kind & 0x10) {
          op.push_back(Alu(kAlu64, isa::kAluNeg, isa::kSrcK, Writable(a), 0, 0));
        } else {
          const int32_t widths[] = {16, 32, 64};
          op.push_back(Alu(kAlu32, isa::kAluEnd, (kind & 0x20) ? isa::kSrcX : isa::kSrcK, Writable(a), 0,
                           widths[b % 3]));
        }
        break;
    }
  }
  // Lay the operations out, then point each jump past the operations it skips.
  std::vector<size_t> starts;
  for (const auto& op : ops) {
    starts.push_back(out.size());
    out.insert(out.end(), op.begin(), op.end());
  }
  starts.push_back(out.size());
  for (const auto& [i, skip] : jumps) {
    const size_t target = starts[std::min(i + 1 + skip, ops.size())];
    out[starts[i]].offset = static_cast<int16_t>(target - starts[i] - 1);
  }
  // r0: as computed, 0, or its low bit (an fmod_ret program's verdict).
  switch (in.Byte() % 4) {
    case 0: out.push_back(MovImm(0, 0)); break;
    case 1: out.push_back(Alu(kAlu64, isa::kAluAnd, isa::kSrcK, 0, 0, 1)); break;
    default: break;
  }
  out.push_back(Insn{static_cast<uint8_t>(isa::kClassJmp | isa::kJmpExit), 0, 0, 0, 0});
  return out;
}

}  // namespace

trampoline::TrampolineCase DecodeTrampolineInput(std::span<const uint8_t> data) {
  Reader in(data);
  trampoline::TrampolineCase c;
  trampoline::Attachment& a = c.attachment;
  const uint8_t flags = in.Byte();
  a.nr_args = static_cast<uint8_t>(1 + flags % trampoline::kMaxArgs);
  // One input in eight is a struct_ops trampoline: one program, called
  // through a pointer, whose r0 the caller gets.
  a.struct_ops = (flags & 0xe0) == 0xe0;
  // And one in eight an extension program (freplace) that replaces the
  // traced one: a program of the traced shape, its arguments as scalars.
  const bool freplace = (flags & 0xe0) == 0xc0;
  a.ip_arg = !a.struct_ops && !freplace && (flags & 0x08) != 0;
  c.replace = !a.struct_ops && !freplace && (flags & 0x10) != 0;
  const uint8_t counts = in.Byte();
  size_t fentry = counts & 3, fexit = (counts >> 2) & 3, fmod_ret = (counts >> 4) & 3;
  // Half the trampolines (and extensions) lie beyond a `bl` from the traced
  // program, attached through its PLT; so does half the first ones.
  c.far = (counts & 0x40) != 0;
  c.first_far = c.replace && (counts & 0x80) != 0;
  if (fentry + fexit + fmod_ret == 0 || a.struct_ops) fentry = 1;
  if (a.struct_ops) fexit = fmod_ret = 0;
  for (uint64_t& arg : c.args) arg = in.U64();

  // The context an attached program may read: the ip (with IP_ARG) and the
  // count below it; the arguments; the return value where there is one. A
  // struct_ops program reads its arguments only (btf_ctx_access).
  const bool call_orig = fexit + fmod_ret != 0;
  const auto attached_shape = [&](int registers) {
    return a.struct_ops ? ProgramShape{false, 0, registers}
                        : ProgramShape{false, a.ip_arg ? -2 : -1, registers + (call_orig ? 1 : 0)};
  };
  const ProgramShape attached = attached_shape(a.nr_args);
  std::vector<std::pair<size_t, size_t>> attached_at;  // (program, where its bytes start)
  a.traced = 0;
  c.source.programs.push_back(DecodeProgram(in, ProgramShape{true, 0, 0}));
  if (freplace) fentry = fexit = fmod_ret = 0;
  if (freplace) {
    a.freplace = c.source.programs.size();
    c.source.programs.push_back(DecodeProgram(in, ProgramShape{true, 0, 0}));
  }
  size_t index = c.source.programs.size();
  const auto add_links = [&](std::vector<trampoline::Link>& links, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      trampoline::Link link;
      link.program = index++;
      const uint8_t b = in.Byte();
      // One in eight reports a recursion miss (not the zeros past the
      // input's end); a struct_ops program's enter never does.
      link.runs = a.struct_ops || (b & 7) != 7;
      link.cookie = (b & 0x80) ? in.U64() : b;
      links.push_back(link);
      attached_at.emplace_back(c.source.programs.size(), in.position());
      c.source.programs.push_back(DecodeProgram(in, attached));
    }
  };
  add_links(a.fentry, fentry);
  add_links(a.fexit, fexit);
  add_links(a.fmod_ret, fmod_ret);

  isa::MapSpec map;
  map.fd = kTrampolineMapFd;
  map.type = isa::MapType::kArray;
  map.key_size = 4;
  map.value_size = kTrampolineMapValueBytes;
  map.max_entries = 1;
  map.initial_values = DataStream(in.U64()).Bytes(kTrampolineMapValueBytes);
  c.source.maps.push_back(map);
  // The last byte, past what older inputs hold: with bit 7, a build whose
  // 1st..16th failable service call fails comes first (none past the calls
  // the build makes).
  const uint8_t failure = in.Byte();
  if ((failure & 0x80) != 0 && !freplace) c.fail_call = 1 + (failure & 0x0f);
  // The byte after, past what older inputs hold: with bit 7, bits 0..6 make
  // those of the first seven arguments structs of 16 bytes passed by value
  // (two registers each); more than 8 registers in all, and the kernel
  // must refuse the trampoline. The attached programs are read again from
  // their bytes (as many as before) to read the slots of every register
  // the trampoline saves, and the return value's after them.
  const uint8_t structs = in.Byte();
  if ((structs & 0x80) != 0 && !freplace) {
    a.struct_args = static_cast<uint8_t>(structs & 0x7f & ((1u << a.nr_args) - 1));
    const auto registers = static_cast<int>(std::min(trampoline::ArgumentRegisters(a), uint32_t{trampoline::kMaxArgs}));
    for (const auto& [program, at] : attached_at) {
      Reader again(data);
      again.Seek(at);
      c.source.programs[program] = DecodeProgram(again, attached_shape(registers));
    }
  }
  return c;
}

std::string DescribeTrampolineCase(const trampoline::TrampolineCase& c) {
  const trampoline::Attachment& a = c.attachment;
  std::string called = fmt::format("traced program {}", a.traced);
  if (a.struct_ops) {
    called = fmt::format("a struct_ops trampoline, called directly (program {} is not called through it)", a.traced);
  } else if (a.freplace) {
    called = fmt::format("traced program {}, replaced by the extension program {} (freplace)", a.traced, *a.freplace);
  }
  std::string where;
  if (c.far || c.first_far) {
    where = fmt::format(", {} more than 128 MiB away (through the PLT)",
                        c.far && c.first_far ? "both trampolines"
                        : c.first_far        ? "the first trampoline"
                        : a.freplace         ? "the extension"
                                             : "the trampoline");
  }
  const std::string structs =
      a.struct_args == 0 ? ""
                         : fmt::format(" (struct argument mask {:#x}: {} registers)", a.struct_args,
                                       trampoline::ArgumentRegisters(a));
  std::string text = fmt::format("{}, {} argument(s){}{}{}{}; args {:#x}\n", called, a.nr_args, structs,
                                 a.ip_arg ? ", ip asked for" : "", c.replace ? ", replacing a first trampoline" : "",
                                 where, fmt::join(c.args, " "));
  const auto links = [&](const char* kind, const std::vector<trampoline::Link>& list) {
    for (const trampoline::Link& link : list) {
      text += fmt::format("{} program {}: cookie {:#x}{}\n", kind, link.program, link.cookie,
                          link.runs ? "" : ", its enter reports a recursion miss");
    }
  };
  links("fentry", a.fentry);
  links("fexit", a.fexit);
  links("fmod_ret", a.fmod_ret);
  if (c.fail_call != 0) {
    text += fmt::format("first a build whose failable call {} fails (refused, nothing left behind)\n", c.fail_call);
  }
  for (size_t p = 0; p < c.source.programs.size(); ++p) {
    text += fmt::format("-- program {}\n{}", p, isa::Disassemble(c.source.programs[p]));
  }
  return text;
}

std::vector<std::pair<std::string_view, bool>> TrampolinePaths(const trampoline::TrampolineCase& c) {
  const trampoline::Attachment& a = c.attachment;
  const bool poked = !a.struct_ops;  // a struct_ops trampoline is called through a pointer
  const bool miss = std::any_of(a.fentry.begin(), a.fentry.end(), [](const auto& l) { return !l.runs; }) ||
                    std::any_of(a.fexit.begin(), a.fexit.end(), [](const auto& l) { return !l.runs; }) ||
                    std::any_of(a.fmod_ret.begin(), a.fmod_ret.end(), [](const auto& l) { return !l.runs; });
  const bool far_call = poked && !a.freplace && (c.far || c.first_far);
  return {
      {"fentry", !a.fentry.empty() && !a.struct_ops},
      {"fexit", !a.fexit.empty()},
      {"fmod_ret", !a.fmod_ret.empty()},
      {"recursion_miss", miss},
      {"ip_arg", a.ip_arg},
      {"replace_a_trampoline", c.replace},
      {"struct_ops_ret_fentry_ret", a.struct_ops},
      {"freplace_mod_jump", a.freplace.has_value()},
      // bpf_arch_text_poke() with a target beyond a `bl`: the entry's `bl`
      // (or `b`) goes to the image's PLT, whose target is the trampoline.
      {"call_through_plt", far_call},
      {"jump_through_plt", a.freplace.has_value() && c.far},
      // Both trampolines far: the entry's word stays, the PLT's target alone changes.
      {"plt_target_alone_rewritten", c.replace && c.far && c.first_far},
      // A far target poked away: the PLT's target goes back to dummy_tramp.
      {"plt_target_restored", poked && (c.far || c.first_far)},
      // A build whose allocation fails first (arch_alloc_bpf_trampoline,
      // the arch code's RW image, its table of branches).
      {"failing_allocation", c.fail_call != 0},
      // Arguments passed as structs by value (two registers each,
      // btf_func_model_nregs), within arm64's 8 registers, and beyond them:
      // arch_bpf_trampoline_size() refuses (-ENOTSUPP).
      {"struct_arguments", a.struct_args != 0 && trampoline::ArgumentRegisters(a) <= trampoline::kMaxArgs},
      {"argument_registers_past_8_refused", trampoline::ArgumentRegisters(a) > trampoline::kMaxArgs},
  };
}

}  // namespace bpfdiff::fuzz
