#include "harness/lifecycle/world.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/diff/compare.h"
#include "harness/diff/engines.h"
#include "harness/diff/kernel_refusals.h"
#include "harness/lifecycle/not_comparable.h"
#include "jit/code_rules.h"
#include "jit/registers.h"
#include "kernelsrc/kernel_jit.h"
#include "oracle/guest_layout.h"
#include "oracle/interpreter.h"

namespace bpfdiff::lifecycle {
namespace {

constexpr int32_t kProgArrayFd = 4;

isa::MapSpec ProgArraySpec() {
  return isa::MapSpec{kProgArrayFd, isa::MapType::kProgArray, 4, 8, World::kTailEntries, {}, {}};
}

bool Overlaps(uint64_t a_begin, uint64_t a_end, uint64_t b_begin, uint64_t b_end) {
  return a_begin < b_end && b_begin < a_end;
}

// Removes [begin, end) from a set of ranges.
void Subtract(std::vector<std::pair<uint64_t, uint64_t>>& ranges, uint64_t begin, uint64_t end) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (auto [b, e] : ranges) {
    if (!Overlaps(b, e, begin, end)) {
      out.emplace_back(b, e);
      continue;
    }
    if (b < begin) out.emplace_back(b, begin);
    if (e > end) out.emplace_back(end, e);
  }
  ranges = std::move(out);
}

uint64_t SlotAddress(uint32_t slot) {
  return guest::MapObjectAddress(0) + guest::kMapPtrsOffset + 8 * uint64_t{slot};
}

// Each CPU's interrupt stack lies 32 KiB below the top of its task stack,
// in the same 64 KiB: a call uses (and its reset clears) 16 KiB below its
// entry, so neither reaches the other's frames.
constexpr uint64_t kInterruptStackBelow = 0x8000;
static_assert(2 * kInterruptStackBelow <= guest::kStackStride);

uint64_t InterruptStackTop(int cpu) { return guest::StackTop(cpu) - kInterruptStackBelow; }

// The JIT's stack bytes through `window`, from `whole`, a capture of every
// byte of the stack the call may use (taken before a replay of the
// interpreter resets it). Bytes outside `whole` read as 0.
MemorySnapshot Through(const MemorySnapshot& whole, const StackWindow& window) {
  MemorySnapshot snapshot = whole;
  snapshot.window = window;
  snapshot.stack.assign(window.keep.size(), 0);
  for (size_t i = 0; i < window.keep.size(); ++i) {
    const uint64_t at = window.low + i;
    if (window.keep[i] == 0 || at < whole.window.low || at - whole.window.low >= whole.stack.size()) continue;
    snapshot.stack[i] = whole.stack[at - whole.window.low];
  }
  return snapshot;
}

bool IsProbeLoad(const isa::Insn& insn) {
  const uint8_t mode = isa::ModeOf(insn.opcode);
  return isa::ClassOf(insn.opcode) == isa::kClassLdx && (mode == isa::kModeProbeMem || mode == isa::kModeProbeMemSx);
}

}  // namespace

Result<std::unique_ptr<World>> World::Create(const WorldOptions& options, std::vector<Violation>* setup_violations) {
  std::unique_ptr<World> world(new World(options));
  if (auto status = world->Initialize(); !status) {
    if (setup_violations != nullptr) *setup_violations = world->violations_;
    return status.error();
  }
  return world;
}

World::~World() {
  for (auto& cpu : cpus_) {
    cpu.call.reset();
    cpu.interrupted.reset();
  }
  if (sandbox_) sandbox_->patcher().set_listener(nullptr);
}

Status World::Initialize() {
  SandboxOptions sandbox_options;
  sandbox_options.cpus = options_.cpus;
  sandbox_options.pack_seed = options_.pack_seed;
  sandbox_options.pack_bugs = options_.bugs.pack;
  sandbox_options.resident_program = false;  // packs come and go with the programs
  sandbox_options.fast_machine = false;      // every CPU steps precisely
  sandbox_options.unicorn_fault = options_.unicorn_fault;
  auto sandbox = Sandbox::Create(sandbox_options);
  if (!sandbox) return sandbox.error();
  sandbox_ = std::move(sandbox).value();
  const EngineSpec* spec = FindEngine(options_.jit_engine);
  if (spec == nullptr || spec->kind != EngineKind::kJit) {
    return Fail("'{}' is not a JIT engine (bpfdiff engines lists them)", options_.jit_engine);
  }
  const bool core_c_pack =
      spec->source == JitSource::kKernel && options_.kernel_pack && options_.bugs.pack == jit::PackBugs{};
  const KernelPackSource pack = core_c_pack ? KernelPackSource::kCoreC : KernelPackSource::kBpfdiff;
  core_c_pack_ = core_c_pack;
  auto generator = MakeCodeGenerator(*sandbox_, *spec, options_.bugs.jit, pack);
  if (!generator) return generator.error();
  generator_ = std::move(generator).value();
  kernel_jit_ = spec->source == JitSource::kKernel;
  if (kernel_jit_) kernel_tree_ = kernelsrc::TreeOrBuilt(spec->tree);
  cpus_.resize(static_cast<size_t>(options_.cpus));
  sandbox_->patcher().set_listener(this);

  // What the interpreter sees: every program id (an empty id runs "exit"),
  // and the prog_array.
  CaseSource empty;
  empty.programs.push_back({isa::Insn{isa::kOpExit, 0, 0, 0, 0}});
  auto exit_only = LoadCase(empty);
  if (!exit_only) return exit_only.error();
  world_case_.programs.assign(kMaxPrograms, exit_only->programs.front());
  world_case_.maps = {ProgArraySpec()};
  sandbox_->env().Install(world_case_);
  programs_.resize(kMaxPrograms);

  // The tail callers: r2 = &prog_array, r3 = entry, tail call; 0x7a11 if it falls through.
  for (int entry = 0; entry < kTailEntries; ++entry) {
    std::vector<isa::Insn> caller = {
        {isa::kOpLddw, 2, isa::kPseudoMapFd, 0, kProgArrayFd}, {0, 0, 0, 0, 0},
        {isa::kClassAlu64 | isa::kSrcK | isa::kAluMov, 3, 0, 0, entry},
        {isa::kOpTailCall, 0, 0, 0, 0},
        {isa::kClassAlu64 | isa::kSrcK | isa::kAluMov, 0, 0, 0, 0x7a11},
        {isa::kOpExit, 0, 0, 0, 0}};
    auto id = Install(std::move(caller), "load of a tail caller");
    if (!id) return id.error();
  }
  return {};
}

std::string World::SlotName(int id) const {
  const Program* p = programs_[static_cast<size_t>(id)].get();
  if (p == nullptr || p->slots.empty()) return fmt::format("program {}", id);
  return fmt::format("program {} at 0x{:x} (+0x{:x})", id, p->slots.front().first,
                     p->slots.front().second - p->slots.front().first);
}

