// Comparing two outcomes: the one function that walks an Outcome field by
// field and names the first field that differs.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "oracle/outcome.h"

namespace bpfdiff {

struct Verdict {
  enum class Kind : uint8_t {
    kMatch,
    kDivergence,  // `field` differs; `detail` shows both values
    kNotComparable,    // not comparable; `detail` says why
  };
  Kind kind = Kind::kMatch;
  std::string field;
  std::string detail;

  bool match() const { return kind == Kind::kMatch; }
  std::string Describe() const;
};

// Compares `candidate` (an engine under test) with `reference` (the
// interpreter). Names are used in the detail ("interp 0x1, jit 0x2").
Verdict Compare(const Outcome& reference, const Outcome& candidate,
                std::string_view reference_name = "interp", std::string_view candidate_name = "jit");

// Compare() where one engine ran the case's JIT-only rewrites and the
// other did not: calls to `inlined_helpers` are in one trace and not in the
// other (the rewrite leaves no call), so they are left out of both; all
// else, the effect of those calls included, is compared. A run that ended
// with such a helper refusing its arguments is not comparable (the
// verifier would have rejected the program; the rewrite checks nothing).
Verdict CompareHelperWithInlined(const Outcome& reference, const Outcome& candidate,
                                 std::string_view reference_name, std::string_view candidate_name,
                                 std::span<const int32_t> inlined_helpers);

}  // namespace bpfdiff
