// ReasonCategory: not-comparable and rejection reasons that differ only in their
// numbers count together, and long reasons are cut visibly. The stats file:
// what a target writes, the nightly report reads back.
#include <string>

#include <gtest/gtest.h>

#include "fuzz/stats/fuzz_stats.h"
#include "fuzz/stats/stats_file.h"
#include "isa/insn.h"

namespace bpfdiff::fuzz {
namespace {

TEST(FuzzReasonCategory, DecimalNumbersBecomeN) {
  EXPECT_EQ(ReasonCategory("program 0: instruction 17: bad register r11"),
            "program N: instruction N: bad register rN");
}

TEST(FuzzReasonCategory, HexNumbersBecomeOneN) {
  EXPECT_EQ(ReasonCategory("load from 0xdeadbeef faulted at 0x1F"), "load from N faulted at N");
}

TEST(FuzzReasonCategory, LettersOutsideHexNumbersStay) {
  // a..f are hex digits only after "0x"; x starts a hex number only after
  // a lone 0.
  EXPECT_EQ(ReasonCategory("bad face: x"), "bad face: x");
  EXPECT_EQ(ReasonCategory("a 4byte load of 8bytes"), "a Nbyte load of Nbytes");
  EXPECT_EQ(ReasonCategory("10x slower, slot 3a"), "Nx slower, slot Na");
}

TEST(FuzzReasonCategory, ReasonsDifferingOnlyInNumbersShareACategory) {
  EXPECT_EQ(ReasonCategory("instruction 3: read of r2 after call at 0x10"),
            ReasonCategory("instruction 250: read of r5 after call at 0xfff8"));
}

TEST(FuzzReasonCategory, ReasonsUpTo100CharactersAreKeptWhole) {
  const std::string exactly_100(100, 'r');
  EXPECT_EQ(ReasonCategory(exactly_100), exactly_100);
}

TEST(FuzzReasonCategory, LongReasonsAreCutAt100CharactersAndEndInEllipsis) {
  const std::string head(100, 'h');
  const std::string category = ReasonCategory(head + "this part is cut");
  EXPECT_EQ(category, head + "...");
  EXPECT_LE(category.size(), 103u);
}

TEST(FuzzReasonCategory, TheCutCountsCharactersAfterNumbersBecameN) {
  // 30 numbers of 3 digits and a space: 120 characters of reason, but 60
  // of category; with 40 more, exactly 100: not cut.
  std::string reason, category;
  for (int i = 0; i < 30; ++i) {
    reason += "123 ";
    category += "N ";
  }
  reason += std::string(40, '.');
  category += std::string(40, '.');
  EXPECT_EQ(ReasonCategory(reason), category);
  // One character more is cut.
  EXPECT_EQ(ReasonCategory(reason + "!"), category + "...");
}

}  // namespace
}  // namespace bpfdiff::fuzz

