#!/usr/bin/env bash
# Extracts from a Linux source tarball the part of the tree that bpfdiff's
# kernel engines compile and include:
#
#   ci/kernel_source.sh [TARBALL [DIR]]
#
# TARBALL defaults to Debian's linux-source-6.12 (installed by ci/setup.sh),
# DIR to a cache outside the repository,
# ${XDG_CACHE_HOME:-$HOME/.cache}/bpfdiff/linux-source-6.12, where the build
# looks by default. The tarball's top directory is its name without
# .tar.xz, as in Debian's (linux-source-6.12) and kernel.org's
# (linux-6.12.118) tarballs; the OSS-Fuzz build extracts kernel.org's this
# way (ci/oss-fuzz/build.sh). Nothing of the kernel is copied into bpfdiff.
# Idempotent: an extraction from the same tarball is kept. About 20 s when
# it runs.
#
# To test another tree (a maintainer's checkout, patches applied), skip this
# and point the build at it: BPFDIFF_KERNEL_SOURCE=/path/to/linux.
set -euo pipefail

tarball=${1:-/usr/src/linux-source-6.12.tar.xz}
cache=${2:-${XDG_CACHE_HOME:-$HOME/.cache}/bpfdiff/linux-source-6.12}
top=$(basename "$tarball" .tar.xz)

if [[ ! -f $tarball ]]; then
  echo "kernel_source: $tarball is missing (apt-get install linux-source-6.12, or run ci/setup.sh)" >&2
  exit 1
fi

# The stamp names the list of files and the tarball (last: the check that
# the compiled files are the tarball's reads it there), so that a list that
# grows (a new file of the tree compiled) extracts again.
list="$(dirname "$0")/../kernelsrc/tree_files.txt"
stamp="$(stat -L -c '%s %Y' "$tarball") $(sha256sum < "$list" | cut -c1-16) $tarball"
if [[ -f $cache/.bpfdiff-extracted && $(cat "$cache/.bpfdiff-extracted") == "$stamp" ]]; then
  exit 0
fi

# What the build reads (kernelsrc/tree_files.txt, which
# cmake/kernel_source.cmake checks a tree for), and the user-space headers of
# tools/ that the shims build on.
mapfile -t members < <(grep -v '^#' "$list")
members+=(tools/include tools/arch/x86/include)

mkdir -p "${cache%/*}"
tmp=$(mktemp -d "${cache%/*}/.extract.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tar -xJf "$tarball" -C "$tmp" "${members[@]/#/$top/}"
echo "$stamp" > "$tmp/$top/.bpfdiff-extracted"
rm -rf "$cache"
mv "$tmp/$top" "$cache"
echo "kernel_source: extracted $(find "$cache" -type f | wc -l) files of $tarball into $cache"
