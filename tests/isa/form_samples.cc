#include "tests/isa/form_samples.h"

#include <limits>

#include "isa/syntax.h"

namespace bpfdiff::isa::testing {
namespace {

constexpr int32_t kMapFd = 3;
constexpr uint32_t kMapValueBytes = 32;

MapSpec SampleMap() {
  MapSpec map;
  map.fd = kMapFd;
  map.type = MapType::kArray;
  map.key_size = 4;
  map.value_size = 8;
  map.max_entries = kMapValueBytes / 8;
  return map;
}

Insn ExitInsn() {
  Insn insn;
  insn.opcode = kOpExit;
  return insn;
}

void SetDiscriminant(const Form& form, Insn& insn) {
  switch (form.discriminant) {
    case Discriminant::kNone: break;
    case Discriminant::kSrc: insn.src = static_cast<uint8_t>(form.discriminant_value); break;
    case Discriminant::kOffset: insn.offset = static_cast<int16_t>(form.discriminant_value); break;
    case Discriminant::kImm: insn.imm = form.discriminant_value; break;
  }
}

template <typename T>
T Uniform(std::mt19937_64& rng, T low, T high) {
  return std::uniform_int_distribution<T>(low, high)(rng);
}

int16_t RandomOffset16(std::mt19937_64& rng) {
  switch (Uniform(rng, 0, 3)) {
    case 0: return static_cast<int16_t>(Uniform(rng, -16, 16));
    case 1: {
      constexpr int16_t kEdges[] = {std::numeric_limits<int16_t>::min(),
                                    std::numeric_limits<int16_t>::max(), -1, 0, 1, -512, 511};
      return kEdges[Uniform<size_t>(rng, 0, std::size(kEdges) - 1)];
    }
    default:
      return static_cast<int16_t>(Uniform<int>(rng, std::numeric_limits<int16_t>::min(),
                                               std::numeric_limits<int16_t>::max()));
  }
}

uint8_t RandomRegister(std::mt19937_64& rng) {
  return static_cast<uint8_t>(Uniform(rng, 0, kNumRegs - 1));
}

}  // namespace

int32_t RandomImm32(std::mt19937_64& rng) {
  switch (Uniform(rng, 0, 3)) {
    case 0: return Uniform(rng, -20, 20);
    case 1: {
      constexpr int32_t kEdges[] = {std::numeric_limits<int32_t>::min(),
                                    std::numeric_limits<int32_t>::max(),
                                    -1, 0, 1, 65535, 65536, -65535, -65536, 0x7fff, -0x8000};
      return kEdges[Uniform<size_t>(rng, 0, std::size(kEdges) - 1)];
    }
    case 2: return Uniform(rng, -70000, 70000);
    default: return static_cast<int32_t>(static_cast<uint32_t>(rng()));
  }
}

Sample CanonicalSample(const Form& form) {
  Insn insn;
  insn.opcode = form.opcode;
  insn.imm = form.fixed_imm;
  Insn second;
  for (Operand operand : OperandsOf(form.shape)) {
    switch (operand) {
      case Operand::kDstReg: insn.dst = 1; break;
      case Operand::kSrcReg: insn.src = 2; break;
      case Operand::kImm: insn.imm = 7; break;
      case Operand::kImm64:
        insn.imm = 0x55667788;
        second.imm = 0x11223344;
        break;
      case Operand::kOffsetTarget: insn.offset = 0; break;  // the next slot: exit
      case Operand::kImmTarget: insn.imm = form.is_wide() ? 2 : 1; break;  // the last exit
      case Operand::kDstMem:
        insn.dst = kFramePointer;
        insn.offset = -8;
        break;
      case Operand::kSrcMem:
        insn.src = 2;
        insn.offset = 4;
        break;
      case Operand::kMapFd: insn.imm = kMapFd; break;
      case Operand::kMapValue:
        insn.imm = kMapFd;
        second.imm = 16;
        break;
    }
  }
  SetDiscriminant(form, insn);
  Sample sample;
  sample.insns.push_back(insn);
  if (form.is_wide()) sample.insns.push_back(second);
  sample.insns.push_back(ExitInsn());
  sample.insns.push_back(ExitInsn());
  sample.maps.push_back(SampleMap());
  return sample;
}

Sample RandomSample(const Form& form, std::mt19937_64& rng) {
  const size_t before = Uniform<size_t>(rng, 0, 4);
  const size_t after = Uniform<size_t>(rng, 1, 4);
  const size_t width = form.is_wide() ? 2 : 1;
  const size_t size = before + width + after;
  // A distance from the instruction to a random slot that is not the
  // instance's own second slot.
  auto random_distance = [&]() -> int32_t {
    size_t target = before;
    do {
      target = Uniform<size_t>(rng, 0, size - 1);
    } while (width == 2 && target == before + 1);
    return static_cast<int32_t>(static_cast<int64_t>(target) - static_cast<int64_t>(before) - 1);
  };
  Insn insn;
  insn.opcode = form.opcode;
  insn.imm = form.fixed_imm;
  Insn second;
  for (Operand operand : OperandsOf(form.shape)) {
    switch (operand) {
      case Operand::kDstReg: insn.dst = RandomRegister(rng); break;
      case Operand::kSrcReg: insn.src = RandomRegister(rng); break;
      case Operand::kImm: insn.imm = RandomImm32(rng); break;
      case Operand::kImm64:
        insn.imm = RandomImm32(rng);
        second.imm = RandomImm32(rng);
        break;
      case Operand::kOffsetTarget: insn.offset = static_cast<int16_t>(random_distance()); break;
      case Operand::kImmTarget: insn.imm = random_distance(); break;
      case Operand::kDstMem:
        insn.dst = RandomRegister(rng);
        insn.offset = RandomOffset16(rng);
        break;
      case Operand::kSrcMem:
        insn.src = RandomRegister(rng);
        insn.offset = RandomOffset16(rng);
        break;
      case Operand::kMapFd: insn.imm = kMapFd; break;
      case Operand::kMapValue:
        insn.imm = kMapFd;
        second.imm = Uniform<int32_t>(rng, 0, kMapValueBytes - 1);
        break;
    }
  }
  SetDiscriminant(form, insn);
  Sample sample;
  sample.insns.assign(before, ExitInsn());
  sample.insns.push_back(insn);
  if (form.is_wide()) sample.insns.push_back(second);
  for (size_t i = 0; i < after; ++i) sample.insns.push_back(ExitInsn());
  sample.maps.push_back(SampleMap());
  return sample;
}

}  // namespace bpfdiff::isa::testing
