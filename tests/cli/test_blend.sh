#!/usr/bin/env bash
# posematch blend: weights (text and JSON) and a written blend on generated BVH clips, then on real
# clips when ../shared/mocap is present; bad inputs fail with one stderr line. Exits 77 (skipped)
# when something it needs is missing.
source "$(dirname "$0")/common.sh" blend || { echo "FAIL: cannot source common.sh" >&2; exit 1; }

# Three small clips of one skeleton (metres): the root moves forward at 1, 2 and 3 units per second
# over 1.0, 0.8 and 0.6 s while a leg swings.
make_clip() { # name speed frames [frame_time [hips_height]]
  local name=$1 speed=$2 frames=$3 dt=${4:-0.0333333} height=${5:-1}
  {
    printf 'HIERARCHY\nROOT Hips\n{\n\tOFFSET 0 %s 0\n' "$height"
    printf '\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n'
    printf '\tJOINT LeftUpLeg\n\t{\n\t\tOFFSET 0.1 -0.1 0\n\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n'
    printf '\t\tEnd Site\n\t\t{\n\t\t\tOFFSET 0 -0.8 0\n\t\t}\n\t}\n'
    printf '\tJOINT RightUpLeg\n\t{\n\t\tOFFSET -0.1 -0.1 0\n\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n'
    printf '\t\tEnd Site\n\t\t{\n\t\t\tOFFSET 0 -0.8 0\n\t\t}\n\t}\n}\n'
    printf 'MOTION\nFrames: %d\nFrame Time: %s\n' "$frames" "$dt"
    python3 - "$speed" "$frames" "$dt" "$height" <<'EOF'
import math, sys
speed, frames, dt, height = float(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
for f in range(frames):
    t = f * dt
    a = 30 * math.sin(2 * math.pi * f / (frames - 1))
    print(f"0 {height} {speed * t:.6f} 0 0 0 0 {a:.4f} 0 0 {-a:.4f} 0")
EOF
  } > "$TMP/$name.bvh"
}
make_clip walk 1 31
make_clip jog 2 25
make_clip run 3 19

cat > "$TMP/space.json" <<'EOF'
{
  "name": "gait",
  "axes": [{"name": "speed", "min": 0, "max": 4}],
  "align": "position",
  "fps": 30,
  "samples": [
    {"name": "walk", "clip": "walk.bvh", "params": [1]},
    {"name": "jog", "clip": "jog.bvh", "params": [2]},
    {"name": "run", "clip": "run.bvh", "params": [3]}
  ]
}
EOF

# --weights --json: every sample listed, weights summing to 1, the segment used.
json=$("$CLI" blend "$TMP/space.json" --param 2.5 --weights --json) || fail "blend --weights --json exited $?"
python3 - "$json" <<'EOF' || fail "bad weights JSON: $json"
import json, sys
d = json.loads(sys.argv[1])
w = {e["sample"]: e["weight"] for e in d["weights"]}
assert set(w) == {"walk", "jog", "run"}, w
assert abs(sum(w.values()) - 1) < 1e-6, w
assert abs(w["jog"] - 0.5) < 1e-6 and abs(w["run"] - 0.5) < 1e-6 and w["walk"] == 0, w
assert d["cell"]["kind"] == "segment" and d["cell"]["samples"] == ["jog", "run"], d["cell"]
assert d["outside"] is False and abs(d["duration"] - 0.7) < 1e-4, d
assert [e["index"] for e in d["weights"]] == [0, 1, 2]
EOF

# An axis name is kept whole (it was cut to 63 bytes, here inside its UTF-8 character).
long_axis=$(printf 'x%.0s' $(seq 62))éx
sed "s/\"name\": \"speed\"/\"name\": \"$long_axis\"/" "$TMP/space.json" > "$TMP/long_axis.json"
"$CLI" blend "$TMP/long_axis.json" --param 2.5 --weights --json > "$TMP/long_axis.out" || fail "blend of a long axis name exited $?"
python3 - "$TMP" <<'EOF' || fail "long axis name: $(cat "$TMP/long_axis.out")"
import json, sys
t = sys.argv[1]
want = json.load(open(t + "/long_axis.json", encoding="utf-8"))["axes"][0]["name"]
got = json.load(open(t + "/long_axis.out", encoding="utf-8"))["axes"]
assert len(want) == 64 and got == [want], (want, got)
EOF

# Whether a blend closes into a loop: looping samples with phase sync do; without sync (absolute
# time), samples of other lengths are mid-cycle where the blend ends, so it runs once (the text
# said "cycle duration" for it); one sample alone still loops; a one-shot sample never does.
sed -e 's/"params": \[\([0-9]\)\]}/"params": [\1], "loop": true}/' "$TMP/space.json" > "$TMP/loops.json"
sed -e 's/"align": "position",/"align": "position", "sync": "none",/' "$TMP/loops.json" > "$TMP/loops_none.json"
grep -q '"sync": "none"' "$TMP/loops_none.json" || fail "loops_none.json has no sync"
for c in "loops 2.5 True" "loops_none 2.5 False" "loops_none 2 True" "space 2.5 False"; do
  set -- $c
  "$CLI" blend "$TMP/$1.json" --param $2 --weights --json > "$TMP/lw.json" || fail "blend $1 --param $2 --weights --json"
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert str(d["looping"]) == sys.argv[2], d' "$TMP/lw.json" $3 \
    || fail "$1 at $2: looping is not $3: $(cat "$TMP/lw.json")"
done
"$CLI" blend "$TMP/loops_none.json" --param 2.5 --weights > "$TMP/lw.txt" || fail "blend --weights of unsynced loops"
grep -q "^duration (once, phase 0 to 1): " "$TMP/lw.txt" \
  || fail "an unsynced blend of loops of other lengths is not a cycle: $(cat "$TMP/lw.txt")"
"$CLI" blend "$TMP/loops.json" --param 2.5 --weights > "$TMP/lw.txt" || fail "blend --weights of synced loops"
grep -q "^cycle duration: " "$TMP/lw.txt" || fail "a synced blend of loops is a cycle"

# On a sample: that sample alone. Beyond the last one: clamped to it and reported outside.
json=$("$CLI" blend "$TMP/space.json" --param 1 --weights --json) || fail "exit $?"
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); w={e["sample"]:e["weight"] for e in d["weights"]}; assert w=={"walk":1,"jog":0,"run":0}, w' "$json" \
  || fail "a query on a sample should give it weight 1: $json"
