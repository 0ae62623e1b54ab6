# bpfdiff_fuzz_target(<name> SOURCES <files...> LIBS <libs...>)
#
# Declares one fuzz target. With BPFDIFF_LIBFUZZER it links libFuzzer's
# driver; without it, it links fuzz/targets/replay_main.cc, a plain main that runs
# every file or directory given on the command line through the target, so
# the target builds and runs as a regression test in every build.
# Every target is added to `all_fuzzers`, and ctest replays its corpus in
# fuzz/corpus/<name>/.
#
# The build tree's fuzz_targets.tsv lists every target declared so (its
# name, a tab, its executable, a tab, the target whose seeds, options and
# dictionary it takes: itself, or a kernel target's base):
# ci/oss-fuzz/build.sh copies what it lists into $OUT, so a new target
# needs no other list kept by hand.
#
# bpfdiff_kernel_fuzz_target(<name> BASE <target> SOURCES ... LIBS ...)
# declares a target that runs the kernel's own JIT (a build that found a
# Linux tree): <target>'s sources built with BPFDIFF_TARGET_ENGINES="kernel",
# what BPFDIFF_ENGINES=kernel selects at run time. OSS-Fuzz cannot set a
# target's environment, so that choice is made at build time there. It
# replays <target>'s corpus, and build.sh gives it <target>'s seeds, options
# and dictionary (the manifest's third column names the target they are
# filed under).
add_custom_target(all_fuzzers)
function(bpfdiff_kernel_fuzz_target name)
  cmake_parse_arguments(ARG "" "BASE" "SOURCES;LIBS" ${ARGN})
  bpfdiff_fuzz_target(${name} SOURCES ${ARG_SOURCES} LIBS ${ARG_LIBS} SEEDS_OF ${ARG_BASE})
  target_compile_definitions(${name} PRIVATE BPFDIFF_TARGET_ENGINES="kernel")
endfunction()

function(bpfdiff_fuzz_target name)
  cmake_parse_arguments(ARG "" "SEEDS_OF" "SOURCES;LIBS" ${ARGN})
  if(NOT ARG_SEEDS_OF)
    set(ARG_SEEDS_OF ${name})
  endif()
  add_executable(${name} ${ARG_SOURCES})
  # Wherever a target is declared (beside the parser it fuzzes, in the room
  # that parser lives in), its binary is in one place with the others.
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fuzz/targets)
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} bpfdiff_warnings)
  if(BPFDIFF_LIBFUZZER)
    separate_arguments(engine UNIX_COMMAND "${BPFDIFF_FUZZING_ENGINE}")
    target_link_options(${name} PRIVATE ${engine})
  else()
    target_sources(${name} PRIVATE ${CMAKE_SOURCE_DIR}/fuzz/targets/replay_main.cc)
    target_link_libraries(${name} PRIVATE bpfdiff_support)
  endif()
  _bpfdiff_plant_link(${name})
  add_dependencies(all_fuzzers ${name})
  set_property(GLOBAL APPEND PROPERTY BPFDIFF_FUZZ_TARGETS ${name})
  set_property(GLOBAL PROPERTY BPFDIFF_FUZZ_SEEDS_OF_${name} ${ARG_SEEDS_OF})
  set(corpus ${CMAKE_SOURCE_DIR}/fuzz/corpus/${ARG_SEEDS_OF})
  if(NOT BPFDIFF_LIBFUZZER)
    add_test(NAME fuzz_replay.${name} COMMAND ${name} ${corpus})
  endif()
endfunction()

# BPFDIFF_PLANT_LINK = "<target>:<link flags>" adds the flags to that one
# target's link. It exists for one test: ci/oss-fuzz/check.sh plants a shared
# library in a target with it and must then fail. Empty in every real build.
set(BPFDIFF_PLANT_LINK "" CACHE STRING
    "<fuzz target>:<link flags> added to that target's link (the OSS-Fuzz check's planted-library test)")
function(_bpfdiff_plant_link name)
  if(BPFDIFF_PLANT_LINK MATCHES "^${name}:(.*)$")
    separate_arguments(flags UNIX_COMMAND "${CMAKE_MATCH_1}")
    target_link_options(${name} PRIVATE ${flags})
    message(STATUS "${name}: planted in its link: ${flags}")
  endif()
endfunction()

# Written once every directory has declared its targets.
function(_bpfdiff_write_fuzz_manifest)
  get_property(names GLOBAL PROPERTY BPFDIFF_FUZZ_TARGETS)
  set(lines "")
  foreach(name IN LISTS names)
    get_property(seeds_of GLOBAL PROPERTY BPFDIFF_FUZZ_SEEDS_OF_${name})
    string(APPEND lines "${name}\t$<TARGET_FILE:${name}>\t${seeds_of}\n")
  endforeach()
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/fuzz_targets.tsv CONTENT "${lines}")
endfunction()
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL _bpfdiff_write_fuzz_manifest)
