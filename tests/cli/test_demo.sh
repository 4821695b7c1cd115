#!/usr/bin/env bash
# make demo's script end to end on generated clips (the path a machine without ../shared/mocap
# takes): every section runs and says what it should.
source "$(dirname "$0")/common.sh" demo || { echo "FAIL: cannot source common.sh" >&2; exit 1; }
T=$TMP
script="$(dirname "$0")/../../scripts/demo.sh"
PM_MOCAP_DIR="$T/no-mocap" PM_DEMO_CLI="$CLI" PM_DEMO_OUT="$T/demo" bash "$script" "$T" > "$T/out.txt" 2> "$T/err.txt" \
  || fail "demo failed: $(tail -3 "$T/err.txt")"
for needle in "building from 60 generated clips" "== posematch info" "query 0: pose" "UE-style approximate search" \
  "exact vs brute force" "cell: segment 0 (walk, run)" "wrote $T/demo/walk_run_2.2.bvh"; do
  grep -qF -- "$needle" "$T/out.txt" || fail "demo output lacks '$needle'"
done
"$CLI" inspect "$T/demo/walk_run_2.2.bvh" > /dev/null || fail "the demo's blended clip does not read back"
echo "demo: ok"
