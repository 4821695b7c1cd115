# Shared preamble of the CLI tests (sourced, not a test itself: ctest runs cli/test_*.sh only).
# Usage: source "$(dirname "$0")/common.sh" <name>
# Sets CLI (the posematch binary), TMP (a fresh scratch directory "<name>.XXXXXX" under PM_TMP
# or /tmp, removed on exit) and MOCAP (the real clips: PM_MOCAP_DIR, else ../shared/mocap; may
# not exist); defines fail. Exits 77 (skipped) when PM_CLI or python3 is missing.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
CLI=${PM_CLI:-}
if [ -z "$CLI" ] || [ ! -x "$CLI" ]; then echo "SKIP: PM_CLI is not set to the posematch binary"; exit 77; fi
if ! command -v python3 >/dev/null 2>&1; then echo "SKIP: python3 not found"; exit 77; fi
mkdir -p "${PM_TMP:-/tmp}" || fail "cannot create ${PM_TMP:-/tmp}"
TMP=$(mktemp -d "${PM_TMP:-/tmp}/${1:-cli}.XXXXXX") || fail "mktemp"
trap 'rm -rf "$TMP"' EXIT
MOCAP=${PM_MOCAP_DIR:-../shared/mocap}
