// pack_fuzzer's structure-aware generator and mutator: they edit pack
// scripts (pack_script.h) as operations, not bytes, and reach the states
// that byte mutations of a handful of small loads do not (issue 23):
//
//  - occupancy: runs of loads of one size class that fill a bitmap word,
//    then frees of every other one (holes between live programs), then a
//    larger load that first fit must search past them;
//  - big images: sizes from classes around the chunk (64 bytes), the page
//    (4 KiB and a few of them) and the pack (up to 64 KiB, now and then an
//    oversize image, and rarely a pack filled to its end);
//  - a CPU inside the program being freed, by each way the world has: a
//    call of it stopped a few instructions in, a tail caller stopped just
//    past its tail call into it, a program with subprograms stopped
//    further in, a call of it interrupted or an interrupt running it;
//    then the free, and a synchronize or a run to the end (of the
//    interrupt's call first, the interrupted one going on after it).
//
// A "which" byte is resolved when its operation runs, so a scenario names
// the program it means by its rank: steps pick among the live programs
// (the four tail callers first), frees and prog_array updates among the
// others, so step "which" 4 + j and free "which" j name the same program.
//
// Deterministic for a given seed (std::mt19937's raw outputs only);
// never returns more than max_size bytes; what it returns decodes as a
// script of the current version.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz/pack/pack_script.h"

namespace bpfdiff::fuzz {

// A new script of at most `max_size` bytes (at least the header's, or
// nothing when max_size is smaller than a header).
std::vector<uint8_t> GeneratePackScript(size_t max_size, unsigned seed);

// Mutates the script in data[0, size) in place; an input that is not a
// script (the empty input of an empty corpus among them) is replaced by a
// generated one. Returns the new size, at most max_size.
size_t MutatePackScript(uint8_t* data, size_t size, size_t max_size, unsigned seed);

// The first script's header and leading operations, then the second's
// trailing ones.
size_t CrossOverPackScripts(const uint8_t* first, size_t first_size, const uint8_t* second, size_t second_size,
                            uint8_t* out, size_t max_out, unsigned seed);

}  // namespace bpfdiff::fuzz
