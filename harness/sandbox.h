// Everything a comparison runs in: the guest environment, one Unicorn
// machine per simulated CPU over its memory, the prog pack, and the text
// patcher that connects them. Created once and reused for every case.
#pragma once

#include <memory>
#include <vector>

#include "harness/machine.h"
#include "harness/text_patcher.h"
#include "jit/jit.h"
#include "jit/prog_pack.h"
#include "oracle/environment.h"

namespace bpfdiff {

struct SandboxOptions {
  int cpus = 1;
  uint64_t pack_seed = 1;
  jit::PackBugs pack_bugs;
};

class Sandbox {
 public:
  static Result<std::unique_ptr<Sandbox>> Create(const SandboxOptions& options = {});

  GuestEnvironment& env() { return *env_; }
  Machine& cpu(int index) { return *machines_[static_cast<size_t>(index)]; }
  int cpus() const { return static_cast<int>(machines_.size()); }
  jit::ProgPack& pack() { return *pack_; }
  UnicornTextPatcher& patcher() { return *patcher_; }

  // The interpreter's view of the JIT's frame (r10 of every call depth).
  static StackGeometry Geometry();
  // What the JIT needs to know of the guest layout.
  static jit::JitEnvironment JitEnvironment();

 private:
  Sandbox() = default;

  std::unique_ptr<GuestEnvironment> env_;
  std::vector<std::unique_ptr<Machine>> machines_;
  std::unique_ptr<UnicornTextPatcher> patcher_;
  std::unique_ptr<jit::ProgPack> pack_;
};

}  // namespace bpfdiff
