#!/usr/bin/env bash
# What the database commands print, field by field, where a mutation audit found no test
# holding it: info's asset lines (pose ranges, cost addends, plural), its JSON (the explained
# variance per component count, mirror_of for every mirrored asset, the rate as given), search's
# continuing result (text and JSON), a query far beyond the data refused before any result,
# pcakdtree results never called unproven, and
# export-features refusing an output prefix that names no file or would overwrite its input, and
# synth's clips: the same for a seed, and the kinds of motion its usage lists.
# Exits 77 when something it needs is missing.
source "$(dirname "$0")/common.sh" cliout || { echo "FAIL: cannot source common.sh" >&2; exit 1; }
T=$TMP

"$CLI" synth "$T/clips" --clips 3 --seed 5 > /dev/null || fail "synth"
"$CLI" build "$T/clips" -o "$T/a.pmdb" --mirror --fps 29.97 --quiet || fail "build"
"$CLI" build "$T/clips/synth_000.bvh" -o "$T/one.pmdb" --quiet || fail "build one clip"

# info: one asset is "1 asset"; --assets lists each asset's first and last pose, and a cost addend
# only where there is one; the JSON's explained variance has an entry per component count, its
# mirrored assets say which asset they copy (asset 0 included), its rate is the one given.
"$CLI" info "$T/one.pmdb" | grep -q " in 1 asset at " || fail "info: one asset is not '1 asset'"
"$CLI" info "$T/a.pmdb" --json > "$T/info.json" || fail "info --json"
"$CLI" info "$T/a.pmdb" --assets > "$T/assets.txt" || fail "info --assets"
grep -q "cost addend" "$T/assets.txt" && fail "info --assets prints a cost addend of 0: $(grep -m1 'cost addend' "$T/assets.txt")"
python3 - "$T" <<'PY' || fail "info fields"
import json, re, sys
t = sys.argv[1]
info = json.load(open(t + "/info.json"))
assert len(info["explained_variance_by_components"]) == info["cardinality"], info["explained_variance_by_components"]
assert info["fps"] == 29.97, info["fps"]
assets = info["asset_list"]
lines = [l for l in open(t + "/assets.txt") if l.startswith("asset ")]
assert len(lines) == len(assets) == info["assets"], (len(lines), len(assets))
first = 0
for a, line in zip(assets, lines):
    m = re.search(r"poses (\d+)\.\.(\d+)", line)
    assert m and int(m.group(1)) == first and int(m.group(2)) == first + a["poses"] - 1, (line, a)
    first += a["poses"]
mirrored = [a for a in assets if a["mirrored"]]
assert len(mirrored) == 3, assets
sources = sorted(a["mirror_of"] for a in mirrored)
assert all(assets[s]["mirrored"] is False for s in sources) and len(set(sources)) == 3 and 0 in sources, sources
PY

# export-features states the rate as given too; search: a continuing pose whose addend makes it
# win is reported as continuing, with its addend.
"$CLI" export-features "$T/a.pmdb" -o "$T/x" || fail "export-features"
D=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['cardinality'])" "$T/x.json") || fail "cardinality"
python3 -c "import json, sys; x = json.load(open(sys.argv[1])); assert x['fps'] == 29.97, x['fps']" "$T/x.json" || fail "export-features fps"
head -c $((D * 4)) "$T/x.f32" > "$T/q.f32"
"$CLI" search "$T/a.pmdb" --queries "$T/q.f32" --continuing 7 --continuing-addend -1000 > "$T/cont.txt" || fail "search --continuing"
grep -q "pose 7 .*(continuing)" "$T/cont.txt" || fail "search --continuing text: $(cat "$T/cont.txt")"
grep -q " addend=-1000" "$T/cont.txt" || fail "search --continuing text has no addend: $(cat "$T/cont.txt")"
"$CLI" search "$T/a.pmdb" --queries "$T/q.f32" --continuing 7 --continuing-addend -1000 --json > "$T/cont.json" || fail "search --continuing --json"
python3 - "$T/cont.json" <<'PY' || fail "search --continuing json"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert r["pose"] == 7 and r["continuing"] is True and r["cost_addend"] == -1000, r
PY
# A query far beyond the database's values (wrong units) fails the command before any result is
# printed, naming the query and the value.
python3 - "$T" "$D" <<'PY' || fail "far query"
import array, sys
rows = array.array("f", open(sys.argv[1] + "/q.f32", "rb").read()) * 2
rows[int(sys.argv[2]) + 1] = 1e30
open(sys.argv[1] + "/far.f32", "wb").write(rows.tobytes())
PY
"$CLI" search "$T/a.pmdb" --queries "$T/far.f32" > "$T/far.txt" 2> "$T/err.txt" && fail "search of a far query succeeded"
[ -s "$T/far.txt" ] && fail "search printed results before failing: $(cat "$T/far.txt")"
grep -q "far.f32: query 1 value 1 (1e+30) is far beyond the database's values" "$T/err.txt" || fail "far query: $(cat "$T/err.txt")"
# pcakdtree never proves its answer, and is not reported as cut short for that.
"$CLI" search "$T/a.pmdb" --queries "$T/q.f32" --mode pcakdtree > "$T/kd.txt" || fail "search pcakdtree"
grep -q "not proven" "$T/kd.txt" && fail "pcakdtree result called unproven: $(cat "$T/kd.txt")"
grep -q "^query 0: pose " "$T/kd.txt" || fail "pcakdtree text: $(cat "$T/kd.txt")"

