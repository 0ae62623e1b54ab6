// The layering rule, checked over the source tree: every `#include "..."`
// in non-test code must point down the order of rooms (or stay in its own
// room), never up and never sideways to a sibling:
//
//   support  <-  isa, kernel  <-  oracle, jit  <-  harness  <-  fuzz  <-  report  <-  cli  <-  bench
//
// harness/, fuzz/ and cli/ have an order of their own inside (Rooms()).
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bpfdiff::layering {

// A room: a folder (and everything under it, unless a longer prefix names
// a room of its own) and its place in the order. A room may include a
// room whose rank is lower: a lower major, or the same major and a lower
// minor. Rooms of equal rank are siblings and may not include each other.
struct Room {
  std::string_view prefix;  // "harness/diff"
  int major;
  int minor;
};

// The project's rooms, in order.
std::span<const Room> Rooms();

// The room a path (relative to the source root) belongs to, or nullptr.
const Room* RoomOf(std::string_view path, std::span<const Room> rooms);

struct Violation {
  std::string file;  // relative to the root
  int line = 0;
  std::string included;
  std::string why;
  std::string Describe() const;
};

// Every `#include "x"` of the .h and .cc files under the rooms' folders
// (tests/ is not a room) that runs up or sideways, names a file that does
// not exist under `root`, or sits in a file that belongs to no room.
std::vector<Violation> CheckLayering(const std::filesystem::path& root, std::span<const Room> rooms);

}  // namespace bpfdiff::layering
