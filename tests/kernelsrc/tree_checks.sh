#!/usr/bin/env bash
# What a maintainer sees when a tree is not one bpfdiff can build (README,
# "Your tree"): a tree that lacks a file the build reads stops the
# configure, naming the file; a tree whose JIT calls a service the shims do
# not provide stops the build where it is called, naming the service.
#
#   tree_checks.sh SOURCE_DIR TREE C_COMPILER
#
# Each scratch tree is a farm of symbolic links to TREE's files (nothing is
# copied but the one file changed), configured in a build of its own.
set -euo pipefail
source_dir=$1 tree=$2 c_compiler=$3
work=$(mktemp -d /tmp/bpfdiff-tree-checks.XXXXXX)
trap 'rm -rf "$work"' EXIT

farm() {
  mkdir -p "$work/$1"
  cp -rs "$tree/." "$work/$1/"
}
configure() {
  cmake -S "$source_dir" -B "$work/build-$1" -G Ninja -DCMAKE_C_COMPILER="$c_compiler" \
    -DBPFDIFF_KERNEL_SOURCE="$work/$1" -DBPFDIFF_KERNEL_JIT=AUTO > "$work/$1.log" 2>&1
}

# A file the build reads is missing.
farm missing-file
rm "$work/missing-file/arch/arm64/lib/insn.c"
if configure missing-file; then
  echo "FAIL: a tree without arch/arm64/lib/insn.c configured"; cat "$work/missing-file.log"; exit 1
fi
# (CMake wraps its messages: read them as one line.)
said=$(tr -s ' \n' ' ' < "$work/missing-file.log")
grep -q "lacks arch/arm64/lib/insn.c, which the build reads" <<<"$said" ||
  { echo "FAIL: the configure did not name the missing file:"; cat "$work/missing-file.log"; exit 1; }
echo "a tree without arch/arm64/lib/insn.c: $(grep -o 'the Linux tree [^ ]* lacks [^,]*' <<<"$said")"

# The JIT calls a service the shims do not provide.
farm missing-service
jit="$work/missing-service/arch/arm64/net/bpf_jit_comp.c"
rm "$jit"
{ cat "$tree/arch/arm64/net/bpf_jit_comp.c"
  printf '\nvoid bpfdiff_tree_check(void) { bpfdiff_service_nobody_provides(); }\n'; } > "$jit"
configure missing-service || { echo "FAIL: the tree did not configure"; cat "$work/missing-service.log"; exit 1; }
if cmake --build "$work/build-missing-service" --target bpfdiff_kernel_c > "$work/build.log" 2>&1; then
  echo "FAIL: a JIT calling a service nobody provides built"; exit 1
fi
grep -Eq "(implicit declaration of function|undeclared function) .bpfdiff_service_nobody_provides" "$work/build.log" ||
  { echo "FAIL: the build did not name the service:"; tail -30 "$work/build.log"; exit 1; }
echo "a JIT calling a service the shims lack: $(grep -Eo "[^ ]*bpf_jit_comp.c:[0-9]+:[0-9]+: error: [^[]*" "$work/build.log" | head -1)"
