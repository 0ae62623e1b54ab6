#include "oracle/register_use.h"

#include "oracle/helpers.h"

namespace bpfdiff {

RegisterUse UseOf(const isa::Insn& insn, const isa::Form& form) {
  RegisterUse use;
  const bool is_mov = isa::OpOf(insn.opcode) == isa::kAluMov;
  switch (form.shape) {
    case isa::Shape::kAluImm:
      use.reads = is_mov ? 0 : RegisterBit(insn.dst);
      use.writes = RegisterBit(insn.dst);
      break;
    case isa::Shape::kAluReg:
      use.reads = static_cast<uint16_t>((is_mov ? 0 : RegisterBit(insn.dst)) | RegisterBit(insn.src));
      use.writes = RegisterBit(insn.dst);
      break;
    case isa::Shape::kAluUnary:
    case isa::Shape::kEndian:
      use.reads = use.writes = RegisterBit(insn.dst);
      break;
    case isa::Shape::kMovSx:
    case isa::Shape::kMovPerCpu:
    case isa::Shape::kAddrSpaceCast:
      use.reads = RegisterBit(insn.src);
      use.writes = RegisterBit(insn.dst);
      break;
    case isa::Shape::kJumpImm: use.reads = RegisterBit(insn.dst); break;
    case isa::Shape::kJumpReg: use.reads = RegisterBit(insn.dst) | RegisterBit(insn.src); break;
    case isa::Shape::kCallHelper: {
      const HelperInfo* helper = FindHelper(insn.imm);
      const int args = helper ? helper->num_args : 5;
      for (int r = 1; r <= args; ++r) use.reads |= RegisterBit(static_cast<unsigned>(r));
      use.writes = RegisterBit(0);
      use.clobbers_args = true;
      break;
    }
    case isa::Shape::kCallKfunc:
      // bpf_throw(cookie), the one kfunc: it reads r1 and never returns.
      use.reads = RegisterBit(1);
      use.writes = RegisterBit(0);
      use.clobbers_args = true;
      break;
    case isa::Shape::kCallLocal:
      use.writes = RegisterBit(0);
      use.clobbers_args = true;
      break;
    case isa::Shape::kCallReg:
      use.reads = RegisterBit(insn.dst);
      use.writes = RegisterBit(0);
      use.clobbers_args = true;
      break;
    case isa::Shape::kTailCall:
      use.reads = RegisterBit(1) | RegisterBit(2) | RegisterBit(3);
      use.clobbers_args = true;
      break;
    case isa::Shape::kExit: use.reads = RegisterBit(0); break;
    case isa::Shape::kJa:
    case isa::Shape::kJa32: break;
    case isa::Shape::kLddw:
    case isa::Shape::kLddwMapFd:
    case isa::Shape::kLddwMapValue:
    case isa::Shape::kLddwFunc: use.writes = RegisterBit(insn.dst); break;
    case isa::Shape::kLdAbs:
      use.writes = RegisterBit(0);
      use.clobbers_args = true;
      break;
    case isa::Shape::kLdInd:
      use.reads = RegisterBit(insn.src);
      use.writes = RegisterBit(0);
      use.clobbers_args = true;
      break;
    case isa::Shape::kLoad:
      use.reads = RegisterBit(insn.src);
      use.writes = RegisterBit(insn.dst);
      break;
    case isa::Shape::kStoreImm: use.reads = RegisterBit(insn.dst); break;
    case isa::Shape::kStoreReg: use.reads = RegisterBit(insn.dst) | RegisterBit(insn.src); break;
    case isa::Shape::kAtomic:
      use.reads = RegisterBit(insn.dst) | RegisterBit(insn.src);
      if (insn.imm == isa::kAtomicCmpXchg) {
        use.reads |= RegisterBit(0);
        use.writes = RegisterBit(0);
      } else if (insn.imm & isa::kAtomicFetch) {
        use.writes = RegisterBit(insn.src);
      }
      break;
  }
  return use;
}

}  // namespace bpfdiff
