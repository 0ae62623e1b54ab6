#include "fuzz/pack/pack_states.h"

#include <algorithm>
#include <bit>

#include "jit/prog_pack.h"
#include "oracle/guest_layout.h"

namespace bpfdiff::fuzz {
namespace {

constexpr uint64_t kFullWord = ~uint64_t{0};

template <typename Visit>
void VisitFields(const PackStates& s, Visit visit) {
  visit("loads_filling_a_bitmap_word", s.loads_filling_a_bitmap_word);
  visit("loads_past_a_hole", s.loads_past_a_hole);
  visit("frees_leaving_a_hole", s.frees_leaving_a_hole);
  visit("images_crossing_a_page", s.images_crossing_a_page);
  visit("images_ending_at_chunk_end", s.images_ending_at_chunk_end);
  visit("images_in_a_packs_last_page", s.images_in_a_packs_last_page);
  visit("oversize_images", s.oversize_images);
  visit("frees_deferred", s.frees_deferred);
  visit("frees_deferred_cpu_inside_directly", s.frees_deferred_cpu_inside_directly);
  visit("frees_deferred_cpu_inside_by_tail_call", s.frees_deferred_cpu_inside_by_tail_call);
  visit("frees_deferred_cpu_inside_by_local_call", s.frees_deferred_cpu_inside_by_local_call);
  visit("frees_deferred_cpu_inside_nested_in_interrupt", s.frees_deferred_cpu_inside_nested_in_interrupt);
  visit("compiles_failing_an_allocation", s.compiles_failing_an_allocation);
  visit("compiles_failing_the_pack", s.compiles_failing_the_pack);
  visit("compiles_failing_an_extra_pass", s.compiles_failing_an_extra_pass);
  visit("known_finding_offset_table_leaked", s.known_finding_offset_table_leaked);
  visit("known_finding_freed_image_reported_jited", s.known_finding_freed_image_reported_jited);
  visit("compiles_blinded_harden_2", s.compiles_blinded_harden_2);
  visit("compiles_blinded_harden_1_unprivileged", s.compiles_blinded_harden_1_unprivileged);
  visit("compiles_not_blinded_harden_1_root", s.compiles_not_blinded_harden_1_root);
  visit("packs_made", s.packs_made);
}

template <typename Visit>
void VisitLargest(const PackStates& s, Visit visit) {
  visit("most_live_programs", s.most_live_programs);
  visit("most_full_bitmap_words", s.most_full_bitmap_words);
  visit("largest_image_bytes", s.largest_image_bytes);
  visit("most_packs", s.most_packs);
  visit("most_chunks_used", s.most_chunks_used);
}

}  // namespace

void PackStates::Add(const PackStates& o) {
  loads_filling_a_bitmap_word += o.loads_filling_a_bitmap_word;
  loads_past_a_hole += o.loads_past_a_hole;
  frees_leaving_a_hole += o.frees_leaving_a_hole;
  images_crossing_a_page += o.images_crossing_a_page;
  images_ending_at_chunk_end += o.images_ending_at_chunk_end;
  images_in_a_packs_last_page += o.images_in_a_packs_last_page;
  oversize_images += o.oversize_images;
  frees_deferred += o.frees_deferred;
  frees_deferred_cpu_inside_directly += o.frees_deferred_cpu_inside_directly;
  frees_deferred_cpu_inside_by_tail_call += o.frees_deferred_cpu_inside_by_tail_call;
  frees_deferred_cpu_inside_by_local_call += o.frees_deferred_cpu_inside_by_local_call;
  frees_deferred_cpu_inside_nested_in_interrupt += o.frees_deferred_cpu_inside_nested_in_interrupt;
  compiles_failing_an_allocation += o.compiles_failing_an_allocation;
  compiles_failing_the_pack += o.compiles_failing_the_pack;
  compiles_failing_an_extra_pass += o.compiles_failing_an_extra_pass;
  known_finding_offset_table_leaked += o.known_finding_offset_table_leaked;
  known_finding_freed_image_reported_jited += o.known_finding_freed_image_reported_jited;
  compiles_blinded_harden_2 += o.compiles_blinded_harden_2;
  compiles_blinded_harden_1_unprivileged += o.compiles_blinded_harden_1_unprivileged;
  compiles_not_blinded_harden_1_root += o.compiles_not_blinded_harden_1_root;
  packs_made += o.packs_made;
  most_live_programs = std::max(most_live_programs, o.most_live_programs);
  most_full_bitmap_words = std::max(most_full_bitmap_words, o.most_full_bitmap_words);
  largest_image_bytes = std::max(largest_image_bytes, o.largest_image_bytes);
  most_packs = std::max(most_packs, o.most_packs);
  most_chunks_used = std::max(most_chunks_used, o.most_chunks_used);
}

std::vector<std::pair<std::string, uint64_t>> PackStates::Reached() const {
  std::vector<std::pair<std::string, uint64_t>> out;
  VisitFields(*this, [&](const char* name, uint64_t value) { out.emplace_back(name, value); });
  return out;
}

std::vector<std::pair<std::string, uint64_t>> PackStates::Largest() const {
  std::vector<std::pair<std::string, uint64_t>> out;
  VisitLargest(*this, [&](const char* name, uint64_t value) { out.emplace_back(name, value); });
  return out;
}

void StatesAsCounters(const PackStates& states, std::span<uint8_t, kPackStateCounters> counters) {
  size_t next = 0;
  const auto put = [&](uint64_t value) {
    if (next < counters.size()) counters[next++] = static_cast<uint8_t>(std::min<uint64_t>(value, 255));
  };
  VisitFields(states, [&](const char*, uint64_t times) { put(times); });
  put(states.most_live_programs);
  put(states.most_full_bitmap_words);
  put(static_cast<uint64_t>(std::bit_width(states.largest_image_bytes)));
  put(states.most_packs);
  put(static_cast<uint64_t>(std::bit_width(states.most_chunks_used)));
}

void PackStateObserver::AfterFailingLoad(const lifecycle::World::FailingLoad& load) {
  CountPacks();
  // The charge (bpf_jit_charge_modmem), or, inside core.c's pack, the
  // executable memory of a new pack.
  if (load.injected == "bpf_jit_binary_pack_alloc" || load.injected == "execmem_alloc") {
    ++states_.compiles_failing_the_pack;
  } else if (load.injected == "bpf_jit_get_func_addr") {
    ++states_.compiles_failing_an_extra_pass;
  } else if (!load.injected.empty()) {
    ++states_.compiles_failing_an_allocation;
  }
  if (load.known_breach == "jit-free-leaks-offset-table") ++states_.known_finding_offset_table_leaked;
  if (load.known_breach == "freed-image-reported-jited") ++states_.known_finding_freed_image_reported_jited;
  if (load.id) {
    AfterLoad(*load.id);
  } else {
    CountLoader();
  }
}

void PackStateObserver::CountLoader() {
  const kernelsrc::KernelLoader* loader = world_.last_loader();
  if (loader == nullptr) return;
  if (loader->state == "blinded_harden_2") ++states_.compiles_blinded_harden_2;
  if (loader->state == "blinded_harden_1_unprivileged") ++states_.compiles_blinded_harden_1_unprivileged;
  if (loader->state == "not_blinded_harden_1_root") ++states_.compiles_not_blinded_harden_1_root;
}

bool PackStateObserver::ChunkUsed(int pack, int64_t chunk) const {
  if (chunk < 0 || static_cast<uint64_t>(chunk) >= jit::kChunksPerPack) return false;
  const std::vector<uint64_t>* bitmap = world_.sandbox().pack().Bitmap(pack);
  if (bitmap == nullptr) return false;
  const auto c = static_cast<uint64_t>(chunk);
  return (((*bitmap)[c / 64] >> (c % 64)) & 1) != 0;
}

uint64_t PackStateObserver::FullBitmapWords() const {
  uint64_t full = 0;
  for (int pack = 0; pack < static_cast<int>(guest::kMaxPacks); ++pack) {
    const std::vector<uint64_t>* bitmap = world_.sandbox().pack().Bitmap(pack);
    if (bitmap != nullptr) full += static_cast<uint64_t>(std::count(bitmap->begin(), bitmap->end(), kFullWord));
  }
  return full;
}

void PackStateObserver::CountLive() {
  const auto live = static_cast<uint64_t>(world_.LivePrograms().size());
  const auto callers = static_cast<uint64_t>(lifecycle::World::kTailEntries);
  states_.most_live_programs = std::max(states_.most_live_programs, live > callers ? live - callers : 0);
}

void PackStateObserver::CountPacks() {
  const jit::PackAccounting accounting = world_.sandbox().pack().Accounting();
  states_.packs_made += accounting.packs_created - std::min(accounting.packs_created, packs_created_seen_);
  packs_created_seen_ = accounting.packs_created;
  states_.most_packs = std::max(states_.most_packs, static_cast<uint64_t>(accounting.packs));
  states_.most_chunks_used = std::max(states_.most_chunks_used, accounting.chunks_used);
}

void PackStateObserver::AfterLoad(int id) {
  CountLive();
  CountPacks();
  CountLoader();
  const jit::CompiledProgram* compiled = world_.Compiled(id);
  if (compiled == nullptr) return;
  bool filled_a_word = false, past_a_hole = false;
  for (const jit::CompiledSubprogram& sub : compiled->subprograms) {
    const jit::PackAllocation& a = *sub.allocation;
    const uint64_t image_end = a.rx_image() + a.image_bytes();
    states_.largest_image_bytes = std::max(states_.largest_image_bytes, a.image_bytes());
    if (a.rx_image() / guest::kPageSize != (image_end - 1) / guest::kPageSize) ++states_.images_crossing_a_page;
    if (a.rx_slot() + a.slot_bytes() - image_end <= 4) ++states_.images_ending_at_chunk_end;
    if (a.oversize()) {
      ++states_.oversize_images;
      continue;
    }
    const uint64_t chunks = a.slot_bytes() / jit::kChunkSize;
    const uint64_t last_page = (jit::kPackSize - guest::kPageSize) / jit::kChunkSize;
    if (a.first_chunk() + chunks > last_page) ++states_.images_in_a_packs_last_page;
    // The words this slot set bits in: one of them full now was filled by it.
    const std::vector<uint64_t>* bitmap = world_.sandbox().pack().Bitmap(a.pack());
    for (uint64_t w = a.first_chunk() / 64; bitmap != nullptr && w <= (a.first_chunk() + chunks - 1) / 64; ++w) {
      filled_a_word |= (*bitmap)[w] == kFullWord;
    }
    // First fit: a free chunk before the slot (in its pack or an earlier
    // one) belongs to a run the search went past.
    for (int pack = 0; pack <= a.pack() && !past_a_hole; ++pack) {
      const std::vector<uint64_t>* bits = world_.sandbox().pack().Bitmap(pack);
      if (bits == nullptr) continue;
      const uint64_t end = pack == a.pack() ? a.first_chunk() : jit::kChunksPerPack;
      for (uint64_t w = 0; w * 64 < end && !past_a_hole; ++w) {
        const uint64_t valid = end - w * 64 >= 64 ? kFullWord : (uint64_t{1} << (end - w * 64)) - 1;
        past_a_hole = (~(*bits)[w] & valid) != 0;
      }
    }
  }
  states_.loads_filling_a_bitmap_word += filled_a_word ? 1 : 0;
  states_.loads_past_a_hole += past_a_hole ? 1 : 0;
  states_.most_full_bitmap_words = std::max(states_.most_full_bitmap_words, FullBitmapWords());
}

PackStateObserver::FreeContext PackStateObserver::BeforeFree(int id) const {
  FreeContext context;
  context.id = id;
  context.inside = world_.CpusInside(id);
  const jit::CompiledProgram* compiled = world_.Compiled(id);
  if (compiled == nullptr) return context;
  for (const jit::CompiledSubprogram& sub : compiled->subprograms) {
    const jit::PackAllocation& a = *sub.allocation;
    if (a.oversize()) continue;
    const auto first = static_cast<int64_t>(a.first_chunk());
    const auto end = first + static_cast<int64_t>(a.slot_bytes() / jit::kChunkSize);
    context.leaves_a_hole |= ChunkUsed(a.pack(), first - 1) && ChunkUsed(a.pack(), end);
  }
  return context;
}

void PackStateObserver::AfterFree(const FreeContext& context) {
  CountPacks();
  states_.frees_leaving_a_hole += context.leaves_a_hole ? 1 : 0;
  if (world_.WaitingFor(context.id).empty()) return;
  ++states_.frees_deferred;
  for (const lifecycle::World::CpuInside& cpu : context.inside) {
    if (cpu.by_tail_call) ++states_.frees_deferred_cpu_inside_by_tail_call;
    if (cpu.in_subprogram) ++states_.frees_deferred_cpu_inside_by_local_call;
    if (cpu.nested_in_interrupt) ++states_.frees_deferred_cpu_inside_nested_in_interrupt;
    if (!cpu.by_tail_call && !cpu.in_subprogram && !cpu.nested_in_interrupt) {
      ++states_.frees_deferred_cpu_inside_directly;
    }
  }
}

}  // namespace bpfdiff::fuzz
