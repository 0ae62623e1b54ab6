#include "harness/trampoline/kernel_trampoline.h"

#include <optional>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "harness/diff/code_generator.h"
#include "harness/machine/jit_call.h"
#include "harness/trampoline/stubs.h"
#include "jit/a64/aliases.h"
#include "jit/a64/architecture_rules.h"
#include "jit/code_rules.h"
#include "kernelsrc/kernel_jit.h"
#include "oracle/guest_layout.h"
#include "oracle/interpreter.h"

namespace bpfdiff::trampoline {

struct KernelTrampolineRunner::State {
  std::unique_ptr<kernelsrc::KernelJit> jit;
};

KernelTrampolineRunner::~KernelTrampolineRunner() = default;

std::string TrampolineVerdict::Describe() const {
  if (!before.match()) return fmt::format("before the trampoline was attached: {}", before.Describe());
  if (!attached.match()) return fmt::format("through the trampoline: {}", attached.Describe());
  if (!detached.match()) return fmt::format("after the trampoline was detached: {}", detached.Describe());
  return "match";
}

Result<std::unique_ptr<KernelTrampolineRunner>> KernelTrampolineRunner::Create(const RunnerOptions& options) {
  SandboxOptions sandbox_options;
  sandbox_options.fast_machine = false;  // every call precise: faults are pinned where they happen
  sandbox_options.machine_factory = options.machine_factory;
  auto sandbox = Sandbox::Create(sandbox_options);
  if (!sandbox) return sandbox.error();
  if (auto installed = InstallStubs((*sandbox)->env().memory()); !installed) return installed.error();
  auto jit = kernelsrc::KernelJit::Create(
      (*sandbox)->pack(), (*sandbox)->patcher(),
      KernelJitWorldOf(**sandbox, KernelPackSource::kBpfdiff, options.shim_bugs, options.tree), options.atomics,
      options.tree);
  if (!jit) return jit.error();
  std::unique_ptr<KernelTrampolineRunner> runner(new KernelTrampolineRunner());
  runner->sandbox_ = std::move(sandbox).value();
  runner->state_ = std::make_unique<State>();
  runner->state_->jit = std::move(jit).value();
  runner->options_ = options;
  return runner;
}

namespace {

// How a trap at a stub's BRK reads in the machine's message.
std::string StubTrapWord() { return fmt::format("0x{:08x}", a64::Brk(kStubCheckBrk)); }

Status CheckAttachment(const Attachment& a, size_t programs) {
  if (a.nr_args < 1 || a.nr_args > kMaxArgs) {
    return Fail("the traced function takes {} arguments; a trampoline here saves 1 to {}", a.nr_args, kMaxArgs);
  }
  if ((a.struct_args >> a.nr_args) != 0) {
    return Fail("a struct argument is named past the function's {} arguments", a.nr_args);
  }
  if (a.traced >= programs) return Fail("the traced program is program {}; the case has {}", a.traced, programs);
  if (a.freplace) {
    // bpf_trampoline_link_prog(): an extension excludes every other link.
    if (!a.fentry.empty() || !a.fexit.empty() || !a.fmod_ret.empty() || a.struct_ops) {
      return Fail("an extension program (freplace) is the only program attached to its target");
    }
    if (*a.freplace >= programs) return Fail("the extension is program {}; the case has {}", *a.freplace, programs);
    if (*a.freplace == a.traced) return Fail("program {} replaces itself", a.traced);
    if (a.ip_arg) return Fail("an extension has no trampoline to give it the traced function's address");
    return {};
  }
  if (a.fentry.empty() && a.fexit.empty() && a.fmod_ret.empty()) return Fail("no program is attached");
  if (a.struct_ops) {
    // bpf_struct_ops_prepare_trampoline(): one link, never a recursion
    // miss, no traced function to report or to replace the trampoline on.
    if (a.fentry.size() != 1 || !a.fexit.empty() || !a.fmod_ret.empty()) {
      return Fail("a struct_ops trampoline holds exactly one program, as fentry");
    }
    if (!a.fentry[0].runs) return Fail("a struct_ops program's enter never reports a recursion miss");
    if (a.ip_arg) return Fail("a struct_ops trampoline has no traced function's address to give");
  }
  for (const auto* links : {&a.fentry, &a.fexit, &a.fmod_ret}) {
    for (const Link& link : *links) {
      if (link.program >= programs) return Fail("an attached program is program {}; the case has {}", link.program, programs);
      if (link.program == a.traced) return Fail("program {} is attached to itself", link.program);
    }
  }
  return {};
}

kernelsrc::TrampolineRequest RequestFor(const Attachment& a, const std::vector<jit::CompiledProgram>& compiled) {
  const auto links_of = [&](const std::vector<Link>& links) {
    std::vector<kernelsrc::TrampolineLink> out;
    for (const Link& link : links) {
      out.push_back({compiled[link.program].entry(), link.cookie,
                     link.runs ? guest::kTrampProgEnterAddress : guest::kTrampProgEnterMissAddress,
                     guest::kTrampProgExitAddress});
    }
    return out;
  };
  kernelsrc::TrampolineRequest request;
  request.fentry = links_of(a.fentry);
  request.fexit = links_of(a.fexit);
  request.fmod_ret = links_of(a.fmod_ret);
  request.nr_args = a.nr_args;
  request.struct_args = a.struct_args;
  request.flags = Flags(a);
  request.struct_ops = a.struct_ops;
  request.traced_entry = compiled[a.traced].entry();
  request.tramp_enter = guest::kTrampImageEnterAddress;
  request.tramp_exit = guest::kTrampImageExitAddress;
  return request;
}

// The kernel JIT's outcome against the oracle's, and the two logs.
Verdict CompareRuns(const Outcome& expected, const Outcome& actual, const std::vector<uint64_t>& expected_log,
                    const std::vector<uint64_t>& actual_log, std::span<const int32_t> inlined_helpers) {
  Verdict verdict = CompareHelperWithInlined(expected, actual, "interp", "kernel-jit", inlined_helpers);
  if (verdict.match() && expected_log != actual_log) {
    const auto show = [](const std::vector<uint64_t>& log) {
      std::string text;
      for (const uint64_t event : log) text += fmt::format("{}0x{:x}", text.empty() ? "" : " ", event);
      return text.empty() ? std::string("(none)") : text;
    };
    verdict = {Verdict::Kind::kDivergence, "trampoline log",
               fmt::format("interp {}, kernel-jit {}", show(expected_log), show(actual_log))};
  }
  if (verdict.kind == Verdict::Kind::kDivergence && expected.read_engine_private) {
    verdict = {Verdict::Kind::kNotComparable, "",
               fmt::format("a program read memory the engines hold differently by design ({} differs)",
                           verdict.field)};
  }
  return verdict;
}

}  // namespace

Result<TrampolineVerdict> KernelTrampolineRunner::Run(const TrampolineCase& c) {
  kernelsrc::KernelJit& jit = *state_->jit;
  GuestEnvironment& env = sandbox_->env();
  Machine& machine = sandbox_->machine(0);
  auto loaded = LoadCase(c.source);
  if (!loaded) return Fail("the load step refused the case: {}", loaded.message());
  if (auto checked = CheckAttachment(c.attachment, loaded->programs.size()); !checked) return checked.error();
  if ((c.attachment.struct_ops || c.attachment.freplace) && c.replace) {
    return Fail("only a trampoline attached at an entry is replaced by a second one");
  }
  if (c.first_far && !c.replace) return Fail("the case places a first trampoline far, but it replaces none");
  if (loaded->clobbered_read) return Fail("the verifier would refuse the case: {}", *loaded->clobbered_read);
  for (size_t i = 0; i < loaded->programs.size(); ++i) {
    if (auto refused = kernelsrc::VerifierRefusal(jit.answers(), loaded->programs[i].program)) {
      return Fail("program {}: {}", i, *refused);
    }
  }
  const std::span<const int32_t> inlined = jit.answers().inlined_helpers;

  // Everything compiled, built and attached is released on every path.
  std::vector<jit::CompiledProgram> compiled;
  std::optional<kernelsrc::KernelTrampoline> first, trampoline;
  uint64_t attached_to = 0;  // the entry's target now: a `bl` to it, or (freplace) a `b`
  // The entry's poke: BPF_MOD_JUMP to an extension, BPF_MOD_CALL to a trampoline.
  const auto poke_entry = [&](const jit::CompiledSubprogram& entry, uint64_t old_target, uint64_t new_target) {
    return c.attachment.freplace ? jit.JumpEntry(entry, old_target, new_target)
                                 : jit.PokeEntry(entry, old_target, new_target);
  };
  // The first program whose free failed (the kernel's bpf_jit_free()
  // freed other slots than its own), or "": what a finished case reports.
  const auto release = [&]() -> std::string {
    if (attached_to != 0) (void)poke_entry(compiled[c.attachment.traced].subprograms[0], attached_to, 0);
    if (first) jit.ReleaseTrampoline(*first);
    if (trampoline) jit.ReleaseTrampoline(*trampoline);
    std::string failed;
    for (auto& program : compiled) {
      if (auto freed = jit.Release(program); !freed && failed.empty()) failed = freed.message();
    }
    return failed;
  };
  const auto fail = [&](Error error) {
    // The case failed already: that is what it reports.
    (void)release();
    return error;
  };

  for (size_t i = 0; i < loaded->programs.size(); ++i) {
    const bool far_extension = c.far && c.attachment.freplace == i;
    auto program = jit.Compile(loaded->programs[i].program,
                               far_extension ? jit::Placement::kFar : jit::Placement::kPacked);
    if (!program) return fail(Fail("program {}: the kernel's JIT refused it: {}", i, program.message()));
    compiled.push_back(std::move(program).value());
  }
  auto conventions = KernelConventions(compiled, &jit.tree());
  if (!conventions) return fail(Fail("the kernel's code cannot be compared: {}", conventions.message()));
  const jit::CompiledSubprogram& traced = compiled[c.attachment.traced].subprograms[0];

  env.Install(*loaded);
  CallPrograms programs;
  for (size_t i = 0; i < compiled.size(); ++i) {
    env.SetProgramEntry(i, compiled[i].entry());
    programs.compiled.push_back(&compiled[i]);
    programs.programs.push_back(&loaded->programs[i].program);
  }
  programs.conventions = *conventions;
  // A call of the traced program, or (struct_ops) of the trampoline itself.
  const auto jit_run = [&](uint64_t trampoline_called) {
    env.ResetForRun(0);
    ResetLog(env.memory(), 0);
    env.memory().Store<uint64_t>(guest::PerCpuArea(0) + guest::kTrampImageObjectOffset,
                                 trampoline ? trampoline->image_object : 0);
    JitCall call(env, machine, 0, programs);
    if (trampoline_called != 0) {
      call.StartAt(trampoline_called, c.args, options_.budget);
    } else {
      call.Start(c.attachment.traced, c.args, options_.budget);
    }
    Outcome outcome = *call.Step();
    outcome.memory = env.Capture(StackWindow{});
    if (outcome.end == EndKind::kTrap && outcome.message.find(StubTrapWord()) != std::string::npos) {
      outcome.message += " (a trampoline stub's check: it was not handed the prog, run_ctx, start time or "
                         "image its protocol requires, harness/trampoline/stubs.h)";
    }
    return outcome;
  };
  // The traced program called directly, against the interpreter.
  const auto plain_run = [&]() -> Result<Verdict> {
    env.ResetForRun(0);
    InterpreterOptions plain;
    plain.budget = options_.budget;
    plain.geometry = conventions->geometry;
    Outcome expected = Interpreter(env, *loaded, plain).RunProgram(c.attachment.traced, c.args);
    expected.memory = env.Capture(StackWindow{});
    const Outcome actual = jit_run(0);
    if (machine.failure()) return Fail("the machine failed: {}", *machine.failure());
    return CompareRuns(expected, actual, {}, ReadLog(env.memory(), 0), inlined);
  };

  // Live before anything is attached: it runs, so the CPU holds its code.
  TrampolineVerdict verdict;
  auto before = plain_run();
  if (!before) return fail(before.error());
  verdict.before = *before;

  if (c.attachment.freplace) {
    // freplace: the traced program's entry jumps to the extension's.
    const uint64_t extension = compiled[*c.attachment.freplace].entry();
    if (auto poked = poke_entry(traced, 0, extension); !poked) {
      return fail(Fail("attaching the extension: {}", poked.message()));
    }
    attached_to = extension;
    verdict.trampoline_traced = traced.rx_image;
  } else {
    kernelsrc::TrampolineRequest request = RequestFor(c.attachment, compiled);
    // What the tree's arch must refuse with -ENOTSUPP (bpf_trampoline_update()
    // then fails the attach): more than 8 argument registers (arm64 passes no
    // more to a trampoline's programs), or, where the arch takes none (6.1's
    // "don't support struct argument"), a struct argument.
    std::string due;
    if (ArgumentRegisters(c.attachment) > kMaxArgs) {
      due = fmt::format("a function of {} argument registers; arm64 saves {} at most", ArgumentRegisters(c.attachment),
                        kMaxArgs);
    } else if (c.attachment.struct_args != 0 && !jit.tree().features.trampoline_struct_args) {
      due = "a function with a struct argument, which the tree's arch takes none of";
    }
    if (!due.empty()) {
      auto attempt = jit.BuildTrampoline(request);
      if (attempt) {
        jit.ReleaseTrampoline(*attempt);
        return fail(Fail("the kernel built a trampoline for {}, and must refuse it (-ENOTSUPP)", due));
      }
      if (attempt.message().find(": -524") == std::string::npos) {
        return fail(Fail("the kernel refused a trampoline for {} otherwise than with -ENOTSUPP (-524): {}", due,
                         attempt.message()));
      }
      verdict.refused = attempt.message();
      if (const std::string failed = release(); !failed.empty()) return Fail("freeing the programs: {}", failed);
      return verdict;
    }
    if (c.replace) {
      request.placement = c.first_far ? jit::Placement::kFar : jit::Placement::kPacked;
      auto built = jit.BuildTrampoline(request);
      if (!built) return fail(Fail("the kernel refused the first trampoline: {}", built.message()));
      first = std::move(built).value();
    }
    request.placement = c.far ? jit::Placement::kFar : jit::Placement::kPacked;
    if (c.fail_call != 0) {
      // The kernel's answer to a failed allocation is -ENOMEM with nothing
      // held (BuildTrampoline fails on anything left); past the build's
      // failable calls, nothing fails and the trampoline is freed again.
      kernelsrc::TrampolineRequest failing = request;
      failing.fail_call = c.fail_call;
      kernelsrc::TrampolineErrorPath path;
      auto attempt = jit.BuildTrampoline(failing, &path);
      if (!path.breach.empty()) return fail(Fail("a build whose {} failed: {}", path.injected, attempt.message()));
      if (!path.injected.empty() && attempt) {
        return fail(Fail("the kernel built the trampoline though its {} failed", path.injected));
      }
      if (attempt) jit.ReleaseTrampoline(*attempt);
    }
    auto built = jit.BuildTrampoline(request);
    if (!built) return fail(Fail("the kernel refused the trampoline: {}", built.message()));
    trampoline = std::move(built).value();
    if (first) {
      if (auto poked = poke_entry(traced, 0, first->entry); !poked) {
        return fail(Fail("attaching the first trampoline: {}", poked.message()));
      }
      attached_to = first->entry;
    }
    // A struct_ops trampoline is not attached to an entry: the kernel calls
    // it through the struct_ops map's function pointer.
    if (!c.attachment.struct_ops) {
      if (auto poked = poke_entry(traced, attached_to, trampoline->entry); !poked) {
        return fail(Fail("attaching the trampoline: {}", poked.message()));
      }
      attached_to = trampoline->entry;
    }
    if (first) {
      jit.ReleaseTrampoline(*first);
      first.reset();
    }
    verdict.trampoline_entry = trampoline->entry;
    verdict.trampoline_words = static_cast<uint32_t>(trampoline->words.size());
    verdict.trampoline_traced = traced.rx_image;
  }

  // bpf_arch_text_poke() checks the word it replaces: a poke that names
  // another old target (the nop, which the entry no longer holds) is
  // refused, and the run below shows it changed nothing.
  std::string stale_poke_taken;
  if (attached_to != 0 && poke_entry(traced, 0, attached_to).ok()) {
    stale_poke_taken = fmt::format("bpf_arch_text_poke() took a poke from the nop at an entry that holds a {} to "
                                   "0x{:x}: it must refuse an old target the entry does not hold (-EFAULT)",
                                   c.attachment.freplace ? "b" : "bl", attached_to);
  }

  env.ResetForRun(0);
  RunSpec spec;
  spec.traced_entry = traced.rx_image;
  spec.args = c.args;
  spec.budget = options_.budget;
  spec.geometry = conventions->geometry;
  const AttachedRun expected = RunAttached(env, *loaded, c.attachment, spec);
  const Outcome actual = jit_run(c.attachment.struct_ops ? trampoline->entry : 0);
  if (machine.failure()) return fail(Fail("the machine failed: {}", *machine.failure()));
  verdict.log = ReadLog(env.memory(), 0);
  verdict.attached = CompareRuns(expected.outcome, actual, expected.log, verdict.log, inlined);
  verdict.outcome = actual;
  if (!stale_poke_taken.empty() && verdict.attached.match()) {
    verdict.attached = {Verdict::Kind::kDivergence, "text poke", stale_poke_taken};
  }
  // A word the architecture leaves CONSTRAINED UNPREDICTABLE, in the
  // programs or the trampoline, is the kernel's finding whatever the run
  // made of it.
  for (const auto& program : compiled) {
    if (auto bad = jit::FirstUnpredictableWord(program); bad && verdict.attached.match()) {
      verdict.attached = {Verdict::Kind::kDivergence, "code", "the kernel's JIT emitted " + *bad};
    }
  }
  for (size_t i = 0; trampoline && i < trampoline->words.size() && verdict.attached.match(); ++i) {
    if (auto rule = a64::ConstrainedUnpredictable(trampoline->words[i])) {
      verdict.attached = {Verdict::Kind::kDivergence, "code",
                          fmt::format("the trampoline's word 0x{:08x} at 0x{:x} is CONSTRAINED UNPREDICTABLE: {}",
                                      trampoline->words[i], trampoline->entry + 4 * i, *rule)};
    }
  }

  // Detached and freed: the traced program is itself again.
  if (attached_to != 0) {
    if (auto poked = poke_entry(traced, attached_to, 0); !poked) {
      return fail(Fail("detaching {}: {}", c.attachment.freplace ? "the extension" : "the trampoline",
                       poked.message()));
    }
    attached_to = 0;
  }
  if (trampoline) {
    jit.ReleaseTrampoline(*trampoline);
    trampoline.reset();
  }
  auto after = plain_run();
  if (!after) return fail(after.error());
  verdict.detached = *after;
  if (const std::string failed = release(); !failed.empty()) return Fail("freeing the programs: {}", failed);
  return verdict;
}

}  // namespace bpfdiff::trampoline