json=$("$CLI" blend "$TMP/space.json" --param 3.9 --weights --json) || fail "exit $?"
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["outside"] and d["weights"][2]["weight"]==1, d' "$json" \
  || fail "outside query: $json"

# Text output names the cell and every sample.
out=$("$CLI" blend "$TMP/space.json" --param 1.5 --weights) || fail "blend --weights exited $?"
for word in gait segment walk jog run 0.500000 duration; do
  grep -q -- "$word" <<<"$out" || fail "text output lacks '$word':"$'\n'"$out"
done

# -o: a BVH of one synchronised cycle whose root speed lies between the sources' (1.5 here).
"$CLI" blend "$TMP/space.json" --param 1.5 -o "$TMP/out.bvh" >/dev/null || fail "blend -o exited $?"
[ -s "$TMP/out.bvh" ] || fail "no output BVH"
python3 - "$TMP/out.bvh" <<'EOF' || fail "bad blended BVH"
import sys
lines = open(sys.argv[1]).read().split("\n")
i = lines.index("MOTION")
frames = int(lines[i + 1].split()[1]); dt = float(lines[i + 2].split()[2])
rows = [list(map(float, l.split())) for l in lines[i + 3:] if l.strip()]
assert len(rows) == frames and frames > 20, frames
speed = (rows[-1][2] - rows[0][2]) / ((frames - 1) * dt)
assert 1.2 < speed < 1.8, speed
assert abs((frames - 1) * dt - 0.9) < 0.01, (frames, dt)   # (1.0 + 0.8) / 2 s
EOF

