# Sanitizers apply to everything we compile, so that a report in a library is
# seen by every test and fuzz target that uses it.
if(BPFDIFF_SANITIZE)
  add_compile_options(-fsanitize=${BPFDIFF_SANITIZE} -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${BPFDIFF_SANITIZE})
endif()
if(BPFDIFF_LIBFUZZER)
  # Coverage instrumentation for every library; only fuzz targets link the
  # libFuzzer driver (see fuzz_target.cmake).
  add_compile_options(-fsanitize=fuzzer-no-link)
  # The targets mutate with their own structure-aware mutators, which use
  # no comparison operands: tracing every comparison only costs time.
  add_compile_options(-fno-sanitize-coverage=trace-cmp)
  # Every other executable (the CLI, tests, benchmarks) links the coverage
  # runtime without libFuzzer's main.
  add_link_options(-fsanitize=fuzzer-no-link)
endif()
