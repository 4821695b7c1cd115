# Cross-compiling for 32-bit ARM Linux (ARMv7 with VFPv3-D16, hard float: Debian's armhf baseline)
# with Debian's gcc-arm-linux-gnueabihf; tests run through qemu-arm (scripts/test-cross.sh,
# `make test-armhf`). The armhf -dev packages (libcmocka-dev:armhf, libcjson-dev:armhf) come from
# Debian's multiarch.
set(PM_CROSS_TRIPLET arm-linux-gnueabihf)
set(PM_CROSS_MULTIARCH arm-linux-gnueabihf)
set(CMAKE_SYSTEM_PROCESSOR arm)
include(${CMAKE_CURRENT_LIST_DIR}/linux-gnu-cross.cmake)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-arm)