# A 3D space (speed, turn, slope): a tetrahedron of samples plus one inside it. Inside: the
# tetrahedron holding the point, four weights summing to 1; outside: projected onto a hull face.
cat > "$TMP/space3d.json" <<'EOF'
{
  "name": "terrain",
  "axes": [{"name": "speed", "min": 0, "max": 4}, {"name": "turn", "min": -1, "max": 1},
           {"name": "slope", "min": -1, "max": 1}],
  "align": "position",
  "coplanar": "error",
  "grid": [3, 3, 3],
  "samples": [
    {"name": "walk", "clip": "walk.bvh", "params": [1, -0.5, -0.5]},
    {"name": "jog", "clip": "jog.bvh", "params": [3, -0.5, -0.5]},
    {"name": "turn", "clip": "walk.bvh", "params": [1, 0.5, -0.5]},
    {"name": "climb", "clip": "run.bvh", "params": [1, -0.5, 0.5]},
    {"name": "mid", "clip": "jog.bvh", "params": [1.4, -0.3, -0.3]}
  ]
}
EOF
json=$("$CLI" blend "$TMP/space3d.json" --param 1.2,-0.45,-0.4 --weights --json) || fail "3D blend --weights --json exited $?"
python3 - "$json" <<'EOF' || fail "bad 3D weights JSON: $json"
import json, sys
d = json.loads(sys.argv[1])
w = {e["sample"]: e["weight"] for e in d["weights"]}
assert d["axes"] == ["speed", "turn", "slope"], d["axes"]
assert d["cell"]["kind"] == "tetrahedron" and len(d["cell"]["samples"]) == 4, d["cell"]
assert abs(sum(w.values()) - 1) < 1e-6 and min(w.values()) >= 0, w
assert sum(1 for v in w.values() if v > 0) == 4, w
assert all(abs(a - b) < 1e-5 for a, b in zip(d["used_params"], [1.2, -0.45, -0.4])) and not d["outside"], d
EOF
json=$("$CLI" blend "$TMP/space3d.json" --param 0.5,0,0 --weights --json) || fail "exit $?"
python3 - "$json" <<'EOF' || fail "3D outside query: $json"
import json, sys
d = json.loads(sys.argv[1])
assert d["outside"] and d["cell"]["kind"] == "hull_face" and len(d["cell"]["samples"]) == 3, d
assert abs(d["used_params"][0] - 1) < 1e-5 and abs(sum(e["weight"] for e in d["weights"]) - 1) < 1e-6, d
EOF
out=$("$CLI" blend "$TMP/space3d.json" --param 1.5,-0.4,-0.4 --weights) || fail "3D blend --weights exited $?"
for word in terrain 3D tetrahedron slope=-0.4 climb; do
  grep -q -- "$word" <<<"$out" || fail "3D text output lacks '$word':"$'\n'"$out"
done
"$CLI" blend "$TMP/space3d.json" --param 1.5,-0.4,-0.4 -o "$TMP/out3d.bvh" >/dev/null || fail "3D blend -o exited $?"
grep -q "^MOTION" "$TMP/out3d.bvh" || fail "out3d.bvh has no MOTION"

# A looping and a one-shot sample blended: the last baked frame is the looping sample's cycle end,
# so the root keeps its pace there instead of jumping back.
sed -e 's/"params": \[1\]}/"params": [1], "loop": true}/' "$TMP/space.json" > "$TMP/mixed.json"
grep -q '"loop": true' "$TMP/mixed.json" || fail "mixed.json has no looping sample"
"$CLI" blend "$TMP/mixed.json" --param 1.5 -o "$TMP/mixed.bvh" >/dev/null || fail "blend -o of a mixed space exited $?"
python3 - "$TMP/mixed.bvh" <<'EOF' || fail "root jump on the last frame of a mixed looping / one-shot blend"
import sys
lines = open(sys.argv[1]).read().split("\n")
i = lines.index("MOTION")
z = [float(l.split()[2]) for l in lines[i + 3:] if l.strip()]
steps = [b - a for a, b in zip(z, z[1:])]
assert all(0.5 * steps[0] < s < 1.5 * steps[0] for s in steps), steps[-4:]
EOF

