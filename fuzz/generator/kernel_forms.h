// Generated programs brought to the forms the kernel's verifier accepts,
// for the fuzz targets that run the kernel's JIT (diff_fuzzer's and
// pack_fuzzer's BPFDIFF_ENGINES=kernel).
#pragma once

#include "oracle/load.h"

namespace bpfdiff::fuzz {

// The forms of `source` that the kernel's verifier would reject and that
// bpfdiff's load step accepts (harness/diff/kernel_refusals.h), made into
// ones it accepts where that keeps the program's meaning: a shift by a
// constant outside [0, width) becomes a shift by the constant masked to the
// width (RFC 9669's semantics for the register form), and a callx whose
// register the instruction before it sets to a known helper's id (as the
// generator writes them), with no branch into it, becomes a call of that
// helper. False, and `source` unchanged, when a form cannot be (any other
// callx): such a case says nothing of the kernel's JIT, which refuses it.
bool ToKernelVerifierForms(CaseSource& source);

}  // namespace bpfdiff::fuzz
