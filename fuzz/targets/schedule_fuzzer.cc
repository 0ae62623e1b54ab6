// schedule_fuzzer: both ways into a recursion schedule
// (harness/recursion/schedule.h), without running one (recursion_fuzzer
// runs them). Every input is read twice:
//
//  - as text, by ParseSchedule: a schedule it accepts is valid, prints
//    (FormatSchedule) as text that parses to the same schedule, and that
//    text is a fixed point; a schedule it refuses has a one-line message;
//  - as bytes, by GenerateSchedule: the first byte picks the generator's
//    options (GeneratorOptions, each over its whole range), the rest are
//    its choices. What it generates is valid, round-trips through the text
//    the same way, and keeps the options' promises: no switch and one task
//    per CPU without preemption, no counted `run` without raw steps, no
//    bottom halves disabled without bh.
//
// A broken property aborts with the schedule or the text that broke it.
#include "fuzz/targets/libfuzzer_entry_points.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "harness/recursion/schedule.h"
#include "harness/recursion/schedule_generator.h"

namespace {

using namespace bpfdiff;
using namespace bpfdiff::recursion;

[[noreturn]] void Found(std::string_view what, std::string_view text) {
  fmt::print(stderr, "\n==== schedule_fuzzer finding ====\n{}\n---- schedule ----\n{}\n----\n", what, text);
  std::fflush(stderr);
  std::abort();
}

// `schedule` is valid, and its text means it and only it.
void CheckRoundTrip(const Schedule& schedule, std::string_view how) {
  const std::string text = FormatSchedule(schedule);
  if (auto valid = ValidateSchedule(schedule); !valid) Found(fmt::format("{}: invalid: {}", how, valid.message()), text);
  auto again = ParseSchedule(text);
  if (!again) Found(fmt::format("{}: its text does not parse: {}", how, again.message()), text);
  if (*again != schedule) Found(fmt::format("{}: its text parses to another schedule", how), text);
  if (FormatSchedule(*again) != text) Found(fmt::format("{}: the text is not a fixed point", how), text);
}

void CheckText(std::string_view text) {
  auto parsed = ParseSchedule(text);
  if (!parsed) {
    const std::string& message = parsed.message();
    if (message.empty() || message.find('\n') != std::string::npos) {
      Found(fmt::format("the error is not one line: '{}'", message), text);
    }
    return;
  }
  CheckRoundTrip(*parsed, "a parsed schedule");
}

GeneratorOptions OptionsFrom(BytesSource& source) {
  // Every option over the whole range of a byte (the generator clamps
  // what the format cannot hold), then the switches.
  GeneratorOptions options;
  options.max_cpus = source.Byte();
  options.max_programs = source.Byte();
  options.max_loop = source.Byte();
  options.max_events = source.Byte();
  const uint8_t switches = source.Byte();
  options.preemption = switches & 1;
  options.raw_steps = switches & 2;
  options.bh = switches & 4;
  return options;
}

void CheckGenerated(const uint8_t* data, size_t size) {
  BytesSource source({data, size});
  const GeneratorOptions options = OptionsFrom(source);
  const Schedule schedule = GenerateSchedule(source, options);
  CheckRoundTrip(schedule, "a generated schedule");
  const std::string text = FormatSchedule(schedule);
  if (!options.preemption && !InterruptOnly(schedule)) Found("preemption without the option", text);
  if (!options.raw_steps && !PolicyIndependent(schedule)) Found("a counted run without the option", text);
  for (const Event& e : schedule.events) {
    if (e.bh && !options.bh) Found("bottom halves disabled without the option", text);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  CheckText({reinterpret_cast<const char*>(data), size});
  CheckGenerated(data, size);
  return 0;
}