# export-features: -o must end with a file name ("dir/.." names none); an output that is the
# database itself is refused and leaves it alone.
"$CLI" export-features "$T/a.pmdb" -o "$T/clips/.." > /dev/null 2> "$T/err.txt" && fail "export-features -o DIR/.. succeeded"
grep -q "names no file" "$T/err.txt" || fail "export-features -o DIR/..: $(cat "$T/err.txt")"
cp "$T/a.pmdb" "$T/db.f32"
"$CLI" export-features "$T/db.f32" -o "$T/db" > /dev/null 2> "$T/err.txt" && fail "export-features over its own database succeeded"
[ "$(wc -l < "$T/err.txt")" -eq 1 ] || fail "export-features over its input: $(cat "$T/err.txt")"
cmp -s "$T/a.pmdb" "$T/db.f32" || fail "export-features overwrote its input database"

# synth: a seed gives the same files, another seed other ones; the clips are what its usage says
# (walks, runs, turns, side-steps, idles of a 17-joint humanoid whose sides mirror, in centimetres),
# in the order of their index (walk, run, turning walk, idle of 5 s, side-step, turning run), at
# the rate and under the prefix asked for.
"$CLI" synth "$T/s5" --clips 6 --seed 5 > /dev/null && "$CLI" synth "$T/s5b" --clips 6 --seed 5 > /dev/null \
  && "$CLI" synth "$T/s6" --clips 6 --seed 6 > /dev/null || fail "synth --seed"
for i in 0 1 2 3 4 5; do
  cmp -s "$T/s5/synth_00$i.bvh" "$T/s5b/synth_00$i.bvh" || fail "synth --seed 5 twice: synth_00$i.bvh differs"
  cmp -s "$T/s5/synth_00$i.bvh" "$T/s6/synth_00$i.bvh" && fail "synth --seed 5 and 6: the same synth_00$i.bvh"
done
"$CLI" synth "$T/s60" --clips 2 --fps 60 --name gait > /dev/null || fail "synth --fps 60 --name gait"
[ "$(ls "$T/s60")" = "gait_000.bvh"$'\n'"gait_001.bvh" ] || fail "synth --name gait --clips 2: $(ls "$T/s60")"
python3 - "$T" <<'PY' || fail "synth clips"
import math, sys
t = sys.argv[1]
def read(path):
    lines = open(path).read().split("\n")
    i = lines.index("MOTION")
    frames, ft = int(lines[i + 1].split()[1]), float(lines[i + 2].split()[2])
    rows = [list(map(float, l.split())) for l in lines[i + 3:i + 3 + frames]]
    joints, offsets = [], {}
    for l, nxt in zip(lines[:i], lines[1:i]):
        w = l.split()
        if w and w[0] in ("ROOT", "JOINT"):
            joints.append(w[1])
        if w and w[0] == "OFFSET" and joints and joints[-1] not in offsets:
            offsets[joints[-1]] = tuple(map(float, w[1:4]))
    return frames, ft, rows, joints, offsets
names = ["Hips", "Spine", "Chest", "Neck", "Head", "LeftArm", "LeftForeArm", "RightArm", "RightForeArm", "LeftUpLeg",
         "LeftLeg", "LeftFoot", "LeftToeBase", "RightUpLeg", "RightLeg", "RightFoot", "RightToeBase"]
kinds = ["walk", "run", "turning walk", "idle", "side-step", "turning run"]
for i, kind in enumerate(kinds):
    frames, ft, rows, joints, off = read(f"{t}/s5/synth_00{i}.bvh")
    assert sorted(joints) == sorted(names), joints
    assert off["Hips"] == (0, 95, 0), off["Hips"]  # centimetres
    for j in names:
        if j.startswith("Left"):
            l, r = off[j], off["Right" + j[4:]]
            assert abs(l[0] + r[0]) < 1e-4 and abs(l[1] - r[1]) < 1e-4 and abs(l[2] - r[2]) < 1e-4, (j, l, r)
    assert abs(ft - 1 / 30) < 1e-6, ft
    dur = (frames - 1) * ft
    xz = [(r[0] / 100, r[2] / 100) for r in rows]
    speed = sum(math.dist(a, b) for a, b in zip(xz, xz[1:])) / dur
    net = math.dist(xz[0], xz[-1]) / dur
    n = 30
    h = lambda a, b: math.atan2(b[0] - a[0], b[1] - a[1])
    turn = ((h(xz[-1 - n], xz[-1]) - h(xz[0], xz[n]) + math.pi) % (2 * math.pi) - math.pi) / (dur - 1)
    hips = [r[1] / 100 for r in rows]
    assert 0.8 < min(hips) and max(hips) < 1.0, (kind, min(hips), max(hips))
    what = (kind, frames, speed, net, turn)
    if kind == "idle":
        assert frames == 151 and net < 0.05, what
        continue
    assert 3 <= dur <= 7, what
    lo, hi = {"walk": (1.0, 1.6), "run": (2.6, 3.8), "turning walk": (1.15, 1.25), "side-step": (0.82, 0.89),
              "turning run": (2.9, 3.1)}[kind]
    assert lo <= speed <= hi, what
    if kind.startswith("turning"):
        assert abs(turn) > 0.1 and net < 0.9 * speed, what
    else:
        assert abs(turn) < 0.05 and net > 0.98 * speed, what
frames, ft, rows, joints, off = read(f"{t}/s60/gait_000.bvh")
assert abs(ft - 1 / 60) < 1e-6, ft
PY
"$CLI" synth "$T/nope/out" --clips 1 > /dev/null 2> "$T/err.txt" && fail "synth into a missing folder succeeded"
[ "$(cat "$T/err.txt")" = "posematch: $T/nope/out: cannot create: No such file or directory" ] \
  || fail "synth into a missing folder: $(cat "$T/err.txt")"
echo ok
