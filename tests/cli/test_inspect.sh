#!/usr/bin/env bash
# posematch inspect: text and JSON on a generated BVH and (when present) a real one; a bad file
# fails with one stderr line naming it. Exits 77 (skipped) when something it needs is missing.
source "$(dirname "$0")/common.sh" inspect || { echo "FAIL: cannot source common.sh" >&2; exit 1; }

# A small Z-up biped in centimetres, mixed rotation orders, a T-pose first frame.
bvh="$TMP/walk_z.bvh"
{
  printf 'HIERARCHY\nROOT Hips\n{\n\tOFFSET 0 0 95\n'
  printf '\tCHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation\n'
  for side in Left Right; do
    x=10; [ $side = Right ] && x=-10
    printf '\tJOINT %sUpLeg\n\t{\n\t\tOFFSET %s 0 -5\n\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n' $side $x
    printf '\t\tJOINT %sFoot\n\t\t{\n\t\t\tOFFSET 0 0 -84\n\t\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n' $side
    printf '\t\t\tEnd Site\n\t\t\t{\n\t\t\t\tOFFSET 0 -12 -5\n\t\t\t}\n\t\t}\n\t}\n'
  done
  printf '\tJOINT Head\n\t{\n\t\tOFFSET 0 0 60\n\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n'
  printf '\t\tEnd Site\n\t\t{\n\t\t\tOFFSET 0 0 15\n\t\t}\n\t}\n}\n'
  printf 'MOTION\nFrames: 31\nFrame Time: 0.0333333\n'
  printf '0 0 95 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n'
  for f in $(seq 1 30); do
    printf '0 %s 95 0 0 0 0 25 0 0 -10 0 0 -25 0 0 -10 0 0 5 0\n' "$((f * 4))"
  done
} > "$bvh"

# Text output.
out=$("$CLI" inspect "$bvh") || fail "inspect exited $? on $bvh"
for word in frames units "up axis" hips feet roots "frame 0" floor "hip height" LeftUpLeg ZYX ZXY; do
  grep -q -- "$word" <<<"$out" || fail "text output lacks '$word':"$'\n'"$out"
done

# JSON output.
json=$("$CLI" inspect "$bvh" --json) || fail "inspect --json exited $?"
python3 - "$json" <<'EOF' || fail "JSON check failed"
import json, sys
d = json.loads(sys.argv[1])
for key in ("joints", "frames", "frame_time", "fps", "duration", "units", "unit_scale", "up_axis", "hips", "feet", "root",
            "first_frame_is_rest", "floor_height", "hip_height", "toes", "upper_legs", "head", "roots"):
    assert key in d, "missing key " + key
assert d["frames"] == 31, d["frames"]
assert abs(d["frame_time"] - 0.0333333) < 1e-6
assert abs(d["fps"] - 30.0) < 1e-3
assert abs(d["duration"] - 1.0) < 1e-3
assert d["units"] == "cm" and abs(d["unit_scale"] - 0.01) < 1e-9, (d["units"], d["unit_scale"])
assert d["up_axis"] == "Z", d["up_axis"]
assert d["root"] == "Hips" and d["roots"] == ["Hips"]
assert d["hips"] == "Hips"
assert d["feet"] == ["LeftFoot", "RightFoot"], d["feet"]
assert d["upper_legs"] == ["LeftUpLeg", "RightUpLeg"]
assert d["head"] == "Head"
assert d["first_frame_is_rest"] is True
assert 0.8 < d["hip_height"] < 1.0, d["hip_height"]
joints = {j["name"]: j for j in d["joints"]}
assert len(d["joints"]) == 6
assert joints["Hips"]["parent"] is None
assert joints["Hips"]["channels"] == ["Xposition", "Yposition", "Zposition", "Zrotation", "Yrotation", "Xrotation"]
assert joints["Hips"]["rotation_order"] == "ZYX"
assert joints["LeftFoot"]["parent"] == "LeftUpLeg"
assert joints["LeftFoot"]["rotation_order"] == "ZXY"
for j in d["joints"]:
    for k in ("name", "parent", "channels", "rotation_order"):
        assert k in j, (j, k)