void World::Report(Invariant invariant, int cpu, uint64_t pc, int id, const std::string& operation,
                   std::string detail) {
  violations_.push_back({invariant, cpu, pc, id >= 0 ? SlotName(id) : "", operation, std::move(detail)});
}

int World::ProgramAt(uint64_t address, bool freed) const {
  for (size_t id = 0; id < programs_.size(); ++id) {
    const Program* p = programs_[id].get();
    if (p == nullptr || (p->state == Program::State::kFreed) != freed) continue;
    for (auto [b, e] : p->slots) {
      if (address >= b && address < e) return static_cast<int>(id);
    }
  }
  return -1;
}

Result<int> World::Install(std::vector<isa::Insn> insns, std::string_view what, uint32_t fail_call,
                           FailingLoad* failing) {
  last_loader_ = nullptr;  // until a compile is made
  // An id whose program is gone (and is in no prog_array entry).
  int id = -1;
  for (int candidate = 0; candidate < kMaxPrograms && id < 0; ++candidate) {
    const Program* p = programs_[static_cast<size_t>(candidate)].get();
    const bool in_array = std::count(tail_targets_.begin(), tail_targets_.end(), candidate) > 0;
    if ((p == nullptr || p->state == Program::State::kFreed) && !in_array) id = candidate;
  }
  if (id < 0) return Fail("all {} program ids are in use", kMaxPrograms);
  CaseSource source;
  source.programs.push_back(std::move(insns));
  source.maps = {ProgArraySpec()};
  auto loaded = LoadCase(source);
  if (!loaded) return loaded.error();
  // What the kernel's verifier refuses never reaches its JIT (an
  // out-of-range shift, say, which its code runs otherwise than the
  // interpreter); bpfdiff's JIT compiles such programs as RFC 9669 says.
  if (const auto refusal = kernel_jit_ ? KernelAlsoRefuses(*loaded) : std::nullopt) {
    return Fail("the kernel's verifier refuses it ({}): {}", refusal->name, refusal->why);
  }
  // Nor what the tree's own verifier refuses for what its JIT lacks (6.1:
  // every cpu v4 instruction, which its JIT would compile as the older
  // instruction it resembles: a movsx as a mov).
  if (auto refusal = generator_->VerifierRefusal(loaded->programs.front().program)) {
    return Fail("the kernel's verifier refuses it: {}", *refusal);
  }

  operation_ = fmt::format("{} (program {})", what, id);
  copies_ = fills_ = flushes_ = {};
  // A generator whose loader varies (kernel-jit-blind: bpf_jit_harden,
  // chosen by the program) chooses it for this load.
  generator_->BeginCase(loaded->programs.front().program);
  kernelsrc::FailingCompile attempt = generator_->CompileFailing(loaded->programs.front(), fail_call);
  last_loader_ = generator_->loader();
  if (failing != nullptr) failing->injected = attempt.injected;
  if (!attempt.breach.empty()) {
    if (kernelsrc::KnownErrorPathBreach(attempt.breach_kind, kernel_tree_)) {
      if (failing != nullptr) failing->known_breach = attempt.breach_kind;
    } else {
      // (No slot to name: a failed compile's are gone, a loaded one's
      // are not recorded yet.)
      Report(Invariant::kJitErrorPath, -1, 0, -1, operation_,
             fmt::format("{}{}", attempt.breach,
                         attempt.injected.empty() ? "" : fmt::format(" ({} was made to fail)", attempt.injected)));
    }
  }
  auto& compiled = attempt.compiled;
  if (!compiled) {
    CheckAccounting(operation_);
    return compiled.error();
  }
  auto program = std::make_unique<Program>();
  program->source = source.programs.front();
  program->loaded = std::move(loaded->programs.front());
  program->compiled = std::move(compiled).value();
  program->entry = program->compiled.entry();
  // (Only the kernel's JIT restores registers at a tail call: the data flow
  // is not run for bpfdiff's.)
  if (kernel_jit_) {
    program->read_at_tail_call_entry = FindReadAtTailCallEntry(program->loaded.program, static_cast<size_t>(id));
  }
  for (const auto& sub : program->compiled.subprograms) {
    program->slots.emplace_back(sub.allocation->rx_slot(), sub.allocation->rx_slot() + sub.allocation->slot_bytes());
  }
  // A freed program's object outlives its id: a call that (through a
  // planted bug) still runs it may refer to it.
  if (programs_[static_cast<size_t>(id)] != nullptr) retired_.push_back(std::move(programs_[static_cast<size_t>(id)]));
  programs_[static_cast<size_t>(id)] = std::move(program);
  const Program& p = *programs_[static_cast<size_t>(id)];
  RefreshConventions();
  RefreshCalls();
  world_case_.programs[static_cast<size_t>(id)] = p.loaded;
  // The program object's index is there since Initialize installed all
  // kMaxPrograms objects; only the entry changes.
  sandbox_->env().SetProgramEntry(static_cast<size_t>(id), p.entry);
  ForEachCall([](int, Call& call) { call.images_changed |= !call.stale; });

  // Finalize: one copy per image, and cache maintenance in bulk: a flush
  // of the range after the copy, and at most one more (6.12's arm64 JIT
  // flushes each image twice: aarch64_insn_copy() flushes what it wrote,
  // and bpf_int_jit_compile() flushes header and code again after
  // bpf_jit_binary_pack_finalize()), never one per word; nothing left dirty.
  // A tree whose JIT writes in place (no prog pack: 6.1) writes each image
  // once per pass, one pass or two (a subprogram's extra pass), and flushes
  // after each: its writes are seen at the flushes they ask for
  // (kernelsrc/in_place_images.c), as many as the flushes, one or two per
  // image.
  const auto images = static_cast<uint64_t>(p.compiled.subprograms.size());
  const auto finalize = static_cast<size_t>(jit::TextOrigin::kFinalize);
  const bool in_place = kernel_tree_ != nullptr && !kernel_tree_->features.prog_pack;
  const bool disciplined =
      in_place ? copies_[finalize] >= images && copies_[finalize] <= 2 * images && flushes_[finalize] == copies_[finalize]
               : copies_[finalize] == images && flushes_[finalize] >= images && flushes_[finalize] <= 2 * images;
  if (!disciplined) {
    Report(Invariant::kOneCacheOpPerRange, -1, 0, id, operation_,
           fmt::format("{} images finalized with {} copies and {} cache operations", images, copies_[finalize],
                       flushes_[finalize]));
  }
  for (size_t c = 0; c < cpus_.size(); ++c) {
    for (auto [b, e] : p.slots) {
      for (auto [db, de] : cpus_[c].dirty) {
        if (Overlaps(b, e, db, de)) {
          Report(Invariant::kIcacheDiscipline, static_cast<int>(c), 0, id, operation_,
                 fmt::format("finalize left 0x{:x}..0x{:x} written but not flushed", std::max(b, db),
                             std::min(e, de)));
        }
      }
    }
  }
  CheckExtable(id, operation_);
  CheckSlotAsWritten(id, operation_);
  if (auto bad = jit::FirstUnpredictableWord(p.compiled)) Report(Invariant::kArchitectureRules, -1, 0, id, operation_, *bad);
  CheckAccounting(operation_);
  return id;
}

