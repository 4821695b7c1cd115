# Cross-compiling for 64-bit ARM Linux with Debian's gcc-aarch64-linux-gnu; tests run through
# qemu-aarch64 (scripts/test-cross.sh, `make test-aarch64`). The arm64 -dev packages
# (libcmocka-dev:arm64, libcjson-dev:arm64) come from Debian's multiarch.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# Without -L: qemu then loads the multiarch libc6:arm64's own loader. With -L /usr/aarch64-linux-gnu
# it would pair the cross package's ld.so with multiarch's libc.so.6, a mix in which
# pthread_create never returns.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
