#!/usr/bin/env bash
# Cross-builds posematch for AArch64 and runs the whole suite under qemu-user, with the native
# release CLI as the reference of tests/cli/test_cross_build.sh: databases, exports, searches and
# blends of the ARM build must be the x86-64 build's bytes. Optional (not part of `make test`):
# it installs Debian's cross compiler, qemu-user and arm64 -dev packages (multiarch), and the
# shell tests run the ARM CLI directly, which needs binfmt_misc (registered here if missing; that
# stays registered on the host, `echo -1 > /proc/sys/fs/binfmt_misc/qemu-aarch64` undoes it).
# Usage: scripts/test-aarch64.sh NATIVE_BUILD_DIR CROSS_BUILD_DIR
set -euo pipefail
native=$(cd "$1" && pwd)
cross=$2
[ -x "$native/posematch" ] || { echo "error: $native/posematch is missing: build the native release first (make)" >&2; exit 1; }
pkgs=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user qemu-user-binfmt libcmocka-dev:arm64 libcjson-dev:arm64)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] || { echo "error: missing packages (${missing[*]}) and not root" >&2; exit 1; }
  echo "installing: ${missing[*]}" >&2
  dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
binfmt=/proc/sys/fs/binfmt_misc
if [ ! -e "$binfmt/qemu-aarch64" ]; then
  [ -e "$binfmt/register" ] || mount -t binfmt_misc binfmt_misc "$binfmt" ||
    { echo "error: binfmt_misc is not mounted and cannot be (a container without the privilege?)" >&2; exit 1; }
  [ -e "$binfmt/qemu-aarch64" ] || cat /usr/lib/binfmt.d/qemu-aarch64.conf > "$binfmt/register" ||
    { echo "error: cannot register qemu-aarch64 with binfmt_misc" >&2; exit 1; }
fi
cmake -S . -B "$cross" -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/aarch64-linux-gnu.cmake" -DCMAKE_BUILD_TYPE=Release \
  -DPM_WERROR=ON -DPM_BUILD_BENCH=OFF -DPM_REFERENCE_CLI="$native/posematch" >/dev/null
cmake --build "$cross" -j "$(nproc 2>/dev/null || echo 2)"
cd "$cross" && ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" --timeout 1800
