// The reference interpreter as an Engine.
#pragma once

#include <optional>

#include "harness/engine.h"
#include "harness/sandbox.h"
#include "oracle/interpreter.h"

namespace bpfdiff {

class InterpreterEngine final : public Engine {
 public:
  explicit InterpreterEngine(Sandbox& sandbox, int cpu = 0) : sandbox_(sandbox), cpu_(cpu) {}

  std::string_view name() const override { return "interp"; }
  Status Prepare(const LoadedCase& loaded) override {
    loaded_ = &loaded;
    return {};
  }
  Outcome Run(uint64_t budget) override {
    InterpreterOptions options{budget, cpu_, Sandbox::Geometry()};
    return Interpreter(sandbox_.env(), *loaded_, options).Run();
  }
  void Release() override { loaded_ = nullptr; }

 private:
  Sandbox& sandbox_;
  int cpu_;
  const LoadedCase* loaded_ = nullptr;
};

}  // namespace bpfdiff
