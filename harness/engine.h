// An engine answers one question: run this case, tell me what happened.
//
// Engines share one Sandbox (one guest memory), so their outcomes are
// comparable. The caller installs the case in the environment, calls
// Prepare() once per engine, then for each run resets the environment and
// calls Run(). Engines know nothing of each other or of comparison.
#pragma once

#include <string>
#include <string_view>

#include "oracle/load.h"
#include "oracle/outcome.h"
#include "support/result.h"

namespace bpfdiff {

class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::string_view name() const = 0;
  // Makes the engine ready to run `loaded` (for a JIT: compiles it). The
  // case must outlive the next Release().
  virtual Status Prepare(const LoadedCase& loaded) = 0;
  // One run of the main program from the environment's current state.
  virtual Outcome Run(uint64_t budget) = 0;
  // The simulated CPU the engine runs on (whose stack a run changes).
  virtual int cpu() const = 0;
  // Frees what Prepare() made.
  virtual void Release() = 0;
};

}  // namespace bpfdiff
