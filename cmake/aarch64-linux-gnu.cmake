# Cross-compiling for 64-bit ARM Linux with Debian's gcc-aarch64-linux-gnu; tests run through
# qemu-aarch64 (scripts/test-cross.sh, `make test-aarch64`). The arm64 -dev packages
# (libcmocka-dev:arm64, libcjson-dev:arm64) come from Debian's multiarch.
set(PM_CROSS_TRIPLET aarch64-linux-gnu)
set(PM_CROSS_MULTIARCH aarch64-linux-gnu)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/linux-gnu-cross.cmake)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