EOF

# The rest of the JSON: the roles object (every role, null where none was found), the counts,
# the file and clip names, and each joint's offset and End Site (metres) where it has one.
"$CLI" inspect "$bvh" --json > "$TMP/walk.json" || fail "inspect --json exited $?"
python3 - "$TMP/walk.json" "$bvh" <<'EOF' || fail "JSON roles/joints check failed"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["file"] == sys.argv[2] and d["name"] == "walk_z", (d["file"], d["name"])
assert d["roles"] == {"hips": "Hips", "left_upleg": "LeftUpLeg", "right_upleg": "RightUpLeg", "left_foot": "LeftFoot",
                      "right_foot": "RightFoot", "left_toe": None, "right_toe": None, "head": "Head"}, d["roles"]
assert d["toes"] == [], d["toes"]
assert d["joint_count"] == 6 == len(d["joints"])
assert abs(d["floor_height"] - 0.059347) < 1e-4, d["floor_height"]
joints = {j["name"]: j for j in d["joints"]}
assert joints["LeftFoot"]["offset"] == [0, 0, -0.84], joints["LeftFoot"]["offset"]
assert joints["LeftFoot"]["end_site"] == [0, -0.12, -0.05], joints["LeftFoot"].get("end_site")
assert joints["Head"]["end_site"] == [0, 0, 0.15]
assert "end_site" not in joints["Hips"] and "end_site" not in joints["LeftUpLeg"]
EOF
# The text gives the same facts, one per line.
for line in "  frames      31 at 0.0333333 s (30 fps), 0.999999 s" "  units       cm (0.01 m per unit)" \
  "  up axis     Z (converted to Y up, metres)" "  roots       Hips" "  hips        Hips" "  upper legs  LeftUpLeg / RightUpLeg" \
  "  feet        LeftFoot / RightFoot" "  toes        - / -" "  head        Head" "  frame 0     rest/T-pose lead-in" \
  "  floor       0.059 m" "  hip height  0.891 m above the lowest foot" "  joints      6"; do
  grep -qxF -- "$line" <<<"$out" || fail "text output lacks the line '$line':"$'\n'"$out"
done
grep -qE '^ +2 LeftFoot +parent LeftUpLeg +ZXY  Zrotation Xrotation Yrotation  \(End Site\)$' <<<"$out" \
  || fail "text output: the LeftFoot line:"$'\n'"$out"
grep -qE '^ +1 LeftUpLeg +parent Hips +ZXY  Zrotation Xrotation Yrotation$' <<<"$out" || fail "text output: the LeftUpLeg line"
# A clip with toes whose frame 0 is part of the motion (a synthetic one).
"$CLI" synth "$TMP/synth" --clips 1 > /dev/null || fail "synth"
"$CLI" inspect "$TMP/synth/synth_000.bvh" --json > "$TMP/s.json" || fail "inspect --json of a synthetic clip"
python3 - "$TMP/s.json" <<'EOF' || fail "synthetic clip JSON check failed"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["toes"] == ["LeftToeBase", "RightToeBase"], d["toes"]
assert d["roles"]["left_toe"] == "LeftToeBase" and d["roles"]["right_toe"] == "RightToeBase", d["roles"]
assert d["first_frame_is_rest"] is False
EOF
"$CLI" inspect "$TMP/synth/synth_000.bvh" > "$TMP/s.txt" || fail "inspect of a synthetic clip"
grep -qxF "  toes        LeftToeBase / RightToeBase" "$TMP/s.txt" || fail "text toes of a synthetic clip"
grep -qxF "  frame 0     part of the motion" "$TMP/s.txt" || fail "text frame 0 of a synthetic clip"

# Overrides.
json=$("$CLI" inspect "$bvh" --json --up y --unit-scale 1) || fail "inspect with overrides exited $?"
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["up_axis"]=="Y" and d["unit_scale"]==1, d' "$json" \
  || fail "overrides were ignored"

