#!/usr/bin/env bash
# MemorySanitizer over the whole suite, then each libFuzzer target for a while: reads of memory
# never written, which ASan and Valgrind's defaults let pass. Optional, not part of `make test`:
# MSan needs every byte of code it runs instrumented, so this rebuilds Debian's own cJSON and
# cmocka sources (the installed versions, fetched with `apt-get source` through a private
# deb-src list) under the same flags and runs the tests with them first on the library path.
# clang 14's MSan runtime has no interceptors for glibc 2.33+'s stat family, so every stat
# result would read as uninitialised: a small shim linked into each program makes the system
# calls itself and marks the result written.
# Usage: scripts/test-msan.sh WORK_DIR [FUZZ_SECONDS]   (root for the package fetch; default 300 s)
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then echo "usage: $0 WORK_DIR [FUZZ_SECONDS]" >&2; exit 2; fi
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
work=$(cd "$1" && pwd)
seconds=${2:-300}
flags=(-fsanitize=memory -fsanitize-memory-track-origins=2 -fno-omit-frame-pointer -O1 -g)
jobs=$(nproc 2>/dev/null || echo 2)

for tool in clang clang++ dpkg-source cmake; do
  command -v "$tool" > /dev/null || { echo "error: $tool is missing (make test installs clang; dpkg-dev gives dpkg-source)" >&2; exit 1; }
done

# Debian's sources of the versions installed, patches applied.
deps="$work/deps"
if [ ! -f "$deps/lib/libcmocka.so.0" ] || [ ! -f "$deps/lib/libcjson.so.1" ]; then
  rm -rf "$deps" && mkdir -p "$deps/apt/lists/partial" "$deps/lib"
  # shellcheck source=/dev/null
  . /etc/os-release
  {
    echo "deb-src http://deb.debian.org/debian $VERSION_CODENAME main"
    echo "deb-src http://deb.debian.org/debian ${VERSION_CODENAME}-updates main"
    echo "deb-src http://deb.debian.org/debian-security ${VERSION_CODENAME}-security main"
  } > "$deps/apt/sources.list"
  apt_opts=(-o "Dir::Etc::SourceList=$deps/apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent
            -o "Dir::State::Lists=$deps/apt/lists")
  apt-get "${apt_opts[@]}" update -qq > /dev/null
  version() { dpkg-query -W -f='${source:Version}' "$1"; }
  (cd "$deps" && apt-get "${apt_opts[@]}" source -qq "cjson=$(version libcjson1)" "cmocka=$(version libcmocka0)" > /dev/null)
  cjson_dir=$(find "$deps" -maxdepth 1 -type d -name 'cjson-*')
  cmocka_dir=$(find "$deps" -maxdepth 1 -type d -name 'cmocka-*')
  # Debian's libcjson1 is the one source file; its soname is what the tools were linked against.
  clang "${flags[@]}" -fPIC -shared -Wl,-soname,libcjson.so.1 -o "$deps/lib/libcjson.so.1" "$cjson_dir/cJSON.c" -lm
  CC=clang cmake -S "$cmocka_dir" -B "$deps/cmocka-build" -DCMAKE_C_FLAGS="${flags[*]}" \
    -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=memory -DUNIT_TESTING=OFF -DWITH_EXAMPLES=OFF > /dev/null
  cmake --build "$deps/cmocka-build" -j "$jobs" > /dev/null
  cp -P "$deps/cmocka-build/src/"libcmocka.so* "$deps/lib/"
fi

cat > "$work/stat_shim.c" << 'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <sanitizer/msan_interface.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
static int written(int r, void *st, size_t size) { if (r == 0) __msan_unpoison(st, size); return r; }
int stat(const char *p, struct stat *st) { return written((int)syscall(SYS_newfstatat, AT_FDCWD, p, st, 0), st, sizeof *st); }
int lstat(const char *p, struct stat *st) { return written((int)syscall(SYS_newfstatat, AT_FDCWD, p, st, AT_SYMLINK_NOFOLLOW), st, sizeof *st); }
int fstat(int fd, struct stat *st) { return written((int)syscall(SYS_fstat, fd, st), st, sizeof *st); }
int fstatat(int dir, const char *p, struct stat *st, int f) { return written((int)syscall(SYS_newfstatat, dir, p, st, f), st, sizeof *st); }
int stat64(const char *p, struct stat64 *st) { return stat(p, (struct stat *)st); }
int lstat64(const char *p, struct stat64 *st) { return lstat(p, (struct stat *)st); }
int fstat64(int fd, struct stat64 *st) { return fstat(fd, (struct stat *)st); }
EOF
clang "${flags[@]}" -c -o "$work/stat_shim.o" "$work/stat_shim.c"

# RelWithDebInfo's -O2 on top of the flags; PM_SANITIZED=1 makes the two tests that cannot run
# in such a build skip (a gcc program against the instrumented library, Valgrind on MSan code).
# No benchmarks, as in the other sanitizer builds: the peers link FAISS, BLAS and OpenMP, which
# are not instrumented (their test skips).
CC=clang CXX=clang++ cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS="${flags[*]}" -DCMAKE_CXX_FLAGS=-fsanitize=memory -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=memory \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=memory $work/stat_shim.o" \
  -DPM_BUILD_BENCH=OFF -DPM_BUILD_FUZZ=ON > /dev/null
cmake --build "$work/build" -j "$jobs"
export LD_LIBRARY_PATH="$deps/lib" PM_SANITIZED=1 MSAN_OPTIONS=halt_on_error=1
# The fuzzers' ctest tests (label fuzz) are left to the loop below, which runs each for longer and
# prints how many inputs it tried.
(cd "$work/build" && ctest --output-on-failure -j "$jobs" -LE fuzz)

status=0
for fuzzer in fuzz_bvh fuzz_pmdb fuzz_json fuzz_build; do
  echo "$fuzzer: ${seconds} s"
  (cd "$work/build/fuzz" && "./$fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/$fuzzer-" "corpus/$fuzzer" > "$work/$fuzzer.log" 2>&1) || status=1
  grep -E '^stat::number_of_executed_units|^(==[0-9]+==)?(ERROR|WARNING): MemorySanitizer' "$work/$fuzzer.log" || true
done
[ $status -eq 0 ] || { echo "error: a fuzzer stopped with a report (logs in $work)" >&2; exit 1; }
echo "MemorySanitizer: every test and fuzzer ran without a report"
