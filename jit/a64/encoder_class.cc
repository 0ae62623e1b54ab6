#include "jit/a64/encoder.h"

namespace bpfdiff::a64 {

std::string_view EncoderClassName(EncoderClass encoder_class) {
  switch (encoder_class) {
    case EncoderClass::kAddSubImmediate:
      return "AddSubImmediate";
    case EncoderClass::kAddSubShiftedRegister:
      return "AddSubShiftedRegister";
    case EncoderClass::kAddSubExtendedRegister:
      return "AddSubExtendedRegister";
    case EncoderClass::kLogicalImmediate:
      return "LogicalImmediate";
    case EncoderClass::kLogicalShiftedRegister:
      return "LogicalShiftedRegister";
    case EncoderClass::kMoveWideImmediate:
      return "MoveWideImmediate";
    case EncoderClass::kBitfield:
      return "Bitfield";
    case EncoderClass::kDataProcessing1Source:
      return "DataProcessing1Source";
    case EncoderClass::kDataProcessing2Source:
      return "DataProcessing2Source";
    case EncoderClass::kDataProcessing3Source:
      return "DataProcessing3Source";
    case EncoderClass::kConditionalSelect:
      return "ConditionalSelect";
    case EncoderClass::kPcRelAddressing:
      return "PcRelAddressing";
    case EncoderClass::kLoadRegisterLiteral:
      return "LoadRegisterLiteral";
    case EncoderClass::kLoadStoreUnsignedImmediate:
      return "LoadStoreUnsignedImmediate";
    case EncoderClass::kLoadStoreUnscaledImmediate:
      return "LoadStoreUnscaledImmediate";
    case EncoderClass::kLoadStoreImmediateIndexed:
      return "LoadStoreImmediateIndexed";
    case EncoderClass::kLoadStoreRegisterOffset:
      return "LoadStoreRegisterOffset";
    case EncoderClass::kLoadStorePair:
      return "LoadStorePair";
    case EncoderClass::kLoadStoreExclusive:
      return "LoadStoreExclusive";
    case EncoderClass::kAtomicMemoryOperation:
      return "AtomicMemoryOperation";
    case EncoderClass::kCompareAndSwap:
      return "CompareAndSwap";
    case EncoderClass::kUnconditionalBranchImmediate:
      return "UnconditionalBranchImmediate";
    case EncoderClass::kUnconditionalBranchRegister:
      return "UnconditionalBranchRegister";
    case EncoderClass::kConditionalBranchImmediate:
      return "ConditionalBranchImmediate";
    case EncoderClass::kCompareAndBranchImmediate:
      return "CompareAndBranchImmediate";
    case EncoderClass::kTestAndBranchImmediate:
      return "TestAndBranchImmediate";
    case EncoderClass::kExceptionGeneration:
      return "ExceptionGeneration";
    case EncoderClass::kPermanentlyUndefined:
      return "PermanentlyUndefined";
    case EncoderClass::kBarrier:
      return "Barrier";
    case EncoderClass::kHint:
      return "Hint";
    case EncoderClass::kSystemRegisterMove:
      return "SystemRegisterMove";
    case EncoderClass::kSystemInstruction:
      return "SystemInstruction";
  }
  return "?";
}

}  // namespace bpfdiff::a64
