// asm_fuzzer: the text side of the ISA library on arbitrary input. The
// assembler and the .data parser must never crash; whatever assembles into
// a valid program must round-trip through the disassembler and the
// assembler to the same bytes (with numeric offsets and with labels), and
// so must whatever the decoder accepts when the input is read as bytes.
#include "fuzz/targets/libfuzzer_entry_points.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "isa/assembler.h"
#include "isa/data_file.h"
#include "isa/disassembler.h"
#include "isa/program.h"

namespace {

void CheckRoundTrip(const bpfdiff::isa::Program& program, const char* what) {
  for (bool labels : {false, true}) {
    const std::string text = bpfdiff::isa::Disassemble(program, {.labels = labels});
    auto again = bpfdiff::isa::Assemble(text);
    if (!again || *again != program.insns) {
      std::fprintf(stderr, "round trip of %s failed (labels=%d): %s\n%s\n", what, labels,
                   again ? "different instructions" : again.message().c_str(), text.c_str());
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto file = bpfdiff::isa::ParseDataFile(text)) {
    for (const auto& insns : file->programs) {
      if (auto program = bpfdiff::isa::MakeProgram(insns, file->maps)) CheckRoundTrip(*program, "a .data program");
    }
  }
  if (auto insns = bpfdiff::isa::Assemble(text)) {
    if (auto program = bpfdiff::isa::MakeProgram(*insns)) CheckRoundTrip(*program, "assembled text");
  }
  if (auto program = bpfdiff::isa::DecodeProgram({data, size - size % 8})) {
    CheckRoundTrip(*program, "decoded bytes");
  }
  return 0;
}
