# Cross-compiling for 32-bit x86 Linux with Debian's gcc-i686-linux-gnu; an x86-64 kernel runs the
# tests directly (scripts/test-cross.sh, `make test-i386`). The i386 -dev packages
# (libcmocka-dev:i386, libcjson-dev:i386) come from Debian's multiarch.
set(PM_CROSS_TRIPLET i686-linux-gnu)
set(PM_CROSS_MULTIARCH i386-linux-gnu)
set(CMAKE_SYSTEM_PROCESSOR i686)
include(${CMAKE_CURRENT_LIST_DIR}/linux-gnu-cross.cmake)
