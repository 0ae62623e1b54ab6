# Sanitizers apply to everything we compile, so that a report in a library is
# seen by every test and fuzz target that uses it.
if(BPFDIFF_SANITIZE)
  add_compile_options(-fsanitize=${BPFDIFF_SANITIZE} -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${BPFDIFF_SANITIZE})
endif()

# Instrumentation of the fuzz builds (BPFDIFF_INSTRUMENT):
#   libfuzzer        SanitizerCoverage, the feedback libFuzzer fuzzes with
#   source-coverage  clang's source-based coverage (llvm-profdata, llvm-cov),
#                    as OSS-Fuzz's SANITIZER=coverage builds: the targets
#                    still link libFuzzer, to replay corpora, but carry no
#                    SanitizerCoverage
#   none             nothing added: the compiler flags bring their own
#                    (OSS-Fuzz's $CFLAGS and $CXXFLAGS, ci/oss-fuzz/build.sh)
if(BPFDIFF_INSTRUMENT STREQUAL "libfuzzer")
  if(BPFDIFF_LIBFUZZER)
    # SanitizerCoverage as -fsanitize=fuzzer-no-link gives it (edge
    # counters, indirect calls, the PC table), but only in the code that a
    # fuzz target exists to explore (fuzz/feedback_allowlist.txt); only
    # fuzz targets link the libFuzzer driver (see fuzz_target.cmake).
    # The compiler's dependency files do not name the list, so the build
    # uses a copy named by its hash: an edit reconfigures, the flag changes
    # and everything is compiled again.
    set(_allowlist ${CMAKE_SOURCE_DIR}/fuzz/feedback_allowlist.txt)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_allowlist})
    file(SHA256 ${_allowlist} _allowlist_hash)
    string(SUBSTRING ${_allowlist_hash} 0 12 _allowlist_hash)
    set(_allowlist_copy ${CMAKE_BINARY_DIR}/feedback_allowlist-${_allowlist_hash}.txt)
    configure_file(${_allowlist} ${_allowlist_copy} COPYONLY)
    add_compile_options(
      -fsanitize-coverage=inline-8bit-counters,indirect-calls,pc-table
      -fsanitize-coverage-allowlist=${_allowlist_copy})
    # Comparisons are traced (trace-cmp) only where bpfdiff's JIT compares
    # immediates and offsets with their encoding ranges: the targets that
    # call bpfdiff_trace_comparisons() (jit/; the kernel's JIT is not,
    # kernelsrc/CMakeLists.txt says why). diff_fuzzer's
    # mutator hands some mutations to libFuzzer's own (LLVMFuzzerMutate),
    # whose comparison-guided replacements put those bounds into the
    # records' plain little-endian words (fuzz/generator/fuzz_format.h).
    # Elsewhere a traced comparison was one more feature per run and said
    # nothing about the code under test. (-fno-sanitize-coverage wins over
    # -fsanitize-coverage whatever their order, so it is added where wanted,
    # not removed where not.)
    set(BPFDIFF_TRACE_COMPARISONS -fsanitize-coverage=trace-cmp)
    # Every other executable (the CLI, tests, benchmarks) links the coverage
    # runtime without libFuzzer's main.
    add_link_options(-fsanitize=fuzzer-no-link)
  endif()
elseif(BPFDIFF_INSTRUMENT STREQUAL "source-coverage")
  # The flags of OSS-Fuzz's COVERAGE_FLAGS_coverage that instrument
  # (google/oss-fuzz infra/base-images/base-builder/Dockerfile).
  add_compile_options(-fprofile-instr-generate -fcoverage-mapping)
  add_link_options(-fprofile-instr-generate)
elseif(NOT BPFDIFF_INSTRUMENT STREQUAL "none")
  message(FATAL_ERROR "BPFDIFF_INSTRUMENT is '${BPFDIFF_INSTRUMENT}'; "
                      "use libfuzzer, source-coverage or none")
endif()

# bpfdiff_trace_comparisons(<target>): trace the target's comparisons for
# libFuzzer (see above); nothing in any other build.
function(bpfdiff_trace_comparisons target)
  if(BPFDIFF_TRACE_COMPARISONS)
    target_compile_options(${target} PRIVATE ${BPFDIFF_TRACE_COMPARISONS})
  endif()
endfunction()