# -o does not depend on the order samples are listed in, even with different rates and offsets:
# the skeleton is that of the sample with the smallest coordinates, the default rate the highest
# among the blended samples (60 fps here).
make_clip fast60 2 49 0.0166667 1.1
cat > "$TMP/order_a.json" <<'EOF'
{"name": "o", "axes": [{"name": "speed", "min": 0, "max": 4}], "align": "position",
 "samples": [{"name": "walk", "clip": "walk.bvh", "params": [1]}, {"name": "fast", "clip": "fast60.bvh", "params": [2]}]}
EOF
cat > "$TMP/order_b.json" <<'EOF'
{"name": "o", "axes": [{"name": "speed", "min": 0, "max": 4}], "align": "position",
 "samples": [{"name": "fast", "clip": "fast60.bvh", "params": [2]}, {"name": "walk", "clip": "walk.bvh", "params": [1]}]}
EOF
"$CLI" blend "$TMP/order_a.json" --param 1.4 -o "$TMP/order_a.bvh" >/dev/null || fail "blend order_a exited $?"
"$CLI" blend "$TMP/order_b.json" --param 1.4 -o "$TMP/order_b.bvh" >/dev/null || fail "blend order_b exited $?"
cmp -s "$TMP/order_a.bvh" "$TMP/order_b.bvh" || fail "blend -o output depends on the order of the samples"
python3 - "$TMP/order_a.bvh" <<'EOF' || fail "default rate of a 30 + 60 fps blend"
import sys
lines = open(sys.argv[1]).read().split("\n")
dt = float(lines[lines.index("MOTION") + 2].split()[2])
assert abs(1 / dt - 60) < 1, 1 / dt
assert "OFFSET 0 1 0" in lines[3], lines[3]   # walk's (the smaller speed), not fast60's 1.1
EOF

