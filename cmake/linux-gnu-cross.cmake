# What the cross toolchain files (cmake/<triplet>.cmake) share. Each sets PM_CROSS_TRIPLET (the
# prefix of Debian's cross compilers and their sysroot under /usr), PM_CROSS_MULTIARCH (Debian's
# multiarch library directory, where the target's -dev packages install) and
# CMAKE_SYSTEM_PROCESSOR, then includes this file.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_C_COMPILER ${PM_CROSS_TRIPLET}-gcc)
set(CMAKE_CXX_COMPILER ${PM_CROSS_TRIPLET}-g++)
set(CMAKE_LIBRARY_ARCHITECTURE ${PM_CROSS_MULTIARCH})
set(CMAKE_FIND_ROOT_PATH /usr/${PM_CROSS_TRIPLET} /usr/lib/${PM_CROSS_MULTIARCH})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# Tests run under qemu-user (CMAKE_CROSSCOMPILING_EMULATOR) without -L: qemu then loads the
# multiarch libc's own loader. With -L /usr/<triplet> it would pair the cross package's ld.so with
# multiarch's libc.so.6, a mix in which pthread_create never returns.
