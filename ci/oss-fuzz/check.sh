#!/usr/bin/env bash
# The OSS-Fuzz build, checked on this machine:
#
#   ci/oss-fuzz/check.sh [--sanitizer address|undefined|coverage] [--out DIR]
#                        [--work DIR] [--only TARGET] [--plant TARGET]
#                        [--vixl DIR]
#
# 1. Sets up what OSS-Fuzz's compile step sets up (google/oss-fuzz
#    @ 955c6866: infra/base-images/base-clang/Dockerfile, base-builder/
#    Dockerfile, base-builder/compile): CC, CXX, CFLAGS and CXXFLAGS
#    (-stdlib=libc++) for SANITIZER, LIB_FUZZING_ENGINE, SRC, OUT, WORK;
#    with clang-14 and Debian's libc++ where OSS-Fuzz has its own clang.
# 2. Runs ci/oss-fuzz/build.sh (as $SRC/build.sh, with bash -eux) into a
#    fresh $OUT (--out, default build/oss-fuzz/out; left there for the
#    caller). $WORK (--work, default /tmp/bpfdiff-oss-fuzz-work.<hash of
#    the checkout's path>: outside the checkout, since $SRC/bpfdiff links to
#    the checkout and CMake refuses a try_compile tree inside its own
#    source tree reached through that link; one per
#    sanitizer) is kept between runs, so a rerun builds incrementally.
# 3. Checks every target in $OUT as OSS-Fuzz's check_build does
#    (ci/oss-fuzz/check_out.py), and that every target the checkout
#    declares (bpfdiff_fuzz_target, in fuzz/targets/ or beside the parser it
#    fuzzes) is there.
#
# What differs from OSS-Fuzz, and what the check does about it:
#  - Linux: Debian's linux-source-6.12 (6.12.118) stands in for kernel.org's
#    tarball of the same release; build.sh checks the JIT's files against
#    the same hashes either way.
#  - Unicorn: Debian's static libunicorn.a 2.0.1 (all architectures, no
#    instrumentation) stands in for the pinned 2.1.4 that build.sh builds
#    from $SRC/unicorn in the OSS-Fuzz image; there is no $SRC/unicorn here.
#  - VIXL: Debian ships it shared only, and no source, so by default there
#    is no $SRC/vixl here and build.sh builds the targets without it:
#    diff_fuzzer and diff_fuzzer_kernel run Unicorn alone, where on OSS-Fuzz
#    they run on VIXL and check on Unicorn. --vixl DIR gives a VIXL source
#    tree (a clone of the release the Dockerfile pins) as $SRC/vixl, to
#    check that path too.
#  - libFuzzer: Debian's libclang_rt.fuzzer is built against libstdc++, so
#    a -stdlib=libc++ target links only with libstdc++ added, whereas
#    OSS-Fuzz's libFuzzer is built against libc++. Linking libstdc++ into
#    the target, shared or static, would hide from this check a library
#    built against libstdc++ that the target pulls in (the very thing that
#    does not link on OSS-Fuzz), and clashes with libc++'s ABI symbols.
#    So LIB_FUZZING_ENGINE is one object: libFuzzer partially linked with
#    a static libstdc++ and every symbol but libFuzzer's own C interface
#    made local (the way compiler-rt's own build isolates libFuzzer's C++
#    library: compiler-rt/lib/fuzzer/CMakeLists.txt, partially_link_libcxx).
#    It plays the part of OSS-Fuzz's -fsanitize=fuzzer.
#  - libc++: Debian installs it shared and static; OSS-Fuzz builds it static
#    only (base-clang/checkout_build_install_llvm.sh), which is why its
#    targets need no libc++.so. LDFLAGS puts a directory holding only the
#    static libc++.a (which carries libc++abi, as OSS-Fuzz's does) first.
#
# --plant TARGET links libunicorn.so into TARGET as well (build.sh's
# BPFDIFF_PLANT_LINK): the check must then fail on that target's NEEDED
# list (tests/oss_fuzz/planted_shared_library.sh). --only TARGET checks
# that target alone.
set -euo pipefail
checkout=$(cd "$(dirname "$0")/../.." && pwd)
sanitizer=address
out=$checkout/build/oss-fuzz/out
work=${TMPDIR:-/tmp}/bpfdiff-oss-fuzz-work.$(printf '%s' "$checkout" | md5sum | cut -c1-12)
only=""
plant=""
vixl=""
usage() { echo "usage: $0 [--sanitizer address|undefined|coverage] [--out DIR] [--work DIR] [--only TARGET] [--plant TARGET] [--vixl DIR]" >&2; exit 2; }
while (($#)); do
  case $1 in
    --sanitizer) sanitizer=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --work) work=${2:?}; shift 2 ;;
    --only) only=${2:?}; shift 2 ;;
    --plant) plant=${2:?}; shift 2 ;;
    --vixl) vixl=${2:?}; shift 2 ;;
    *) usage ;;
  esac
