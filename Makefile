# posematch - top-level targets. CMake does the building underneath.
#   make         build the library, CLI, tests and benches into build/ (CLI: build/posematch)
#   make test    install what is missing, build, run every test (+ ASan/UBSan build, fuzzers, TSan build,
#                plain-C pose jobs build; the tool under valgrind's memcheck in the plain builds)
#   make bench   run the benchmarks on ../shared/mocap
#   make demo    build a database, print info, run searches and the benchmark summary
#   make test-aarch64  (optional) cross-build for AArch64, run the suite under qemu-user
#   make test-armhf    (optional) the same for 32-bit ARM (ARMv7, hard float)
#   make test-i386     (optional) the same for 32-bit x86 (SSE2), run directly
#   make test-fresh    (optional, root) make demo and make test in a minimal Debian 12 chroot
#   make test-msan     (optional, root) MemorySanitizer over the suite, then each fuzzer FUZZ_SECONDS
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
SCALAR_BUILD ?= build-scalar
AARCH64_BUILD ?= build-aarch64
ARMHF_BUILD ?= build-armhf
I386_BUILD ?= build-i386
MSAN_BUILD ?= build-msan
FUZZ_SECONDS ?= 20

.PHONY: all deps test test-release test-asan test-tsan test-scalar test-aarch64 test-armhf test-i386 test-fresh test-msan bench demo clean

all: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DPM_WERROR=ON >/dev/null
	@MAKEFLAGS="$$MAKEFLAGS --no-print-directory" cmake --build $(BUILD) -j $(JOBS)

deps:
	@scripts/install-deps.sh build

test:
	@scripts/install-deps.sh test
	@$(MAKE) --no-print-directory test-release test-asan test-tsan test-scalar

test-release: all
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The sanitizer build uses clang so that the libFuzzer targets (run for FUZZ_SECONDS each)
# are ordinary ctest tests of the same run. Its CLI must write what the release build's writes
# (tests/cli/test_cross_build.sh), so it needs that build up to date: a stale one fails the test
# for changes it has not seen, a missing one skips it, and under make -j test-release would be
# relinking it while the test runs.
test-asan: all
	CC=clang CXX=clang++ cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DPM_WERROR=ON -DPM_SANITIZE=ON \
	  -DPM_BUILD_BENCH=OFF -DPM_BUILD_FUZZ=ON -DPM_FUZZ_SECONDS=$(FUZZ_SECONDS) -DCMAKE_C_FLAGS_DEBUG="-O1 -g" \
	  -DPM_REFERENCE_CLI=$(abspath $(BUILD))/posematch >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && PM_SANITIZED=1 ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

# ThreadSanitizer over the whole suite: threaded builds (1-7 threads), threads searching one
# database, bench --threads. Any report fails the test that made it (halt_on_error).
test-tsan: all
	CC=clang CXX=clang++ cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DPM_WERROR=ON -DPM_SANITIZE_THREAD=ON \
	  -DPM_BUILD_BENCH=OFF -DCMAKE_C_FLAGS_DEBUG="-O1 -g" >/dev/null
	cmake --build $(TSAN_BUILD) -j $(JOBS)
	cd $(TSAN_BUILD) && PM_SANITIZED=1 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ctest --output-on-failure -j $(JOBS)

# The plain-C pose jobs (-DPM_SIMD_SCALAR, what a compiler without vector extensions would take)
# must pass the suite and write the release build's bytes (tests/cli/test_cross_build.sh); files
# are written through named temporary files, as where O_TMPFILE is missing (-DPM_NO_TMPFILE).
test-scalar: all
	cmake -S . -B $(SCALAR_BUILD) -DCMAKE_BUILD_TYPE=Release -DPM_WERROR=ON -DCMAKE_C_FLAGS="-DPM_SIMD_SCALAR -DPM_NO_TMPFILE" \
	  -DPM_BUILD_BENCH=OFF -DPM_REFERENCE_CLI=$(abspath $(BUILD))/posematch >/dev/null
	cmake --build $(SCALAR_BUILD) -j $(JOBS)
	cd $(SCALAR_BUILD) && ctest --output-on-failure -j $(JOBS)

# AArch64 (NEON instead of SSE2/AVX2, another libm): cross-built, the suite run under qemu-user,
# and its CLI must write this machine's release bytes (tests/cli/test_cross_build.sh). Optional,
# not part of `make test`: it installs a cross compiler, qemu and arm64 packages and registers
# qemu with binfmt_misc (scripts/test-cross.sh).
test-aarch64: all
	bash scripts/test-cross.sh aarch64 $(BUILD) $(AARCH64_BUILD)

test-armhf: all
	bash scripts/test-cross.sh armhf $(BUILD) $(ARMHF_BUILD)

test-i386: all
	bash scripts/test-cross.sh i386 $(BUILD) $(I386_BUILD)

# The quick start on a machine that has nothing but make: a debootstrap'ed Debian 12 (minbase)
# runs make demo and make test on a clone of HEAD (scripts/test-fresh-debian.sh).
test-fresh:
	bash scripts/test-fresh-debian.sh

# MemorySanitizer needs cJSON and cmocka instrumented too: the script rebuilds Debian's sources of
# both (scripts/test-msan.sh). Each fuzzer then runs for FUZZ_SECONDS (the audit took 300).
test-msan:
	@scripts/install-deps.sh test
	bash scripts/test-msan.sh $(MSAN_BUILD) $(FUZZ_SECONDS)

# The bench's packages (the FAISS peer's among them) come first, so that the build finds them.
bench:
	@scripts/install-deps.sh bench
	@$(MAKE) --no-print-directory all
	bash bench/run.sh $(BUILD)

demo: all
	bash scripts/demo.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(SCALAR_BUILD) $(AARCH64_BUILD) $(ARMHF_BUILD) $(I386_BUILD) $(MSAN_BUILD)
