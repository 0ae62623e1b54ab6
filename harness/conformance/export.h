// Turning a case into a `.data` regression test whose expectations are the
// interpreter's outcome: r0 (or the error text) and the helper trace.
#pragma once

#include <string>
#include <string_view>

#include "oracle/load.h"
#include "oracle/outcome.h"

namespace bpfdiff {

std::string ExportCase(const CaseSource& source, const Outcome& reference, std::string_view comment);

}  // namespace bpfdiff
