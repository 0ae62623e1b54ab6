#!/bin/bash -eu
# OSS-Fuzz build script (also ClusterFuzzLite's, through
# .clusterfuzzlite/build.sh). OSS-Fuzz's compile step runs it with CC, CXX,
# CFLAGS, CXXFLAGS (-stdlib=libc++ included), LIB_FUZZING_ENGINE, SANITIZER
# (address, undefined or coverage), SRC, OUT and WORK set
# (google/oss-fuzz infra/base-images/base-builder/compile).
#
# 1. Unicorn 2, when the image has its source in $SRC/unicorn (the
#    Dockerfile's pinned clone): built static, for AArch64 only, into
#    $WORK/unicorn-install. It gets the sanitizer but not the coverage
#    instrumentation, so that libFuzzer's features come from our code.
#    Without $SRC/unicorn, pkg-config must find a Unicorn whose libdir holds
#    libunicorn.a (ci/oss-fuzz/check.sh uses Debian's).
# 2. The fuzz targets only (BPFDIFF_FUZZ_TARGETS_ONLY), linked with
#    $LIB_FUZZING_ENGINE, fmt header-only and Unicorn's static archive
#    (BPFDIFF_STATIC_DEPS), in $WORK/bpfdiff. With libFuzzer (the default
#    when FUZZING_ENGINE is unset, as in ci/oss-fuzz/check.sh) and a
#    sanitizer, SanitizerCoverage is limited to the code the targets exist
#    to explore (fuzz/feedback_allowlist.txt), as in our own builds (there
#    OSS-Fuzz's flags trace comparisons in all of that code, ours in the
#    JITs only).
# 3. Into $OUT, every target the build declared (its fuzz_targets.tsv, so a
#    new target needs no change here), each with <target>.options,
#    <target>.dict and <target>_seed_corpus.zip when it has them. Seeds are
#    written by hand (fuzz/tools/) and committed: this only copies and zips.
#
# BPFDIFF_PLANT_LINK ("<target>:<link flags>", empty on OSS-Fuzz) is the local
# check's planted-library test (cmake/fuzz_target.cmake).
project_dir="$SRC/bpfdiff"

if [[ -d "$SRC/unicorn" ]]; then
  # Unicorn is C: CFLAGS without SanitizerCoverage (-fsanitize=fuzzer-no-link)
  # and, for SANITIZER=coverage, without source-based coverage, whose report
  # is about our code.
  unicorn_cflags=" $CFLAGS "
  for flag in -fsanitize=fuzzer-no-link -fprofile-instr-generate -fcoverage-mapping; do
    unicorn_cflags=${unicorn_cflags// $flag / }
  done
  CFLAGS="$unicorn_cflags" cmake -S "$SRC/unicorn" -B "$WORK/unicorn" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER="$CC" \
    -DBUILD_SHARED_LIBS=OFF -DUNICORN_ARCH=aarch64 -DUNICORN_BUILD_TESTS=OFF \
    -DUNICORN_INSTALL=ON -DCMAKE_INSTALL_PREFIX="$WORK/unicorn-install" -DCMAKE_INSTALL_LIBDIR=lib
  cmake --build "$WORK/unicorn"
  cmake --install "$WORK/unicorn" >/dev/null
  export PKG_CONFIG_PATH="$WORK/unicorn-install/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
fi

if [[ "${FUZZING_ENGINE:-libfuzzer}" == libfuzzer && "$SANITIZER" != coverage ]]; then
  allowlist="-fsanitize-coverage-allowlist=$project_dir/fuzz/feedback_allowlist.txt"
  CFLAGS="$CFLAGS $allowlist"
  CXXFLAGS="$CXXFLAGS $allowlist"
fi

# No build type: $CFLAGS carry OSS-Fuzz's optimisation level, and assertions
# stay on.
cmake -S "$project_dir" -B "$WORK/bpfdiff" -G Ninja \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_CXX_FLAGS="$CXXFLAGS" -DCMAKE_BUILD_TYPE= \
  -DBPFDIFF_FUZZ_TARGETS_ONLY=ON -DBPFDIFF_STATIC_DEPS=ON \
  -DBPFDIFF_LIBFUZZER=ON -DBPFDIFF_INSTRUMENT=none \
  -DBPFDIFF_FUZZING_ENGINE="$LIB_FUZZING_ENGINE" \
  -DBPFDIFF_PLANT_LINK="${BPFDIFF_PLANT_LINK:-}"
cmake --build "$WORK/bpfdiff" --target all_fuzzers

manifest="$WORK/bpfdiff/fuzz_targets.tsv"
[[ -s "$manifest" ]] || { echo "build.sh: $manifest lists no fuzz target" >&2; exit 1; }
while IFS=$'\t' read -r target binary; do
  cp "$binary" "$OUT/$target"
  for extra in options dict; do
    if [[ -f "$project_dir/fuzz/targets/$target.$extra" ]]; then
      cp "$project_dir/fuzz/targets/$target.$extra" "$OUT/"
    fi
  done
  corpus="$project_dir/fuzz/corpus/$target"
  if [[ -d "$corpus" ]]; then
    rm -f "$OUT/${target}_seed_corpus.zip"
    (cd "$corpus" && zip -q -r -X "$OUT/${target}_seed_corpus.zip" .)
  fi
done < "$manifest"
