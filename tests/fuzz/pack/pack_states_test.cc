// State coverage of pack scripts: each state is counted by the script made
// to reach it, and not by a script that stays clear of it.
#include <algorithm>
#include <array>

#include <gtest/gtest.h>

#include "fuzz/pack/pack_script.h"
#include "fuzz/pack/pack_states.h"

namespace bpfdiff::fuzz {
namespace {

constexpr uint8_t kLoad = 0, kFree = 1, kStep = 2, kTailTarget = 5, kSynchronize = 6, kTailCall = 7,
                  kInterrupt = 9;

std::vector<uint8_t> Header(int cpus) { return {kPackScriptVersion, static_cast<uint8_t>(cpus - 1), 7, 0, 0, 0, 0, 0, 0, 0}; }

void AppendLoad(std::vector<uint8_t>& script, uint8_t records, uint8_t pad = 0, uint8_t subprograms = 0) {
  script.insert(script.end(), {kLoad, subprograms, pad, records});
  for (int i = 0; i < records * 8; ++i) script.push_back(static_cast<uint8_t>(i * 37 + 11));
}

PackStates StatesOf(const std::vector<uint8_t>& script) {
  auto result = RunPackScript(script, PackScriptOptions{});
  EXPECT_TRUE(result) << result.message();
  if (!result) return {};
  EXPECT_TRUE(result->violations.empty());
  return result->states;
}

TEST(PackStates, SmallLoadsReachNoneOfTheDeepStates) {
  std::vector<uint8_t> script = Header(2);
  AppendLoad(script, 6);
  AppendLoad(script, 6);
  const PackStates states = StatesOf(script);
  EXPECT_EQ(states.most_live_programs, 2u);
  EXPECT_EQ(states.loads_filling_a_bitmap_word, 0u);
  EXPECT_EQ(states.most_full_bitmap_words, 0u);
  EXPECT_EQ(states.images_crossing_a_page, 0u);
  EXPECT_EQ(states.frees_deferred, 0u);
  EXPECT_EQ(states.loads_past_a_hole, 0u);
  EXPECT_GT(states.largest_image_bytes, 0u);
  EXPECT_LT(states.largest_image_bytes, 4096u);
}

TEST(PackStates, PageSizedImagesCrossAPageAndEightKiBFillsAWord) {
  std::vector<uint8_t> script = Header(1);
  AppendLoad(script, 6, 135);  // 512 slots of padding: about 4.2 KiB
  std::vector<uint8_t> eight = script;
  AppendLoad(eight, 6, 143);  // 1,024 slots: about 8.2 KiB, a whole aligned word of chunks
  const PackStates page = StatesOf(script);
  EXPECT_EQ(page.images_crossing_a_page, 1u);
  EXPECT_GT(page.largest_image_bytes, 4096u);
  const PackStates word = StatesOf(eight);
  EXPECT_EQ(word.images_crossing_a_page, 2u);
  EXPECT_GE(word.loads_filling_a_bitmap_word, 1u);
  EXPECT_GE(word.most_full_bitmap_words, 1u);
  EXPECT_GT(word.largest_image_bytes, 8192u);
}

TEST(PackStates, ImagesUpToAPacksEndReachItsLastPage) {
  std::vector<uint8_t> script = Header(1);
  for (int i = 0; i < 31; ++i) AppendLoad(script, 4, 253);  // about 63 KiB each
  std::vector<uint8_t> short_of_it = script;
  for (int i = 0; i < 22; ++i) AppendLoad(script, 4, 135);  // 4.2 KiB each: past the last page's start
  for (int i = 0; i < 8; ++i) AppendLoad(short_of_it, 4, 135);
  EXPECT_GE(StatesOf(script).images_in_a_packs_last_page, 1u);
  const PackStates short_states = StatesOf(short_of_it);
  EXPECT_EQ(short_states.images_in_a_packs_last_page, 0u);
  EXPECT_EQ(short_states.most_live_programs, 39u);
  EXPECT_GE(short_states.most_full_bitmap_words, 490u);  // of 512
}

TEST(PackStates, AFreeBetweenLiveProgramsLeavesAHoleTheNextLargerLoadPasses) {
  std::vector<uint8_t> script = Header(1);
  AppendLoad(script, 6);
  AppendLoad(script, 6);
  AppendLoad(script, 6);
  script.insert(script.end(), {kFree, 1});  // the middle one
  AppendLoad(script, 20);  // more chunks than the hole holds
  const PackStates states = StatesOf(script);
  EXPECT_EQ(states.frees_leaving_a_hole, 1u);
  EXPECT_EQ(states.loads_past_a_hole, 1u);
  EXPECT_EQ(states.most_live_programs, 3u);
}

TEST(PackStates, AFreeOfTheLastProgramLeavesNoHole) {
  std::vector<uint8_t> script = Header(1);
  AppendLoad(script, 6);
  AppendLoad(script, 6);
  script.insert(script.end(), {kFree, 1});
  EXPECT_EQ(StatesOf(script).frees_leaving_a_hole, 0u);
}

TEST(PackStates, ACpuStoppedInsideItsCallDefersTheFreeDirectly) {
  std::vector<uint8_t> script = Header(2);
  AppendLoad(script, 30);
  script.insert(script.end(), {kStep, 1, 4, 10, kFree, 0, kSynchronize});
  const PackStates states = StatesOf(script);
  EXPECT_EQ(states.frees_deferred, 1u);
  EXPECT_EQ(states.frees_deferred_cpu_inside_directly, 1u);
  EXPECT_EQ(states.frees_deferred_cpu_inside_by_tail_call, 0u);
  EXPECT_EQ(states.frees_deferred_cpu_inside_by_local_call, 0u);
}

TEST(PackStates, ACpuThatCameInByATailCallIsCountedSo) {
  std::vector<uint8_t> script = Header(2);
  AppendLoad(script, 30);
  // prog_array[0] = the program; tail caller 0 runs 37 instructions: just
  // past its tail call, into the program.
  script.insert(script.end(), {kTailTarget, 0, 0, kTailCall, 0, 0, 36, kFree, 0, kSynchronize});
  const PackStates states = StatesOf(script);
  EXPECT_EQ(states.frees_deferred, 1u);
  EXPECT_EQ(states.frees_deferred_cpu_inside_by_tail_call, 1u);
  EXPECT_EQ(states.frees_deferred_cpu_inside_directly, 0u);
}

TEST(PackStates, ACpuStillInTheTailCallerDefersTheFreeButIsNotInside) {
  std::vector<uint8_t> script = Header(2);
  AppendLoad(script, 30);
  script.insert(script.end(), {kTailTarget, 0, 0, kTailCall, 0, 0, 5, kFree, 0, kSynchronize});
  const PackStates states = StatesOf(script);
  EXPECT_EQ(states.frees_deferred, 1u);
  EXPECT_EQ(states.frees_deferred_cpu_inside_by_tail_call, 0u);
  EXPECT_EQ(states.frees_deferred_cpu_inside_directly, 0u);
}

TEST(PackStates, ACpuInASubprogramCameInByALocalCall) {
  std::vector<uint8_t> script = Header(2);
  AppendLoad(script, 40, 0, 3);
  script.insert(script.end(), {kStep, 0, 4, 20, kFree, 0, kSynchronize});
  const PackStates states = StatesOf(script);
  EXPECT_EQ(states.frees_deferred_cpu_inside_by_local_call, 1u);
  EXPECT_EQ(states.frees_deferred_cpu_inside_directly, 0u);
}

TEST(PackStates, AnInterruptedCallInsideIsCountedNestedInAnInterrupt) {
  std::vector<uint8_t> script = Header(2);
  AppendLoad(script, 30);
  // CPU 1 stopped 10 instructions into the program; an interrupt runs 5
  // of tail caller 0.
  script.insert(script.end(), {kStep, 1, 4, 9, kInterrupt, 1, 0, 4, kFree, 0, kSynchronize});
  const PackStates states = StatesOf(script);
  EXPECT_EQ(states.frees_deferred, 1u);
  EXPECT_EQ(states.frees_deferred_cpu_inside_nested_in_interrupt, 1u);
  EXPECT_EQ(states.frees_deferred_cpu_inside_directly, 0u);
}

TEST(PackStates, AProgramRunInAnInterruptIsCountedNestedInAnInterrupt) {
  std::vector<uint8_t> script = Header(1);
  AppendLoad(script, 30);
  script.insert(script.end(), {kStep, 0, 0, 4, kInterrupt, 0, 4, 9, kFree, 0, kSynchronize});
  const PackStates states = StatesOf(script);
  EXPECT_EQ(states.frees_deferred_cpu_inside_nested_in_interrupt, 1u);
  EXPECT_EQ(states.frees_deferred_cpu_inside_by_tail_call, 0u);
  EXPECT_EQ(states.frees_deferred_cpu_inside_directly, 0u);
}

TEST(PackStates, AddSumsEventsAndKeepsTheLargest) {
  PackStates a, b;
  a.images_crossing_a_page = 2;
  a.largest_image_bytes = 100;
  b.images_crossing_a_page = 3;
  b.largest_image_bytes = 50;
  b.most_live_programs = 7;
  a.packs_made = 1;
  b.packs_made = 2;
  a.most_chunks_used = 40;
  b.most_chunks_used = 12;
  a.Add(b);
  EXPECT_EQ(a.images_crossing_a_page, 5u);
  EXPECT_EQ(a.largest_image_bytes, 100u);
  EXPECT_EQ(a.most_live_programs, 7u);
  EXPECT_EQ(a.packs_made, 3u) << "packs made add up over scripts";
  EXPECT_EQ(a.most_chunks_used, 40u);
  // Every state is listed, reached or not: a report names those never reached.
  EXPECT_EQ(a.Reached().size(), 21u);
  EXPECT_EQ(a.Largest().size(), 5u);
}

TEST(PackStates, EveryStateHasACounterOfItsOwn) {
  std::array<uint8_t, kPackStateCounters> counters{};
  StatesAsCounters(PackStates{}, counters);
  EXPECT_EQ(counters, (std::array<uint8_t, kPackStateCounters>{})) << "no state, no counter";
  PackStates states;
  EXPECT_EQ(states.Reached().size() + states.Largest().size(), kPackStateCounters);
  states.frees_deferred_cpu_inside_by_tail_call = 1000;  // capped
  states.largest_image_bytes = 4096;                     // log2 + 1
  StatesAsCounters(states, counters);
  EXPECT_EQ(counters[9], 255);
  EXPECT_EQ(counters[23], 13);
  EXPECT_EQ(std::count(counters.begin(), counters.end(), 0), 24);
}

}  // namespace
}  // namespace bpfdiff::fuzz
