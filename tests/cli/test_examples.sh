#!/usr/bin/env bash
# The programs in examples/ still build, run and say what they should: the search example finds
# a clip's own frame, refuses a frame past the clip in one line, and the blend example plays a
# walk-to-run ramp with weights summing to 1.
source "$(dirname "$0")/common.sh" examples || { echo "FAIL: cannot source common.sh" >&2; exit 1; }
EX=${PM_EXAMPLES:-}
if [ -z "$EX" ] || [ ! -x "$EX/search_example" ] || [ ! -x "$EX/blend_example" ]; then
  echo "SKIP: PM_EXAMPLES does not hold the built examples"; exit 77
fi

"$CLI" synth "$TMP/clips" --clips 2 --seed 5 > /dev/null || fail "synth"
"$CLI" build "$TMP/clips" -o "$TMP/db.pmdb" --quiet || fail "build"

out=$("$EX/search_example" "$TMP/db.pmdb" "$TMP/clips/synth_001.bvh" 40) || fail "search_example exited $?"
grep -q "^frame 40 -> synth_001 at .* cost 0.0000$" <<<"$out" || fail "search_example: $out"
frames=$("$CLI" inspect "$TMP/clips/synth_001.bvh" --json | python3 -c "import json, sys; print(json.load(sys.stdin)['frames'])")
"$EX/search_example" "$TMP/db.pmdb" "$TMP/clips/synth_001.bvh" "$frames" > /dev/null 2> "$TMP/err" \
  && fail "search_example accepted frame $frames of a $frames-frame clip"
[ "$(wc -l < "$TMP/err")" -eq 1 ] && grep -q "frame $frames is outside 0..$((frames - 1))" "$TMP/err" \
  || fail "search_example past the end: $(cat "$TMP/err")"

out=$("$EX/blend_example" "$TMP/clips/synth_000.bvh" "$TMP/clips/synth_001.bvh") || fail "blend_example exited $?"
python3 - "$out" <<'EOF' || fail "blend_example: $out"
import re, sys
lines = sys.argv[1].strip().split("\n")
assert len(lines) == 9, lines
for line in lines:
    w = [float(x) for x in re.findall(r"synth_00\d=([0-9.]+)", line)]
    assert w and abs(sum(w) - 1) < 0.011, line
assert "synth_000=1.00" in lines[0] and "synth_001=1.00" in lines[-1], lines
EOF
echo "ok"
