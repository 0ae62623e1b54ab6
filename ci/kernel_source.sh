#!/usr/bin/env bash
# Extracts from Debian's linux-source-6.12 (installed by ci/setup.sh) the part
# of the tree that bpfdiff's kernel engines compile and include, into a cache
# outside the repository: ${XDG_CACHE_HOME:-$HOME/.cache}/bpfdiff/linux-source-6.12.
# Nothing of the kernel is copied into bpfdiff. Idempotent: an extraction
# from the same tarball is kept. About 20 s when it runs.
#
# To test another tree (a maintainer's checkout, patches applied), skip this
# and point the build at it: BPFDIFF_KERNEL_SOURCE=/path/to/linux.
set -euo pipefail

tarball=${1:-/usr/src/linux-source-6.12.tar.xz}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/bpfdiff/linux-source-6.12
top=linux-source-6.12

if [[ ! -f $tarball ]]; then
  echo "kernel_source: $tarball is missing (apt-get install linux-source-6.12, or run ci/setup.sh)" >&2
  exit 1
fi

stamp="$(stat -c '%s %Y' "$tarball") $tarball"
if [[ -f $cache/.bpfdiff-extracted && $(cat "$cache/.bpfdiff-extracted") == "$stamp" ]]; then
  exit 0
fi

# What cmake/kernel_source.cmake reads (BPFDIFF_KERNEL_TREE_FILES), plus the
# user-space headers of tools/ that the shims build on.
members=(
  Makefile
  arch/arm64/net
  arch/arm64/lib/insn.c
  arch/arm64/include/asm/insn.h
  arch/arm64/include/asm/insn-def.h
  arch/arm64/include/asm/brk-imm.h
  arch/arm64/include/asm/patching.h
  arch/arm64/include/asm/asm-extable.h
  arch/arm64/include/asm/gpr-num.h
  arch/arm64/tools/gen-cpucaps.awk
  arch/arm64/tools/cpucaps
  tools/include
  tools/arch/x86/include
)

mkdir -p "${cache%/*}"
tmp=$(mktemp -d "${cache%/*}/.extract.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tar -xJf "$tarball" -C "$tmp" "${members[@]/#/$top/}"
echo "$stamp" > "$tmp/$top/.bpfdiff-extracted"
rm -rf "$cache"
mv "$tmp/$top" "$cache"
echo "kernel_source: extracted $(find "$cache" -type f | wc -l) files of $tarball into $cache"