done
case $sanitizer in address|undefined|coverage) ;; *) usage ;; esac
started=$SECONDS

# A fresh $OUT; a directory the check did not make is never removed.
marker=.oss-fuzz-check-out
if [[ -d "$out" && -n "$(ls -A "$out")" && ! -e "$out/$marker" ]]; then
  echo "oss-fuzz check: $out holds files the check did not write; give another --out" >&2
  exit 2
fi
rm -rf "$out"
mkdir -p "$out" "$work/src" "$work/$sanitizer"
touch "$out/$marker"
out=$(cd "$out" && pwd)
work=$(cd "$work" && pwd)

# The image's layout: the project in $SRC/bpfdiff, build.sh in $SRC.
export SRC=$work/src OUT=$out WORK=$work/$sanitizer SANITIZER=$sanitizer
ln -sfn "$checkout" "$SRC/bpfdiff"
cp "$checkout/ci/oss-fuzz/build.sh" "$SRC/build.sh"
# The Linux tarball the image downloads (kernel.org's 6.12.118): Debian's
# linux-source-6.12 (ci/setup.sh) stands in, its JIT files the same.
kernel_tarball=/usr/src/linux-source-6.12.tar.xz
if [[ ! -f $kernel_tarball ]]; then
  echo "oss-fuzz check: $kernel_tarball is missing (ci/setup.sh installs linux-source-6.12)" >&2
  exit 2
fi
rm -f "$SRC"/linux*.tar.xz
ln -s "$kernel_tarball" "$SRC/"
rm -f "$SRC/vixl"
if [[ -n "$vixl" ]]; then
  if [[ ! -f "$vixl/src/aarch64/simulator-aarch64.cc" ]]; then
    echo "oss-fuzz check: --vixl $vixl is not a VIXL source tree (no src/aarch64/simulator-aarch64.cc)" >&2
    exit 2
  fi
  ln -s "$(cd "$vixl" && pwd)" "$SRC/vixl"
fi

# base-clang's compiler and flags.
export CC=clang-14 CXX=clang++-14
cflags="-O1 -fno-omit-frame-pointer -gline-tables-only -Wno-error=incompatible-function-pointer-types \
-Wno-error=int-conversion -Wno-error=deprecated-declarations -Wno-error=implicit-function-declaration \
-Wno-error=implicit-int -Wno-error=unknown-warning-option -Wno-error=vla-cxx-extension \
-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION"
# base-builder's SANITIZER_FLAGS_$SANITIZER and COVERAGE_FLAGS, as compile
# combines them.
coverage_flags="-fsanitize=fuzzer-no-link"
case $sanitizer in
  address) sanitizer_flags="-fsanitize=address -fsanitize-address-use-after-scope" ;;
  undefined)
    sanitizer_flags="-fsanitize=array-bounds,bool,builtin,enum,function,integer-divide-by-zero,null,object-size,\
return,returns-nonnull-attribute,shift,signed-integer-overflow,unsigned-integer-overflow,unreachable,vla-bound,vptr \
-fno-sanitize-recover=array-bounds,bool,builtin,enum,function,integer-divide-by-zero,null,object-size,return,\
returns-nonnull-attribute,shift,signed-integer-overflow,unreachable,vla-bound,vptr" ;;
  coverage)
    sanitizer_flags=""
    coverage_flags="-fprofile-instr-generate -fcoverage-mapping -pthread -Wl,--no-as-needed -Wl,-ldl -Wl,-lm \
-Wno-unused-command-line-argument" ;;
esac
export CFLAGS="$cflags $sanitizer_flags $coverage_flags"
export CXXFLAGS="$CFLAGS -stdlib=libc++"
if [[ $sanitizer == undefined ]]; then CFLAGS+=" -fno-sanitize=function"; fi

