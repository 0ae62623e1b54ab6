// A plain main for fuzz targets built without libFuzzer: runs every file
// named on the command line (directories recursively, in name order) through
// LLVMFuzzerTestOneInput once, so that every target also builds and runs as
// a regression test over its corpus. A finding aborts, as under libFuzzer; a
// path that does not exist, holds no file or cannot be read exits 2.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "support/files.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  size_t replayed = 0;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') continue;  // libFuzzer-style flags are ignored here
    const auto files = bpfdiff::ListFiles(argv[i]);
    if (!files || files->empty()) {
      std::fprintf(stderr, "replay: %s\n",
                   files ? (std::string(argv[i]) + ": no inputs in it").c_str() : files.message().c_str());
      return 2;
    }
    for (const auto& file : *files) {
      const auto data = bpfdiff::ReadBinaryFile(file);
      if (!data) {
        std::fprintf(stderr, "replay: %s\n", data.message().c_str());
        return 2;
      }
      LLVMFuzzerTestOneInput(data->data(), data->size());
      ++replayed;
    }
  }
  std::printf("replayed %zu inputs\n", replayed);
  return 0;
}
