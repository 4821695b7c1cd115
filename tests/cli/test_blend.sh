#!/usr/bin/env bash
# posematch blend: weights (text and JSON) and a written blend on generated BVH clips, then on real
# clips when ../shared/mocap is present; bad inputs fail with one stderr line. Exits 77 (skipped)
# when something it needs is missing.
source "$(dirname "$0")/common.sh" blend || { echo "FAIL: cannot source common.sh" >&2; exit 1; }

# Three small clips of one skeleton (metres): the root moves forward at 1, 2 and 3 units per second
# over 1.0, 0.8 and 0.6 s while a leg swings.
make_clip() { # name speed frames
  local name=$1 speed=$2 frames=$3
  {
    printf 'HIERARCHY\nROOT Hips\n{\n\tOFFSET 0 1 0\n'
    printf '\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n'
    printf '\tJOINT LeftUpLeg\n\t{\n\t\tOFFSET 0.1 -0.1 0\n\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n'
    printf '\t\tEnd Site\n\t\t{\n\t\t\tOFFSET 0 -0.8 0\n\t\t}\n\t}\n'
    printf '\tJOINT RightUpLeg\n\t{\n\t\tOFFSET -0.1 -0.1 0\n\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n'
    printf '\t\tEnd Site\n\t\t{\n\t\t\tOFFSET 0 -0.8 0\n\t\t}\n\t}\n}\n'
    printf 'MOTION\nFrames: %d\nFrame Time: 0.0333333\n' "$frames"
    python3 - "$speed" "$frames" <<'EOF'
import math, sys
speed, frames = float(sys.argv[1]), int(sys.argv[2])
for f in range(frames):
    t = f / 30.0
    a = 30 * math.sin(2 * math.pi * f / (frames - 1))
    print(f"0 1 {speed * t:.6f} 0 0 0 0 {a:.4f} 0 0 {-a:.4f} 0")
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
expect_fail "nothing to do" "$CLI" blend "$TMP/space.json" --param 1 >/dev/null
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
else
  echo "note: real clips not found under $MOCAP; generated clips only"
fi
echo "ok"