# libc++ as OSS-Fuzz has it: static only.
mkdir -p "$WORK/libcxx-static"
ln -sf "$("$CXX" -stdlib=libc++ -print-file-name=libc++.a)" "$WORK/libcxx-static/libc++.a"
export LDFLAGS="-L$WORK/libcxx-static"

# libFuzzer with a private libstdc++ (see above).
libfuzzer_archive=$("$CXX" -print-file-name=libclang_rt.fuzzer-x86_64.a)
engine=$WORK/libfuzzer-private-libstdcxx.o
if [[ ! "$engine" -nt "$libfuzzer_archive" ]]; then
  # --force-group-allocation resolves the COMDAT groups here: a group left
  # in the object would, once its symbols are local, take the place of the
  # same group in libc++ (DW.ref.__gxx_personality_v0) and leave libc++'s
  # references to it undefined.
  ld -r --force-group-allocation -o "$engine.partial" --whole-archive "$libfuzzer_archive" \
    --no-whole-archive "$(g++ -print-file-name=libstdc++.a)"
  nm -g --defined-only "$libfuzzer_archive" 2>/dev/null | awk 'NF == 3 && $3 !~ /^_Z/ { print $3 }' |
    sort -u > "$engine.interface"
  objcopy --keep-global-symbols="$engine.interface" "$engine.partial" "$engine"
  rm -f "$engine.partial"
fi
export LIB_FUZZING_ENGINE=$engine

export BPFDIFF_PLANT_LINK=""
if [[ -n "$plant" ]]; then
  BPFDIFF_PLANT_LINK="$plant:-Wl,--no-as-needed -lunicorn -Wl,--as-needed"
  echo "oss-fuzz check: planted in $plant's link: libunicorn.so (-lunicorn); the check must fail"
fi

echo "oss-fuzz check: SANITIZER=$sanitizer, OSS-Fuzz's compile step with $CXX and Debian's static libc++"
echo "  Unicorn: Debian's static libunicorn.a $(pkg-config --modversion unicorn) stands in for the pinned 2.1.4 built from source on OSS-Fuzz"
if [[ -n "$vixl" ]]; then
  echo "  VIXL: from the source tree $vixl, as from the image's pinned clone"
else
  echo "  VIXL: none (Debian ships no source): diff_fuzzer and diff_fuzzer_kernel run Unicorn alone, where OSS-Fuzz's run on VIXL"
fi
echo "  libFuzzer: Debian's (built against libstdc++), as one object with a private static libstdc++: $LIB_FUZZING_ENGINE"
log=$WORK/build.log
if ! (cd "$SRC/bpfdiff" && bash -eux "$SRC/build.sh") >"$log" 2>&1; then
  tail -30 "$log"
  echo "oss-fuzz check: FAILED: build.sh failed; its log is $log"
  exit 1
fi
# compile copies the symbolizer next to the targets (base-builder/compile).
cp "$(command -v llvm-symbolizer-14)" "$OUT/llvm-symbolizer"
echo "  build.sh: $(($SECONDS - started)) s; \$OUT is $OUT"

checks_started=$SECONDS
status=0
python3 "$checkout/ci/oss-fuzz/check_out.py" --out "$OUT" --sanitizer "$sanitizer" ${only:+--only "$only"} \
  --source-dir "$checkout" || status=$?
echo "  checks: $(($SECONDS - checks_started)) s; whole check: $(($SECONDS - started)) s"
exit $status
