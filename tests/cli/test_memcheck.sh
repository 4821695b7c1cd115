#!/usr/bin/env bash
# The tool under Valgrind's memcheck, for what the sanitizer build cannot see: a read of memory
# never written, and above all uninitialised bytes in what is written to a file (a database or a BVH
# whose padding or unused fields held whatever the heap held would still load, and still differ from
# run to run, breaking the byte-identical builds the cache keys rely on). Each step of a small
# pipeline - build with threads and mirroring, both presets, info, search in every mode (dynamic
# weights, a continuing pose), export, blend, truncated inputs, usage errors, and the programs of
# examples/ - must run without a memcheck error or a leak. Skipped in the sanitizer builds (the two
# do not mix), when valgrind is missing, and when valgrind cannot run the CLI (a cross build for
# another CPU; a 32-bit x86 build on x86-64 runs once valgrind has libc6-dbg:i386).
source "$(dirname "$0")/common.sh" memcheck || { echo "FAIL: cannot source common.sh" >&2; exit 1; }
if [ -n "${PM_SANITIZED:-}" ]; then echo "SKIP: a sanitizer build (memcheck runs on the plain builds)"; exit 77; fi
if ! command -v valgrind >/dev/null 2>&1; then echo "SKIP: valgrind not found"; exit 77; fi
machine() { LC_ALL=C readelf -h "$1" 2>/dev/null | sed -n 's/^ *Machine: *//p'; }
cli_machine=$(machine "$CLI")
if [ "$cli_machine" != "$(machine "$(command -v bash)")" ]; then
  # Another machine's binary: valgrind runs 32-bit x86 on x86-64 (with that libc's debug
  # symbols), nothing under qemu-user.
  if [ "$cli_machine" != "Intel 80386" ] || ! valgrind -q "$CLI" --help > /dev/null 2>&1; then
    echo "SKIP: valgrind cannot run $CLI ($cli_machine; for 32-bit x86 it needs libc6-dbg:i386)"; exit 77
  fi
fi

# vg NAME EXPECTED_STATUS ARGS...: runs the CLI under memcheck; any memcheck error (99) or another
# exit status than EXPECTED_STATUS fails, with memcheck's report. VG_PROGRAM runs another program.
vg() {
  local name=$1 want=$2
  shift 2
  valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
    --track-origins=yes --log-file="$TMP/$name.vg" "${VG_PROGRAM:-$CLI}" "$@" > "$TMP/$name.out" 2> "$TMP/$name.err"
  local rc=$?
  if [ "$rc" -ne "$want" ]; then
    cat "$TMP/$name.vg" "$TMP/$name.err" >&2
    fail "$name: exit status $rc, expected $want (99: a memcheck error)"
  fi
  [ -s "$TMP/$name.vg" ] && { cat "$TMP/$name.vg" >&2; fail "$name: memcheck reported"; }
  return 0
}

"$CLI" synth "$TMP/clips" --clips 3 --fps 30 --seed 11 > /dev/null || fail "synth"
vg inspect 0 inspect "$TMP/clips/synth_000.bvh" --json
vg build_ue 0 build "$TMP/clips" -o "$TMP/ue.pmdb" --mirror --threads 2 --quiet
vg build_h27 0 build "$TMP/clips" -o "$TMP/h27.pmdb" --schema holden27 --pca 8 --threads 3 --quiet
mkdir -p "$TMP/a" "$TMP/b" && cp "$TMP/clips/synth_000.bvh" "$TMP/a/walk.bvh" && cp "$TMP/clips/synth_001.bvh" "$TMP/b/walk.bvh" \
  || fail "same-named clips"
vg build_same_names 0 build "$TMP/a" "$TMP/b" "$TMP/clips" -o "$TMP/same.pmdb" --quiet
vg build_rules 0 build "$TMP/clips" -o "$TMP/rules.pmdb" --mirror --addend 'synth_00[01]=0.5' \
  --addend 'synth_00[01]@0.5:1=0.25' --exclude 'synth_002@0:0.5' --quiet
