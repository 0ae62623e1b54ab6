#include "harness/test_bpf/export.h"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "harness/test_bpf/entry_writer.h"
#include "harness/test_bpf/tail_call_suite.h"
#include "isa/opcode_table.h"
#include "oracle/helpers.h"
#include "oracle/register_use.h"

namespace bpfdiff {
namespace {

using isa::Insn;
using isa::Shape;
using kernelsrc::TestBpfMarkers;

// What a test_bpf program may not read before it writes: bpf_prog_run()
// passes the context alone. A JIT's r0 and r6..r9 are what the CPU held,
// and its r2 the program's instructions (__bpf_prog_run() hands them to
// bpf_func); the kernel's interpreter zeroes them.
constexpr uint16_t kUndefinedAtTestEntry =
    RegisterBit(0) | RegisterBit(2) | RegisterBit(3) | RegisterBit(4) | RegisterBit(5) | RegisterBit(6) |
    RegisterBit(7) | RegisterBit(8) | RegisterBit(9);
constexpr std::string_view kAtTestEntry = "at the entry of a test_bpf program (bpf_prog_run() passes r1 alone)";

bool IsTailCall(const Insn& insn) {
  return insn.opcode == isa::kOpTailCall || (insn.opcode == isa::kOpCall && insn.src == 0 && insn.imm == kHelperTailCall);
}

Shape ShapeAt(const isa::Program& program, size_t pc) { return isa::FormById(program.slots[pc].form).shape; }

// BPF_ST_MEM(BPF_W, R1, off, word) for each word of `memory` (bytes for a
// tail), so that test_bpf's kmalloc()ed data holds the reproducer's input.
std::vector<Insn> FillMemory(const std::vector<uint8_t>& memory) {
  std::vector<Insn> stores;
  for (size_t off = 0; off < memory.size();) {
    Insn store;
    store.dst = 1;
    store.offset = static_cast<int16_t>(off);
    if (off + 4 <= memory.size()) {
      uint32_t word = 0;
      for (size_t k = 0; k < 4; ++k) word |= static_cast<uint32_t>(memory[off + k]) << (8 * k);
      store.opcode = isa::kClassSt | isa::kModeMem | isa::kSizeW;
      store.imm = static_cast<int32_t>(word);
      off += 4;
    } else {
      store.opcode = isa::kClassSt | isa::kModeMem | isa::kSizeB;
      store.imm = memory[off];
      off += 1;
    }
    stores.push_back(store);
  }
  return stores;
}

Result<int64_t> ResultOf(const InterpretCase& interpret, const CaseSource& source, std::string_view what) {
  auto outcome = interpret(source);
  if (!outcome) return Fail("{}: {}", what, outcome.message());
  if (outcome->end != EndKind::kExit) return Fail("{} does not return: {}", what, outcome->Summary());
  return static_cast<int64_t>(outcome->r0);
}

// A shift by an immediate of the operand's width or more: the verifier
// refuses it ("invalid shift"), and the kernel's interpreter, which test_bpf
// falls back to, shifts in C, where such a shift is undefined.
Status CheckShifts(const isa::Program& program, size_t index) {
  for (size_t pc = 0; pc < program.size(); ++pc) {
    if (program.slots[pc].second_slot) continue;
    const Insn& insn = program.insns[pc];
    const uint8_t op = isa::OpOf(insn.opcode), cls = isa::ClassOf(insn.opcode);
    const bool shift = op == isa::kAluLsh || op == isa::kAluRsh || op == isa::kAluArsh;
    if (!shift || (cls != isa::kClassAlu && cls != isa::kClassAlu64) || isa::SourceOf(insn.opcode) != isa::kSrcK) {
      continue;
    }
    const int32_t width = cls == isa::kClassAlu64 ? 64 : 32;
    if (insn.imm < 0 || insn.imm >= width) {
      return Fail("program {}, instruction {} shifts a {}-bit value by {}: the verifier refuses it, and the "
                  "kernel's interpreter (test_bpf's fallback) shifts in C, where it is undefined",
                  index, pc, width, insn.imm);
    }
  }
  return {};
}

bool UsesStack(const isa::Program& program) {
  for (size_t pc = 0; pc < program.size(); ++pc) {
    if (program.slots[pc].second_slot) continue;
    const RegisterUse use = UseOf(program.insns[pc], isa::FormById(program.slots[pc].form));
    if ((use.reads & RegisterBit(10)) != 0) return true;
  }
  return false;
}

// The slot of the mov that gives the tail call at `pc` its index: the last
// write of r3 before it in its block, which must be a mov of a constant.
Result<size_t> IndexMove(const isa::Program& program, size_t index, size_t pc) {
  std::set<size_t> targets;
  for (size_t k = 0; k < program.size(); ++k) {
    if (!program.slots[k].second_slot && isa::IsJumpShape(ShapeAt(program, k))) {
      targets.insert(static_cast<size_t>(isa::BranchTarget(program.insns[k], ShapeAt(program, k), k)));
    }
  }
  const std::string where = fmt::format("program {}, the tail call at instruction {}", index, pc);
  for (size_t j = pc; j-- > 0;) {
    if (program.slots[j].second_slot) continue;
    const Insn& insn = program.insns[j];
    const isa::Form& form = isa::FormById(program.slots[j].form);
    const RegisterUse use = UseOf(insn, form);
    if ((use.writes & RegisterBit(3)) != 0) {
      if (form.shape == Shape::kAluImm && isa::OpOf(insn.opcode) == isa::kAluMov && insn.offset == 0) {
        return j;
      }
      return Fail("{}: its index is set by instruction {} ({}), not a mov of a constant; test_bpf's tail calls "
                  "name their target by a constant (TAIL_CALL())",
                  where, j, form.name);
    }
    if (use.clobbers_args || isa::IsJumpShape(form.shape) || form.shape == Shape::kExit || targets.count(j) != 0) {
      break;
    }
  }
  return Fail("{}: its index is not a constant moved into r3 in the same block; test_bpf's tail calls name their "
              "target by a constant (TAIL_CALL())",
              where);
}

std::string Comment(const TestBpfExportOptions& options) {
  std::string text = "\t/*\n";
  std::string_view rest = options.comment;
  while (!rest.empty()) {
    const size_t end = std::min(rest.find('\n'), rest.size());
    std::string line(rest.substr(0, end));
    for (size_t at = line.find("*/"); at != std::string::npos; at = line.find("*/")) line.replace(at, 2, "* /");
    text += line.empty() ? "\t *\n" : fmt::format("\t * {}\n", line);
    rest.remove_prefix(std::min(end + 1, rest.size()));
  }
  return text + "\t */\n";
}

std::string Instructions(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += fmt::format("\t\t\t{},\n", line);
  return text;
}

// Between a fill helper and its entry: what goes before tests[] and what
// goes in it (tests/kernelsrc/test_bpf_export/splice.cmake splits there).
constexpr std::string_view kEntryFollows = "/* The entry, for tests[] */\n";

constexpr std::string_view kStackNote =
    "\t\t/* MAX_BPF_STACK, as the reproducer ran */\n\t\t.stack_depth = 512,\n";

// The function that builds a long program: its instructions as runs of
// one repeated (`runs`, from TestBpfRuns), copied out as the file's own
// fill helpers do.
std::string FillHelper(const std::string& name, const std::vector<std::string>& runs, size_t length) {
  std::string text = fmt::format(
      "/* bpfdiff's export: a program of {} instructions, as runs of one instruction */\n"
      "static int {}(struct bpf_test *self)\n{{\n"
      "\tstatic const struct {{\n\t\tstruct bpf_insn insn;\n\t\tunsigned int count;\n\t}} runs[] = {{\n",
      length, name);
  for (const auto& run : runs) text += fmt::format("\t\t{},\n", run);
  return text +
         "\t};\n"
         "\tstruct bpf_insn *insns;\n"
         "\tunsigned int len = 0, i, k;\n\n"
         "\tfor (i = 0; i < ARRAY_SIZE(runs); i++)\n"
         "\t\tlen += runs[i].count;\n"
         "\tinsns = kmalloc_array(len, sizeof(*insns), GFP_KERNEL);\n"
         "\tif (!insns)\n"
         "\t\treturn -ENOMEM;\n"
         "\tfor (i = 0, len = 0; i < ARRAY_SIZE(runs); i++)\n"
         "\t\tfor (k = 0; k < runs[i].count; k++)\n"
         "\t\t\tinsns[len++] = runs[i].insn;\n"
         "\tself->u.ptr.insns = insns;\n"
         "\tself->u.ptr.len = len;\n"
         "\treturn 0;\n"
         "}\n";
}

// bpf_fill_bpfdiff_<name>, with what C does not take in a name replaced.
std::string FillHelperName(std::string_view name) {
  std::string out = "bpf_fill_bpfdiff_";
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) != 0 ? c : '_';
  return out;
}

Status CheckLength(size_t length, const TestBpfMarkers& markers, std::string_view what) {
  if (length > static_cast<size_t>(markers.max_insns)) {
    return Fail("{} needs {} instructions, more than test_bpf's MAX_INSNS ({})", what, length, markers.max_insns);
  }
  return {};
}

Result<TestBpfExport> ExportCase(const CaseSource& source, const InterpretCase& interpret,
                                 const TestBpfMarkers& markers, const TestBpfExportOptions& options) {
  if (!source.maps.empty()) {
    return Fail("test_bpf.c makes no maps, and the case declares {} (the first, fd {})", source.maps.size(),
                source.maps.front().fd);
  }
  if (source.programs.size() > 1) {
    return Fail("the case has {} programs and no tail call: a tests[] entry is one program", source.programs.size());
  }
  auto program = isa::MakeProgram(source.programs.front(), source.maps);
  if (!program) return program.error();
  if (auto read = FindReadOfUndefinedAtEntry(*program, 0, kUndefinedAtTestEntry, kAtTestEntry)) return Fail("{}", *read);
  if (auto status = CheckShifts(*program, 0); !status) return status.error();
  if (source.memory.size() > static_cast<size_t>(INT16_MAX)) {
    return Fail("its input memory is {} bytes: stores at the start fill at most {}", source.memory.size(), INT16_MAX);
  }
  std::vector<Insn> insns = FillMemory(source.memory);
  insns.insert(insns.end(), source.programs.front().begin(), source.programs.front().end());
  // Longer than an entry's array: a fill helper builds it, as the file's
  // large cases are built.
  const bool fill = insns.size() > static_cast<size_t>(markers.max_insns);
  auto lines = fill ? TestBpfRuns(insns, markers) : TestBpfMacros(insns, markers);
  if (!lines) return lines.error();

  CaseSource entry;
  entry.programs = {insns};
  entry.options = source.options;
  entry.options.null_context = source.memory.empty();
  entry.memory.assign(source.memory.size(), 0);  // kmalloc()ed; the stores fill it
  auto result = ResultOf(interpret, entry, "the entry");
  if (!result) return result.error();
  auto original = ResultOf(interpret, source, "the reproducer");
  if (!original) return original.error();
  if (static_cast<uint32_t>(*result) != static_cast<uint32_t>(*original)) {
    return Fail("as test_bpf runs it the entry returns {:#x}, where the reproducer returns {:#x}: its result "
                "depends on what test_bpf does not give it",
                static_cast<uint32_t>(*result), static_cast<uint32_t>(*original));
  }

  TestBpfExport out;
  out.suite = kernelsrc::TestBpfSuite::kCases;
  out.names = {fmt::format("bpfdiff: {}", options.name)};
  out.results = {static_cast<uint32_t>(*result)};
  const std::string flags = source.memory.empty() ? "INTERNAL | FLAG_NO_DATA" : "INTERNAL | FLAG_LARGE_MEM";
  const std::string helper = fill ? FillHelperName(options.name) : std::string();
  out.text = fmt::format("/* For tests[] of lib/test_bpf.c, exported by bpfdiff{} */\n",
                         fill ? " (its fill helper first, to go before tests[])" : "");
  if (fill) {
    out.text += FillHelper(helper, *lines, insns.size());
    out.text += kEntryFollows;
  }
  out.text += Comment(options) + fmt::format("\t{{\n\t\t\"{}\",\n", out.names.front());
  out.text += fill ? std::string("\t\t{ },\n") : fmt::format("\t\t.u.insns_int = {{\n{}\t\t}},\n", Instructions(*lines));
  out.text += fmt::format("\t\t{},\n\t\t{{ }},\n\t\t{{ {{ {}, {} }} }},\n", flags, source.memory.size(),
                          TestBpfImmediate(static_cast<int32_t>(*result)));
  if (fill) out.text += fmt::format("\t\t.fill_helper = {},\n", helper);
  if (UsesStack(*program)) out.text += kStackNote;
  out.text += "\t},\n";
  return out;
}

// Program `index` of a tail-call case with its tail calls written as
// test_bpf's: the array's lddw and each index's mov hold TAIL_CALL_MARKER.
Result<std::vector<Insn>> WithMarkers(const isa::Program& program, size_t index, const isa::MapSpec& array,
                                      const TestBpfMarkers& markers) {
  std::vector<Insn> insns = program.insns;
  for (size_t pc = 0; pc < program.size(); ++pc) {
    if (program.slots[pc].second_slot) continue;
    const Insn& insn = program.insns[pc];
    const Shape shape = ShapeAt(program, pc);
    if (shape == Shape::kLddwMapFd) {
      insns[pc].src = 0;
      insns[pc].imm = markers.tail_call_marker;
      insns[pc + 1].imm = 0;
    } else if (IsTailCall(insn)) {
      insns[pc] = Insn{.opcode = isa::kOpTailCall};
      auto move = IndexMove(program, index, pc);
      if (!move) return move.error();
      // The index is a u32 (a mov64's sign extension does not reach it).
      const auto slot = static_cast<uint32_t>(program.insns[*move].imm);
      int16_t offset = markers.tail_call_invalid;
      if (slot < array.max_entries) {
        const int32_t target = slot < array.programs.size() ? array.programs[slot] : -1;
        offset = target < 0 ? markers.tail_call_null : static_cast<int16_t>(target - static_cast<int32_t>(index));
      }
      insns[*move] = Insn{.opcode = isa::kClassAlu | isa::kAluMov | isa::kSrcK,
                          .dst = 3,
                          .offset = offset,
                          .imm = markers.tail_call_marker};
    }
  }
  return insns;
}

Result<TestBpfExport> ExportTailCalls(const CaseSource& source, const InterpretCase& interpret,
                                      const TestBpfMarkers& markers, const TestBpfExportOptions& options) {
  if (!source.memory.empty()) {
    return Fail("a tail-call test runs with no input memory (r1 NULL), and the case has {} bytes",
                source.memory.size());
  }
  if (source.maps.size() != 1 || source.maps.front().type != isa::MapType::kProgArray) {
    return Fail("a tail-call case must have one map, its program array: test_bpf's tail calls go through the "
                "one array of all its tests");
  }
  const isa::MapSpec& array = source.maps.front();
  std::vector<kernelsrc::TestBpfTailCall> tests;
  std::vector<std::vector<std::string>> lines;
  std::vector<bool> uses_stack;
  for (size_t q = 0; q < source.programs.size(); ++q) {
    auto program = isa::MakeProgram(source.programs[q], source.maps);
    if (!program) return Fail("program {}: {}", q, program.message());
    // Each program is a test of its own too, and may be entered by a tail call.
    if (auto read = FindReadOfUndefinedAtEntry(*program, q, kUndefinedAtTestEntry, kAtTestEntry)) {
      return Fail("{}", *read);
    }
    if (auto read = FindReadAtTailCallEntry(*program, q)) return Fail("{}", *read);
    if (auto status = CheckShifts(*program, q); !status) return status.error();
    auto insns = WithMarkers(*program, q, array, markers);
    if (!insns) return insns.error();
    if (auto status = CheckLength(insns->size(), markers, fmt::format("program {}", q)); !status) {
      return status.error();
    }
    auto written = TestBpfMacros(*insns, markers);
    if (!written) return Fail("program {}: {}", q, written.message());
    kernelsrc::TestBpfTailCall test;
    test.index = static_cast<int>(q);
    test.name = q == 0 ? fmt::format("bpfdiff: {}", options.name) : fmt::format("bpfdiff: {}, program {}", options.name, q);
    test.insns = std::move(insns).value();
    test.has_tail_call = std::any_of(test.insns.begin(), test.insns.end(), IsTailCall);
    tests.push_back(std::move(test));
    lines.push_back(std::move(written).value());
    uses_stack.push_back(UsesStack(*program));
  }

  const TailCallSuite suite(tests, markers);
  TestBpfExport out;
  out.suite = kernelsrc::TestBpfSuite::kTailCalls;
  for (int q = 0; q < suite.Count(); ++q) {
    if (!suite.Relocated(q)) return Fail("program {}: {}", q, suite.Relocated(q).message());
    auto result = ResultOf(interpret, suite.CaseOf(q, false), fmt::format("program {} as its own test", q));
    if (!result) return result.error();
    out.names.push_back(tests[static_cast<size_t>(q)].name);
    out.results.push_back(static_cast<int32_t>(*result));
  }
  auto original = ResultOf(interpret, source, "the reproducer");
  if (!original) return original.error();
  if (static_cast<int32_t>(*original) != out.results.front()) {
    return Fail("as test_tail_calls() runs it the entry returns {:#x}, where the reproducer returns {:#x}: its "
                "result depends on what test_bpf does not give it",
                static_cast<uint32_t>(out.results.front()), static_cast<uint32_t>(*original));
  }
  out.text = "/* For tail_call_tests[] of lib/test_bpf.c, exported by bpfdiff */\n" + Comment(options);
  for (size_t q = 0; q < tests.size(); ++q) {
    out.text += fmt::format("\t{{\n\t\t\"{}\",\n\t\t.insns = {{\n{}\t\t}},\n\t\t.result = {},\n", out.names[q],
                            Instructions(lines[q]), TestBpfImmediate(static_cast<int32_t>(out.results[q])));
    if (uses_stack[q]) out.text += kStackNote;
    if (tests[q].has_tail_call && markers.has_tail_call_field) out.text += "\t\t.has_tail_call = true,\n";
    out.text += "\t},\n";
  }
  return out;
}

}  // namespace

