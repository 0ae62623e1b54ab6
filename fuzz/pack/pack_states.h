// State coverage of pack scripts: which states of the prog pack allocator
// and of the grace period a script drove the world into. Coverage of code
// says that the allocator's search loop ran; it does not say that it ran
// past a full bitmap word, nor that a free waited for a CPU that had come
// in through a tail call. These counters do, so that a campaign shows what
// it never reached (issue 23).
//
// Events are counted (a sum over scripts); "largest" values are maxima.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "harness/lifecycle/world.h"

namespace bpfdiff::fuzz {

struct PackStates {
  // Occupancy.
  uint64_t loads_filling_a_bitmap_word = 0;  // a word of the pack's chunk bitmap became all ones
  uint64_t loads_past_a_hole = 0;            // first fit skipped free chunks too few for the image
  uint64_t frees_leaving_a_hole = 0;         // used chunks on both sides of the freed slot
  // Big images.
  uint64_t images_crossing_a_page = 0;       // first and last byte on different 4 KiB pages
  uint64_t images_ending_at_chunk_end = 0;   // at most one word of BRK tail after the image
  uint64_t images_in_a_packs_last_page = 0;  // the slot ends in the pack's last 4 KiB
  uint64_t oversize_images = 0;              // larger than a pack: an allocation of their own
  // Frees deferred by the grace period, and those while a CPU was inside
  // the freed program, by how it got there. A CPU in a subprogram of a
  // program it reached by a tail call counts for both ways; "directly" is
  // none of the others. Nested in an interrupt: the call inside was
  // interrupted, or runs in the interrupt.
  uint64_t frees_deferred = 0;
  uint64_t frees_deferred_cpu_inside_directly = 0;
  uint64_t frees_deferred_cpu_inside_by_tail_call = 0;
  uint64_t frees_deferred_cpu_inside_by_local_call = 0;
  uint64_t frees_deferred_cpu_inside_nested_in_interrupt = 0;
  // Error paths of the kernel's JIT (failing reloads): a compile whose
  // allocation (kzalloc, kvcalloc, ...), pack allocation, or extra pass
  // (a callee's address) was made to fail, and the compiles after which
  // the kernel's code broke a promise that SHIMS.md explains (known
  // findings, counted and not reported).
  uint64_t compiles_failing_an_allocation = 0;
  uint64_t compiles_failing_the_pack = 0;
  uint64_t compiles_failing_an_extra_pass = 0;
  uint64_t known_finding_offset_table_leaked = 0;
  uint64_t known_finding_freed_image_reported_jited = 0;
  // Compiles under each loader of kernel-jit-blind (kernelsrc/kernel_loader.h,
  // HardenedLoaders): core.c's constant blinding before the JIT, with its
  // clone and its release on the JIT's error paths, or not blinded.
  uint64_t compiles_blinded_harden_2 = 0;
  uint64_t compiles_blinded_harden_1_unprivileged = 0;
  uint64_t compiles_not_blinded_harden_1_root = 0;
  // Packs the allocator made (core.c's alloc_new_pack() under a kernel
  // engine, bpfdiff's NewPack() under its own).
  uint64_t packs_made = 0;

  // Largest values seen.
  uint64_t most_live_programs = 0;  // loaded by the script (tail callers not counted)
  uint64_t most_full_bitmap_words = 0;
  uint64_t largest_image_bytes = 0;
  uint64_t most_packs = 0;        // allocated at once
  uint64_t most_chunks_used = 0;  // of 64 bytes, over every pack at once (32,768 fill a pack)

  // Sums the events, keeps the larger of each largest value.
  void Add(const PackStates& other);
  // The events by name, in declaration order ("states reached", 0 = never).
  std::vector<std::pair<std::string, uint64_t>> Reached() const;
  // The largest values by name.
  std::vector<std::pair<std::string, uint64_t>> Largest() const;
  friend bool operator==(const PackStates&, const PackStates&) = default;
};

// One byte per event and per largest value: what a fuzz target hands its
// engine as extra coverage, so that an input that reaches a state (or
// reaches it more often, or a larger value) is kept even when it ran no
// new code. A byte is the event's count, or the value (the image size as
// its log2), capped at 255.
inline constexpr size_t kPackStateCounters = 26;
void StatesAsCounters(const PackStates& states, std::span<uint8_t, kPackStateCounters> counters);

// Looks at the world around a script's operations and counts into `states`.
class PackStateObserver {
 public:
  PackStateObserver(lifecycle::World& world, PackStates& states) : world_(world), states_(states) {}

  // After a load that made program `id`.
  void AfterLoad(int id);
  // After a failing reload (World::LoadFailing), whether it loaded or not.
  void AfterFailingLoad(const lifecycle::World::FailingLoad& load);
  // Around the free of program `id`: Free() takes what BeforeFree returned.
  struct FreeContext {
    int id = -1;
    std::vector<lifecycle::World::CpuInside> inside;
    bool leaves_a_hole = false;
  };
  FreeContext BeforeFree(int id) const;
  void AfterFree(const FreeContext& context);

 private:
  // Bit `chunk` of pack `pack`'s bitmap (false outside it or an absent pack).
  bool ChunkUsed(int pack, int64_t chunk) const;
  uint64_t FullBitmapWords() const;
  void CountLive();
  // The packs and chunks in use now, and the packs made since last time.
  void CountPacks();
  // The loader of the compile just made, by its state name.
  void CountLoader();
  uint64_t packs_created_seen_ = 0;

  lifecycle::World& world_;
  PackStates& states_;
};

}  // namespace bpfdiff::fuzz
