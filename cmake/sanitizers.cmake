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
    # Coverage instrumentation for every library; only fuzz targets link the
    # libFuzzer driver (see fuzz_target.cmake).
    add_compile_options(-fsanitize=fuzzer-no-link)
    # Comparisons are traced too (trace-cmp, the default): diff_fuzzer's
    # mutator hands some mutations to libFuzzer's own (LLVMFuzzerMutate),
    # whose comparison-guided replacements put the JIT's own bounds
    # (encoding ranges of immediates and offsets) into the records' plain
    # little-endian words (fuzz/generator/fuzz_format.h).
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