# A real file when the shared clips are here (PM_MOCAP_DIR, else ../shared/mocap).
if [ -f "$MOCAP/cmu/02_01_daz.bvh" ]; then
  json=$("$CLI" inspect --json "$MOCAP/cmu/02_01_daz.bvh") || fail "inspect failed on 02_01_daz.bvh"
  python3 - "$json" <<'EOF' || fail "real-file JSON check failed"
import json, sys
d = json.loads(sys.argv[1])
assert d["frames"] == 344 and len(d["joints"]) == 43
assert d["units"] == "cm" and d["up_axis"] == "Y"
assert d["hips"] == "hip" and d["root"] == "hip"
assert d["feet"] == ["lFoot", "rFoot"]
assert d["first_frame_is_rest"] is True
orders = {j["rotation_order"] for j in d["joints"]}
assert orders == {"ZYX", "ZXY"}, orders
EOF
else
  echo "note: real clips not found under $MOCAP; generated BVH only"
fi

# A bad file: non-zero exit, exactly one stderr line that names the file and the line.
bad="$TMP/broken.bvh"
printf 'HIERARCHY\nROOT Hips\n{\n\tOFFSET 0 0 0\n\tCHANNELS 3 Xrotation Yrotation\n}\n' > "$bad"
if "$CLI" inspect "$bad" >"$TMP/out" 2>"$TMP/err"; then fail "inspect accepted a broken file"; fi
[ "$(wc -l < "$TMP/err")" -eq 1 ] || fail "expected one stderr line, got:"$'\n'"$(cat "$TMP/err")"
grep -q "^posematch: .*broken.bvh:5: CHANNELS" "$TMP/err" || fail "stderr does not name file and line: $(cat "$TMP/err")"
[ ! -s "$TMP/out" ] || fail "stdout not empty on error"

# A missing file and a bad option fail the same way.
if "$CLI" inspect "$TMP/missing.bvh" 2>"$TMP/err"; then fail "inspect accepted a missing file"; fi
[ "$(wc -l < "$TMP/err")" -eq 1 ] && grep -q "missing.bvh" "$TMP/err" || fail "missing file: $(cat "$TMP/err")"
if "$CLI" inspect "$bvh" --frobnicate 2>"$TMP/err"; then fail "inspect accepted an unknown option"; fi
[ "$(wc -l < "$TMP/err")" -eq 1 ] || fail "unknown option: $(cat "$TMP/err")"
# A binary file given as BVH: the message quotes what it found without raw bytes.
printf 'PMDB\x89\r\n\x1a\x00\x01' > "$TMP/binary.bvh"
if "$CLI" inspect "$TMP/binary.bvh" 2>"$TMP/err"; then fail "inspect accepted a binary file"; fi
grep -q "found 'PMDB?" "$TMP/err" || fail "binary file: $(cat "$TMP/err")"
LC_ALL=C grep -q $'[\x80-\xff]' "$TMP/err" && fail "binary file: raw bytes in the message"

# A joint name that is not UTF-8 (bytes 0xff 0xfe): the JSON stays valid, the bytes escaped.
sed 's/LeftFoot/Left\xff\xfeFoot/' "$bvh" > "$TMP/latin.bvh"
LC_ALL=C grep -q $'\xff' "$TMP/latin.bvh" || fail "latin.bvh has no 0xff byte"
"$CLI" inspect "$TMP/latin.bvh" --json > "$TMP/latin.json" || fail "inspect --json of a non-UTF-8 name exited $?"
python3 - "$TMP/latin.json" <<'EOF' || fail "inspect --json of a non-UTF-8 name is not valid JSON"
import json, sys
d = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
assert any(j["name"] == "Left\ufffd\ufffdFoot" for j in d["joints"]), [j["name"] for j in d["joints"]]
EOF

# Help.
"$CLI" inspect --help | grep -q "usage: posematch inspect" || fail "--help"
echo "ok"
