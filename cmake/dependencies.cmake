# Every dependency comes from Debian 12 packages (ci/setup.sh installs them).
find_package(PkgConfig REQUIRED)
pkg_check_modules(UNICORN REQUIRED IMPORTED_TARGET unicorn>=2.0)
find_package(LLVM 14 REQUIRED CONFIG HINTS /usr/lib/llvm-14/lib/cmake/llvm)
find_package(GTest REQUIRED)
find_package(benchmark REQUIRED)
find_package(CLI11 REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json REQUIRED)

# LLVM's MC layer, through its C API, for disassembling arm64 words.
add_library(bpfdiff_llvm_mc INTERFACE)
target_include_directories(bpfdiff_llvm_mc SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
target_link_libraries(bpfdiff_llvm_mc INTERFACE LLVM)

find_program(LLVM_MC_EXECUTABLE NAMES llvm-mc-14 llvm-mc REQUIRED
             HINTS /usr/lib/llvm-14/bin)