World::FailingLoad World::LoadFailing(const std::vector<isa::Insn>& insns, uint32_t fail_call) {
  FailingLoad load;
  load.id = Install(insns, "failing load", fail_call, &load);
  return load;
}

Result<int> World::Load(const std::vector<isa::Insn>& insns, uint64_t pad_slots) {
  if (pad_slots < 2) return Install(insns, "load");
  // gotol over pad_slots / 2 lddw pairs (four words each): the program's
  // own code lands that far into its image, or in an oversize allocation.
  std::vector<isa::Insn> padded;
  const uint64_t pairs = pad_slots / 2;
  padded.reserve(1 + 2 * pairs + insns.size());
  padded.push_back({isa::kClassJmp32 | isa::kJmpJa, 0, 0, 0, static_cast<int32_t>(pairs * 2)});
  for (uint64_t i = 0; i < pairs; ++i) {
    padded.push_back({isa::kOpLddw, 0, 0, 0, static_cast<int32_t>(0x9abc0000 + i)});
    padded.push_back({0, 0, 0, 0, 0x12345678});
  }
  padded.insert(padded.end(), insns.begin(), insns.end());
  return Install(std::move(padded), "load of a padded program");
}

void World::CheckSlotAsWritten(int id, const std::string& operation) {
  const Program& p = *programs_[static_cast<size_t>(id)];
  const GuestMemory& memory = sandbox_->env().memory();
  for (const auto& sub : p.compiled.subprograms) {
    const jit::PackAllocation& a = *sub.allocation;
    const uint64_t begin = a.rx_slot(), end = begin + a.slot_bytes();
    const uint8_t* bytes = memory.HostPointer(begin, a.slot_bytes());
    if (bytes == nullptr) continue;  // the pack only hands out mapped ranges
    const auto word_at = [&](uint64_t address) {
      uint32_t word = 0;
      std::memcpy(&word, bytes + (address - begin), 4);
      return word;
    };
    const uint64_t code_end = sub.rx_image + 4ull * sub.code_words;
    const uint64_t data_end = code_end + 4ull * sub.data_words.size();
    const uint64_t extable_end = sub.rx_extable + uint64_t{sub.extable_entries} * jit::kExtableEntrySize;
    std::string problem;
    if (word_at(begin) != a.slot_bytes() || word_at(begin + 4) != jit::kBreakFault) {
      problem = fmt::format("the header holds 0x{:08x} 0x{:08x}, not the slot's size 0x{:x}", word_at(begin),
                           word_at(begin + 4), a.slot_bytes());
    }
    for (uint64_t at = begin + jit::kHeaderSize; problem.empty() && at < end; at += 4) {
      const uint32_t word = word_at(at);
      if (at >= sub.rx_image && at < code_end) {
        const uint32_t emitted = sub.words[(at - sub.rx_image) / 4];
        if (word != emitted) {
          problem = fmt::format("code word {} at 0x{:x} is 0x{:08x}, the JIT emitted 0x{:08x}",
                                (at - sub.rx_image) / 4, at, word, emitted);
        }
      } else if (at >= code_end && at < data_end) {
        const uint32_t written = sub.data_words[(at - code_end) / 4];
        if (word != written) {
          problem = fmt::format("data word {} after the code, at 0x{:x}, is 0x{:08x}, the JIT wrote 0x{:08x}",
                                (at - code_end) / 4, at, word, written);
        }
      } else if (sub.extable_entries != 0 && at >= sub.rx_extable && at < extable_end) {
        continue;  // extable-structure checks the entries
      } else if (word != jit::kBreakFault) {
        problem = fmt::format("0x{:x}, outside the code, holds 0x{:08x}, not BRK", at, word);
      }
    }
    if (!problem.empty()) Report(Invariant::kSlotAsWritten, -1, 0, id, operation, problem);
  }
}

void World::CheckExtable(int id, const std::string& operation) {
  const Program& p = *programs_[static_cast<size_t>(id)];
  const isa::Program& program = p.loaded.program;
  const GuestMemory& memory = sandbox_->env().memory();
  for (const auto& sub : p.compiled.subprograms) {
    std::vector<uint32_t> loads;
    for (uint32_t slot = sub.first_slot; slot < sub.end_slot; ++slot) {
      if (IsProbeLoad(program.insns[slot])) loads.push_back(slot);
    }
    if (loads.size() != sub.extable_entries) {
      Report(Invariant::kExtableStructure, -1, 0, id, operation,
             fmt::format("{} PROBE_MEM loads but {} exception-table entries", loads.size(), sub.extable_entries));
      continue;
    }
    uint64_t previous = 0;
    for (uint32_t e = 0; e < sub.extable_entries; ++e) {
      const uint64_t field = sub.rx_extable + uint64_t{e} * jit::kExtableEntrySize;
      const uint8_t* bytes = memory.HostPointer(field, jit::kExtableEntrySize);
      if (bytes == nullptr) {
        Report(Invariant::kExtableStructure, -1, 0, id, operation, fmt::format("entry {} is not in guest memory", e));
        break;
      }
      const jit::DecodedExtableEntry entry = jit::DecodeExtableEntry(bytes, field);
      const uint64_t target = entry.target;
      // The load is the last word of its instruction's lowering.
      const uint32_t slot = loads[e];
      const uint64_t load = sub.rx_image + 4ull * (sub.offsets[slot + 1 - sub.first_slot] - 1);
      const uint64_t resume = entry.resume_pc;
      const int reg = static_cast<int>(jit::Map(program.insns[slot].dst));
      std::string problem;
      if (target != load) problem = fmt::format("points at 0x{:x}, the load is at 0x{:x}", target, load);
      else if (resume != load + 4) problem = fmt::format("resumes at 0x{:x}, not after the load", resume);
      else if (entry.reg != reg) problem = fmt::format("zeroes x{}, the load's destination is x{}", entry.reg, reg);
      else if (target <= previous) problem = "entries are not sorted by target";
      if (!problem.empty()) {
        Report(Invariant::kExtableStructure, -1, 0, id, operation,
               fmt::format("entry {} (instruction {}) {}", e, slot, problem));
      }
      previous = target;
    }
  }
}

