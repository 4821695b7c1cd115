#!/usr/bin/env bash
# How an engine takes the library in with CMake, run as a user would: (1) add_subdirectory of the
# source tree (FetchContent does the same) builds the library alone - only the kind linked, no
# cJSON, cmocka or tool, the parent's build type left alone, its -ffast-math overridden - and (2)
# find_package(posematch) after `cmake --install` gives posematch::posematch and
# posematch::posematch_shared, with the soname's version rule, and the installed posematch.pc
# works from wherever the prefix is. Each links examples/search_example.c, which must find a
# clip's own frame.
source "$(dirname "$0")/common.sh" cmake_consumers || { echo "FAIL: cannot source common.sh" >&2; exit 1; }
SRC=${PM_SOURCE_DIR:-}
BUILD=${PM_BUILD_DIR:-}
if [ -z "$SRC" ] || [ ! -f "$SRC/CMakeLists.txt" ] || [ -z "$BUILD" ] || [ ! -f "$BUILD/CMakeCache.txt" ]; then
  echo "SKIP: PM_SOURCE_DIR and PM_BUILD_DIR must name the source and build trees"; exit 77
fi
if [ -n "${PM_SANITIZED:-}" ]; then
  # An installed sanitizer build needs its runtime in every program linked to it.
  echo "SKIP: sanitizer build (the release and scalar suites run this test)"; exit 77
fi
command -v cmake > /dev/null || { echo "SKIP: cmake not found"; exit 77; }
JOBS=$(nproc 2> /dev/null || echo 2)
# A cross build's consumers use its toolchain (make test-aarch64 runs them under qemu-user).
toolchain=$(sed -n 's/^CMAKE_TOOLCHAIN_FILE:[A-Z]*=//p' "$BUILD/CMakeCache.txt")
cross=()
[ -n "$toolchain" ] && cross=(-DCMAKE_TOOLCHAIN_FILE="$toolchain")

"$CLI" synth "$TMP/clips" --clips 2 --seed 5 > /dev/null || fail "synth"
"$CLI" build "$TMP/clips" -o "$TMP/db.pmdb" --quiet || fail "build"
check_example() { # program label
  local out
  out=$("$1" "$TMP/db.pmdb" "$TMP/clips/synth_001.bvh" 40) || fail "$2: search_example exited $?"
  grep -q "^frame 40 -> synth_001 at .* cost 0.0000$" <<< "$out" || fail "$2: $out"
}

# (1) add_subdirectory, in a project with no build type and fast math in its flags.
mkdir -p "$TMP/sub"
cat > "$TMP/sub/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.18)
project(engine C)
add_subdirectory("$SRC" posematch)
add_executable(search_example "$SRC/examples/search_example.c")
target_compile_definitions(search_example PRIVATE _POSIX_C_SOURCE=200809L _ISOC11_SOURCE)
target_link_libraries(search_example PRIVATE posematch::posematch)
CMAKE
# No C++ compiler is needed to embed the C library (the parent project is C only).
cmake -S "$TMP/sub" -B "$TMP/sub/build" "${cross[@]}" -DCMAKE_C_FLAGS="-O0 -ffast-math" \
  -DCMAKE_CXX_COMPILER=/nonexistent/c++ > "$TMP/sub.log" 2>&1 \
  || fail "add_subdirectory: configure failed: $(tail -5 "$TMP/sub.log")"
cache="$TMP/sub/build/CMakeCache.txt"
grep -q "^CMAKE_BUILD_TYPE:STRING=$" "$cache" || fail "add_subdirectory: the parent's build type was set: $(grep ^CMAKE_BUILD_TYPE "$cache")"
grep -q "^PM_BUILD_TOOLS:BOOL=OFF$" "$cache" || fail "add_subdirectory: the tool is built by default"
grep -q "^PM_BUILD_TESTS:BOOL=OFF$" "$cache" || fail "add_subdirectory: the tests are built by default"
deps='^[a-z_]*(cjson|cmocka|nanoflann)[a-z_]*:'
if grep -qiE "$deps" "$cache"; then fail "add_subdirectory: looked for a tool's dependency: $(grep -iE "$deps" "$cache" | head -1)"; fi
cmake --build "$TMP/sub/build" -j "$JOBS" --target search_example > "$TMP/sub.build.log" 2>&1 \
  || fail "add_subdirectory: build failed: $(grep -m3 -i error "$TMP/sub.build.log")"
check_example "$TMP/sub/build/search_example" "add_subdirectory"
# Only the kind of library the project links is compiled.
if ls "$TMP"/sub/build/posematch/libposematch.so* > /dev/null 2>&1; then fail "add_subdirectory: the shared library was built too"; fi
# The guard the -fno-fast-math keeps quiet: a library file compiled with fast math refuses.
if cc -ffast-math -I"$SRC/include" -I"$SRC/src" -fsyntax-only "$SRC/src/core.c" 2> "$TMP/fastmath.err"; then
  fail "src/core.c compiled with -ffast-math"
fi
grep -q "without fast math" "$TMP/fastmath.err" || fail "fast-math guard: $(head -3 "$TMP/fastmath.err")"

