// The prog pack allocator (kernel/bpf/core.c, bpf_prog_pack_*), modelled.
//
// JIT images share 2 MiB packs of RX memory divided into 64-byte chunks,
// tracked by one bitmap per pack. A new pack is filled with
// AARCH64_BREAK_FAULT. The JIT writes into an RW buffer; finalize copies it
// into the RX slot and then flushes the caches for exactly that range; free
// invalidates the whole slot with one fill and one flush, clears its bits,
// and releases a pack that became empty. A request larger than a pack gets
// an allocation of its own (the kernel's execmem path).
//
// Slot layout, as bpf_jit_binary_pack_alloc makes it:
//
//   slot start (64-byte aligned)
//   +--------+-------------------+------------------------+-----------+
//   | header | hole (BRK words)  | image: code, extable   | tail (BRK)|
//   | u32 sz |  0..56 bytes      |                        |           |
//   +--------+-------------------+------------------------+-----------+
//
// The hole is pseudo-random (the kernel uses get_random_u32_below) from a
// seeded generator, so a given seed gives the same layout on every machine.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "jit/text_patching.h"
#include "support/result.h"

namespace bpfdiff::jit {

inline constexpr uint64_t kPackSize = 2 << 20;
inline constexpr uint64_t kChunkSize = 64;
inline constexpr uint64_t kChunksPerPack = kPackSize / kChunkSize;
inline constexpr uint64_t kHeaderSize = 8;  // struct bpf_binary_header, image aligned to 8

// Bugs the pack can be told to have, for negative controls (see
// harness/planted/planted_bugs.h for how one is switched on). Never set in normal use.
struct PackBugs {
  bool flush_before_copy = false;        // finalize flushes, then copies (the v3 bug)
  bool skip_invalidate_on_free = false;  // free leaves the old code in place
  bool per_word_invalidate = false;      // free fills and flushes word by word
  bool new_pack_unfilled = false;        // a new pack is not filled with illegal instructions
  bool flush_quarter_range = false;      // finalize flushes a quarter of the range it wrote
  bool first_fit_checks_ends = false;    // first fit takes a run whose first and last chunks are free
  bool copy_stops_at_page_end = false;   // finalize copies only up to the end of the slot's first page
  friend bool operator==(const PackBugs&, const PackBugs&) = default;
};

class PackAllocation {
 public:
  uint64_t rx_slot() const { return rx_slot_; }
  uint64_t slot_bytes() const { return slot_bytes_; }
  uint64_t rx_image() const { return rx_slot_ + image_offset_; }
  uint64_t image_bytes() const { return image_bytes_; }
  // The RW image the JIT writes (empty after Finalize).
  uint8_t* rw_image() { return rw_.empty() ? nullptr : rw_.data() + image_offset_; }
  bool finalized() const { return finalized_; }
  bool oversize() const { return pack_ < 0; }
  int pack() const { return pack_; }
  uint64_t first_chunk() const { return first_chunk_; }
  // Handed out by another allocator (core.c's, ProgPack::Adopt), which
  // owns its RW buffer and its copy: this is the record of it.
  bool adopted() const { return adopted_; }

 private:
  friend class ProgPack;
  uint64_t rx_slot_ = 0;
  uint64_t slot_bytes_ = 0;
  uint64_t image_offset_ = 0;
  uint64_t image_bytes_ = 0;
  std::vector<uint8_t> rw_;  // whole slot; freed by Finalize
  int pack_ = -1;
  uint64_t first_chunk_ = 0;
  bool finalized_ = false;
  bool adopted_ = false;
};

// Where an allocation lies. The kernel's packs come from execmem, which on
// arm64 with a randomized 2 GiB module region can put two packs more than
// 128 MiB apart, beyond a `bl`: then bpf_arch_text_poke() reaches a
// trampoline through the image's PLT. kFar stands for a slot in such a
// pack: an allocation of its own in the oversize region, which lies more
// than 128 MiB from every pack (oracle/guest_layout.h).
enum class Placement : uint8_t { kPacked, kFar };

struct PackAccounting {
  int packs = 0;               // packs currently allocated
  uint64_t chunks_used = 0;
  uint64_t chunks_free = 0;    // in allocated packs
  uint64_t largest_free_run = 0;  // in chunks, over allocated packs
  int oversize_allocations = 0;
  int live_rw_buffers = 0;     // allocations not yet finalized or freed
  uint64_t packs_created = 0;  // over the allocator's life
  uint64_t packs_released = 0;
  int external_packs = 0;      // of `packs`, those another allocator manages (MapExternal)
};

struct PackConfig {
  TextMemory packs;     // kMaxPacks * kPackSize bytes of RX guest memory
  TextMemory oversize;  // for requests larger than a pack
  uint64_t seed = 1;    // for the holes
  PackBugs bugs;
  // false: no packing; every image gets whole pages of its own in the
  // oversize region, as bpf_jit_binary_alloc gave them before the prog pack
  // series (for the iTLB comparison).
  bool pack_images = true;
};

class ProgPack {
 public:
  ProgPack(const PackConfig& config, TextPatcher& patcher);
  ~ProgPack();
  ProgPack(const ProgPack&) = delete;
  ProgPack& operator=(const ProgPack&) = delete;

