#!/usr/bin/env bash
# Cross-builds posematch for another Linux CPU and runs the whole suite under qemu-user, with the
# native release CLI as the reference of tests/cli/test_cross_build.sh: databases, exports,
# searches and blends of the cross build must be the x86-64 build's bytes.
#   aarch64  64-bit ARM (Debian arm64)
#   armhf    32-bit ARM, ARMv7 with VFPv3-D16 and hard float (Debian armhf): 32-bit pointers,
#            sizes and time_t, and a floating-point unit without x86's SIMD
#   i386     32-bit x86 with SSE2 arithmetic (CMakeLists.txt adds -msse2 -mfpmath=sse); an x86-64
#            kernel runs it directly, without qemu
# Optional (not part of `make test`): it installs Debian's cross compiler, qemu-user and the
# target's -dev packages (multiarch), and the shell tests run the cross CLI directly, which for
# the ARM targets needs binfmt_misc (registered here if missing; that stays registered on the
# host, `echo -1 > /proc/sys/fs/binfmt_misc/qemu-<cpu>` undoes it).
# Usage: scripts/test-cross.sh aarch64|armhf|i386 NATIVE_BUILD_DIR CROSS_BUILD_DIR
set -euo pipefail
usage="usage: $0 aarch64|armhf|i386 NATIVE_BUILD_DIR CROSS_BUILD_DIR"
case "${1:-}" in
  aarch64) triplet=aarch64-linux-gnu debarch=arm64 qemu=qemu-aarch64 ;;
  armhf) triplet=arm-linux-gnueabihf debarch=armhf qemu=qemu-arm ;;
  i386) triplet=i686-linux-gnu debarch=i386 qemu= ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
[ $# -eq 3 ] || { echo "$usage" >&2; exit 2; }
native=$(cd "$2" && pwd)
cross=$3
[ -x "$native/posematch" ] || { echo "error: $native/posematch is missing: build the native release first (make)" >&2; exit 1; }
pkgs=("gcc-$triplet" "g++-$triplet" "libcmocka-dev:$debarch" "libcjson-dev:$debarch")
[ -z "$qemu" ] || pkgs+=(qemu-user qemu-user-binfmt)
# valgrind runs 32-bit x86 programs with the target's C library symbols (tests/cli/test_memcheck.sh)
[ "$debarch" != i386 ] || ! command -v valgrind > /dev/null || pkgs+=(libc6-dbg:i386)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] || { echo "error: missing packages (${missing[*]}) and not root" >&2; exit 1; }
  echo "installing: ${missing[*]}" >&2
  dpkg --print-foreign-architectures | grep -qx "$debarch" || dpkg --add-architecture "$debarch"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
binfmt=/proc/sys/fs/binfmt_misc
if [ -n "$qemu" ] && [ ! -e "$binfmt/$qemu" ]; then
  [ -e "$binfmt/register" ] || mount -t binfmt_misc binfmt_misc "$binfmt" ||
    { echo "error: binfmt_misc is not mounted and cannot be (a container without the privilege?)" >&2; exit 1; }
  [ -e "$binfmt/$qemu" ] || cat "/usr/lib/binfmt.d/$qemu.conf" > "$binfmt/register" ||
    { echo "error: cannot register $qemu with binfmt_misc" >&2; exit 1; }
fi
cmake -S . -B "$cross" -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/$triplet.cmake" -DCMAKE_BUILD_TYPE=Release \
  -DPM_WERROR=ON -DPM_BUILD_BENCH=OFF -DPM_REFERENCE_CLI="$native/posematch" >/dev/null
cmake --build "$cross" -j "$(nproc 2>/dev/null || echo 2)"
cd "$cross" && ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" --timeout 1800
