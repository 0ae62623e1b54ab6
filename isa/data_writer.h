// Writing a `.data` file: the inverse of ParseDataFile, so that a case (a
// fuzzer's finding, say) becomes a regression test in the bpf_conformance
// format with our extension sections.
#pragma once

#include <string>
#include <string_view>

#include "isa/data_file.h"

namespace bpfdiff::isa {

// The file's text. `comment` (any number of lines) is written as `#` lines
// after the SPDX line. Programs are disassembled with labels, which
// round-trips exactly; ParseDataFile(FormatDataFile(f)) gives back `f`'s
// programs, maps, memory, options and expectations.
std::string FormatDataFile(const DataFile& file, std::string_view comment = {});

}  // namespace bpfdiff::isa
