// A simulated instruction-TLB measurement, after the one that motivated the
// prog pack series: with 160 programs loaded and 100 of them run in turn,
// how many distinct pages do instruction fetches touch when the images are
// packed into shared 2 MiB packs, and when each has pages of its own (as
// bpf_jit_binary_alloc gave them before)?
//
// Packs are mapped with 2 MiB pages, so packed code needs one iTLB entry
// per distinct 2 MiB page fetched from; images of their own are mapped with
// 4 KiB pages, one entry per distinct 4 KiB page. Both counts are given for
// both layouts. Fetches are Unicorn's executed blocks in JIT'd code (helper
// stubs are not JIT'd code and are left out of both).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/result.h"

namespace bpfdiff::fuzz {

struct ItlbOptions {
  int loaded = 160;
  int run = 100;
  int rounds = 1;  // times each of the `run` programs is called, in turn
  uint64_t seed = 1;
};

struct ItlbLayout {
  std::string name;        // "packed", "own pages"
  std::string mapping;     // the page size the layout is mapped with
  uint64_t code_bytes = 0;         // JIT'd images of the loaded programs
  uint64_t loaded_pages_4k = 0;    // pages the loaded images span
  uint64_t loaded_pages_2m = 0;
  uint64_t fetched_pages_4k = 0;   // pages fetched from while the programs ran
  uint64_t fetched_pages_2m = 0;
  uint64_t itlb_entries = 0;       // fetched pages at the layout's mapping size
};

struct ItlbReport {
  ItlbOptions options;
  uint64_t calls = 0;
  std::vector<ItlbLayout> layouts;

  std::string Format() const;
};

// Loads the same generated programs into each layout and runs the same
// calls. An error is the harness's own (a program the JIT refused, a
// Unicorn engine that would not start).
Result<ItlbReport> MeasureItlb(const ItlbOptions& options);

}  // namespace bpfdiff::fuzz
