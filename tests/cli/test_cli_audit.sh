#!/usr/bin/env bash
# Findings of a CLI audit on the real clips: each check is a contract point that once failed.
# Exits 77 when something it needs is missing (the real clips included).
source "$(dirname "$0")/common.sh" cliaudit || { echo "FAIL: cannot source common.sh" >&2; exit 1; }
T=$TMP
[ -d "$MOCAP/cmu" ] || { echo "SKIP: no real clips in $MOCAP"; exit 77; }

# Errors: exit status non-zero and exactly one stderr line containing the needle (fixed string).
expect_error() { # name needle command...
  local name=$1 needle=$2; shift 2
  "$@" > /dev/null 2> "$T/err.txt" && fail "$name: succeeded"
  [ "$(wc -l < "$T/err.txt")" -eq 1 ] || fail "$name: stderr has $(wc -l < "$T/err.txt") lines: $(cat "$T/err.txt")"
  grep -qF -- "$needle" "$T/err.txt" || fail "$name: '$(cat "$T/err.txt")' does not say $needle"
}

# 1. build --json with a stdout that cannot take the line: one stderr line, the error (the
#    summary announcing the database used to come first), built or taken from the cache.
if [ -c /dev/full ] && ! sh -c 'echo x > /dev/full' 2> /dev/null; then
  expect_error "build --json > /dev/full" "build: cannot write to stdout" \
    sh -c 'exec "$1" build "$2" -o "$3/full.pmdb" --json > /dev/full' sh "$CLI" "$MOCAP/cmu" "$T"
  "$CLI" build "$MOCAP/cmu" -o "$T/c.pmdb" --cache "$T/cache" --quiet || fail "build --cache"
  expect_error "build --json > /dev/full, cache hit" "build: cannot write to stdout" \
    sh -c 'exec "$1" build "$2" -o "$3/full2.pmdb" --cache "$3/cache" --json > /dev/full' sh "$CLI" "$MOCAP/cmu" "$T"
fi

echo "ok"