Result<TestBpfExport> ExportAsTestBpf(const CaseSource& source, const InterpretCase& interpret,
                                      const TestBpfMarkers& markers, const TestBpfExportOptions& options) {
  if (source.programs.empty()) return Fail("the case has no program");
  if (std::any_of(source.exception_callbacks.begin(), source.exception_callbacks.end(),
                  [](uint32_t slot) { return slot != 0; })) {
    return Fail("it names an exception callback: test_bpf.c's cases call no kernel function (bpf_throw)");
  }
  if (!markers.cpu_v4) {
    for (size_t p = 0; p < source.programs.size(); ++p) {
      for (size_t i = 0; i < source.programs[p].size(); ++i) {
        const auto form = isa::Classify(source.programs[p][i]);
        if (form && isa::FormById(*form).cpu == isa::CpuVersion::kV4) {
          return Fail("program {}, instruction {} is \"{}\", a cpu v4 instruction: the tree's test_bpf.c predates "
                      "them (its filter.h writes none, and its verifier rejects them)",
                      p, i, isa::FormById(*form).name);
        }
      }
    }
  }
  const bool tail_calls = std::any_of(source.programs.begin(), source.programs.end(), [](const auto& insns) {
    return std::any_of(insns.begin(), insns.end(), IsTailCall);
  });
  return tail_calls ? ExportTailCalls(source, interpret, markers, options)
                    : ExportCase(source, interpret, markers, options);
}

}  // namespace bpfdiff
