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
# 2. The kernel's arm64 JIT, which diff_fuzzer_kernel and pack_fuzzer_kernel
#    run: the part of the tree they build from, extracted by
#    ci/kernel_source.sh from the one Linux tarball in $SRC (the
#    Dockerfile's kernel.org download; ci/oss-fuzz/check.sh gives Debian's
#    linux-source-6.12), into $WORK/linux. The JIT's files must be those of
#    ci/oss-fuzz/linux-<version>.sha256 (Debian's 6.12.118, which the
#    tests and the nightly run), so that OSS-Fuzz fuzzes what they test.
#    A missing tarball is an error: the targets would silently lack the
#    kernel's JIT.
# 3. VIXL, when the image has its source in $SRC/vixl (the Dockerfile's
#    pinned clone): compiled with the targets, statically, from where it
#    lies (BPFDIFF_VIXL_SOURCE, cmake/vixl_source.cmake), so that
#    diff_fuzzer and diff_fuzzer_kernel run every input on VIXL's simulator
#    and check on Unicorn, as our own builds do. Without $SRC/vixl (the
#    local check: Debian ships no VIXL source) they run Unicorn alone, and
#    this says so.
# 4. The fuzz targets only (BPFDIFF_FUZZ_TARGETS_ONLY), linked with
#    $LIB_FUZZING_ENGINE, fmt header-only and Unicorn's static archive
#    (BPFDIFF_STATIC_DEPS), in $WORK/bpfdiff. With libFuzzer (the default
#    when FUZZING_ENGINE is unset, as in ci/oss-fuzz/check.sh) and a
#    sanitizer, SanitizerCoverage is limited to the code the targets exist
#    to explore (fuzz/feedback_allowlist.txt), as in our own builds (there
#    OSS-Fuzz's flags trace comparisons in all of that code, ours in
#    bpfdiff's JIT only).
# 5. Into $OUT, every target the build declared (its fuzz_targets.tsv, so a
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

shopt -s nullglob
tarballs=("$SRC"/linux*.tar.xz)
shopt -u nullglob
if (( ${#tarballs[@]} != 1 )); then
  echo "build.sh: want one Linux source tarball in $SRC (linux*.tar.xz), found ${#tarballs[@]}" >&2
  exit 1
fi
"$project_dir/ci/kernel_source.sh" "${tarballs[0]}" "$WORK/linux"
pinned="$project_dir/ci/oss-fuzz/linux-6.12.118.sha256"
if ! (cd "$WORK/linux" && sha256sum --check --quiet --strict "$pinned"); then
  echo "build.sh: the files of ${tarballs[0]} differ from $pinned" >&2
  exit 1
fi

vixl_source=""
if [[ -d "$SRC/vixl" ]]; then
  vixl_source="$SRC/vixl"
else
  echo "build.sh: no VIXL source in $SRC/vixl: diff_fuzzer and diff_fuzzer_kernel will run Unicorn alone" >&2
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
  -DBPFDIFF_KERNEL_SOURCE="$WORK/linux" -DBPFDIFF_KERNEL_JIT=ON \
  -DBPFDIFF_VIXL_SOURCE="$vixl_source" \
  -DBPFDIFF_PLANT_LINK="${BPFDIFF_PLANT_LINK:-}"
cmake --build "$WORK/bpfdiff" --target all_fuzzers

manifest="$WORK/bpfdiff/fuzz_targets.tsv"
[[ -s "$manifest" ]] || { echo "build.sh: $manifest lists no fuzz target" >&2; exit 1; }
# Each line: the target, its binary, and the target whose seeds, options and
# dictionary it takes (itself, or the base of a kernel target).
while IFS=$'\t' read -r target binary seeds_of; do
  cp "$binary" "$OUT/$target"
  for extra in options dict; do
    if [[ -f "$project_dir/fuzz/targets/$seeds_of.$extra" ]]; then
      cp "$project_dir/fuzz/targets/$seeds_of.$extra" "$OUT/$target.$extra"
    fi
  done
  corpus="$project_dir/fuzz/corpus/$seeds_of"
  if [[ -d "$corpus" ]]; then
    rm -f "$OUT/${target}_seed_corpus.zip"
    (cd "$corpus" && zip -q -r -X "$OUT/${target}_seed_corpus.zip" .)
  fi
done < "$manifest"
