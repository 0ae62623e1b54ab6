#include "fuzz/pack/script_mutator.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "fuzz/generator/fuzz_format.h"
#include "harness/lifecycle/world.h"

namespace bpfdiff::fuzz {
namespace {

using Op = PackOpKind;
using lifecycle::World;

// Draws from std::mt19937's raw outputs, which the standard specifies
// exactly (its distributions it does not): the same mutants everywhere.
// Every draw is its own statement, since the order in which a call's
// arguments are evaluated is unspecified.
class Draw {
 public:
  explicit Draw(unsigned seed) : engine_(seed) {}
  uint32_t Below(uint32_t n) { return n == 0 ? 0 : static_cast<uint32_t>(engine_() % n); }
  uint32_t Between(uint32_t low, uint32_t high) { return low + Below(high - low + 1); }  // inclusive
  uint8_t Byte() { return static_cast<uint8_t>(engine_()); }
  bool OneIn(uint32_t n) { return Below(n) == 0; }

 private:
  std::mt19937 engine_;
};

// Pad bytes (pack_script.h: (pad - 127) * 64 slots jumped over, about
// 8 bytes of code each): the size classes of the images.
uint8_t PadOfClass(Draw& draw) {
  switch (draw.Below(8)) {
    case 0:
    case 1:
    case 2: return 0;                                          // the program alone: a chunk or a few
    case 3: return static_cast<uint8_t>(draw.Between(128, 130));  // 0.5 to 1.5 KiB: a run of them fills a word
    case 4: return static_cast<uint8_t>(draw.Between(134, 136));  // around a page (3.5 to 4.8 KiB)
    case 5: return static_cast<uint8_t>(draw.Between(137, 143));  // a few pages, a bitmap word or two
    case 6: return static_cast<uint8_t>(draw.Between(144, 253));  // up to 64 KiB
    default: return draw.OneIn(8) ? static_cast<uint8_t>(draw.Between(254, 255)) : 0;  // larger than a pack
  }
}

// Record counts: a short program, one of some length, a long one (up to
// the format's 47), so that a CPU stopped a few dozen instructions in is
// still inside.
uint8_t RecordsOfClass(Draw& draw) {
  switch (draw.Below(3)) {
    case 0: return static_cast<uint8_t>(draw.Below(5));
    case 1: return static_cast<uint8_t>(draw.Between(5, 20));
    default: return static_cast<uint8_t>(draw.Between(21, kPackScriptMaxRecords - 1));
  }
}

PackOp MakeOp(Op kind, uint8_t a0 = 0, uint8_t a1 = 0, uint8_t a2 = 0) {
  PackOp op;
  op.kind = kind;
  op.args = {a0, a1, a2};
  const size_t arguments = PackOpArgumentCount(kind);
  for (size_t i = arguments; i < op.args.size(); ++i) op.args[i] = 0;
  return op;
}

void FillRecords(PackOp& op, Draw& draw) {
  op.records.resize(size_t{op.args[2]} % kPackScriptMaxRecords * kRecordSize);
  for (uint8_t& b : op.records) b = draw.Byte();
}

PackOp MakeLoad(Draw& draw, uint8_t subprograms, uint8_t pad, uint8_t records) {
  PackOp op = MakeOp(Op::kLoad, subprograms, pad, records);
  FillRecords(op, draw);
  return op;
}

// A step count byte in [low, high] (the format runs 1 + n instructions).
uint8_t Steps(Draw& draw, uint32_t low, uint32_t high) { return static_cast<uint8_t>(draw.Between(low, high)); }

uint8_t Cpu(Draw& draw, int cpus) { return static_cast<uint8_t>(draw.Below(static_cast<uint32_t>(cpus))); }

// After a scenario left a CPU inside a program: let it leave, or not.
void Settle(std::vector<PackOp>& ops, Draw& draw, uint8_t cpu) {
  switch (draw.Below(4)) {
    case 0: ops.push_back(MakeOp(Op::kSynchronize)); break;
    case 1: ops.push_back(MakeOp(Op::kFinish, cpu)); break;
    case 2:  // another CPU tries the freed entry meanwhile
      ops.push_back(MakeOp(Op::kCallStale, static_cast<uint8_t>(cpu + 1)));
      ops.push_back(MakeOp(Op::kSynchronize));
      break;
    default: break;  // still inside when the next operation comes
  }
}

// Loads of one size class until a bitmap word fills, frees of every other
// one (each free's rank counts the programs left), then a larger load that
// does not fit in the holes.
void Occupancy(std::vector<PackOp>& ops, Draw& draw) {
  const bool big = draw.OneIn(3);
  const uint8_t pad = big ? static_cast<uint8_t>(draw.Between(128, 130)) : 0;
  const uint8_t records = static_cast<uint8_t>(draw.Below(big ? 8 : 24));
  const uint32_t loads = big ? draw.Between(4, 10) : draw.Between(8, 24);
  for (uint32_t i = 0; i < loads; ++i) ops.push_back(MakeLoad(draw, 0, pad, records));
  if (draw.OneIn(4)) return;
  const uint8_t first = static_cast<uint8_t>(draw.Below(2));
  for (uint32_t i = 0; i < loads / 2; ++i) ops.push_back(MakeOp(Op::kFree, static_cast<uint8_t>(first + i)));
  const uint8_t larger = big ? static_cast<uint8_t>(pad + 1 + draw.Below(3)) : 0;
  ops.push_back(MakeLoad(draw, 0, larger, static_cast<uint8_t>(std::min<uint32_t>(records + 8, 47))));
}

// A pack filled with the largest images that still fit one (31 of about
// 63 KiB), then page-sized ones (about 4.2 KiB; some 21 fill the rest) up
// to its end: 52 loads, with the tail callers 56 of the world's 64 ids.
// 31 loads of 8,000 slots take a few tenths of a second, so the scenario
// is rare.
void FillAPack(std::vector<PackOp>& ops, Draw& draw) {
  for (int i = 0; i < 31; ++i) ops.push_back(MakeLoad(draw, 0, 253, static_cast<uint8_t>(draw.Below(4))));
  const uint32_t pages = draw.Between(16, 24);
  for (uint32_t i = 0; i < pages; ++i) ops.push_back(MakeLoad(draw, 0, 135, static_cast<uint8_t>(draw.Below(4))));
}

// A program of several subprograms, then reloads of it each made to fail
// at another of the kernel's failable service calls (its allocations, the
// pack's, the extra pass of each subprogram), and one of it by plain load:
// the error paths of a compile, one call at a time.
void ErrorPaths(std::vector<PackOp>& ops, Draw& draw) {
  ops.push_back(MakeLoad(draw, static_cast<uint8_t>(draw.Between(1, 4)), 0, RecordsOfClass(draw)));
  // Freeable programs are picked in id order and the load took the
  // lowest free id: "which" 0 is the program just loaded when it is the
  // first, as in a script that starts here; otherwise any of them.
  const uint8_t which = static_cast<uint8_t>(draw.OneIn(2) ? 0 : draw.Byte());
  const uint32_t reloads = draw.Between(1, 4);
  for (uint32_t i = 0; i < reloads; ++i) {
    ops.push_back(MakeOp(Op::kFailingReload, which, static_cast<uint8_t>(draw.Below(32))));
  }
}

void BigImage(std::vector<PackOp>& ops, Draw& draw, int cpus) {
  uint8_t pad = PadOfClass(draw);
  if (pad == 0) pad = static_cast<uint8_t>(draw.Between(134, 143));
  const auto subprograms = static_cast<uint8_t>(draw.Below(2));
  ops.push_back(MakeLoad(draw, subprograms, pad, RecordsOfClass(draw)));
  // Run it: the code deep in the image, past the jump over the padding.
  if (draw.OneIn(2)) ops.push_back(MakeOp(Op::kStep, Cpu(draw, cpus), static_cast<uint8_t>(World::kTailEntries), 255));
}

enum class Way : uint8_t { kDirect, kTailCall, kLocalCall, kInterrupt };

// A CPU in an interrupt over the program being freed, or running it in
// the interrupt: either way the free waits for the CPU until the
// interrupted call, not the interrupt's, returns. `which` names the
// program among the live ones (as a step does).
void Interrupted(std::vector<PackOp>& ops, Draw& draw, uint8_t cpu, uint8_t which) {
  const auto tail_caller = static_cast<uint8_t>(draw.Below(World::kTailEntries));
  if (draw.OneIn(2)) {
    // Stopped inside the program; an interrupt runs a tail caller (about
    // 30 instructions to its tail call) or the program again.
    ops.push_back(MakeOp(Op::kStep, cpu, which, Steps(draw, 1, 60)));
    ops.push_back(MakeOp(Op::kInterrupt, cpu, draw.OneIn(2) ? tail_caller : which, Steps(draw, 1, 40)));
  } else {
    // Another call interrupted, the program run in the interrupt.
    const auto other = static_cast<uint8_t>(draw.Below(World::kTailEntries + 3));  // a tail caller, or any
    ops.push_back(MakeOp(Op::kStep, cpu, other, Steps(draw, 1, 20)));
    ops.push_back(MakeOp(Op::kInterrupt, cpu, which, Steps(draw, 1, 60)));
  }
}

// A program loaded, a CPU stopped inside it by `way`, the program freed.
// The step counts are the windows where the CPU is inside (measured on
// this JIT: a tail caller lands in its target after about 31 to 40
// instructions); a count outside still makes a deferred free.
void CpuInside(std::vector<PackOp>& ops, Draw& draw, int cpus, Way way) {
  const uint8_t cpu = Cpu(draw, cpus);
  const auto rank = static_cast<uint8_t>(draw.OneIn(4) ? draw.Below(3) : 0);  // among the freeable programs
  const uint8_t subprograms = way == Way::kLocalCall ? static_cast<uint8_t>(draw.Between(1, 7)) : 0;
  const uint8_t pad = draw.OneIn(4) ? PadOfClass(draw) : 0;
  ops.push_back(MakeLoad(draw, subprograms, pad, static_cast<uint8_t>(draw.Between(20, kPackScriptMaxRecords - 1))));
  switch (way) {
    case Way::kDirect:
      ops.push_back(MakeOp(Op::kStep, cpu, static_cast<uint8_t>(World::kTailEntries + rank), Steps(draw, 1, 60)));
      break;
    case Way::kTailCall: {
      const auto entry = static_cast<uint8_t>(draw.Below(World::kTailEntries));
      ops.push_back(MakeOp(Op::kTailTarget, entry, rank));
      ops.push_back(MakeOp(Op::kTailCall, cpu, entry, Steps(draw, 28, 52)));
      break;
    }
    case Way::kLocalCall:
      ops.push_back(MakeOp(Op::kStep, cpu, static_cast<uint8_t>(World::kTailEntries + rank), Steps(draw, 12, 130)));
      break;
    case Way::kInterrupt:
      Interrupted(ops, draw, cpu, static_cast<uint8_t>(World::kTailEntries + rank));
      break;
  }
  ops.push_back(MakeOp(Op::kFree, rank));
  if (way == Way::kInterrupt && draw.OneIn(2)) {
    // The interrupt returns; the interrupted call goes on a little.
    ops.push_back(MakeOp(Op::kFinish, cpu));
    ops.push_back(MakeOp(Op::kStep, cpu, 0, Steps(draw, 1, 60)));
  }
  Settle(ops, draw, cpu);
}

// One operation of any kind, with arguments drawn the way the scenarios
// draw them half of the time.
PackOp RandomOp(Draw& draw, int cpus) {
  const auto kind = static_cast<Op>(draw.Below(kPackOpKinds));
  PackOp op = MakeOp(kind);
  for (size_t i = 0; i < PackOpArgumentCount(kind); ++i) op.args[i] = draw.Byte();
  const bool shaped = draw.OneIn(2);
  switch (kind) {
    case Op::kLoad:
      if (shaped) {
        op.args[1] = PadOfClass(draw);
        op.args[2] = RecordsOfClass(draw);
      }
      FillRecords(op, draw);
      break;
    case Op::kStep:
    case Op::kTailCall:
    case Op::kInterrupt:
      if (shaped) {
        op.args[0] = Cpu(draw, cpus);
        op.args[2] = static_cast<uint8_t>(draw.Between(1, 60));
      }
      break;
    case Op::kFree:
    case Op::kReload:
      if (shaped) op.args[0] = static_cast<uint8_t>(draw.Below(4));
      break;
    default: break;
  }
  return op;
}

void Scenario(std::vector<PackOp>& ops, Draw& draw, int cpus) {
  if (draw.OneIn(128)) {
    FillAPack(ops, draw);
    return;
  }
  if (draw.OneIn(8)) {
    ErrorPaths(ops, draw);
    return;
  }
  switch (draw.Below(8)) {
    case 0: Occupancy(ops, draw); break;
    case 1: BigImage(ops, draw, cpus); break;
    case 2: CpuInside(ops, draw, cpus, Way::kDirect); break;
    case 3: CpuInside(ops, draw, cpus, Way::kTailCall); break;
    case 4: CpuInside(ops, draw, cpus, Way::kLocalCall); break;
    case 5: CpuInside(ops, draw, cpus, Way::kInterrupt); break;
    default: {
      const uint32_t n = draw.Between(1, 4);
      for (uint32_t i = 0; i < n; ++i) ops.push_back(RandomOp(draw, cpus));
    }
  }
}

std::vector<PackOp>::iterator At(std::vector<PackOp>& ops, uint32_t i) {
  return ops.begin() + static_cast<std::ptrdiff_t>(i);
}

size_t EncodedSize(const PackOp& op) { return 1 + PackOpArgumentCount(op.kind) + op.records.size(); }

// Every load's records as many as its count says (the encoder takes fewer
// on the last operation only; the mutator keeps them whole everywhere).
void Normalize(PackScript& script, Draw& draw) {
  // A version 1 script means the same in the current version, which has
  // every operation of it and more.
  script.version = kPackScriptVersion;
  script.cpus = std::clamp(script.cpus, 1, 4);
  for (PackOp& op : script.ops) {
    for (size_t i = PackOpArgumentCount(op.kind); i < op.args.size(); ++i) op.args[i] = 0;
    if (op.kind != Op::kLoad) {
      op.records.clear();
      continue;
    }
    const size_t want = size_t{op.args[2]} % kPackScriptMaxRecords * kRecordSize;
    const size_t had = op.records.size();
    op.records.resize(want);
    for (size_t i = had; i < want; ++i) op.records[i] = draw.Byte();
  }
}

// The script's bytes, operations dropped from the end until they fit.
size_t Emit(PackScript& script, uint8_t* out, size_t max_size) {
  if (max_size < kPackScriptHeaderSize) return 0;
  size_t size = kPackScriptHeaderSize;
  size_t keep = 0;
  while (keep < script.ops.size() && size + EncodedSize(script.ops[keep]) <= max_size) size += EncodedSize(script.ops[keep++]);
  script.ops.resize(keep);
  auto bytes = EncodePackScript(script);
  if (!bytes) return 0;  // unreachable: Normalize made it encodable
  std::memcpy(out, bytes->data(), bytes->size());
  return bytes->size();
}

PackScript Generate(size_t max_size, Draw& draw) {
  PackScript script;
  script.cpus = static_cast<int>(draw.Between(1, 4));
  for (int i = 0; i < 8; ++i) script.seed |= uint64_t{draw.Byte()} << (8 * i);
  const uint32_t scenarios = draw.Between(1, 4);
  size_t size = kPackScriptHeaderSize;
  for (uint32_t s = 0; s < scenarios && size < max_size; ++s) {
    const size_t before = script.ops.size();
    Scenario(script.ops, draw, script.cpus);
    for (size_t i = before; i < script.ops.size(); ++i) size += EncodedSize(script.ops[i]);
  }
  if (draw.OneIn(2)) script.ops.push_back(MakeOp(Op::kSynchronize));
  return script;
}

void MutateOnce(PackScript& script, Draw& draw) {
  auto& ops = script.ops;
  const auto n = static_cast<uint32_t>(ops.size());
  switch (draw.Below(9)) {
    case 0: {  // insert an operation
      const uint32_t at = draw.Below(n + 1);
      ops.insert(At(ops, at), RandomOp(draw, script.cpus));
      break;
    }
    case 1: {  // delete one, or a few in a row
      if (n == 0) break;
      const uint32_t at = draw.Below(n);
      const uint32_t count = std::min(n - at, draw.OneIn(3) ? draw.Between(2, 4) : 1u);
      ops.erase(At(ops, at), At(ops, at + count));
      break;
    }
    case 2: {  // duplicate one, or a few in a row (runs of loads fill words)
      if (n == 0) break;
      const uint32_t at = draw.Below(n);
      const uint32_t count = std::min(n - at, draw.OneIn(2) ? draw.Between(2, 4) : 1u);
      const uint32_t copies = draw.OneIn(3) ? draw.Between(2, 8) : 1;
      const std::vector<PackOp> run(At(ops, at), At(ops, at + count));
      for (uint32_t c = 0; c < copies; ++c) ops.insert(At(ops, at + count), run.begin(), run.end());
      break;
    }
    case 3: {  // swap two, or move one elsewhere
      if (n < 2) break;
      const uint32_t i = draw.Below(n);
      const uint32_t j = draw.Below(n);
      if (draw.OneIn(2)) {
        std::swap(ops[i], ops[j]);
      } else {
        PackOp op = std::move(ops[i]);
        ops.erase(At(ops, i));
        ops.insert(At(ops, std::min<uint32_t>(j, n - 1)), std::move(op));
      }
      break;
    }
    case 4: {  // one argument
      if (n == 0) break;
      PackOp& op = ops[draw.Below(n)];
      const auto arguments = static_cast<uint32_t>(PackOpArgumentCount(op.kind));
      if (arguments == 0) break;
      const uint32_t a = draw.Below(arguments);
      if (op.kind == Op::kLoad && a == 1) {
        op.args[a] = PadOfClass(draw);
      } else if ((op.kind == Op::kStep || op.kind == Op::kTailCall || op.kind == Op::kInterrupt) && a == 2) {
        op.args[a] = static_cast<uint8_t>(draw.OneIn(4) ? draw.Byte() : draw.Between(1, 60));
      } else if (draw.OneIn(2)) {
        op.args[a] = static_cast<uint8_t>(op.args[a] + (draw.OneIn(2) ? 1 : 255));
      } else {
        op.args[a] = draw.Byte();
      }
      break;
    }
    case 5: {  // a scenario, somewhere
      std::vector<PackOp> scenario;
      Scenario(scenario, draw, script.cpus);
      const uint32_t at = draw.Below(n + 1);
      ops.insert(At(ops, at), scenario.begin(), scenario.end());
      break;
    }
    case 6: {  // a load's program
      std::vector<PackOp*> loads;
      for (PackOp& op : ops) {
        if (op.kind == Op::kLoad) loads.push_back(&op);
      }
      if (loads.empty()) break;
      PackOp& load = *loads[draw.Below(static_cast<uint32_t>(loads.size()))];
      if (load.records.empty() || draw.OneIn(3)) {
        load.args[2] = RecordsOfClass(draw);
        FillRecords(load, draw);
      } else {
        load.records[draw.Below(static_cast<uint32_t>(load.records.size()))] = draw.Byte();
      }
      break;
    }
    case 7:  // the CPUs, or the pack seed
      if (draw.OneIn(2)) {
        script.cpus = static_cast<int>(draw.Between(1, 4));
      } else {
        script.seed ^= uint64_t{1} << draw.Below(64);
      }
      break;
    default: {  // a synchronize or a CPU's run to its end, somewhere
      const uint32_t at = draw.Below(n + 1);
      ops.insert(At(ops, at), draw.OneIn(2) ? MakeOp(Op::kSynchronize) : MakeOp(Op::kFinish, draw.Byte()));
      break;
    }
  }
}

}  // namespace

std::vector<uint8_t> GeneratePackScript(size_t max_size, unsigned seed) {
  Draw draw(seed);
  PackScript script = Generate(max_size, draw);
  Normalize(script, draw);
  std::vector<uint8_t> out(std::max(max_size, kPackScriptHeaderSize));
  out.resize(Emit(script, out.data(), max_size));
  return out;
}

size_t MutatePackScript(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  Draw draw(seed);
  std::optional<PackScript> script = DecodePackScript({data, size});
  // Not a script, or a script of no operation: start from a generated one.
  if (!script || script->ops.empty()) {
    script = Generate(max_size, draw);
  } else {
    const uint32_t mutations = draw.Between(1, 3);
    for (uint32_t m = 0; m < mutations; ++m) MutateOnce(*script, draw);
  }
  Normalize(*script, draw);
  std::vector<uint8_t> out(std::max(max_size, kPackScriptHeaderSize));
  const size_t written = Emit(*script, out.data(), max_size);
  std::memcpy(data, out.data(), written);
  return written;
}

size_t CrossOverPackScripts(const uint8_t* first, size_t first_size, const uint8_t* second, size_t second_size,
                            uint8_t* out, size_t max_out, unsigned seed) {
  Draw draw(seed);
  std::optional<PackScript> a = DecodePackScript({first, first_size});
  const std::optional<PackScript> b = DecodePackScript({second, second_size});
  if (!a) a = Generate(max_out, draw);
  if (b) {
    const uint32_t keep = draw.Below(static_cast<uint32_t>(a->ops.size() + 1));
    const uint32_t from = draw.Below(static_cast<uint32_t>(b->ops.size() + 1));
    a->ops.resize(keep);
    a->ops.insert(a->ops.end(), b->ops.begin() + static_cast<std::ptrdiff_t>(from), b->ops.end());
  }
  Normalize(*a, draw);
  return Emit(*a, out, max_out);
}

}  // namespace bpfdiff::fuzz