void World::CheckPackHoles(const std::string& operation) {
  const jit::ProgPack& pack = sandbox_->pack();
  const uint64_t created = pack.Accounting().packs_created;
  if (created == packs_checked_) return;
  packs_checked_ = created;
  GuestMemory& memory = sandbox_->env().memory();
  for (int i = 0; i < static_cast<int>(guest::kMaxPacks); ++i) {
    const std::vector<uint64_t>* bitmap = pack.Bitmap(i);
    if (bitmap == nullptr) continue;
    const uint64_t base = guest::kPackBase + static_cast<uint64_t>(i) * jit::kPackSize;
    const uint8_t* host = memory.HostPointer(base, jit::kPackSize);
    if (host == nullptr) continue;
    for (uint64_t c = 0; c < jit::kChunksPerPack; ++c) {
      if (((*bitmap)[c / 64] >> (c % 64)) & 1) continue;
      for (uint64_t w = 0; w < jit::kChunkSize / 4; ++w) {
        uint32_t word;
        std::memcpy(&word, host + c * jit::kChunkSize + 4 * w, 4);
        if (word == jit::kBreakFault) continue;
        const uint64_t address = base + c * jit::kChunkSize + 4 * w;
        Report(Invariant::kPackHolesInvalid, -1, address, -1, operation,
               fmt::format("pack {} chunk {} (free) holds 0x{:08x} at 0x{:x}", i, c, word, address));
        return;
      }
    }
  }
}

void World::CheckAccounting(const std::string& operation) {
  // What the pack did that its records cannot show (kernel/bpf/core.c's:
  // a slot outside the memory mapped for it, memory unmapped under a
  // live slot).
  for (std::string& problem : generator_->TakePackProblems()) {
    Report(Invariant::kAccounting, -1, 0, -1, operation, std::move(problem));
  }
  CheckPackHoles(operation);
  const jit::ProgPack& pack = sandbox_->pack();
  const jit::PackAccounting accounting = pack.Accounting();
  if (accounting.live_rw_buffers != 0) {
    Report(Invariant::kAccounting, -1, 0, -1, operation,
           fmt::format("{} RW buffers neither finalized nor freed", accounting.live_rw_buffers));
  }
  // Expected bitmaps from the live allocations.
  std::vector<std::vector<uint64_t>> expected(guest::kMaxPacks);
  int oversize = 0;
  for (size_t id = 0; id < programs_.size(); ++id) {
    const auto& p = programs_[id];
    if (p == nullptr || p->state == Program::State::kFreed) continue;
    for (const auto& sub : p->compiled.subprograms) {
      const jit::PackAllocation& a = *sub.allocation;
      if (a.oversize()) {
        ++oversize;
        continue;
      }
      auto& bits = expected[static_cast<size_t>(a.pack())];
      bits.resize(jit::kChunksPerPack / 64, 0);
      for (uint64_t c = a.first_chunk(); c < a.first_chunk() + a.slot_bytes() / jit::kChunkSize; ++c) {
        const uint64_t bit = uint64_t{1} << (c % 64);
        // Two live slots sharing a chunk: the bitmap (their union) would
        // look right, so this is where it shows.
        if ((bits[c / 64] & bit) != 0) {
          Report(Invariant::kAccounting, -1, 0, static_cast<int>(id), operation,
                 fmt::format("pack {} chunk {} is in the slots of programs {} and {}", a.pack(), c,
                             ProgramAt(a.rx_slot() + (c - a.first_chunk()) * jit::kChunkSize, false), id));
          break;
        }
        bits[c / 64] |= bit;
      }
    }
  }
  for (int i = 0; i < static_cast<int>(guest::kMaxPacks); ++i) {
    const std::vector<uint64_t>* bitmap = pack.Bitmap(i);
    const auto& want = expected[static_cast<size_t>(i)];
    if (bitmap == nullptr && want.empty()) continue;
    if (bitmap == nullptr) {
      Report(Invariant::kAccounting, -1, 0, -1, operation, fmt::format("pack {} holds programs but is not allocated", i));
    } else if (want.empty()) {
      Report(Invariant::kAccounting, -1, 0, -1, operation, fmt::format("pack {} is empty but not released", i));
    } else if (*bitmap != want) {
      Report(Invariant::kAccounting, -1, 0, -1, operation, fmt::format("pack {}'s bitmap does not match its programs", i));
    }
  }
  if (accounting.oversize_allocations != oversize) {
    Report(Invariant::kAccounting, -1, 0, -1, operation,
           fmt::format("{} oversize allocations, {} live", accounting.oversize_allocations, oversize));
  }
}

void World::Free(int id) {
  if (id < kTailEntries || id >= kMaxPrograms) return;  // tail callers stay
  Program* p = programs_[static_cast<size_t>(id)].get();
  if (p == nullptr || p->state != Program::State::kLive) return;
  operation_ = fmt::format("free of program {}", id);
  for (int e = 0; e < kTailEntries; ++e) {
    if (tail_targets_[static_cast<size_t>(e)] == id) SetTailTarget(e, -1);
  }
  p->state = Program::State::kPendingFree;
  ForEachCall([&](int cpu, const Call& call) {
    // A planted bug waits only for the calls that began in this program,
    // as a reference taken at entry would: not for a CPU that came in
    // through a tail call.
    if (options_.bugs.lifecycle.grace_period_for_entry_only && call.program != id) return;
    p->waiting.insert(cpu);
  });
  if (p->waiting.empty() || options_.bugs.lifecycle.free_without_grace_period) DoFree(id, operation_);
}

void World::DoFree(int id, std::string operation) {
  Program& p = *programs_[static_cast<size_t>(id)];
  const std::string outer = std::exchange(operation_, operation);
  copies_ = fills_ = flushes_ = {};
  // core.c's bpf_prog_pack_free() hands an image larger than a pack back
  // to execmem, unmapped, with no invalidation (ExecUnmap fills it for
  // that): only the images in packs are invalidated.
  const auto images = static_cast<uint64_t>(std::count_if(
      p.compiled.subprograms.begin(), p.compiled.subprograms.end(),
      [&](const jit::CompiledSubprogram& sub) { return !(core_c_pack_ && sub.allocation->oversize()); }));
  if (auto freed = generator_->Release(p.compiled); !freed) {
    Report(Invariant::kJitErrorPath, -1, 0, id, operation, freed.message());
  }
  p.state = Program::State::kFreed;
  p.waiting.clear();
  RefreshConventions();
  RefreshCalls();
  const auto free = static_cast<size_t>(jit::TextOrigin::kFree);
  if (fills_[free] != images || flushes_[free] != images) {
    Report(Invariant::kOneCacheOpPerRange, -1, 0, id, operation,
           fmt::format("{} images freed with {} fills and {} cache operations", images, fills_[free], flushes_[free]));
  }
  // Every word of every freed slot is AARCH64_BREAK_FAULT (holes and tails too).
  const GuestMemory& memory = sandbox_->env().memory();
  for (auto [b, e] : p.slots) {
    // (The pack regions stay mapped when a pack is released.)
    const uint8_t* bytes = memory.HostPointer(b, e - b);
    for (uint64_t a = b; bytes != nullptr && a < e; a += 4) {
      uint32_t word = 0;
      std::memcpy(&word, bytes + (a - b), 4);
      if (word != jit::kBreakFault) {
        Report(Invariant::kFreedSlotInvalid, -1, a, id, operation,
               fmt::format("word at 0x{:x} is 0x{:08x} after the free", a, word));
        break;
      }
    }
  }
  CheckAccounting(operation);
  operation_ = outer;
}

