// The fuzz input format, version 1. Stable: the same bytes give the same
// case on every machine and every generator that claims this version, so
// corpora and reproducers keep working. Change anything here only with a
// new version number.
//
//   byte 0       format version (kFormatVersion); other versions are not ours
//   byte 1       mode: 0xff = raw, anything else = structured
//
// Structured mode (a 16-byte header, then 8-byte records):
//   byte 2       extra subprograms of the main program (value % 4)
//   byte 3       maps: bit 0 an array map, bit 1 a hash map, bit 2 a second
//                (small) array map; bits 3..4 the value size (8, 16, 24, 64)
//   byte 4       tail-call target programs (value % 4); with any, a
//                prog_array map holds them
//   byte 5       input memory length (value % 129 bytes)
//   bytes 6..13  seed of the input memory and initial map values
//   byte 14      options: bit 0 inline kptr_xchg at load
//   byte 15      reserved (0)
//   then records of 8 bytes: [construct, p0 .. p6]. Each record is one step
//   of the generator (an ALU operation, a memory access, the start or end of
//   a region, a call ...); record kind 0xff ends the current function. A
//   missing record reads as zeros.
//
// Raw mode: bytes 2.. are BPF instruction bytes. Slots that do not decode
// are dropped, the rest is validated as it is (the decoder must reject what
// is invalid, with a message), so arbitrary bytes exercise the decoder.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bpfdiff::fuzz {

inline constexpr uint8_t kFormatVersion = 1;
inline constexpr size_t kHeaderSize = 16;
inline constexpr size_t kRecordSize = 8;
inline constexpr uint8_t kEndOfFunction = 0xff;
inline constexpr uint8_t kModeRaw = 0xff;

}  // namespace bpfdiff::fuzz
