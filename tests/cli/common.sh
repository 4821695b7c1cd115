# Shared preamble of the CLI tests (sourced, not a test itself: ctest runs cli/test_*.sh only).
# Usage: source "$(dirname "$0")/common.sh" <name>
# Sets CLI (the posematch binary), TMP (a fresh scratch directory "<name>.XXXXXX" under PM_TMP
# or /tmp, removed on exit) and MOCAP (the real clips: PM_MOCAP_DIR, else ../shared/mocap; may
# not exist); defines fail and bench_far. Exits 77 (skipped) when PM_CLI or python3 is missing.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
# bench_far DB CLIP: `bench DB --far CLIP` on 3 queries must succeed; its stderr (the warnings
# about the far clip) is left in $TMP/far.txt.
bench_far() {
  "$CLI" bench "$1" --queries 3 --far "$2" > /dev/null 2> "$TMP/far.txt" || fail "bench $1 --far $2: $(cat "$TMP/far.txt")"
}
CLI=${PM_CLI:-}
if [ -z "$CLI" ] || [ ! -x "$CLI" ]; then echo "SKIP: PM_CLI is not set to the posematch binary"; exit 77; fi
if ! command -v python3 >/dev/null 2>&1; then echo "SKIP: python3 not found"; exit 77; fi
mkdir -p "${PM_TMP:-/tmp}" || fail "cannot create ${PM_TMP:-/tmp}"
TMP=$(mktemp -d "${PM_TMP:-/tmp}/${1:-cli}.XXXXXX") || fail "mktemp"
trap 'rm -rf "$TMP"' EXIT
MOCAP=${PM_MOCAP_DIR:-../shared/mocap}
