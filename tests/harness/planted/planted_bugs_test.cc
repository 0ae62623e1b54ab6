// The planted-bug registry: every row switches on exactly one bug of its
// own, names a fuzz target that exists, and nothing is on by default.
#include "harness/planted/planted_bugs.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

namespace bpfdiff {
namespace {

// The bug structs are plain structs of bools: one byte per switch.
template <typename T>
std::vector<bool> Flags(const T& bugs) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::vector<bool> flags(sizeof(T));
  const auto* bytes = reinterpret_cast<const unsigned char*>(&bugs);
  for (size_t i = 0; i < sizeof(T); ++i) flags[i] = bytes[i] != 0;
  return flags;
}

std::vector<bool> AllFlags(const PlantedBugs& bugs) {
  std::vector<bool> all;
  for (const auto& part : {Flags(bugs.jit), Flags(bugs.pack), Flags(bugs.lifecycle), Flags(bugs.trampoline),
                           Flags(bugs.kernel_shims)}) {
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

TEST(PlantedBugs, NothingIsOnByDefaultOrForAnEmptyName) {
  auto none = PlantedBugsNamed("");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->any());
  for (bool flag : AllFlags(*none)) EXPECT_FALSE(flag);
  EXPECT_EQ(PlantedBugBanner(*none), "");
}

TEST(PlantedBugs, EachRowSwitchesOnExactlyOneBugOfItsOwn) {
  std::set<std::vector<bool>> seen;
  for (const auto& row : PlantedBugCatalog()) {
    auto bugs = PlantedBugsNamed(row.name);
    ASSERT_TRUE(bugs) << row.name;
    EXPECT_EQ(bugs->name, row.name);
    const auto flags = AllFlags(*bugs);
    size_t on = 0;
    for (bool flag : flags) on += flag;
    EXPECT_EQ(on, 1u) << row.name << " switches on " << on << " bugs";
    EXPECT_TRUE(seen.insert(flags).second) << row.name << " switches on the same bug as another row";
    EXPECT_NE(PlantedBugBanner(*bugs).find(std::string(row.name)), std::string::npos);
    EXPECT_NE(PlantedBugBanner(*bugs).find(std::string(row.what)), std::string::npos);
  }
}

TEST(PlantedBugs, EachRowNamesAFuzzTargetThatExists) {
  const std::filesystem::path targets = std::filesystem::path(BPFDIFF_SOURCE_DIR) / "fuzz/targets";
  std::set<std::string_view> names;
  for (const auto& row : PlantedBugCatalog()) {
    EXPECT_TRUE(names.insert(row.name).second) << "two rows named " << row.name;
    EXPECT_FALSE(row.what.empty()) << row.name;
    EXPECT_TRUE(std::filesystem::exists(targets / (std::string(row.target) + ".cc")))
        << row.name << " names the target " << row.target;
  }
}

TEST(PlantedBugs, AnUnknownNameIsAnErrorListingTheKnownOnes) {
  auto bugs = PlantedBugsNamed("no-such-bug");
  ASSERT_FALSE(bugs);
  EXPECT_NE(bugs.message().find("no-such-bug"), std::string::npos);
  for (const auto& row : PlantedBugCatalog()) {
    EXPECT_NE(bugs.message().find(std::string(row.name)), std::string::npos) << row.name;
  }
}

// The catalog is a benchmark of bug classes that really shipped: each
// names the upstream commit that fixed it (a 12-digit id and its subject),
// or says plainly that it is a control caught in review.
TEST(PlantedBugs, EachRowNamesTheFixOrSaysItNeverShipped) {
  int shipped = 0, value_dependent = 0;
  std::set<BugArea> areas;
  for (const auto& row : PlantedBugCatalog()) {
    ASSERT_FALSE(row.fixed_by.empty()) << row.name;
    if (!FixedUpstream(row)) continue;
    ++shipped;
    value_dependent += row.value_dependent;
    areas.insert(row.area);
    ASSERT_GT(row.fixed_by.size(), 13u) << row.name;
    for (size_t i = 0; i < 12; ++i) {
      EXPECT_TRUE(std::isxdigit(static_cast<unsigned char>(row.fixed_by[i])) && !std::isupper(row.fixed_by[i]))
          << row.name << ": " << row.fixed_by;
    }
    EXPECT_EQ(row.fixed_by[12], ' ') << row.name << ": " << row.fixed_by;
  }
  EXPECT_GE(shipped, 30);
  EXPECT_GE(2 * value_dependent, shipped) << "at least half must show only for particular operand values";
  EXPECT_GE(areas.size(), 10u);
}

}  // namespace
}  // namespace bpfdiff
