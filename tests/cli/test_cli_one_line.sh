#!/usr/bin/env bash
# Every error is one stderr line, whatever the command line holds: no command at all, file names
# and option values with newlines or other control characters (quoted as escapes), and warnings
# a command would have printed before it failed. Exits 77 when something it needs is missing.
source "$(dirname "$0")/common.sh" oneline || { echo "FAIL: cannot source common.sh" >&2; exit 1; }
T=$TMP

# Errors: exit status non-zero and exactly one stderr line containing the needle (fixed string).
expect_error() { # name needle command...
  local name=$1 needle=$2; shift 2
  "$@" > /dev/null 2> "$T/err.txt" && fail "$name: succeeded"
  [ "$(wc -l < "$T/err.txt")" -eq 1 ] || fail "$name: stderr has $(wc -l < "$T/err.txt") lines: $(cat "$T/err.txt")"
  grep -qF -- "$needle" "$T/err.txt" || fail "$name: '$(cat "$T/err.txt")' does not say $needle"
}

"$CLI" synth "$T/clips" --clips 2 --seed 3 > /dev/null || fail "synth"
"$CLI" build "$T/clips" -o "$T/a.pmdb" --quiet || fail "build"

# 1. No command: one line naming the commands (the usage listing is --help's, on stdout).
expect_error "no command" "posematch: no command given (inspect, build, info, search" "$CLI"
"$CLI" --help | grep -q "^usage:" || fail "--help lost its usage"

# 2. Control characters in what a message quotes are escaped: a newline in a file name or an
#    option value printed as is split the message in two.
expect_error "a missing file named with a newline" '/no\nthere.bvh: cannot open' "$CLI" inspect "$T/no"$'\n'"there.bvh"
expect_error "an option value with a newline" "build: --fps '1\\n2' must be a decimal number" \
  "$CLI" build "$T/clips" -o "$T/e.pmdb" --fps $'1\n2'
expect_error "a command with a newline" "unknown command 'a\\nb'" "$CLI" $'a\nb'
expect_error "escape and carriage return" "--mode 'x\\x1b[2J\\r' is not exact" \
  "$CLI" search "$T/a.pmdb" --query-clip "$T/clips/synth_000.bvh" --frame 1 --mode $'x\e[2J\r'
[ -e "$T/e.pmdb" ] && fail "a refused build wrote its output"

# 3. Warnings wait for the outcome: printed beside a result, dropped when the command then fails
#    (they came first, and the error was a second line). Read at 1 m per file unit, the synthetic
#    clips (centimetres) stand where no person does.
"$CLI" search "$T/a.pmdb" --query-clip "$T/clips/synth_000.bvh" --frame 3 --unit-scale 1 > /dev/null 2> "$T/warn.txt" \
  || fail "search with implausible units"
grep -q "search: warning: .*synth_000.bvh: the hips stand" "$T/warn.txt" || fail "no units warning: $(cat "$T/warn.txt")"
#    A person's hips stand 0.3..3 m above the feet: 4.2 m and 0.28 m are warned about, 2.8 m is not.
for case in 0.045:4.2 0.003:0.28 0.03:; do
  "$CLI" search "$T/a.pmdb" --query-clip "$T/clips/synth_000.bvh" --frame 3 --unit-scale "${case%:*}" > /dev/null 2> "$T/warn.txt" \
    || fail "search --unit-scale ${case%:*}"
  if [ -n "${case#*:}" ]; then
    grep -qE "synth_000.bvh: the hips stand ${case#*:}[0-9]* m above the feet \(read at ${case%:*} m per file unit, Y up\)" "$T/warn.txt" \
      || fail "--unit-scale ${case%:*}: no units warning: $(cat "$T/warn.txt")"
  else
    [ -s "$T/warn.txt" ] && fail "--unit-scale ${case%:*}: a units warning for hips within 0.3..3 m: $(cat "$T/warn.txt")"
  fi
done
expect_error "search: units warning, then --frame past the end" "--frame 100000 is past the clip's last frame" \
  "$CLI" search "$T/a.pmdb" --query-clip "$T/clips/synth_000.bvh" --frame 100000 --unit-scale 1
expect_error "build: units warning, then an --addend matching nothing" "--addend 'walk*=1' matches no asset" \
  "$CLI" build "$T/clips" -o "$T/e.pmdb" --unit-scale 1 --addend 'walk*=1'
printf 'junk' > "$T/junk.bvh"
bench_far "$T/a.pmdb" "$T/clips/synth_001.bvh"
grep -q "bench: warning: far clip .*synth_001.bvh is in the database" "$TMP/far.txt" || fail "no far-clip warning: $(cat "$TMP/far.txt")"
expect_error "bench: far-clip warning, then a broken far clip" "junk.bvh:1: HIERARCHY" \
  "$CLI" bench "$T/a.pmdb" --queries 3 --far "$T/clips/synth_001.bvh" "$T/junk.bvh"
[ -e "$T/e.pmdb" ] && fail "a refused build wrote its output"
echo "ok"
