#include "harness/machine/sandbox.h"

#include "harness/machine/loop_helper.h"
#include "harness/machine/throw_kfunc.h"
#include "oracle/guest_layout.h"

namespace bpfdiff {

Result<std::unique_ptr<Sandbox>> Sandbox::Create(const SandboxOptions& options) {
  if (options.cpus < 1 || options.cpus > guest::kMaxCpus) {
    return Fail("{} CPUs requested; 1 to {} are supported", options.cpus, guest::kMaxCpus);
  }
  std::unique_ptr<Sandbox> sandbox(new Sandbox());
  auto env = GuestEnvironment::Create();
  if (!env) return env.error();
  sandbox->env_ = std::move(env).value();
  GuestMemory& memory = sandbox->env_->memory();
  if (auto installed = InstallLoopHelper(memory); !installed) return installed.error();
  if (auto installed = InstallThrowKfunc(memory); !installed) return installed.error();
  sandbox->patcher_ = std::make_unique<UnicornTextPatcher>(memory);
  const auto make = [&](int cpu, MachineMode mode) {
    return options.machine_factory != nullptr ? options.machine_factory(memory, cpu)
                                              : Machine::Create(memory, cpu, mode, options.unicorn_fault);
  };
  for (int cpu = 0; cpu < options.cpus; ++cpu) {
    auto machine = make(cpu, MachineMode::kPrecise);
    if (!machine) return machine.error();
    (*machine)->set_keep_unchanged_translations(options.keep_unchanged_translations);
    sandbox->patcher_->AddMachine(machine->get());
    sandbox->machines_.push_back(std::move(machine).value());
  }
  if (options.fast_machine) {
    auto fast = make(0, MachineMode::kFast);
    if (!fast) return fast.error();
    (*fast)->set_keep_unchanged_translations(options.keep_unchanged_translations);
    sandbox->patcher_->AddMachine(fast->get());
    sandbox->fast_ = std::move(fast).value();
  }
  Region* packs = memory.FindByName("packs");
  Region* oversize = memory.FindByName("oversize");
  jit::PackConfig config;
  config.packs = {packs->base, packs->host, packs->size};
  config.oversize = {oversize->base, oversize->host, oversize->size};
  config.seed = options.pack_seed;
  config.bugs = options.pack_bugs;
  config.pack_images = options.pack_images;
  sandbox->pack_ = std::make_unique<jit::ProgPack>(config, *sandbox->patcher_);
  if (options.resident_program) {
    auto resident = sandbox->pack_->Alloc(4);
    if (!resident) return resident.error();
    sandbox->pack_->Finalize(**resident);
    sandbox->resident_ = std::move(resident).value();
  }
  return sandbox;
}

std::optional<std::string> Sandbox::UnicornFailure() const {
  for (const auto& machine : machines_) {
    if (machine->failure()) return machine->failure();
  }
  if (fast_ && fast_->failure()) return fast_->failure();
  return std::nullopt;
}

StackGeometry Sandbox::Geometry() {
  const jit::FrameGeometry g = jit::Geometry();
  return {g.fp_below_entry_sp, g.call_frame_bytes};
}

jit::JitEnvironment Sandbox::JitEnvironment() {
  jit::JitEnvironment env;
  env.helper_base = guest::kHelperBase;
  env.helper_stride = guest::kHelperStubSize;
  env.max_helper_id = guest::kMaxHelperId;
  env.bad_callx_stub = guest::kBadCallxStub;
  env.map_max_entries_offset = guest::kMapMaxEntriesOffset;
  env.map_ptrs_offset = guest::kMapPtrsOffset;
  env.prog_bpf_func_offset = guest::kProgBpfFuncOffset;
  env.arena_kern_vm_start = guest::kArenaKernStart;
  env.arena_user_vm_start = guest::kArenaUserStart;
  env.loop_helper = guest::kLoopHelperAddress;
  env.throw_kfunc = guest::kThrowKfuncAddress;
  return env;
}

}  // namespace bpfdiff