vg info 0 info "$TMP/ue.pmdb" --json
vg export 0 export-features "$TMP/ue.pmdb" -o "$TMP/ex"
vg bench_threads 0 bench "$TMP/ue.pmdb" --queries 10 --threads 2 --max-nodes 0 --json

dims=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['cardinality'])" "$TMP/ex.json") \
  || fail "export: no cardinality"
head -c $((4 * dims * 6)) "$TMP/ex.f32" > "$TMP/q.f32"
python3 - "$TMP/w.f32" "$dims" <<'EOF' || fail "weights file"
import struct, sys
n = int(sys.argv[2])
open(sys.argv[1], "wb").write(struct.pack("<%df" % n, *[0.25 + 0.5 * (i % 8) for i in range(n)]))
EOF
for mode in bruteforce exact pcakdtree vptree; do
  vg "search_$mode" 0 search "$TMP/ue.pmdb" --queries "$TMP/q.f32" --mode "$mode" --json
done
vg search_weights 0 search "$TMP/ue.pmdb" --queries "$TMP/q.f32" --weights "$TMP/w.f32" --json
vg search_continuing 0 search "$TMP/ue.pmdb" --queries "$TMP/q.f32" --continuing 7 --continuing-addend -0.5 --json
vg search_clip 0 search "$TMP/h27.pmdb" --query-clip "$TMP/clips/synth_001.bvh" --frame 12

cat > "$TMP/space.json" <<EOF
{ "name": "s", "axes": [ { "name": "speed", "min": 0, "max": 4 }, { "name": "turn", "min": -90, "max": 90 } ],
  "samples": [
    { "clip": "$TMP/clips/synth_000.bvh", "params": [1, 0], "loop": true },
    { "clip": "$TMP/clips/synth_001.bvh", "params": [3, 0], "loop": true },
    { "clip": "$TMP/clips/synth_002.bvh", "params": [2, 60], "loop": true },
    { "name": "mirrored", "clip": "$TMP/clips/synth_002.bvh", "params": [2, -60], "mirror": true, "loop": true } ] }
EOF
vg blend_weights 0 blend "$TMP/space.json" --param 2,10 --weights --json
vg blend_out 0 blend "$TMP/space.json" --param 2.5,-30 -o "$TMP/blend.bvh"
vg build_space 0 build "$TMP/space.json" "$TMP/clips" -o "$TMP/space.pmdb" --quiet

# The programs of examples/, the way an engine embeds the library (when the build made them).
EX=${PM_EXAMPLES:-}
if [ -n "$EX" ] && [ -x "$EX/search_example" ] && [ -x "$EX/blend_example" ]; then
  VG_PROGRAM=$EX/search_example vg search_example 0 "$TMP/ue.pmdb" "$TMP/clips/synth_001.bvh" 12
  VG_PROGRAM=$EX/blend_example vg blend_example 0 "$TMP/clips/synth_000.bvh" "$TMP/clips/synth_001.bvh"
fi

# Errors free what they made: a truncated database and a BVH cut mid-frame.
size=$(stat -c %s "$TMP/ue.pmdb")
head -c $((size / 2)) "$TMP/ue.pmdb" > "$TMP/cut.pmdb"
vg truncated_pmdb 1 info "$TMP/cut.pmdb"
head -c 3000 "$TMP/clips/synth_000.bvh" > "$TMP/cut.bvh"
vg truncated_bvh 1 build "$TMP/cut.bvh" -o "$TMP/never.pmdb" --quiet
vg truncated_after_good 1 build "$TMP/clips" "$TMP/cut.bvh" -o "$TMP/never.pmdb" --threads 1 --quiet
[ -e "$TMP/never.pmdb" ] && fail "a failed build left its output"
# and so do usage errors, found after the commands allocated their argument lists.
vg usage_build 2 build "$TMP/clips" -o "$TMP/never.pmdb" --addend 'synth*=1' --mirror --mirror-pair A=B --fps 0
vg usage_bench 2 bench "$TMP/ue.pmdb" --far "$TMP/clips" --queries 0
vg usage_blend 2 blend "$TMP/space.json" --param 2,10 --weights --weights
echo "ok"
