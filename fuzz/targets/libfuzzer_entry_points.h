// The entry points libFuzzer (and fuzz/targets/replay_main.cc) call, declared once
// so that every target defines them against the same prototypes.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {
int LLVMFuzzerInitialize(int* argc, char*** argv);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t* data1, size_t size1, const uint8_t* data2, size_t size2,
                                 uint8_t* out, size_t max_out_size, unsigned int seed);
}