  // Reserves an RX slot for an image of `image_bytes` (a multiple of 4) and
  // the RW buffer the JIT writes it into, filled with AARCH64_BREAK_FAULT.
  // The image starts `alignment` bytes aligned (4 or 8: the JIT's request;
  // 6.12's arm64 JIT asks for 8, so that its PLT target is 8-aligned).
  Result<std::unique_ptr<PackAllocation>> Alloc(uint64_t image_bytes, uint64_t alignment = 4,
                                                Placement placement = Placement::kPacked);

  // Copies the RW buffer into the RX slot, flushes the caches for that range
  // and frees the RW buffer (bpf_jit_binary_pack_finalize).
  void Finalize(PackAllocation& allocation);

  // Invalidates the slot, clears its bits and releases an empty pack. Also
  // frees the RW buffer of an allocation that was never finalized (the
  // JIT's failure paths).
  void Free(std::unique_ptr<PackAllocation> allocation);

  PackAccounting Accounting() const;

  // Memory for another allocator: kernel/bpf/core.c's prog pack, run as
  // the kernel's code over this pack's regions (kernelsrc/kernel_jit.h).
  // Only what lies below it is this class's: execmem_alloc (MapExternal:
  // a whole pack for kPackSize bytes, else page-rounded bytes of the
  // oversize region; nothing is written, the allocator fills it), and
  // execmem_free (UnmapExternal). The slots it hands out are recorded as
  // allocations (Adopt, MarkFinalized, Disown) in a bitmap of its packs
  // kept here, so that Accounting, Bitmap and the lifecycle checks see
  // them as they see this class's own: what another allocator does is
  // checked from outside, by what it hands out and gives back.
  Result<uint64_t> MapExternal(uint64_t bytes);
  // A problem, or "" when the range was mapped by MapExternal and no
  // adopted slot lies in it. A pack unmapped while slots lie in it stays
  // recorded (Bitmap: nullptr) until they are disowned.
  std::string UnmapExternal(uint64_t address);
  // The bytes MapExternal mapped at `address` (0: nothing mapped there).
  uint64_t ExternalBytes(uint64_t address) const;
  // Records a slot the other allocator handed out. The record is made
  // whatever is wrong with it (the slot is in use from now on); `problem`
  // gets what is: outside any range mapped for it, not chunk-aligned, or
  // overlapping a live slot's chunks.
  std::unique_ptr<PackAllocation> Adopt(uint64_t rx_slot, uint64_t slot_bytes, uint64_t rx_image,
                                        uint64_t image_bytes, std::string* problem);
  // The other allocator copied the image and freed its RW buffer.
  void MarkFinalized(PackAllocation& allocation);
  // The other allocator freed the slot (and invalidated it, if it does).
  void Disown(std::unique_ptr<PackAllocation> allocation);

  // The holes' generator. The harness saves its state once and restores it
  // before every case, so that where a case's images land (the addresses
  // its listing and its outcome show) depends on the case alone, not on
  // how many allocations the process made before it.
  uint64_t hole_state() const { return random_state_; }
  void set_hole_state(uint64_t state) { random_state_ = state != 0 ? state : 1; }  // xorshift: never 0

  // The word at RX address `rx` as it lies in executable memory
  // (aarch64_insn_read, which a text poke checks the old word with);
  // nullopt outside the packs and the oversize region, or misaligned.
  std::optional<uint32_t> ReadWord(uint64_t rx) const;
  // The chunk bitmap of pack `pack` (for checks): bit i = chunk i in use.
  const std::vector<uint64_t>* Bitmap(int pack) const;

 private:
  struct Pack;
  struct OversizeBlock {
    uint64_t offset, bytes;
    bool external = false;  // mapped for another allocator
  };
  std::optional<uint64_t> FindOversizeRoom(uint64_t bytes);
  std::optional<uint64_t> FindFreeRun(const Pack& pack, uint64_t chunks) const;
  Result<int> NewPack();
  void Invalidate(uint64_t rx, uint64_t bytes);

  PackConfig config_;
  TextPatcher& patcher_;
  std::vector<std::unique_ptr<Pack>> packs_;  // index = pack slot in the region
  std::vector<OversizeBlock> oversize_used_;
  uint64_t random_state_;
  int live_rw_buffers_ = 0;
  uint64_t packs_created_ = 0;
  uint64_t packs_released_ = 0;
};

}  // namespace bpfdiff::jit