# The 3D example of docs/BLEND_SPACE.md, whose outputs the text quotes: a point in the
# tetrahedron and one projected onto a hull face (the uphill walk is the 25-frame clip).
cp "$TMP/walk.bvh" "$TMP/walk_left.bvh"; cp "$TMP/jog.bvh" "$TMP/walk_up.bvh"
cat > "$TMP/terrain.json" <<'EOF'
{
  "name": "terrain",
  "axes": [ { "name": "speed", "min": 0, "max": 4 }, { "name": "turn", "min": -1, "max": 1 },
            { "name": "slope", "min": -1, "max": 1 } ],
  "align": "position",
  "grid": [9, 5, 5],
  "samples": [
    { "name": "walk", "clip": "walk.bvh", "params": [1, 0, 0], "loop": true },
    { "name": "run", "clip": "run.bvh", "params": [3.5, 0, 0], "loop": true },
    { "name": "walk_left", "clip": "walk_left.bvh", "params": [1, -1, 0], "loop": true },
    { "name": "walk_uphill", "clip": "walk_up.bvh", "params": [1, 0, 1], "loop": true }
  ]
}
EOF
out=$("$CLI" blend "$TMP/terrain.json" --param 1.5,-0.2,0.2 --weights) || fail "terrain example exited $?"
grep -q "^cell: tetrahedron 0 " <<<"$out" || fail "terrain example:"$'\n'"$out"
grep -q "outside" <<<"$out" && fail "terrain example point is outside:"$'\n'"$out"
[ "$(tail -n 5 <<<"$out")" = "  walk                     0.400000
  run                      0.200000
  walk_left                0.200000
  walk_uphill              0.200000
cycle duration: 0.9133 s" ] || fail "terrain example's weights or duration differ from docs/BLEND_SPACE.md:"$'\n'"$out"
out=$("$CLI" blend "$TMP/terrain.json" --param 2,-0.3,0.4 --weights) || fail "terrain outside example exited $?"
[ "$(tail -n 6 <<<"$out")" = "cell: hull_face 0 (walk_left, walk_uphill, run)
  walk                     0.000000
  run                      0.375758
  walk_left                0.262121
  walk_uphill              0.362121
cycle duration: 0.8106 s" ] || fail "terrain outside example differs from docs/BLEND_SPACE.md:"$'\n'"$out"
grep -q "(outside; used 1.93939 -0.262121 0.362121)" <<<"$out" || fail "terrain outside example's point:"$'\n'"$out"

# Bad inputs: one line on stderr, non-zero exit.
expect_fail() { # description, then the command
  local what=$1; shift
  local err
  if err=$("$@" 2>&1 >/dev/null); then fail "$what: should have failed"; fi
  [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "$what: expected one stderr line, got: $err"
  grep -q "posematch" <<<"$err" || fail "$what: message lacks the program name: $err"
  printf '%s\n' "$err"
}
expect_fail "missing --param" "$CLI" blend "$TMP/space.json" --weights | grep -q -- "--param" || fail "missing --param message"
expect_fail "two values for a 1D space" "$CLI" blend "$TMP/space.json" --param 1,2 --weights | grep -q "axis" || fail "param count message"
expect_fail "two values for a 3D space" "$CLI" blend "$TMP/space3d.json" --param 1,2 --weights | grep -q "axis" || fail "3D param count message"
expect_fail "four values" "$CLI" blend "$TMP/space3d.json" --param 1,2,3,4 --weights | grep -q "three" || fail "4-value message"
sed -e 's/"params": \[1, -0.5, 0.5\]/"params": [2, 0, -0.5]/' -e 's/"params": \[1.4, -0.3, -0.3\]/"params": [2, -0.5, -0.5]/' \
  "$TMP/space3d.json" > "$TMP/flat3d.json"
expect_fail "coplanar samples with \"coplanar\": \"error\"" "$CLI" blend "$TMP/flat3d.json" --param 1,0,0 --weights \
  | grep -q "one plane" || fail "coplanar message"
expect_fail "not a number" "$CLI" blend "$TMP/space.json" --param fast --weights >/dev/null
expect_fail "hexadecimal --param" "$CLI" blend "$TMP/space.json" --param 0x10 --weights | grep -q "decimal" || fail "hex message"
# A decimal number beyond the float range is told as such, not as "not a decimal number".
expect_fail "--param beyond float" "$CLI" blend "$TMP/space.json" --param 1e39 --weights | grep -q "1e39.*single-precision range" \
  || fail "--param beyond float message"
expect_fail "--param beyond float, second value" "$CLI" blend "$TMP/space3d.json" --param 1,-1e39,0 --weights \
  | grep -q "'-1e39' is beyond the single-precision range" || fail "--param beyond float message (second value)"
expect_fail "--param with a space" "$CLI" blend "$TMP/space.json" --param " 1" --weights >/dev/null
# Malformed JSON on one line (as generated files often are): the column and the text there, not
# just "line 1".
printf '{"samples": [{"clip": "walk.bvh", "params": [1]}, {"clip": "run.bvh", "params": [NaN]}]}' > "$TMP/nan.json"
expect_fail "NaN in one-line JSON" "$CLI" blend "$TMP/nan.json" --param 1 --weights \
  | grep -q "malformed near line 1, column 82 (at 'NaN\]}\]}')" || fail "malformed JSON message lacks the column"
expect_fail "repeated --param" "$CLI" blend "$TMP/space.json" --param 1 --param 2 --weights | grep -q "given twice" \
  || fail "repeated --param message"
expect_fail "repeated -o" "$CLI" blend "$TMP/space.json" --param 1 -o "$TMP/a.bvh" -o "$TMP/b.bvh" | grep -q "given twice" \
  || fail "repeated -o message"
expect_fail "hexadecimal --fps" "$CLI" blend "$TMP/space.json" --param 1 -o "$TMP/a.bvh" --fps 0x10 >/dev/null
expect_fail "--fps out of range" "$CLI" blend "$TMP/space.json" --param 1 -o "$TMP/a.bvh" --fps 0.0001 >/dev/null
sed -e 's/"fps": 30/"fps": 1e-300/' "$TMP/space.json" > "$TMP/fps.json"
expect_fail "JSON fps out of range" "$CLI" blend "$TMP/fps.json" --param 1 --weights | grep -q "0.001..10000" \
  || fail "JSON fps message"
expect_fail "nothing to do" "$CLI" blend "$TMP/space.json" --param 1 >/dev/null
expect_fail "empty -o" "$CLI" blend "$TMP/space.json" --param 1 -o "" | grep -q "blend: -o: the output path is empty" \
  || fail "empty -o message"
expect_fail "missing file" "$CLI" blend "$TMP/none.json" --param 1 --weights | grep -q "none.json" || fail "missing file message"
printf '{"samples": [{"clip": "walk.bvh", "params": [1]}, {"clip": "jog.bvh", "params": [1]}], "align": "none"}' > "$TMP/dup.json"
expect_fail "duplicate samples" "$CLI" blend "$TMP/dup.json" --param 1 --weights | grep -q "same coordinates" || fail "duplicate message"
printf '{"samples": [], "name": "empty"}' > "$TMP/empty.json"
expect_fail "empty space" "$CLI" blend "$TMP/empty.json" --param 1 --weights | grep -q "samples" || fail "empty message"
printf '{"samples": [{"clip": "walk.bvh", "params": [1]}], "speed": 3}' > "$TMP/typo.json"
expect_fail "unknown key" "$CLI" blend "$TMP/typo.json" --param 1 --weights | grep -q "unknown key" || fail "unknown key message"

# Real clips (walk and run of one actor), when present: a 2D space with a mirrored sample.
D="$MOCAP/bandai-namco/dataset-2"
if [ -f "$D/dataset-2_walk_normal_001.bvh" ] && [ -f "$D/dataset-2_run_normal_010.bvh" ]; then
  D=$(cd "$D" && pwd)
  cat > "$TMP/real.json" <<EOF
{ "name": "real", "axes": [{"name": "speed", "min": 0, "max": 4}, {"name": "side", "min": -1, "max": 1}],
  "samples": [
    {"name": "walk", "clip": "$D/dataset-2_walk_normal_001.bvh", "params": [1.2, 0]},
    {"name": "walk_mirrored", "clip": "$D/dataset-2_walk_normal_001.bvh", "params": [1.2, 1], "mirror": true},
    {"name": "run", "clip": "$D/dataset-2_run_normal_010.bvh", "params": [3.2, 0]}
  ] }
EOF
  json=$("$CLI" blend "$TMP/real.json" --param 2,0.25 --weights --json) || fail "real blend exited $?"
  python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["cell"]["kind"]=="triangle" and abs(sum(e["weight"] for e in d["weights"])-1)<1e-6, d' "$json" \
    || fail "real weights: $json"
  "$CLI" blend "$TMP/real.json" --param 2,0.25 -o "$TMP/real.bvh" >/dev/null || fail "real blend -o exited $?"
  grep -q "^MOTION" "$TMP/real.bvh" || fail "real.bvh has no MOTION"
  # A walk trimmed to two strides and a run to one: the walk is cut into two gait cycles and the
  # blend repeats after two, each its own duration; text output says so.
  cat > "$TMP/strides.json" <<EOF
{ "name": "strides", "samples": [
    {"name": "walk", "clip": "$D/dataset-2_walk_normal_001.bvh", "params": [1.2], "start": 1.0, "end": 3.2, "loop": true},
    {"name": "run", "clip": "$D/dataset-2_run_normal_010.bvh", "params": [3.2], "start": 0.8, "end": 1.5, "loop": true}
  ] }
EOF
  json=$("$CLI" blend "$TMP/strides.json" --param 2.2 --weights --json) || fail "strides blend exited $?"
  python3 - "$json" <<'PY' || fail "strides weights: $json"
import json, sys
d = json.loads(sys.argv[1])
assert {e["sample"]: e["cycles"] for e in d["weights"]} == {"walk": 2, "run": 1}, d
assert d["period"] == 2 and len(d["cycle_durations"]) == 2 and d["cycle_durations"][0] == d["duration"], d
PY
  "$CLI" blend "$TMP/strides.json" --param 2.2 --weights > "$TMP/strides.txt" || fail "strides blend --weights exited $?"
  grep -q "^repeats after 2 cycles: [0-9.]* [0-9.]* s$" "$TMP/strides.txt" || fail "strides text output: $(cat "$TMP/strides.txt")"
  # A period baked whole needs no note about what -o and build make of it.
  grep -q "^baked" "$TMP/strides.txt" && fail "strides text output: a period baked whole said otherwise: $(cat "$TMP/strides.txt")"
  "$CLI" blend "$TMP/strides.json" --param 1.2 --weights | grep -q "walk .*(2 gait cycles)" || fail "strides sample cycles"
  # A loop whose period is too long to bake (6 strides with 8: 24 cycles) is baked as a one-shot of
  # 8 cycles: --weights says so (it used to report only "looping": true, as the blend itself
  # loops), and says what build makes of it, as it does for a period that is baked whole.
  D1="$MOCAP/bandai-namco/dataset-1"
  if [ -f "$D1/dataset-1_walk_normal_001.bvh" ]; then
    D1=$(cd "$D1" && pwd)
    cat > "$TMP/long.json" <<EOF
{ "name": "long", "axes": [{"name": "speed", "min": 0, "max": 4}], "grid": [3], "samples": [
    {"name": "a", "clip": "$D1/dataset-1_walk_normal_001.bvh", "params": [1], "loop": true},
    {"name": "b", "clip": "$D/dataset-2_walk_normal_001.bvh", "params": [3], "loop": true}
  ] }
EOF
    for c in "long 2 24 8 False" "strides 2.2 2 2 True"; do
      set -- $c
      "$CLI" blend "$TMP/$1.json" --param $2 --weights --json > "$TMP/bw.json" || fail "$1 blend --weights exited $?"
      "$CLI" build "$TMP/$1.json" -o "$TMP/bw.pmdb" >/dev/null 2>&1 || fail "$1 build exited $?"
      "$CLI" info "$TMP/bw.pmdb" --json > "$TMP/bw_info.json" || fail "$1 info exited $?"
      python3 - "$TMP/bw.json" "$TMP/bw_info.json" $3 $4 $5 $1 $2 <<'PY' || fail "$1: baked cycles or looping: $(cat "$TMP/bw.json")"
import json, sys
w, info = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert w["looping"] and w["period"] == int(sys.argv[3]), w
assert w["baked_cycles"] == int(sys.argv[4]) and str(w["baked_looping"]) == sys.argv[5], w
assets = [a for a in info["asset_list"] if a["name"] == "%s@%s" % (sys.argv[6], sys.argv[7])]
assert len(assets) == 1 and assets[0]["looping"] == w["baked_looping"], (info["asset_list"], w)
PY
    done
    "$CLI" blend "$TMP/long.json" --param 2 --weights | grep -q "^baked (-o, build) as 8 cycles once" || fail "long text output"
  fi
else
  echo "note: real clips not found under $MOCAP; generated clips only"
fi
echo "ok"
