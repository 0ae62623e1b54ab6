# bpfdiff_fuzz_target(<name> SOURCES <files...> LIBS <libs...>)
#
# Declares one fuzz target. With BPFDIFF_LIBFUZZER it links libFuzzer's
# driver; without it, it links fuzz/targets/replay_main.cc, a plain main that runs
# every file or directory given on the command line through the target, so
# the target builds and runs as a regression test in every build.
# Every target is added to `all_fuzzers`, and ctest replays its corpus in
# fuzz/corpus/<name>/.
add_custom_target(all_fuzzers)
function(bpfdiff_fuzz_target name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} bpfdiff_warnings)
  if(BPFDIFF_LIBFUZZER)
    separate_arguments(engine UNIX_COMMAND "${BPFDIFF_FUZZING_ENGINE}")
    target_link_options(${name} PRIVATE ${engine})
  else()
    target_sources(${name} PRIVATE ${CMAKE_SOURCE_DIR}/fuzz/targets/replay_main.cc)
    target_link_libraries(${name} PRIVATE bpfdiff_support)
  endif()
  add_dependencies(all_fuzzers ${name})
  set(corpus ${CMAKE_SOURCE_DIR}/fuzz/corpus/${name})
  if(NOT BPFDIFF_LIBFUZZER)
    add_test(NAME fuzz_replay.${name} COMMAND ${name} ${corpus})
  endif()
endfunction()
