# Every dependency comes from Debian 12 packages (ci/setup.sh installs them),
# but in the OSS-Fuzz image, which builds Unicorn and VIXL from pinned
# clones (ci/oss-fuzz/build.sh).
#
# Two switches change how they are found (see the top-level CMakeLists.txt):
#  - BPFDIFF_FUZZ_TARGETS_ONLY: only what the fuzz targets link is looked
#    for; LLVM, GoogleTest, Google Benchmark and CLI11 are not needed.
#  - BPFDIFF_STATIC_DEPS: the fuzz targets must run where none of the
#    distribution's shared libraries exist (OSS-Fuzz's base-runner), and are
#    compiled against a C++ library (libc++) that the distribution's C++
#    libraries were not built for. So fmt is used header-only and Unicorn
#    (plain C) comes from its static archive.
find_package(PkgConfig REQUIRED)
pkg_check_modules(UNICORN REQUIRED IMPORTED_TARGET unicorn>=2.0)
find_package(nlohmann_json REQUIRED)  # header-only in every build

if(BPFDIFF_STATIC_DEPS)
  # Unicorn's static archive, next to the shared library pkg-config names
  # (Debian's libunicorn-dev ships both; a from-source build installs only
  # the archive). The link line replaces -lunicorn, which would pick the
  # shared library wherever both exist.
  find_library(BPFDIFF_UNICORN_ARCHIVE NAMES libunicorn.a
               HINTS ${UNICORN_LIBRARY_DIRS} NO_CACHE REQUIRED)
  find_package(Threads REQUIRED)
  set_target_properties(PkgConfig::UNICORN PROPERTIES
    INTERFACE_LINK_LIBRARIES "${BPFDIFF_UNICORN_ARCHIVE};Threads::Threads;m"
    INTERFACE_LINK_OPTIONS "")
  message(STATUS "Unicorn ${UNICORN_VERSION}, linked statically from ${BPFDIFF_UNICORN_ARCHIVE}")

  # fmt without its compiled library: the headers alone (FMT_HEADER_ONLY)
  # compile with whatever C++ library and flags this build uses.
  find_path(BPFDIFF_FMT_INCLUDE_DIR fmt/format.h REQUIRED)
  add_library(fmt::fmt INTERFACE IMPORTED)
  set_target_properties(fmt::fmt PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${BPFDIFF_FMT_INCLUDE_DIR}"
    INTERFACE_COMPILE_DEFINITIONS "FMT_HEADER_ONLY=1")
else()
  find_package(fmt REQUIRED)
endif()

# Arm's VIXL, for its AArch64 simulator: the second executor
# (harness/machine/vixl_cpu.h), behind bpfdiff_vixl. From a source tree when
# BPFDIFF_VIXL_SOURCE names one (the OSS-Fuzz build's pinned clone:
# cmake/vixl_source.cmake); otherwise Debian's shared library, in every
# build but the fuzz-targets-only one, which links statically and so goes
# without VIXL (its diff_fuzzer runs Unicorn alone).
add_library(bpfdiff_vixl INTERFACE)
if(BPFDIFF_VIXL_SOURCE)
  include(${CMAKE_CURRENT_LIST_DIR}/vixl_source.cmake)
  bpfdiff_vixl_from_source(${BPFDIFF_VIXL_SOURCE})
  target_link_libraries(bpfdiff_vixl INTERFACE bpfdiff_vixl_source)
  set(BPFDIFF_HAS_VIXL ON)
elseif(NOT BPFDIFF_FUZZ_TARGETS_ONLY)
  pkg_check_modules(VIXL REQUIRED IMPORTED_TARGET vixl>=5.1)
  target_link_libraries(bpfdiff_vixl INTERFACE PkgConfig::VIXL)
  set(BPFDIFF_HAS_VIXL ON)
else()
  message(STATUS "No VIXL (no BPFDIFF_VIXL_SOURCE): the fuzz targets run Unicorn alone")
  set(BPFDIFF_HAS_VIXL OFF)
endif()

if(BPFDIFF_FUZZ_TARGETS_ONLY)
  # No LLVM: jit/a64/disasm still names bpfdiff_llvm_mc, but nothing a fuzz
  # target links uses that library, so it is never built. Should a fuzz
  # target ever pull it in, its link fails on the missing
  # -lbpfdiff_llvm_mc: fuzz targets carry no LLVM (tests/link checks the
  # same in the full build).
  return()
endif()

find_package(LLVM 14 REQUIRED CONFIG HINTS /usr/lib/llvm-14/lib/cmake/llvm)
find_package(GTest REQUIRED)
find_package(benchmark REQUIRED)
find_package(CLI11 REQUIRED)

# LLVM's MC layer, through its C API, for disassembling arm64 words.
add_library(bpfdiff_llvm_mc INTERFACE)
target_include_directories(bpfdiff_llvm_mc SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
target_link_libraries(bpfdiff_llvm_mc INTERFACE LLVM)

find_program(LLVM_MC_EXECUTABLE NAMES llvm-mc-14 llvm-mc REQUIRED
             HINTS /usr/lib/llvm-14/bin)
