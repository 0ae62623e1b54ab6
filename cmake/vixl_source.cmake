# Arm's VIXL compiled from a source tree (BPFDIFF_VIXL_SOURCE), for the build
# that links statically: the OSS-Fuzz image clones a pinned release into
# $SRC/vixl (ci/oss-fuzz/Dockerfile), and Debian ships VIXL as a shared
# library only. Nothing of VIXL is in this repository: its files are
# compiled where they lie.
#
# What is compiled is what VIXL's own SConstruct builds for `target=a64
# simulator=aarch64`, with its mmap code buffer: the common files and every
# AArch64 file. The configuration that changes VIXL's classes travels with
# the target as compile definitions, so our code sees the layouts the
# library was built with.
#
# Its compile flags are ours (a sanitizer reports a memory error in it as
# anywhere), with three exceptions: its warnings are not ours to fix; UBSan
# and the integer checks are off, since undefined behaviour or a wrapping
# sum inside the simulator is VIXL's and not a finding of a fuzz target
# (OSS-Fuzz's SANITIZER=undefined checks unsigned overflow too); and no
# coverage is recorded, so that the coverage report and libFuzzer's
# features stay about our code (the feedback allowlist already leaves it
# out of SanitizerCoverage).
function(bpfdiff_vixl_from_source dir)
  set(files
    src/code-buffer-vixl.cc
    src/compiler-intrinsics-vixl.cc
    src/cpu-features.cc
    src/utils-vixl.cc
    src/aarch64/assembler-aarch64.cc
    src/aarch64/assembler-sve-aarch64.cc
    src/aarch64/cpu-aarch64.cc
    src/aarch64/cpu-features-auditor-aarch64.cc
    src/aarch64/decoder-aarch64.cc
    src/aarch64/disasm-aarch64.cc
    src/aarch64/instructions-aarch64.cc
    src/aarch64/logic-aarch64.cc
    src/aarch64/macro-assembler-aarch64.cc
    src/aarch64/macro-assembler-sve-aarch64.cc
    src/aarch64/operands-aarch64.cc
    src/aarch64/pointer-auth-aarch64.cc
    src/aarch64/registers-aarch64.cc
    src/aarch64/simulator-aarch64.cc)
  set(sources)
  foreach(file IN LISTS files)
    if(NOT EXISTS ${dir}/${file})
      message(FATAL_ERROR "BPFDIFF_VIXL_SOURCE=${dir} is not a VIXL source tree of the release "
                          "the project pins (ci/oss-fuzz/Dockerfile): ${file} is missing")
    endif()
    list(APPEND sources ${dir}/${file})
  endforeach()
  add_library(bpfdiff_vixl_source STATIC ${sources})
  target_include_directories(bpfdiff_vixl_source SYSTEM PUBLIC ${dir}/src)
  target_compile_definitions(bpfdiff_vixl_source PUBLIC
    VIXL_INCLUDE_TARGET_A64 VIXL_INCLUDE_SIMULATOR_AARCH64 VIXL_CODE_BUFFER_MMAP)
  target_compile_options(bpfdiff_vixl_source PRIVATE -w)
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    target_compile_options(bpfdiff_vixl_source PRIVATE
      -fno-sanitize=undefined,integer -fno-profile-instr-generate -fno-coverage-mapping)
  endif()
  message(STATUS "VIXL from its source tree ${dir}, linked statically")
endfunction()