void World::RefreshCalls() {
  ForEachCall([&](int cpu, Call& call) { call.call->set_programs(Callable(GeometryOf(cpu, call))); });
}

void World::RefreshConventions() {
  // Every program a call may still run: the live ones and those pending
  // free, by id.
  std::vector<const jit::CompiledProgram*> compiled(programs_.size(), nullptr);
  for (size_t id = 0; id < programs_.size(); ++id) {
    const Program* p = programs_[id].get();
    if (p != nullptr && p->state != Program::State::kFreed) compiled[id] = &p->compiled;
  }
  auto conventions = generator_->Conventions(compiled);
  if (conventions) {
    conventions_ = std::move(conventions).value();
    conventions_error_.reset();
    // With the kernel's JIT, frames stay per function even while every
    // program's are alike: programs come and go under a running call, and
    // its stack is compared the one way it was entered with.
    if (kernel_jit_ && !conventions_.geometry.per_function()) {
      for (size_t id = 0; id < compiled.size(); ++id) {
        for (size_t s = 0; compiled[id] != nullptr && s < compiled[id]->subprograms.size(); ++s) {
          conventions_.geometry.functions.push_back({static_cast<uint32_t>(id), compiled[id]->subprograms[s].first_slot,
                                                     conventions_.geometry.fp_below_entry_sp,
                                                     kernelsrc::StackReservationBytes(compiled[id]->subprograms[s])});
        }
      }
    }
  } else {
    conventions_error_ = conventions.message();
  }
}

CallPrograms World::Callable(const StackGeometry& geometry) const {
  CallPrograms programs;
  programs.conventions = conventions_;
  programs.conventions.geometry = geometry;
  for (size_t id = 0; id < programs_.size(); ++id) {
    const Program* p = programs_[id].get();
    const bool runnable = p != nullptr && p->state != Program::State::kFreed;
    programs.compiled.push_back(runnable ? &p->compiled : nullptr);
    programs.programs.push_back(runnable ? &p->loaded.program : nullptr);
  }
  return programs;
}

