#include "harness/machine/vixl_cpu.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <aarch64/decoder-aarch64.h>
#include <aarch64/simulator-aarch64.h>
#include <fmt/format.h>

#include "harness/machine/identity_view.h"

namespace bpfdiff {
namespace {

namespace a64 = vixl::aarch64;

// Which of the simulator's visitors VIXL's decoder sends a word to. Each
// visitor of this class only records its counterpart in a64::Simulator
// (VIXL's own list of visitors, VISITOR_LIST, has one per class of
// instruction).
class VisitorRecorder final : public a64::DecoderVisitor {
 public:
  using Visit = void (a64::Simulator::*)(const a64::Instruction*);
#define BPFDIFF_RECORD_VISIT(A) \
  void Visit##A(const a64::Instruction*) override { visit = &a64::Simulator::Visit##A; }
  VISITOR_LIST(BPFDIFF_RECORD_VISIT)
#undef BPFDIFF_RECORD_VISIT
  Visit visit = nullptr;
};

// The visitor of each word seen, so that a word is decoded once. VIXL 5.1
// walks its decode graph for every instruction it runs, and the CPU-
// features auditor visits each one too: a third of the time of a
// differential run went there. A word decodes to the same visitor
// whatever its address, so a direct-mapped table by word is enough; a
// collision only costs a decode.
class DecodeCache {
 public:
  DecodeCache() { decoder_.AppendVisitor(&recorder_); }

  VisitorRecorder::Visit VisitorOf(const a64::Instruction* instruction) {
    const uint32_t word = instruction->GetInstructionBits();
    Entry& entry = entries_[(word * 0x9e3779b1u) >> (32 - kIndexBits)];
    if (entry.visit == nullptr || entry.word != word) {
      recorder_.visit = nullptr;
      decoder_.Decode(instruction);
      // VIXL 5.1's decoder sends every word to exactly one visitor. Should
      // one send a word to none, it is refused as unimplemented: never run
      // by the visitor of the entry's previous word.
      if (recorder_.visit == nullptr) return &a64::Simulator::VisitUnimplemented;
      entry = {word, recorder_.visit};
    }
    return entry.visit;
  }

 private:
  static constexpr unsigned kIndexBits = 12;
  struct Entry {
    uint32_t word = 0;
    VisitorRecorder::Visit visit = nullptr;
  };
  a64::Decoder decoder_;
  VisitorRecorder recorder_;
  std::vector<Entry> entries_ = std::vector<Entry>(size_t{1} << kIndexBits);
};

// VIXL's simulator, told not to run what the machine leaves to the CPU to
// refuse: the visitors of exception-generating, unallocated and
// unimplemented instructions (VIXL would abort, or run a pseudo-
// instruction of its own) only note what they saw.
class GuestSimulator final : public a64::Simulator {
 public:
  explicit GuestSimulator(a64::Decoder* decoder) : a64::Simulator(decoder) {
    SetCPUFeatures(vixl::CPUFeatures::All());  // LSE atomics included
    // Its one-time note on stderr that its exclusive monitors are simple:
    // one CPU per simulator, and no other writer between LL and SC but
    // what the machine runs on this CPU, which is what they model.
    SilenceExclusiveAccessWarning();
  }

  // Simulator::ExecuteInstruction with the visitor from the decode cache.
  // What it leaves out: the CPU-features audit, which cannot refuse
  // anything with every feature available, and the disassembly trace,
  // which is off. An SVE MOVPRFX pair or a guarded page (neither of which
  // our code uses) goes the whole way through VIXL's own.
  void ExecuteCached() {
    if (movprfx_ != nullptr || PcIsInGuardedPage()) {
      ExecuteInstruction();
      return;
    }
    pc_modified_ = false;
    (this->*decode_cache_.VisitorOf(pc_))(pc_);
    IncrementPc();
    LogAllWrittenRegisters();
    UpdateBType();
  }
  void VisitException(const a64::Instruction*) override { refused_ = Refused::kException; }
  void VisitUnallocated(const a64::Instruction*) override { refused_ = Refused::kException; }
  void VisitUnimplemented(const a64::Instruction*) override { refused_ = Refused::kUnimplemented; }

  enum class Refused : uint8_t { kNone, kException, kUnimplemented };
  Refused TakeRefused() {
    const Refused r = refused_;
    refused_ = Refused::kNone;
    return r;
  }

 private:
  Refused refused_ = Refused::kNone;
  DecodeCache decode_cache_;
};

class VixlCpu final : public SteppedCpu {
 public:
  explicit VixlCpu(GuestMemory& memory) : memory_(memory), simulator_(&decoder_) {}

  std::string_view name() const override { return "vixl"; }
  Status Activate() override { return ShowAtGuestAddresses(memory_); }

