// The reference interpreter as an Engine.
#pragma once

#include <optional>

#include "harness/diff/engine.h"
#include "harness/machine/sandbox.h"
#include "oracle/interpreter.h"

namespace bpfdiff {

class InterpreterEngine final : public Engine {
 public:
  explicit InterpreterEngine(Sandbox& sandbox, int cpu = 0) : sandbox_(sandbox), cpu_(cpu) {}
  int cpu() const override { return cpu_; }

  std::string_view name() const override { return "interp"; }
  EngineKind kind() const override { return EngineKind::kInterpreter; }
  Status Prepare(const LoadedCase& loaded) override {
    loaded_ = &loaded;
    coverage_pending_ = true;
    return {};
  }
  StackGeometry geometry() const override { return geometry_; }
  bool UseGeometry(const StackGeometry& geometry) override {
    geometry_ = geometry;
    return true;
  }
  Outcome Run(uint64_t budget) override {
    InterpreterOptions options{budget, cpu_, geometry_, nullptr};
    if (coverage_ != nullptr && coverage_pending_) {
      coverage_pending_ = false;
      coverage_->resize(loaded_->programs.size());
      for (size_t p = 0; p < loaded_->programs.size(); ++p) {
        (*coverage_)[p].assign(loaded_->programs[p].program.size(), 0);
      }
      options.executed = coverage_;
    }
    return Interpreter(sandbox_.env(), *loaded_, options).Run();
  }
  Outcome RunTraced(uint64_t budget, BoundaryTrace& trace) override {
    InterpreterOptions options{budget, cpu_, geometry_, nullptr, &trace};
    return Interpreter(sandbox_.env(), *loaded_, options).Run();
  }
  void Release() override { loaded_ = nullptr; }

  // Where to record the instructions the first run after each Prepare
  // executes (see InterpreterOptions::executed): the reference run, not the
  // runs on variant input memories that follow it. nullptr to stop.
  void set_coverage(std::vector<std::vector<uint8_t>>* coverage) { coverage_ = coverage; }

 private:
  Sandbox& sandbox_;
  int cpu_;
  const LoadedCase* loaded_ = nullptr;
  StackGeometry geometry_ = Sandbox::Geometry();  // the model JIT's frames, unless told otherwise
  std::vector<std::vector<uint8_t>>* coverage_ = nullptr;
  bool coverage_pending_ = false;
};

}  // namespace bpfdiff
