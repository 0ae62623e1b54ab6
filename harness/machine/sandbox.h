// Everything a comparison runs in: the guest environment, one Unicorn
// machine per simulated CPU over its memory, the prog pack, and the text
// patcher that connects them. Created once and reused for every case.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/machine/machine.h"
#include "harness/machine/text_patcher.h"
#include "jit/jit.h"
#include "jit/prog_pack.h"
#include "oracle/environment.h"

namespace bpfdiff {

// Makes the machine of one CPU over the sandbox's memory, when it is not
// Unicorn's (CreateVixlMachine, harness/machine/vixl_cpu.h).
using MachineFactory = Result<std::unique_ptr<Machine>> (*)(GuestMemory& memory, int cpu);

struct SandboxOptions {
  int cpus = 1;
  uint64_t pack_seed = 1;
  jit::PackBugs pack_bugs;
  bool resident_program = true;  // see Sandbox::resident_
  bool fast_machine = true;      // see Sandbox::fast_machine()
  bool pack_images = true;       // see jit::PackConfig::pack_images
  UnicornFault unicorn_fault;    // a Unicorn call made to fail on every machine (tests)
  // Every machine keeps the translations of flushed code whose bytes are
  // the same again when it next runs (Machine::set_keep_unchanged_translations):
  // for the differential runs, which free and reload a slot per case.
  bool keep_unchanged_translations = false;
  // The executor of every machine (the fast one too, which is then as
  // precise as the others): nullptr for Unicorn.
  MachineFactory machine_factory = nullptr;
};

class Sandbox {
 public:
  static Result<std::unique_ptr<Sandbox>> Create(const SandboxOptions& options = {});

  GuestEnvironment& env() { return *env_; }
  // The precise machine of simulated CPU `cpu` (exact pc at every
  // instruction; stepping).
  Machine& machine(int cpu) { return *machines_[static_cast<size_t>(cpu)]; }
  // A fast machine for CPU 0, for plain runs (see MachineMode); nullptr
  // when the sandbox was made without one.
  Machine* fast_machine() { return fast_.get(); }
  int cpus() const { return static_cast<int>(machines_.size()); }
  jit::ProgPack& pack() { return *pack_; }
  UnicornTextPatcher& patcher() { return *patcher_; }

  // The first Unicorn failure of any of its machines (Machine::failure).
  // A machine that failed runs nothing more, so a caller that finds one
  // reports it and stops, rather than comparing runs that did not happen.
  std::optional<std::string> UnicornFailure() const;

  // The interpreter's view of the JIT's frame (r10 of every call depth).
  static StackGeometry Geometry();
  // What the JIT needs to know of the guest layout.
  static jit::JitEnvironment JitEnvironment();

 private:
  Sandbox() = default;

  std::unique_ptr<GuestEnvironment> env_;
  std::vector<std::unique_ptr<Machine>> machines_;
  std::unique_ptr<Machine> fast_;
  std::unique_ptr<UnicornTextPatcher> patcher_;
  std::unique_ptr<jit::ProgPack> pack_;
  // A program that stays loaded, as on any system running BPF: it keeps the
  // first pack alive, so that loading and freeing one program at a time
  // does not create (and fill 2 MiB of) a new pack every time.
  std::unique_ptr<jit::PackAllocation> resident_;
};

}  // namespace bpfdiff
