# Cross-compiling for 32-bit ARM Linux (ARMv7 with VFPv3-D16, hard float: Debian's armhf baseline)
# with Debian's gcc-arm-linux-gnueabihf; tests run through qemu-arm (scripts/test-cross.sh,
# `make test-armhf`). The armhf -dev packages (libcmocka-dev:armhf, libcjson-dev:armhf) come from
# Debian's multiarch.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-linux-gnueabihf-gcc)
set(CMAKE_CXX_COMPILER arm-linux-gnueabihf-g++)
set(CMAKE_LIBRARY_ARCHITECTURE arm-linux-gnueabihf)
set(CMAKE_FIND_ROOT_PATH /usr/arm-linux-gnueabihf /usr/lib/arm-linux-gnueabihf)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# Without -L: qemu then loads the multiarch libc6:armhf's own loader. With -L /usr/arm-linux-gnueabihf
# it would pair the cross package's ld.so with multiarch's libc.so.6, a mix in which
# pthread_create never returns.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-arm)
