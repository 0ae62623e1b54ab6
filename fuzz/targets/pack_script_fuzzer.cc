// pack_script_fuzzer: the pack script decoder (fuzz/pack/pack_script.h) on
// any bytes, without running the world, so that it is fast (pack_fuzzer
// runs whole scripts). For every input of the format:
//  - decoding reads each byte once: no more operations than bytes after
//    the header, and a load holds no more records than its count;
//  - the canonical encoding decodes to the same script, and encoding that
//    again gives the same bytes (one meaning per script);
//  - every load's records make a program the load step accepts, as the
//    world will load it: the generator is valid by construction, and a
//    program the load step refused would be a load pack_fuzzer silently
//    loses (it counts it as rejected and goes on).
// A broken property aborts with the input's operation and what differed.
#include "fuzz/targets/libfuzzer_entry_points.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "fuzz/generator/fuzz_format.h"
#include "fuzz/generator/generator.h"
#include "fuzz/pack/pack_script.h"
#include "oracle/load.h"

namespace {

using namespace bpfdiff;
using namespace bpfdiff::fuzz;

[[noreturn]] void Found(const std::string& what) {
  fmt::print(stderr, "\n==== pack_script_fuzzer finding ====\n{}\n", what);
  std::fflush(stderr);
  std::abort();
}

void CheckBounds(const PackScript& script, size_t size) {
  const size_t body = size > kPackScriptHeaderSize ? size - kPackScriptHeaderSize : 0;
  if (script.ops.size() > body) Found(fmt::format("{} operations from {} bytes", script.ops.size(), body));
  if (script.cpus < 1 || script.cpus > 4) Found(fmt::format("{} CPUs", script.cpus));
  for (size_t i = 0; i < script.ops.size(); ++i) {
    const PackOp& op = script.ops[i];
    const size_t most = op.kind == PackOpKind::kLoad ? size_t{op.args[2]} % kPackScriptMaxRecords * kRecordSize : 0;
    if (op.records.size() > most) Found(fmt::format("operation {}: {} record bytes, at most {}", i, op.records.size(), most));
  }
}

void CheckRoundTrip(const PackScript& script) {
  auto bytes = EncodePackScript(script);
  if (!bytes) Found("a decoded script does not encode: " + bytes.message());
  const std::optional<PackScript> again = DecodePackScript(*bytes);
  if (!again) Found("the encoding is not a pack script");
  if (*again != script) {
    std::string what = "the encoding decodes to another script";
    if (again->cpus != script.cpus || again->seed != script.seed) what += " (header)";
    for (size_t i = 0; i < std::min(again->ops.size(), script.ops.size()); ++i) {
      if (again->ops[i] != script.ops[i]) {
        what += fmt::format(" (first at operation {})", i);
        break;
      }
    }
    Found(fmt::format("{}: {} operations, then {}", what, script.ops.size(), again->ops.size()));
  }
  auto twice = EncodePackScript(*again);
  if (!twice || *twice != *bytes) Found("encoding is not a fixed point");
}

void CheckLoads(const PackScript& script) {
  for (size_t i = 0; i < script.ops.size(); ++i) {
    const PackOp& op = script.ops[i];
    if (op.kind != PackOpKind::kLoad) continue;
    // The seed the runner gives the operation (pack_script.cc): the pack
    // seed plus the operation's index.
    CaseSource source;
    source.programs.push_back(
        GenerateSelfContainedProgram(kPackScriptRecordsVersion, op.args[0], op.records, script.seed + i));
    auto loaded = LoadCase(source);
    if (!loaded) Found(fmt::format("operation {}: the load step refuses the generated program: {}", i, loaded.message()));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::optional<PackScript> script = DecodePackScript({data, size});
  if (!script) {
    if (size > 0 && IsPackScriptVersion(data[0])) Found("an input of this version is not a script");
    return 0;
  }
  CheckBounds(*script, size);
  CheckRoundTrip(*script);
  CheckLoads(*script);
  return 0;
}