namespace bpfdiff::fuzz {
namespace {

// What a fuzz target writes at exit is what `bpfdiff report` reads: every
// counter in its order, the reasons and the forms.
TEST(FuzzStatsFile, TheReportReadsBackWhatATargetWrites) {
  FuzzStatsFile written;
  written.target = "diff_fuzzer";
  written.seconds = 61.5;
  written.inputs = 1234;
  written.counters = {{"compared", 1000}, {"agreed", 990}, {"not_comparable", 10}, {"extra_runs", 4000}};
  written.not_comparable = {{"interp ran out of its instruction budget", 4}, {"jit refused, as the kernel's would: x", 6}};
  written.rejected = {{"program N: bad", 2}};
  written.forms = FormCoverage{174, 170, 168, {"ldabsw", "ldindw"}};

  auto json = Json::parse(FuzzStatsJson(written), nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(json.is_discarded());
  auto read = FuzzStatsFromJson(json, "test");
  ASSERT_TRUE(read) << read.message();
  EXPECT_EQ(read->target, "diff_fuzzer");
  EXPECT_DOUBLE_EQ(read->seconds, 61.5);
  EXPECT_EQ(read->inputs, 1234);
  const NamedCounts counters = {{"compared", 1000}, {"agreed", 990}, {"not_comparable", 10}, {"extra_runs", 4000}};
  EXPECT_EQ(read->counters, counters);
  const NamedCounts not_comparable = {{"interp ran out of its instruction budget", 4},
                                      {"jit refused, as the kernel's would: x", 6}};
  EXPECT_EQ(read->not_comparable, not_comparable);
  EXPECT_EQ(read->rejected, (NamedCounts{{"program N: bad", 2}}));
  ASSERT_TRUE(read->forms);
  EXPECT_EQ(read->forms->total, 174);
  EXPECT_EQ(read->forms->generated, 170);
  EXPECT_EQ(read->forms->completed, 168);
  EXPECT_EQ(read->forms->not_completed, (std::vector<std::string>{"ldabsw", "ldindw"}));
}

// State coverage (pack_fuzzer's): every state, a reached one and one never
// reached (0), in the writer's order, and the largest values.
TEST(FuzzStatsFile, StatesRoundTripWithThoseNeverReached) {
  FuzzStatsFile written;
  written.target = "pack_fuzzer";
  written.states_reached = {{"images_crossing_a_page", 12}, {"frees_deferred_cpu_inside_by_tail_call", 0}};
  written.states_largest = {{"largest_image_bytes", 65536}};
  auto json = Json::parse(FuzzStatsJson(written), nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(json.is_discarded());
  auto read = FuzzStatsFromJson(json, "test");
  ASSERT_TRUE(read) << read.message();
  EXPECT_EQ(read->states_reached, written.states_reached);
  EXPECT_EQ(read->states_largest, written.states_largest);
}

TEST(FuzzStatsFile, NoStatesNoStatesObject) {
  FuzzStatsFile written;
  written.target = "diff_fuzzer";
  EXPECT_EQ(FuzzStatsJson(written).find("states"), std::string::npos);
}

TEST(FuzzStatsFile, AMalformedStatesObjectIsNamed) {
  for (const char* text : {R"({"target": "t", "seconds": 1, "inputs": 2, "states": 3})",
                           R"({"target": "t", "seconds": 1, "inputs": 2, "states": {"reached": {"x": -1}}})"}) {
    auto read = FuzzStatsFromJson(Json::parse(text, nullptr, false), "test");
    ASSERT_FALSE(read);
    EXPECT_NE(read.message().find("states"), std::string::npos) << read.message();
  }
}

TEST(FuzzStatsFile, FuzzStatsCountsCasesThatWereNotComparable) {
  FuzzStats stats("diff_fuzzer");
  CaseSource source;
  source.programs = {{isa::Insn{isa::kOpExit, 0, 0, 0, 0}}};
  CaseRun run;
  run.loaded.emplace();
  run.runs.resize(3);
  run.runs[0].outcome.emplace();
  run.runs[0].outcome->end = EndKind::kExit;
  run.runs[1].verdict = {Verdict::Kind::kNotComparable, "", "reason a"};
  run.runs[2].verdict = {Verdict::Kind::kNotComparable, "", "reason b"};
  stats.Record(source, run, {});
  run.runs[2].verdict = run.runs[1].verdict;  // both engines, one reason
  stats.Record(source, run, {});
  const FuzzStatsFile file = stats.ToFile();
  const auto counter = [&](std::string_view name) {
    for (const auto& [n, count] : file.counters) {
      if (n == name) return count;
    }
    return uint64_t{~0ull};
  };
  EXPECT_EQ(counter("compared"), 2u);
  EXPECT_EQ(counter("agreed"), 0u);
  EXPECT_EQ(counter("not_comparable"), 2u) << "a case counts once, however many engines said so";
  EXPECT_EQ(file.not_comparable, (NamedCounts{{"reason a", 2}, {"reason b", 1}}))
      << "a reason counts once per case; the most frequent first";
}

// An engine whose verifier refuses a case (what the tree's JIT lacks) never
// runs it: the case still agrees, and completes its forms, when another
// engine besides the reference ran it and matched; not when only the
// reference did.
TEST(FuzzStatsFile, AVerifierRefusalLeavesTheCaseToTheEnginesThatRanIt) {
  CaseSource source;
  source.programs = {{isa::Insn{isa::kOpExit, 0, 0, 0, 0}}};
  CaseRun run;
  run.loaded.emplace();
  run.loaded->programs.resize(1);
  run.loaded->programs[0].source_slot = {0};
  run.runs.resize(3);
  run.runs[0].outcome.emplace();
  run.runs[0].outcome->end = EndKind::kExit;
  run.runs[1].verdict = {Verdict::Kind::kMatch, "", ""};
  run.runs[2].verdict = {Verdict::Kind::kNotComparable, "", "the verifier refuses it"};
  run.runs[2].verifier_refused = true;
  const std::vector<std::vector<uint8_t>> executed = {{1}};
  {
    FuzzStats stats("diff_fuzzer");
    stats.Record(source, run, executed);
    EXPECT_EQ(stats.forms_completed(), 1u) << "one engine ran and matched";
  }
  {
    FuzzStats stats("diff_fuzzer");
    run.runs[1] = run.runs[2];  // both JITs refused: only the reference ran
    stats.Record(source, run, executed);
    EXPECT_EQ(stats.forms_completed(), 0u);
  }
  {
    FuzzStats stats("diff_fuzzer");
    run.runs[1].verifier_refused = false;  // not comparable for another reason
    stats.Record(source, run, executed);
    EXPECT_EQ(stats.forms_completed(), 0u);
  }
}

// Files written before "poisoned" became "not_comparable" still read.
TEST(FuzzStatsFile, ReadsTheOldNameOfNotComparable) {
  auto json = Json::parse(R"({"target": "t", "seconds": 1, "inputs": 2,
                              "reasons": {"poisoned": {"why": 3}}})",
                          nullptr, false);
  auto read = FuzzStatsFromJson(json, "test");
  ASSERT_TRUE(read) << read.message();
  EXPECT_EQ(read->not_comparable, (NamedCounts{{"why", 3}}));
}

TEST(FuzzStatsFile, ReasonsAreWrittenMostFrequentFirst) {
  EXPECT_EQ(MostFrequentFirst({{"b", 1}, {"a", 5}, {"c", 5}}), (NamedCounts{{"a", 5}, {"c", 5}, {"b", 1}}));
}

// Tail-call states count runs (a run with two refused indexes at
// max_entries counts once), keep the longest chain, and name the states
// never reached.
TEST(FuzzTailCallStates, RunsThatReachEachStateAndTheLongestChain) {
  using Result = TailCallAttempt::Result;
  TailCallStates states;
  Outcome chain;
  chain.tail_calls.assign(33, 1);
  chain.tail_call_attempts.assign(33, TailCallAttempt{0, 1, false, Result::kTaken});
  chain.tail_call_attempts.push_back({0, 1, false, Result::kCountAtLimit});
  states.Count(chain);
  Outcome bounds;
  bounds.tail_call_attempts = {{4, 4, false, Result::kIndexOutOfRange},
                               {4, 4, true, Result::kIndexOutOfRange},
                               {9, 4, false, Result::kIndexOutOfRange},
                               {1, 4, true, Result::kTaken}};
  bounds.tail_calls = {2};
  states.Count(bounds);
  states.Count(Outcome{});
  EXPECT_EQ(states.taken, 2u);
  EXPECT_EQ(states.chain_to_the_limit, 1u);
  EXPECT_EQ(states.index_at_max_entries, 1u);
  EXPECT_EQ(states.index_above_max_entries, 1u);
  EXPECT_EQ(states.taken_with_upper_half, 1u);
  EXPECT_EQ(states.refused_with_upper_half, 1u);
  EXPECT_EQ(states.empty_slot, 0u);
  EXPECT_EQ(states.longest_chain, 33u);
  const std::string lines = StateLines(states);
  EXPECT_NE(lines.find("tail_call_chain_to_the_limit 1"), std::string::npos) << lines;
  EXPECT_NE(lines.find("longest chain 33"), std::string::npos) << lines;
  EXPECT_NE(lines.find("tail calls NOT reached: tail_call_to_an_empty_slot\n"), std::string::npos) << lines;
}

// The cost section: shares of the wall time and µs per compared program,
// the emulator's first runs split into translation and execution, and
// libFuzzer's own time as the rest of the wall time.
TEST(FuzzCost, SharesAndTimesPerComparedProgram) {
  RunCost cost;
  cost.Add(RunPhase::kDecode, 100'000'000);        // 0.1 s
  cost.Add(RunPhase::kEmulatorFirst, 300'000'000);  // 0.3 s over 100 first runs
  cost.Add(RunPhase::kEmulatorLater, 100'000'000);  // 0.1 s over 100 later runs
  cost.first_runs = 100;
  cost.later_runs = 100;
  cost.guest_executed = 5000;
  cost.guest_translated = 1000;
  // 1 s of wall time, 0.6 s inside the target (0.05 s of it locating
  // culprits, 0.02 s on the second emulator), 0.1 s mutating, 100 programs.
  const std::string text = DescribeCost(cost, 100, 1.0, TargetNanos{600'000'000, 50'000'000, 20'000'000}, 100'000'000);
  EXPECT_NE(text.find("1.0 s for 100 compared programs, 10000.0 µs each"), std::string::npos) << text;
  auto line = [&](std::string_view name) {
    const size_t at = text.find(name);
    return at == std::string::npos ? std::string() : text.substr(at, text.find('\n', at) - at);
  };
  EXPECT_NE(line("decode and generate").find("10.0%"), std::string::npos) << text;
  EXPECT_NE(line("decode and generate").find("1000.0"), std::string::npos) << text;
  // First runs 0.3 s, later runs at 1 ms each: 0.2 s of translation.
  EXPECT_NE(line("emulator translation").find("20.0%"), std::string::npos) << text;
  EXPECT_NE(line("emulator execution, first runs").find("10.0%"), std::string::npos) << text;
  // Inside the target 0.6 s, of which the runner 0.5 s, locating 0.05 s
  // and the second emulator 0.02 s.
  EXPECT_NE(line("the target: locating culprits").find("5.0%"), std::string::npos) << text;
  EXPECT_NE(line("the target: the second emulator's runs").find("2.0%"), std::string::npos) << text;
  EXPECT_NE(line("the target, elsewhere").find("3.0%"), std::string::npos) << text;
  EXPECT_NE(line("our mutators").find("10.0%"), std::string::npos) << text;
  // 1 s - 0.6 s - 0.1 s.
  EXPECT_NE(line("libFuzzer's own").find("30.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("50 executed, 10 translated"), std::string::npos) << text;
}

}  // namespace
}  // namespace bpfdiff::fuzz