  uint64_t X(int reg) const override {
    return static_cast<uint64_t>(simulator_.ReadXRegister(static_cast<unsigned>(reg)));
  }
  void SetX(int reg, uint64_t value) override {
    simulator_.WriteXRegister(static_cast<unsigned>(reg), value, a64::Simulator::NoRegLog);
  }
  uint64_t Sp() const override { return static_cast<uint64_t>(simulator_.ReadXRegister(31, a64::Reg31IsStackPointer)); }
  void SetSp(uint64_t value) override { simulator_.WriteSp(value); }
  // VIXL drops the top byte of every pc it is given (it models the Top
  // Byte Ignore of data addresses for the pc too). The machine must see the
  // address a branch went to, as Unicorn reports it: the kernel's JIT
  // calls helpers at 0xffff'0000'0000'0000 | address (kernelsrc/SHIMS.md),
  // which the machine reports as a fault at that address, never runs. So
  // the top byte is kept here, beside VIXL's pc.
  uint64_t Pc() const override { return reinterpret_cast<uint64_t>(simulator_.ReadPc()) | pc_top_byte_; }
  void SetPc(uint64_t value) override {
    pc_top_byte_ = value & kTopByte;
    simulator_.WritePc(reinterpret_cast<const a64::Instruction*>(value & ~kTopByte), a64::Simulator::NoBranchLog);
  }
  uint32_t Nzcv() const override { return const_cast<GuestSimulator&>(simulator_).ReadNzcv().GetRawValue(); }
  void SetNzcv(uint32_t value) override { simulator_.ReadNzcv().SetRawValue(value); }
  void ClearExclusiveMonitor() override { simulator_.ClearLocalMonitor(); }

  Step RunOne() override {
    const uint64_t pc = Pc();
    uint32_t word;
    std::memcpy(&word, reinterpret_cast<const void*>(pc), 4);  // the machine checked the fetch
    // A branch to a register: VIXL untags the target (see Pc()).
    const bool register_branch = (word & kBranchToRegisterMask) == kBranchToRegister;
    const uint64_t target = register_branch ? X(static_cast<int>((word >> 5) & 31)) : 0;
    simulator_.ExecuteCached();
    switch (simulator_.TakeRefused()) {
      case GuestSimulator::Refused::kNone:
        pc_top_byte_ = register_branch ? target & kTopByte : 0;
        if ((word & kMovkWMask) == kMovkW) CorrectMovkW(word);
        return Step::kRan;
      case GuestSimulator::Refused::kException:
        SetPc(pc);  // the exception is taken before the instruction
        return Step::kException;
      case GuestSimulator::Refused::kUnimplemented:
        SetPc(pc);
        why_ = "VIXL's simulator does not implement it";
        return Step::kUnsupported;
    }
    return Step::kRan;
  }
  std::string why() const override { return why_; }

 private:
  static constexpr uint64_t kTopByte = uint64_t{0xff} << 56;
  // BR, BLR, RET: 1101011 0 0 opc:2 11111 000000 Rn 00000 (opc 00, 01, 10).
  static constexpr uint32_t kBranchToRegisterMask = 0xff9ffc1f;
  static constexpr uint32_t kBranchToRegister = 0xd61f0000;
  // MOVK (32-bit): sf 0, opc 11, 100101 hw imm16 Rd.
  static constexpr uint32_t kMovkWMask = 0xff800000;
  static constexpr uint32_t kMovkW = 0x72800000;

  // VIXL 5.1 (Debian's libvixl 5.1.0-3) gets MOVK of a W register wrong:
  // it reads the old W value sign-extended, so when its bit 31 is set,
  // bits 63..32 of the X register come out set, where a write of a W
  // register clears them. `movn w7, #0x7fff, lsl #16; movk w7, #0` leaves
  // x7 = 0xffffffff80000000 in VIXL, 0x80000000 on Arm (and in Unicorn).
  // The kernel's JIT loads 32-bit constants so (lddw2.data of the
  // upstream suite fails on VIXL without this). Corrected here, and
  // pinned by a test (harness_vixl.VixlAloneGetsMovkOfAWRegisterWrong).
  void CorrectMovkW(uint32_t word) {
    const int rd = static_cast<int>(word & 31);
    if (rd != 31) SetX(rd, X(rd) & 0xffffffff);
  }

  GuestMemory& memory_;
  a64::Decoder decoder_;
  GuestSimulator simulator_;
  uint64_t pc_top_byte_ = 0;
  std::string why_;
};

}  // namespace

Result<std::unique_ptr<SteppedCpu>> MakeVixlCpu(GuestMemory& memory) {
  auto cpu = std::make_unique<VixlCpu>(memory);
  if (auto shown = cpu->Activate(); !shown) return shown.error();
  return std::unique_ptr<SteppedCpu>(std::move(cpu));
}

Result<std::unique_ptr<Machine>> CreateVixlMachine(GuestMemory& memory, int cpu) {
  auto stepped = MakeVixlCpu(memory);
  if (!stepped) return stepped.error();
  return Machine::CreateStepped(memory, cpu, std::move(stepped).value());
}

}  // namespace bpfdiff