# (2) install, then find_package from another project.
cmake --install "$BUILD" --prefix "$TMP/prefix" > "$TMP/install.log" 2>&1 || fail "install: $(tail -3 "$TMP/install.log")"
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$BUILD/CMakeCache.txt")
[ -n "$version" ] || fail "no project version in $BUILD/CMakeCache.txt"
IFS=. read -r major minor _ <<< "$version"
config=$(ls -d "$TMP"/prefix/lib*/cmake/posematch 2> /dev/null | head -1)
[ -f "$config/posematchConfig.cmake" ] || fail "install: no posematchConfig.cmake"
# A cross toolchain searches packages in its sysroot only: point it at the package itself.
[ -n "$toolchain" ] && cross+=(-Dposematch_DIR="$config")
mkdir -p "$TMP/pkg"
cat > "$TMP/pkg/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.18)
project(engine C)
find_package(posematch $major.$minor REQUIRED CONFIG)
foreach(kind posematch posematch_shared)
  add_executable(search_\${kind} "$SRC/examples/search_example.c")
  target_compile_definitions(search_\${kind} PRIVATE _POSIX_C_SOURCE=200809L _ISOC11_SOURCE)
  target_link_libraries(search_\${kind} PRIVATE posematch::\${kind})
endforeach()
CMAKE
cmake -S "$TMP/pkg" -B "$TMP/pkg/build" "${cross[@]}" -DCMAKE_PREFIX_PATH="$TMP/prefix" > "$TMP/pkg.log" 2>&1 \
  || fail "find_package: configure failed: $(tail -5 "$TMP/pkg.log")"
cmake --build "$TMP/pkg/build" -j "$JOBS" > "$TMP/pkg.build.log" 2>&1 \
  || fail "find_package: build failed: $(grep -m3 -i error "$TMP/pkg.build.log")"
check_example "$TMP/pkg/build/search_posematch" "find_package, static"
check_example "$TMP/pkg/build/search_posematch_shared" "find_package, shared"
# The shared program needs the installed library (soname and run path), the static one none.
command -v readelf > /dev/null || fail "readelf not found (binutils)"
dyn=$(readelf -d "$TMP/pkg/build/search_posematch_shared")
soname=$(readelf -d "$TMP"/prefix/lib*/libposematch.so | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = "libposematch.so.$major.$minor" ] || [ "$major" -gt 0 ] || fail "installed soname '$soname', not libposematch.so.$major.$minor"
grep -q "Shared library: \[$soname\]" <<< "$dyn" || fail "find_package, shared: does not need $soname: $dyn"
grep -qE "R(UN)?PATH.*$TMP/prefix/lib" <<< "$dyn" || fail "find_package, shared: no run path to the installed library: $dyn"
if readelf -d "$TMP/pkg/build/search_posematch" | grep -q "libposematch"; then fail "find_package, static: linked the shared library"; fi

# pkg-config, for projects built otherwise: the .pc file finds the prefix from its own place.
if [ -z "$toolchain" ]; then
  command -v pkg-config > /dev/null || fail "pkg-config not found"
  export PKG_CONFIG_PATH=$(dirname "$config")/../pkgconfig
  [ "$(pkg-config --modversion posematch)" = "$version" ] || fail "pkg-config: version $(pkg-config --modversion posematch)"
  libdir=$(pkg-config --variable=libdir posematch)
  # shellcheck disable=SC2046
  cc -D_POSIX_C_SOURCE=200809L -D_ISOC11_SOURCE $(pkg-config --cflags posematch) "$SRC/examples/search_example.c" \
    -o "$TMP/search_pc" $(pkg-config --libs posematch) -Wl,-rpath,"$libdir" 2> "$TMP/pc.err" \
    || fail "pkg-config: build failed: $(head -3 "$TMP/pc.err")"
  check_example "$TMP/search_pc" "pkg-config"
  readelf -d "$TMP/search_pc" | grep -q "Shared library: \[$soname\]" || fail "pkg-config: does not need $soname"
fi

# An absolute CMAKE_INSTALL_LIBDIR / CMAKE_INSTALL_INCLUDEDIR is the .pc file's directory as given,
# not appended to the prefix (configured only: the .pc file is written at configure time).
cmake -S "$SRC" -B "$TMP/abs" "${cross[@]}" -DPM_BUILD_TOOLS=OFF -DPM_BUILD_TESTS=OFF -DPM_BUILD_BENCH=OFF \
  -DPM_BUILD_EXAMPLES=OFF -DCMAKE_INSTALL_PREFIX=/opt/pm -DCMAKE_INSTALL_LIBDIR=/opt/pm-libs/lib64 \
  -DCMAKE_INSTALL_INCLUDEDIR=/opt/pm-headers > "$TMP/abs.log" 2>&1 || fail "absolute LIBDIR: configure failed: $(tail -3 "$TMP/abs.log")"
grep -qx "libdir=/opt/pm-libs/lib64" "$TMP/abs/posematch.pc" && grep -qx "includedir=/opt/pm-headers" "$TMP/abs/posematch.pc" \
  || fail "absolute LIBDIR/INCLUDEDIR: $(grep dir= "$TMP/abs/posematch.pc" | tr '\n' ' ')"

# Versions: another minor is another ABI before 1.0, so it is not found.
for wanted in "$major.$((minor + 1))" "$((major + 1)).0"; do
  sed -i "s/find_package(posematch [0-9.]* /find_package(posematch $wanted /" "$TMP/pkg/CMakeLists.txt"
  if cmake -S "$TMP/pkg" -B "$TMP/pkg/build-$wanted" "${cross[@]}" -DCMAKE_PREFIX_PATH="$TMP/prefix" > "$TMP/v.log" 2>&1; then
    fail "find_package($wanted) accepted version $version"
  fi
  grep -q "version: $version" "$TMP/v.log" || fail "find_package($wanted): $(grep -m2 -i version "$TMP/v.log")"
done
echo "ok"