void World::Start(int cpu, int id, uint64_t stack_top) {
  Cpu& c = cpus_[static_cast<size_t>(cpu)];
  GuestEnvironment& env = sandbox_->env();
  const std::array<uint64_t, 5> args = {env.context_address(), 0, 0, 0, 0};
  c.stack_top = stack_top;
  const StackGeometry geometry = GeometryOf(cpu, c);
  // The interpreter first, on this stack, then the same stack reset for
  // the JIT'd call.
  env.ResetCpu(cpu, stack_top);
  InterpreterOptions options{options_.call_budget, cpu, geometry, nullptr};
  Outcome expected = Interpreter(env, world_case_, options).RunProgram(static_cast<size_t>(id), args);
  // With per-function frames, the stack through the window of the frames
  // the run entered.
  expected.memory = geometry.per_function() ? env.Capture(expected.memory.window) : env.Capture(cpu, geometry);
  env.ResetCpu(cpu, stack_top);
  c.args = args;
  c.expected = std::move(expected);
  c.program = id;
  c.stale = false;
  for (uint32_t slot = 0; slot < kTailEntries; ++slot) c.array_at_start[slot] = ArraySlot(slot);
  c.tail_calls = TailCallReads();
  c.array_changed = false;
  c.images_changed = false;
  c.call = std::make_unique<JitCall>(env, sandbox_->machine(cpu), cpu, Callable(geometry));
  c.call->set_observer(this);
  c.call->Start(static_cast<size_t>(id), args, options_.call_budget * 64 + 100'000, stack_top);
}

bool World::Interrupt(int cpu, int id, uint64_t steps) {
  if (cpu < 0 || cpu >= cpus()) return false;
  Cpu& c = cpus_[static_cast<size_t>(cpu)];
  if (c.call == nullptr || c.stale || c.interrupted) return false;
  const Program* p = id >= 0 && id < kMaxPrograms ? programs_[static_cast<size_t>(id)].get() : nullptr;
  if (p == nullptr || p->state != Program::State::kLive) return false;
  operation_ = fmt::format("cpu {} interrupted, running program {} in the interrupt", cpu, id);
  Machine& machine = sandbox_->machine(cpu);
  Interrupted saved;
  saved.pc = machine.ReadPc();
  saved.registers = machine.SaveContext();
  saved.helpers = sandbox_->env().helper_state(cpu);
  saved.call = std::move(static_cast<Call&>(c));
  // (Not emplace(): clang sees Interrupted as not default-constructible
  // inside World, where its member initializers are not parsed yet.)
  c.interrupted = std::move(saved);
  static_cast<Call&>(c) = Call{};
  Start(cpu, id, InterruptStackTop(cpu));
  if (auto outcome = c.call->Step(steps)) {
    Complete(cpu, std::move(*outcome));
  } else {
    Stopped(cpu);
  }
  return true;
}

void World::ReturnFromInterrupt(int cpu) {
  Cpu& c = cpus_[static_cast<size_t>(cpu)];
  Interrupted& saved = *c.interrupted;
  sandbox_->machine(cpu).RestoreContext(saved.registers);
  sandbox_->env().helper_state(cpu) = saved.helpers;
  static_cast<Call&>(c) = std::move(saved.call);
  c.interrupted.reset();
}

void World::Step(int cpu, int id, uint64_t steps) {
  if (cpu < 0 || cpu >= cpus()) return;
  Cpu& c = cpus_[static_cast<size_t>(cpu)];
  operation_ = fmt::format("cpu {} running", cpu);
  if (c.call == nullptr) {
    const Program* p = id >= 0 && id < kMaxPrograms ? programs_[static_cast<size_t>(id)].get() : nullptr;
    if (p == nullptr || p->state != Program::State::kLive) return;
    Start(cpu, id, guest::StackTop(cpu));
  }
  if (auto outcome = c.call->Step(steps)) {
    Complete(cpu, std::move(*outcome));
  } else {
    Stopped(cpu);
  }
}

void World::RunToCompletion(int cpu) {
  if (cpu < 0 || cpu >= cpus() || cpus_[static_cast<size_t>(cpu)].call == nullptr) return;
  operation_ = fmt::format("cpu {} running to the end", cpu);
  if (auto outcome = cpus_[static_cast<size_t>(cpu)].call->Step()) {
    Complete(cpu, std::move(*outcome));
  } else {
    Stopped(cpu);
  }
}

void World::Stopped(int cpu) {
  Cpu& c = cpus_[static_cast<size_t>(cpu)];
  if (!c.stale) c.tail_calls.Stopped(sandbox_->machine(cpu).ReadPc());
}

void World::Complete(int cpu, Outcome outcome) {
  Cpu& c = cpus_[static_cast<size_t>(cpu)];
  const std::string operation = fmt::format("cpu {} ending a call of {}", cpu, SlotName(c.program));
  if (c.stale) {
    // A trap on the entry itself: a BRK stops with the pc on it, and so
    // does a fetch from a released (unmapped) pack.
    const uint64_t pc = sandbox_->machine(cpu).ReadPc();
    if (outcome.end != EndKind::kTrap || pc != c.stale_entry) {
      Report(Invariant::kStaleEntryTraps, cpu, pc, -1, operation,
             fmt::format("calling the freed entry 0x{:x} ended with {} at pc 0x{:x}", c.stale_entry,
                         outcome.Summary(), pc));
    }
  } else {
    c.tail_calls.Ended();
    CompareCall(cpu, outcome, operation);
  }
  static_cast<Call&>(c) = Call{};
  // The end of an interrupt's call is no quiescent point: the call it
  // interrupted goes on.
  if (c.interrupted) {
    ReturnFromInterrupt(cpu);
    return;
  }
  Quiescent(cpu);
}

void World::CountNotComparable(std::string_view reason) {
  ++calls_not_comparable_;
  ++not_comparable_reasons_[std::string(reason)];
}

void World::CompareCall(int cpu, const Outcome& jit_outcome, const std::string& operation) {
  Cpu& c = cpus_[static_cast<size_t>(cpu)];
  if (conventions_error_) {
    CountNotComparable(kFramesUnreadable);
    return;
  }
  auto slots = ReplaySlots(c.tail_calls.reads());
  if (!slots) {
    CountNotComparable(kSlotReadTwice);
    return;
  }
  // With per-function frames the JIT's stack is compared through the
  // window of the interpreter's path, known only once the run to compare
  // with is chosen; a replay resets the stack, so all of it is kept first.
  Outcome outcome = jit_outcome;
  const StackGeometry geometry = GeometryOf(cpu, c);
  std::optional<MemorySnapshot> jit_stack;
  if (geometry.per_function()) {
    StackWindow whole;
    whole.low = geometry.EntrySp(cpu) - GuestEnvironment::kResetStackBytes;
    whole.keep.assign(GuestEnvironment::kResetStackBytes, 1);
    jit_stack = sandbox_->env().Capture(whole);
  }
  // The interpreter's first run read the prog_array as the call started;
  // where a tail call read another value, run it again with that value.
  std::vector<std::string> followed;
  for (auto [slot, value] : *slots) {
    if (value == c.array_at_start[slot]) continue;
    followed.push_back(fmt::format("prog_array[{}] = {}", slot, SlotValueName(value)));
  }
  std::optional<Outcome> replayed;
  if (!followed.empty()) {
    replayed = Replay(cpu, *slots);
    ++calls_replayed_;
  }
  const Outcome& expected = replayed ? *replayed : *c.expected;
  if (jit_stack) outcome.memory = Through(*jit_stack, expected.memory.window);
  const auto inlined = generator_->InlinedHelpers();
  const Verdict verdict = inlined.empty() ? Compare(expected, outcome)
                                          : CompareHelperWithInlined(expected, outcome, "interp", "jit", inlined);
  // What a load of memory that changed during the call saw depends on
  // when it ran; only tail calls' reads are followed.
  if (verdict.kind == Verdict::Kind::kDivergence && c.array_changed && MayHaveLoadedTheArray(cpu, *slots)) {
    CountNotComparable(kArrayLoadedWhileUpdated);
  } else if (verdict.kind == Verdict::Kind::kDivergence && c.images_changed &&
             ReplayReads(cpu, *slots, {"packs", "oversize", "program objects"}) && !ReplayReads(cpu, *slots, {})) {
    CountNotComparable(kImagesLoadedWhileUpdated);
  } else if (const auto reason = verdict.kind == Verdict::Kind::kDivergence
                                      ? DivergenceNotComparable(cpu, expected, outcome, *slots)
                                      : std::nullopt) {
    CountNotComparable(*reason);
  } else if (verdict.kind == Verdict::Kind::kDivergence) {
    std::string detail = verdict.Describe();
    if (!followed.empty()) {
      detail += fmt::format(" (the interpreter read {}, as the call's tail calls did)", fmt::join(followed, ", "));
    }
    Report(Invariant::kOutcome, cpu, 0, c.program, operation, std::move(detail));
  } else if (verdict.kind == Verdict::Kind::kMatch) {
    ++calls_compared_;
  } else {
    CountNotComparable(NotComparableReason(expected, outcome, verdict));
  }
}

std::optional<std::string_view> World::DivergenceNotComparable(int cpu, const Outcome& expected, const Outcome& outcome,
                                                                const std::map<uint32_t, uint64_t>& slots) {
  if (conventions_.tail_call_restores_registers) {
    // The programs either side entered by a tail call.
    for (const auto* taken : {&expected.tail_calls, &outcome.tail_calls}) {
      for (uint32_t id : *taken) {
        const Program* p = id < programs_.size() ? programs_[id].get() : nullptr;
        if (p != nullptr && p->read_at_tail_call_entry) return kTailCallTargetReadsRestoredRegister;
      }
    }
  }
  // With no region marked engine-private, the interpreter's run reads
  // engine-private bytes only on the stack.
  if (expected.read_engine_private && ReplayReads(cpu, slots, {})) return kPrivateStackRead;
  return std::nullopt;
}

std::string World::SlotValueName(uint64_t value) const {
  if (value == 0) return "empty";
  for (uint64_t id = 0; id < kMaxPrograms; ++id) {
    if (guest::ProgObjectAddress(id) == value) return fmt::format("program {}", id);
  }
  return fmt::format("0x{:x}", value);
}

uint64_t World::ArraySlot(uint32_t slot) const {
  uint64_t value = 0;
  if (const uint8_t* p = sandbox_->env().memory().HostPointer(SlotAddress(slot), 8)) std::memcpy(&value, p, 8);
  return value;
}

Outcome World::Replay(int cpu, const std::map<uint32_t, uint64_t>& slots) {
  const Cpu& c = cpus_[static_cast<size_t>(cpu)];
  GuestEnvironment& env = sandbox_->env();
  std::array<uint64_t, kTailEntries> now{};
  for (uint32_t slot = 0; slot < kTailEntries; ++slot) now[slot] = ArraySlot(slot);
  for (auto [slot, value] : slots) env.memory().Store<uint64_t>(SlotAddress(slot), value);
  // The JIT'd call's memory is captured; its stack is this run's now.
  env.ResetCpu(cpu, c.stack_top);
  const StackGeometry geometry = GeometryOf(cpu, c);
  InterpreterOptions options{options_.call_budget, cpu, geometry, nullptr};
  Outcome expected = Interpreter(env, world_case_, options).RunProgram(static_cast<size_t>(c.program), c.args);
  expected.memory = geometry.per_function() ? env.Capture(expected.memory.window) : env.Capture(cpu, geometry);
  for (uint32_t slot = 0; slot < kTailEntries; ++slot) env.memory().Store<uint64_t>(SlotAddress(slot), now[slot]);
  return expected;
}

bool World::ReplayReads(int cpu, const std::map<uint32_t, uint64_t>& slots,
                        std::initializer_list<std::string_view> names) {
  GuestMemory& memory = sandbox_->env().memory();
  std::vector<std::pair<Region*, bool>> saved;
  for (const auto& region : memory.regions()) {
    saved.emplace_back(region.get(), region->engine_private);
    region->engine_private = std::find(names.begin(), names.end(), region->name) != names.end();
  }
  const bool read = Replay(cpu, slots).read_engine_private;
  for (auto [region, engine_private] : saved) region->engine_private = engine_private;
  return read;
}

bool World::MayHaveLoadedTheArray(int cpu, const std::map<uint32_t, uint64_t>& slots) {
  const Cpu& c = cpus_[static_cast<size_t>(cpu)];
  if (c.tail_calls.reads().empty()) {
    // Exactly: the replay's loads and helpers touched the map objects
    // (read_engine_private also counts stack bytes outside the frames,
    // hence the run with no region marked).
    return ReplayReads(cpu, slots, {"map objects"}) && !ReplayReads(cpu, slots, {});
  }
  // A tail call's own reads touch the map objects too; so: may any program
  // the call ran load from memory at all (a load not from the stack, or a
  // helper)?
  std::vector<int> ran = {c.program};
  for (const TailCallRead& read : c.tail_calls.reads()) {
    for (int id = 0; read.reached && id < kMaxPrograms; ++id) {
      if (guest::ProgObjectAddress(static_cast<uint64_t>(id)) == *read.reached) ran.push_back(id);
    }
  }
  for (int id : ran) {
    const Program* p = programs_[static_cast<size_t>(id)].get();
    if (p == nullptr) return true;
    for (const isa::Insn& insn : p->loaded.program.insns) {
      const bool load = isa::ClassOf(insn.opcode) == isa::kClassLdx && insn.src != isa::kFramePointer;
      const bool helper = (insn.opcode == isa::kOpCall && insn.src == 0) || insn.opcode == isa::kOpCallX;
      if (load || helper) return true;
    }
  }
  return false;
}

void World::Quiescent(int cpu) {
  for (size_t id = 0; id < programs_.size(); ++id) {
    Program* p = programs_[id].get();
    if (p == nullptr || p->state != Program::State::kPendingFree) continue;
    p->waiting.erase(cpu);
    if (p->waiting.empty()) DoFree(static_cast<int>(id), fmt::format("grace period end, free of program {}", id));
  }
}

bool World::CallStale(int cpu) {
  if (cpu < 0 || cpu >= cpus() || cpus_[static_cast<size_t>(cpu)].call != nullptr) return false;
  for (size_t id = 0; id < programs_.size(); ++id) {
    const Program* p = programs_[id].get();
    if (p == nullptr || p->state != Program::State::kFreed || p->entry == 0) continue;
    if (ProgramAt(p->entry, false) >= 0) continue;  // the slot holds another program now
    Cpu& c = cpus_[static_cast<size_t>(cpu)];
    operation_ = fmt::format("cpu {} calling the stale entry of program {}", cpu, id);
    c.stack_top = guest::StackTop(cpu);
    CallPrograms callable = Callable(GeometryOf(cpu, c));
    // The stale entry, as a program of its own for the call.
    c.call = std::make_unique<JitCall>(sandbox_->env(), sandbox_->machine(cpu), cpu, callable);
    c.stale = true;
    c.stale_entry = p->entry;
    c.program = static_cast<int>(id);
    sandbox_->env().ResetCpu(cpu);
    c.call->set_observer(this);
    c.call->StartAt(p->entry, {0, 0, 0, 0, 0}, 1000);
    if (auto outcome = c.call->Step()) Complete(cpu, std::move(*outcome));
    return true;
  }
  return false;
}

void World::SetTailTarget(int entry, int id) {
  if (entry < 0 || entry >= kTailEntries) return;
  if (id >= 0) {
    const Program* p = id < kMaxPrograms ? programs_[static_cast<size_t>(id)].get() : nullptr;
    if (p == nullptr || p->state != Program::State::kLive || id < kTailEntries) return;
  }
  tail_targets_[static_cast<size_t>(entry)] = id;
  const uint64_t value = id < 0 ? 0 : guest::ProgObjectAddress(static_cast<uint64_t>(id));
  if (value != ArraySlot(static_cast<uint32_t>(entry))) {
    ForEachCall([](int, Call& call) { call.array_changed |= !call.stale; });
  }
  world_case_.maps.front().programs.assign(tail_targets_.begin(), tail_targets_.end());
  sandbox_->env().memory().Store<uint64_t>(SlotAddress(static_cast<uint32_t>(entry)), value);
}

void World::Synchronize() {
  for (int cpu = 0; cpu < cpus(); ++cpu) {
    // An interrupt's call, then the one it interrupted.
    for (int calls = 0; calls < 2 && busy(cpu); ++calls) RunToCompletion(cpu);
  }
  operation_ = "synchronize";
  CheckAccounting(operation_);
}

void World::FreeAll() {
  Synchronize();
  for (int id = kTailEntries; id < kMaxPrograms; ++id) Free(id);
  operation_ = "free of every program";
  CheckAccounting(operation_);
}

std::vector<int> World::WaitingFor(int id) const {
  if (id < 0 || id >= kMaxPrograms || programs_[static_cast<size_t>(id)] == nullptr) return {};
  const auto& waiting = programs_[static_cast<size_t>(id)]->waiting;
  return {waiting.begin(), waiting.end()};
}

const std::vector<isa::Insn>* World::Source(int id) const {
  if (id < 0 || id >= kMaxPrograms || programs_[static_cast<size_t>(id)] == nullptr) return nullptr;
  return &programs_[static_cast<size_t>(id)]->source;
}

const jit::CompiledProgram* World::Compiled(int id) const {
  if (id < 0 || id >= kMaxPrograms) return nullptr;
  const Program* p = programs_[static_cast<size_t>(id)].get();
  return p != nullptr && p->state != Program::State::kFreed ? &p->compiled : nullptr;
}

std::vector<World::CpuInside> World::CpusInside(int id) const {
  std::vector<CpuInside> inside;
  const jit::CompiledProgram* compiled = Compiled(id);
  if (compiled == nullptr) return inside;
  const auto look = [&](int cpu, const Call& call, uint64_t pc) {
    if (call.call == nullptr || call.stale) return;
    const jit::CompiledSubprogram* sub = compiled->SubprogramAt(pc);
    if (sub == nullptr) return;
    // Only a tail call moves a call into a program other than the one it
    // started in (the ownership invariant holds every other way out).
    const bool nested = cpus_[static_cast<size_t>(cpu)].interrupted.has_value();
    inside.push_back({cpu, call.program != id, sub != &compiled->subprograms.front(), nested});
  };
  for (int cpu = 0; cpu < cpus(); ++cpu) {
    const Cpu& c = cpus_[static_cast<size_t>(cpu)];
    look(cpu, c, sandbox_->machine(cpu).ReadPc());
    if (c.interrupted) look(cpu, c.interrupted->call, c.interrupted->pc);
  }
  return inside;
}

std::vector<int> World::LivePrograms() const {
  std::vector<int> live;
  for (size_t id = 0; id < programs_.size(); ++id) {
    if (programs_[id] != nullptr && programs_[id]->state == Program::State::kLive) live.push_back(static_cast<int>(id));
  }
  return live;
}

void World::OnWrite(uint64_t begin, uint64_t end, jit::TextOrigin origin) {
  const auto o = static_cast<size_t>(origin);
  if (origin == jit::TextOrigin::kFree || origin == jit::TextOrigin::kNewPack) {
    ++fills_[o];
  } else {
    ++copies_[o];
  }
  // No slot is written while a CPU runs the program in it (or will
  // resume it, from an interrupt).
  ForEachCall([&](int cpu, Call& call) {
    if (call.stale) return;
    const bool current = &call == &static_cast<Call&>(cpus_[static_cast<size_t>(cpu)]);
    for (int id : {call.program, static_cast<int>(call.call->current_program())}) {
      const Program* p = programs_[static_cast<size_t>(id)].get();
      if (p == nullptr) continue;
      for (auto [b, e] : p->slots) {
        if (!Overlaps(b, e, begin, end)) continue;
        const uint64_t pc = current ? sandbox_->machine(cpu).ReadPc() : cpus_[static_cast<size_t>(cpu)].interrupted->pc;
        Report(Invariant::kNoOverwriteInUse, cpu, pc, id, operation_,
               fmt::format("0x{:x}..0x{:x} written while cpu {} {} it", begin, end, cpu,
                           current ? "runs" : "is interrupted in"));
      }
    }
    call.images_changed = true;
  });
  // Every CPU may now hold stale instructions for the range.
  for (auto& cpu : cpus_) cpu.dirty.emplace_back(begin, end);
}

void World::OnFlush(uint64_t begin, uint64_t end, jit::TextOrigin origin) {
  ++flushes_[static_cast<size_t>(origin)];
  for (auto& cpu : cpus_) Subtract(cpu.dirty, begin, end);
}

void World::OnBlock(int cpu, uint64_t address, uint32_t size) {
  Cpu& c = cpus_[static_cast<size_t>(cpu)];
  const uint64_t end = address + size;
  for (auto [b, e] : c.dirty) {
    if (Overlaps(address, end, b, e)) {
      Report(Invariant::kIcacheDiscipline, cpu, address, ProgramAt(address, false), operation_,
             fmt::format("runs 0x{:x}..0x{:x}, written since the last cache maintenance", std::max(address, b),
                         std::min(end, e)));
      break;
    }
  }
  if (c.stale || c.call == nullptr) return;
  // Ownership: the block lies in the program the CPU runs.
  const int owner = ProgramAt(address, false);
  const auto running = static_cast<int>(c.call->current_program());
  if (owner < 0) {
    const int freed = ProgramAt(address, true);
    Report(Invariant::kOwnership, cpu, address, freed, operation_,
           freed >= 0 ? "fetches from a freed slot" : "fetches from no program's slot");
  } else if (owner != running && owner != c.program) {
    Report(Invariant::kOwnership, cpu, address, owner, operation_,
           fmt::format("fetches from program {} while running program {}", owner, running));
  }
  TrackTailCall(cpu, address, owner);
}

void World::TrackTailCall(int cpu, uint64_t address, int owner) {
  TailCallReads& reads = cpus_[static_cast<size_t>(cpu)].tail_calls;
  const Program* p = owner >= 0 ? programs_[static_cast<size_t>(owner)].get() : nullptr;
  if (p != nullptr && address == p->entry + conventions_.tail_call_entry_offset) {
    reads.BlockOutside(guest::ProgObjectAddress(static_cast<uint64_t>(owner)));  // a tail call landed here
    return;
  }
  const std::optional<uint64_t> site = p != nullptr ? TailCallSiteAt(*p, address) : std::nullopt;
  if (!site) {
    reads.BlockOutside(std::nullopt);
    return;
  }
  // The slot it reads: r2 the world's prog_array, r3 (as a u32) below its
  // max_entries; the tail call keeps both as they are until its load.
  const Machine& machine = sandbox_->machine(cpu);
  const uint64_t array = machine.ReadX(static_cast<int>(jit::Map(2)));
  const auto index = static_cast<uint32_t>(machine.ReadX(static_cast<int>(jit::Map(3))));
  if (array == guest::MapObjectAddress(0) && index < kTailEntries) {
    reads.BlockInside(*site, address, index, ArraySlot(index));
  } else {
    reads.BlockInside(*site, address, std::nullopt, 0);
  }
}

std::optional<uint64_t> World::TailCallSiteAt(const Program& p, uint64_t address) {
  const jit::CompiledSubprogram* sub = p.compiled.SubprogramAt(address);
  if (sub == nullptr) return std::nullopt;
  const uint32_t slot = sub->SlotAt(address);
  if (p.loaded.program.insns[slot].opcode != isa::kOpTailCall) return std::nullopt;
  const uint64_t begin = sub->rx_image + 4ull * sub->offsets[slot - sub->first_slot];
  const uint64_t end = sub->rx_image + 4ull * sub->offsets[slot + 1 - sub->first_slot];
  if (address < begin || address >= end) return std::nullopt;  // the prologue or the epilogue
  return begin;
}

}  // namespace bpfdiff::lifecycle
