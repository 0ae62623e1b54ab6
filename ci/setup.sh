#!/usr/bin/env bash
# Installs what bpfdiff needs from Debian 12 packages, then extracts the part
# of each kernel tree the kernel engines build from (ci/kernel_source.sh):
# 6.12, which the builds read by default, and 6.1 (Debian 12's own kernel),
# the second tree of the nightly (BPFDIFF_NIGHTLY_TREES) and of a build
# pointed at it (BPFDIFF_KERNEL_SOURCE).
# Idempotent: when everything is in place it prints nothing and exits 0.
# Run as root (or with sudo).
set -euo pipefail

packages=(
  cmake ninja-build pkg-config git zip unzip
  g++  # the GCC 12 compile check (ci/test.sh)
  clang-14 libclang-rt-14-dev llvm-14 llvm-14-dev llvm-14-tools
  libunicorn-dev
  libvixl-dev  # VIXL's AArch64 simulator, the second executor (harness/machine/vixl_cpu.h)
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev
  chromium fonts-dejavu-core  # the HTML report's headless check (tests/report)
  libc++-14-dev libc++abi-14-dev python3 python3-yaml  # the OSS-Fuzz check (ci/oss-fuzz/check.sh, tests/oss_fuzz)
  linux-source-6.12 linux-source-6.1 xz-utils  # the kernel's own arm64 JIT, built as engines (kernelsrc/)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# Both trees, each into the cache directory named after its tarball.
extract_trees() {
  "$(dirname "$0")/kernel_source.sh"
  "$(dirname "$0")/kernel_source.sh" /usr/src/linux-source-6.1.tar.xz \
    "${XDG_CACHE_HOME:-$HOME/.cache}/bpfdiff/linux-source-6.1"
}
if [[ ${#missing[@]} -eq 0 ]]; then
  extract_trees
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "setup: run as root or install sudo" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
extract_trees
