// Comparing two outcomes: the one function that walks an Outcome field by
// field and names the first field that differs.
#pragma once

#include <string>
#include <string_view>

#include "oracle/outcome.h"

namespace bpfdiff {

struct Verdict {
  enum class Kind : uint8_t {
    kMatch,
    kDivergence,  // `field` differs; `detail` shows both values
    kPoisoned,    // not comparable; `detail` says why
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

}  // namespace bpfdiff
