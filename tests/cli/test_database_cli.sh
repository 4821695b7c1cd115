#!/usr/bin/env bash
# The database commands end to end on generated clips: build (determinism across threads, the
# cache), info, search (against export-features' raw matrix), export-features, bench (with
# --threads), and the error contract (non-zero exit, one stderr line naming the file). Exits 77
# when something it needs is missing.
source "$(dirname "$0")/common.sh" dbcli || { echo "FAIL: cannot source common.sh" >&2; exit 1; }
T=$TMP

"$CLI" synth "$T/clips" --clips 8 --seed 3 || fail "synth"
"$CLI" build "$T/clips" -o "$T/a.pmdb" --schema holden27 --mirror --threads 1 --quiet || fail "build 1 thread"
"$CLI" build "$T/clips" -o "$T/b.pmdb" --schema holden27 --mirror --threads 2 --quiet || fail "build 2 threads"
cmp -s "$T/a.pmdb" "$T/b.pmdb" || fail "1 and 2 threads give different databases"
"$CLI" build "$T/clips"/synth_00{0,1}.bvh -o "$T/c.pmdb" --cache "$T/cache" --quiet --json > "$T/c1.json" || fail "cache miss build"
"$CLI" build "$T/clips"/synth_00{0,1}.bvh -o "$T/d.pmdb" --cache "$T/cache" --quiet --json > "$T/c2.json" || fail "cache hit build"
cmp -s "$T/c.pmdb" "$T/d.pmdb" || fail "cached database differs"
python3 - "$T" <<'PY' || fail "cache json"
import json, sys
a = json.load(open(sys.argv[1] + "/c1.json")); b = json.load(open(sys.argv[1] + "/c2.json"))
assert a["cache_hit"] is False and b["cache_hit"] is True and a["key"] == b["key"], (a, b)
for k in ("poses", "assets", "bytes", "read_s", "build_s", "total_s", "cache_hit", "key"):
    assert k in a and k in b, k
assert a["poses"] == b["poses"] > 0 and a["assets"] == b["assets"] == 2 and a["bytes"] == b["bytes"] > 0, (a, b)
# threads only when built (a cache hit builds nothing).
assert a["threads"] >= 1 and "threads" not in b, (a, b)
PY
# A cache hit says so on stderr (and names the entry), unless --quiet; the entry is DIR/<key>.pmdb.
key=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["key"])' "$T/c1.json") || fail "cache key"
[ -f "$T/cache/$key.pmdb" ] || fail "no cache entry $key.pmdb: $(ls "$T/cache")"
"$CLI" build "$T/clips"/synth_00{0,1}.bvh -o "$T/hit.pmdb" --cache "$T/cache" 2> "$T/hit.err" || fail "cache hit build, not quiet"
[ "$(cat "$T/hit.err")" = "posematch: build: cache hit $T/cache/$key.pmdb" ] || fail "cache hit message: $(cat "$T/hit.err")"
"$CLI" build "$T/clips"/synth_00{0,1}.bvh -o "$T/hit.pmdb" --cache "$T/cache" --quiet 2> "$T/hit.err" || fail "cache hit build, quiet"
[ -s "$T/hit.err" ] && fail "cache hit with --quiet wrote to stderr: $(cat "$T/hit.err")"
# DIR/<key>.pmdb must fit 4095 characters: a DIR of 4057 is taken (its parent is missing here), one
# of 4058 is refused before any work.
long=$T/$(printf 'c%.0s' $(seq 250))/x
while [ ${#long} -lt 4057 ]; do long=$long/$(printf 'd%.0s' $(seq $((4057 - ${#long} - 1 > 200 ? 200 : 4057 - ${#long} - 1)))); done
[ ${#long} -eq 4057 ] || fail "a 4057-character path: ${#long}"
"$CLI" build "$T/clips/synth_000.bvh" -o "$T/hit.pmdb" --cache "$long" --quiet 2> "$T/long.err" && fail "a cache in a missing folder"
grep -q "too long" "$T/long.err" && fail "a 4057-character --cache was refused as too long: $(cat "$T/long.err")"
"$CLI" build "$T/clips/synth_000.bvh" -o "$T/hit.pmdb" --cache "${long}e" --quiet 2> "$T/long.err" && fail "a 4058-character --cache"
grep -q "build: --cache DIR is too long (DIR/<key>.pmdb would have more than 4095 characters)" "$T/long.err" \
  || fail "a 4058-character --cache: $(cat "$T/long.err")"
rm -f "$T/hit.pmdb"
# The tool's clip and asset arrays start at 64 entries and double: 64 clips fill them exactly
# (a pass one entry too far is a heap overflow the sanitizer build reports), 65 grow them once.
"$CLI" synth "$T/c65" --clips 65 --fps 10 > /dev/null || fail "synth of 65 clips"
mkdir "$T/c64" && cp "$T/c65"/synth_0[0-5]?.bvh "$T/c65"/synth_06[0-3].bvh "$T/c64/" || fail "copy 64 clips"
for n in 64 65; do
  "$CLI" build "$T/c$n" -o "$T/c$n.pmdb" --fps 10 --quiet || fail "build of $n clips"
  "$CLI" info "$T/c$n.pmdb" --json > "$T/c$n.json" || fail "info of $n clips"
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["assets"] == int(sys.argv[2]), d["assets"]' \
    "$T/c$n.json" "$n" || fail "a build of $n clips has other than $n assets"
done

"$CLI" info "$T/a.pmdb" > "$T/info.txt" || fail "info"
grep -q "poses" "$T/info.txt" || fail "info text"
"$CLI" info "$T/a.pmdb" --json > "$T/info.json" || fail "info --json"
"$CLI" info "$T/a.pmdb" --verify | grep -q "^verified .*all agree" || fail "info --verify"
"$CLI" info "$T/a.pmdb" --verify --json | grep -q '"verified":[[:space:]]*true' || fail "info --verify --json"
"$CLI" export-features "$T/a.pmdb" -o "$T/x" || fail "export-features"
python3 - "$T" <<'PY' || fail "info/export json"
import json, sys
t = sys.argv[1]
info = json.load(open(t + "/info.json"))
for k in ["poses", "assets", "cardinality", "unique_vectors", "unique_pca_vectors", "pca_components",
          "pca_explained_variance", "block_transition_poses", "bytes", "key"]:
    assert k in info, k
assert info["cardinality"] == 27 and info["assets"] == 16
x = json.load(open(t + "/x.json"))
for k in ["poses", "cardinality", "offset", "scale", "weight_sqrt", "channels", "pose_asset", "pose_frame",
          "block_transition", "cost_addend"]:
    assert k in x, k
import os
assert os.path.getsize(t + "/x.f32") == x["poses"] * x["cardinality"] * 4
assert sum(x["block_transition"]) == info["block_transition_poses"]
PY

# Queries: noisy copies of exported rows; the CLI's answer must be the brute-force optimum
# computed here from the exported matrix and the documented cost formula.
python3 - "$T" <<'PY' || fail "query generation"
import array, json, random, sys
t = sys.argv[1]
x = json.load(open(t + "/x.json")); D = x["cardinality"]; P = x["poses"]
m = array.array("f"); m.frombytes(open(t + "/x.f32", "rb").read())
random.seed(5)
q = array.array("f")
for i in range(6):
    p = random.randrange(P)
    q.extend(m[p * D + d] + random.gauss(0, 0.3) * x["scale"][d] for d in range(D))
open(t + "/q.f32", "wb").write(q.tobytes())
PY
for mode in exact bruteforce vptree pcakdtree; do
  "$CLI" search "$T/a.pmdb" --queries "$T/q.f32" --mode $mode --json > "$T/s_$mode.json" || fail "search --mode $mode"
done
"$CLI" search "$T/a.pmdb" --queries "$T/q.f32" > "$T/s.txt" || fail "search text"
grep -q "query 0: pose" "$T/s.txt" || fail "search text output"
python3 - "$T" <<'PY' || fail "search results"
import array, json, sys
t = sys.argv[1]
x = json.load(open(t + "/x.json")); D = x["cardinality"]; P = x["poses"]
m = array.array("f"); m.frombytes(open(t + "/x.f32", "rb").read())
q = array.array("f"); q.frombytes(open(t + "/q.f32", "rb").read())
sc, ws = x["scale"], x["weight_sqrt"]
res = {mode: json.load(open(t + "/s_%s.json" % mode))["results"] for mode in ["exact", "bruteforce", "vptree", "pcakdtree"]}
for i in range(len(q) // D):
    best = min((sum(((q[i * D + d] - m[p * D + d]) / sc[d] * ws[d]) ** 2 for d in range(D)) + x["cost_addend"][p], p)
               for p in range(P) if not x["block_transition"][p])
    for mode in ["exact", "bruteforce", "vptree"]:
        r = res[mode][i]
        for k in ["query", "pose", "asset", "time", "cost", "continuing", "breakdown"]:
            assert k in r, k
        # time is the pose's time in its asset, as frame / fps computes it (not a float's expansion)
        assert r["asset"] == x["assets"][x["pose_asset"][r["pose"]]]["name"], (mode, i, r)
        assert r["time"] == x["pose_frame"][r["pose"]] / x["fps"], (mode, i, r["time"], x["pose_frame"][r["pose"]])
        # export's channel names are the breakdown's keys
        assert sorted(r["breakdown"]) == sorted(x["channels"]), (r["breakdown"], x["channels"])
        assert abs(r["cost"] - best[0]) <= 1e-3 * (1 + best[0]), (mode, i, r["cost"], best)
        assert r["pose"] == res["bruteforce"][i]["pose"], (mode, i)
    assert res["pcakdtree"][i]["cost"] >= best[0] - 1e-4
    # proven: the exact modes' answers are, pcakdtree's never (approximate)
    assert all(res[mode][i]["proven"] for mode in ["exact", "bruteforce", "vptree"]), i
    assert not res["pcakdtree"][i]["proven"], i
PY

# A work budget: the best found within it, never below the optimum; unproven where cut, the
# optimum where proven. Other modes refuse it.
"$CLI" search "$T/a.pmdb" --queries "$T/q.f32" --max-nodes 2 --json > "$T/s_budget.json" || fail "search --max-nodes"
python3 - "$T" <<'PY' || fail "search --max-nodes results"
import json, sys
t = sys.argv[1]
full = json.load(open(t + "/s_exact.json"))["results"]
cut = json.load(open(t + "/s_budget.json"))["results"]
assert len(cut) == len(full)
for a, b in zip(cut, full):
    assert a["found"] and a["cost"] >= b["cost"], (a, b)
    if a["proven"]:
        assert a["pose"] == b["pose"] and a["cost"] == b["cost"], (a, b)
assert any(not a["proven"] for a in cut), "a budget of 2 nodes cut no walk"
PY
"$CLI" search "$T/a.pmdb" --queries "$T/q.f32" --max-nodes 2 --mode vptree > /dev/null 2> "$T/err" && fail "search --max-nodes with vptree"
grep -q "max-nodes applies to --mode exact, not vptree" "$T/err" || fail "search --max-nodes with vptree: $(cat "$T/err")"

# A query built from a clip frame finds that frame.
"$CLI" search "$T/a.pmdb" --query-clip "$T/clips/synth_002.bvh" --frame 10 --json > "$T/clipq.json" || fail "search --query-clip"
python3 - "$T" <<'PY' || fail "query-clip result"
import json, sys
r = json.load(open(sys.argv[1] + "/clipq.json"))["results"][0]
assert r["asset"] == "synth_002" and r["cost"] < 1e-4, r
PY

"$CLI" bench "$T/a.pmdb" --queries 20 --far "$T/clips/synth_007.bvh" --json > "$T/bench.json" || fail "bench"
python3 - "$T" <<'PY' || fail "bench json"
import json, sys
b = json.load(open(sys.argv[1] + "/bench.json"))
for k in ["poses", "modes", "warm_read_us"]:
    assert k in b, k
modes = {(m["mode"], m["query_set"]) for m in b["modes"]}
for mode in ["bruteforce", "exact", "pcakdtree", "vptree"]:
    assert (mode, "noisy") in modes and (mode, "far") in modes, mode
for m in b["modes"]:
    for k in ["mode", "query_set", "median_us", "p99_us", "exact_fraction", "mean_excess", "speedup_vs_bruteforce"]:
        assert k in m, k
    if m["mode"] in ("exact", "vptree", "bruteforce") and "max-nodes" not in m["query_set"]:
        assert m["exact_fraction"] == 1.0 and m["proven_fraction"] == 1.0, m
    if m["mode"] == "pcakdtree":
        assert m["proven_fraction"] == 0.0, m
# exact with the default work budget (512 nodes) on each plain set
budget = {m["query_set"]: m for m in b["modes"] if "max-nodes" in m["query_set"]}
assert set(budget) == {"noisy+max-nodes=512", "far+max-nodes=512"}, budget
for m in budget.values():
    assert m["mode"] == "exact" and 0.0 <= m["proven_fraction"] <= m["exact_fraction"] <= 1.0, m
PY
"$CLI" bench "$T/a.pmdb" --queries 20 --max-nodes 0 --json > "$T/bench0.json" || fail "bench --max-nodes 0"
python3 -c "import json,sys; b=json.load(open(sys.argv[1])); assert not [m for m in b['modes'] if 'max-nodes' in m['query_set']]" \
  "$T/bench0.json" || fail "bench --max-nodes 0 added budget rows"

# A far set from clips of fewer frames than --queries holds every frame, and says so: bench
# reported "1000 queries per set" whatever the far set held.
"$CLI" bench "$T/a.pmdb" --queries 1000 --far "$T/clips/synth_007.bvh" --json > "$T/bench_far.json" 2> /dev/null \
  || fail "bench --far with fewer frames than --queries"
F7=$("$CLI" inspect "$T/clips/synth_007.bvh" --json | python3 -c "import json, sys; print(json.load(sys.stdin)['frames'])")
python3 -c "import json, sys; b = json.load(open(sys.argv[1])); assert b['queries'] == 1000 and b['far_queries'] == int(sys.argv[2]) < 1000, b" \
  "$T/bench_far.json" "$F7" || fail "bench --json far_queries"
"$CLI" bench "$T/a.pmdb" --queries 1000 --far "$T/clips/synth_007.bvh" > "$T/bench_far.txt" 2> /dev/null || fail "bench text"
head -1 "$T/bench_far.txt" | grep -q "1000 queries per set (far: $F7, all its clips' frames)" || fail "bench text: far set size"

# bench's query options: --seed picks the queries (same seed, same rows), --sigma is the noise
# reported, and --neighbors other than UE's 200 still runs every mode (the brute-force floor
# once searched with a scratch sized for --neighbors but a default of 200: too small for 30).
for run in 4 4b 5; do
  "$CLI" bench "$T/a.pmdb" --queries 10 --seed ${run%b} --neighbors 30 --sigma 0.5 --save-queries "$T/bq$run" --json \
    > "$T/bench_opts.json" || fail "bench --seed ${run%b} --neighbors 30 --sigma 0.5"
done
cmp -s "$T/bq4_noisy.f32" "$T/bq4b_noisy.f32" || fail "bench --seed 4 twice drew different queries"
cmp -s "$T/bq4_noisy.f32" "$T/bq5_noisy.f32" && fail "bench --seed 4 and 5 drew the same queries"
python3 -c "import json, sys; b = json.load(open(sys.argv[1])); assert b['sigma'] == 0.5 and b['queries'] == 10, b" "$T/bench_opts.json" \
  || fail "bench --sigma"

# A blend space is a source of assets too: one baked clip per grid point inside the hull.
cat > "$T/space.json" <<JSON
{"name": "loco", "axes": [{"name": "speed", "min": 0, "max": 4}], "grid": 9,
 "samples": [{"name": "walk", "clip": "clips/synth_000.bvh", "params": [1.0]},
             {"name": "run", "clip": "clips/synth_001.bvh", "params": [3.0]}]}
JSON
"$CLI" build "$T/space.json" "$T/clips/synth_003.bvh" -o "$T/space.pmdb" --quiet || fail "build from a blend space"
"$CLI" export-features "$T/space.pmdb" -o "$T/sx" || fail "export blend-space database"
python3 - "$T" <<'PY' || fail "blend-space assets"
import json, sys
x = json.load(open(sys.argv[1] + "/sx.json"))
names = [a["name"] for a in x["assets"]]
assert names[:5] == ["loco@1", "loco@1.5", "loco@2", "loco@2.5", "loco@3"], names
assert names[-1] == "synth_003" and len(names) == 6, names
PY
# A mirrored copy of a baked point records -x on the axes marked "mirror": "negate" (the
# direction a walk turns flips in the mirror; its speed does not) and keeps the others.
cat > "$T/space_mirror.json" <<JSON
{"name": "turn", "axes": [{"name": "speed", "min": 1, "max": 3}, {"name": "turn", "min": -1, "max": 1, "mirror": "negate"}],
 "grid": [2, 3],
 "samples": [{"clip": "clips/synth_000.bvh", "params": [1, -1]}, {"clip": "clips/synth_001.bvh", "params": [3, -1]},
             {"clip": "clips/synth_002.bvh", "params": [1, 1]}, {"clip": "clips/synth_004.bvh", "params": [3, 1]}]}
JSON
"$CLI" build "$T/space_mirror.json" -o "$T/smir.pmdb" --mirror --quiet || fail "build a space with a negated axis"
"$CLI" info "$T/smir.pmdb" --json > "$T/smir.json" || fail "info of the mirrored space"
"$CLI" info "$T/smir.pmdb" --assets > "$T/smir.txt" || fail "info --assets of the mirrored space"
grep -q "turn@3,1.mirror: .*params 3,-1$" "$T/smir.txt" || fail "info --assets: negated params"
python3 - "$T" <<'PY' || fail "mirrored blend-space params"
import json, sys
a = json.load(open(sys.argv[1] + "/smir.json"))["asset_list"]
by = {x["name"]: x for x in a}
assert len(a) == 12, [x["name"] for x in a]
assert sum(1 for x in a if x["mirrored"]) == 6, [x["name"] for x in a if x["mirrored"]]
for x in a:
    if x["mirrored"]:
        src = by[x["name"][:-len(".mirror")]]["params"]
        assert x["params"] == [src[0], -src[1] if src[1] else 0], (x, src)
assert by["turn@1,0.mirror"]["params"] == [1, 0], by["turn@1,0.mirror"]
PY
sed 's/, "mirror": "negate"//' "$T/space_mirror.json" > "$T/space_keep.json"
"$CLI" build "$T/space_keep.json" -o "$T/skeep.pmdb" --mirror --quiet || fail "build a space with kept axes"
"$CLI" info "$T/skeep.pmdb" --assets > "$T/skeep.txt" || fail "info --assets of the kept space"
grep -q "turn@3,1.mirror: .*params 3,1$" "$T/skeep.txt" || fail "info --assets: kept params"
"$CLI" info "$T/skeep.pmdb" --json > "$T/skeep.json" || fail "info --json of the kept space"
python3 -c 'import json, sys; k = [json.load(open(p))["key"] for p in sys.argv[1:]]; assert k[0] != k[1], k' \
  "$T/smir.json" "$T/skeep.json" || fail "the negated axes are not part of the key"
sed 's/"negate"/"flip"/' "$T/space_mirror.json" > "$T/space_bad_mirror.json"

# The command line outranks a space's units: the file's "unit_scale" reads the clips in metres,
# --unit-scale twice that doubles every positional feature value.
cat > "$T/space_units.json" <<JSON
{"name": "u", "axes": [{"min": 1, "max": 3}], "grid": 2, "unit_scale": 0.01, "up": "y",
 "samples": [{"clip": "clips/synth_000.bvh", "params": [1.0]}, {"clip": "clips/synth_001.bvh", "params": [3.0]}]}
JSON
"$CLI" build "$T/space_units.json" -o "$T/su1.pmdb" --quiet || fail "build a space with unit_scale"
"$CLI" build "$T/space_units.json" -o "$T/su2.pmdb" --quiet --unit-scale 0.02 || fail "build a space with --unit-scale"
"$CLI" export-features "$T/su1.pmdb" -o "$T/su1" && "$CLI" export-features "$T/su2.pmdb" -o "$T/su2" \
  || fail "export the unit-scaled spaces"
python3 - "$T" <<'PY' || fail "--unit-scale does not outrank the space's unit_scale"
import array, sys
a, b = array.array("f"), array.array("f")
a.frombytes(open(sys.argv[1] + "/su1.f32", "rb").read()); b.frombytes(open(sys.argv[1] + "/su2.f32", "rb").read())
assert len(a) == len(b) and len(a) > 0
ra = max(map(abs, a)); rb = max(map(abs, b))
assert abs(rb / ra - 2) < 1e-3, (ra, rb)
PY

cat > "$T/space3.json" <<JSON
{"name": "loco3", "axes": [{"min": 0, "max": 4}, {"min": -1, "max": 1}, {"min": -1, "max": 1}], "grid": 3,
 "samples": [{"name": "a", "clip": "clips/synth_000.bvh", "params": [1.0, 0, 0]},
             {"name": "b", "clip": "clips/synth_001.bvh", "params": [3.0, 0, 0]},
             {"name": "c", "clip": "clips/synth_002.bvh", "params": [1.0, 1, 0]},
             {"name": "d", "clip": "clips/synth_004.bvh", "params": [1.0, 0, 1]}]}
JSON
"$CLI" build "$T/space3.json" -o "$T/space3.pmdb" --quiet || fail "build from a 3D blend space"
"$CLI" export-features "$T/space3.pmdb" -o "$T/s3x" || fail "export 3D blend-space database"
python3 - "$T" <<'PY' || fail "3D blend-space assets"
import json, sys
x = json.load(open(sys.argv[1] + "/s3x.json"))
names = [a["name"] for a in x["assets"]]
assert names and all(n.startswith("loco3@") and n.count(",") == 2 for n in names), names
PY

# Errors: exit status non-zero and exactly one stderr line naming the file.
expect_error() { # name needle command...
  local name=$1 needle=$2; shift 2
  "$@" > /dev/null 2> "$T/err.txt" && fail "$name: succeeded"
  [ "$(wc -l < "$T/err.txt")" -eq 1 ] || fail "$name: stderr has $(wc -l < "$T/err.txt") lines: $(cat "$T/err.txt")"
  grep -q -- "$needle" "$T/err.txt" || fail "$name: '$(cat "$T/err.txt")' does not name $needle"
}
head -c 5000 "$T/a.pmdb" > "$T/trunc.pmdb"
expect_error "truncated database" trunc.pmdb "$CLI" info "$T/trunc.pmdb"
cp "$T/a.pmdb" "$T/flip.pmdb"
printf '\x55' | dd of="$T/flip.pmdb" bs=1 seek=4000 conv=notrunc 2>/dev/null
expect_error "flipped byte" flip.pmdb "$CLI" search "$T/flip.pmdb" --queries "$T/q.f32"
expect_error "missing clip" nothere.bvh "$CLI" build "$T/nothere.bvh" -o "$T/e.pmdb"
# Two blend spaces of one "name" would repeat every asset name: refused, naming both files.
mkdir -p "$T/other" && sed 's|"clips/|"../clips/|g' "$T/space.json" > "$T/other/space.json"
expect_error "an axis mirror that is neither keep nor negate" \
  'space_bad_mirror.json: axes\[1\]: "mirror" must be one of "keep", "negate"' \
  "$CLI" build "$T/space_bad_mirror.json" -o "$T/e.pmdb" --mirror --quiet
expect_error "blend spaces of one name" "both make an asset named 'loco@1'" \
  "$CLI" build "$T/space.json" "$T/other/space.json" -o "$T/e.pmdb" --quiet
[ -e "$T/e.pmdb" ] && fail "a refused build wrote its output"
# Grid points of one space closer than the names' 6 significant digits (1000 and 1000.0033 are
# both 'fine@1000'): the space's names take 7 digits, the fewest that keep its 300 points apart
# (they used to be an error); a coarse grid keeps its 6-digit names.
cat > "$T/space_fine.json" <<JSON
{"name": "fine", "axes": [{"min": 1000, "max": 1001}], "grid": 300,
 "samples": [{"clip": "clips/synth_000.bvh", "params": [1000]}, {"clip": "clips/synth_001.bvh", "params": [1001]}]}
JSON
"$CLI" build "$T/space_fine.json" -o "$T/fine.pmdb" --quiet || fail "grid points closer than 6 digits"
"$CLI" info "$T/fine.pmdb" --json > "$T/fine.json" || fail "info of the fine grid"
python3 - "$T/fine.json" <<'PY' || fail "names of the fine grid"
import json, sys
names = [a["name"] for a in json.load(open(sys.argv[1]))["asset_list"]]
assert len(names) == 300 and len(set(names)) == 300, len(set(names))
assert names[:3] == ["fine@1000", "fine@1000.003", "fine@1000.007"] and names[-1] == "fine@1001", names[:3] + names[-1:]
PY
# A space whose name leaves no room for the points' parameters in the 255 bytes of an asset name
# is named as the input at fault (names used to be cut to 255 bytes: two points then shared one).
long=$(printf 'n%.0s' $(seq 1 250))
cat > "$T/space_long.json" <<JSON
{"name": "$long", "axes": [{"min": 1000.5, "max": 2000.5}], "grid": 2,
 "samples": [{"clip": "clips/synth_000.bvh", "params": [1000.5]}, {"clip": "clips/synth_001.bvh", "params": [2000.5]}]}
JSON
expect_error "a blend-space name too long for its assets" \
  "space_long.json: asset 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn...' would be named with 257 bytes, over the 255 a database stores (give the blend space a shorter \"name\")" \
  "$CLI" build "$T/space_long.json" -o "$T/e.pmdb" --quiet
# With --mirror, a clip named like another's mirrored copy (walk.mirror) would repeat that name;
# without --mirror the same clips are fine.
mkdir -p "$T/mirnames" && cp "$T/clips/synth_000.bvh" "$T/mirnames/walk.bvh" \
  && cp "$T/clips/synth_001.bvh" "$T/mirnames/walk.mirror.bvh"
expect_error "a clip named like a mirrored copy" "walk.bvh and .*walk.mirror.bvh both make an asset named 'walk.mirror'" \
  "$CLI" build "$T/mirnames" -o "$T/e.pmdb" --mirror --quiet
[ -e "$T/e.pmdb" ] && fail "a refused build wrote its output"
"$CLI" build "$T/mirnames" -o "$T/mirnames.pmdb" --quiet || fail "walk and walk.mirror without --mirror"
printf 'HIERARCHY\nROOT Hips\n{\n' > "$T/broken.bvh"
expect_error "broken clip" broken.bvh "$CLI" build "$T/broken.bvh" -o "$T/e.pmdb"
expect_error "unknown schema" "schema" "$CLI" build "$T/clips" -o "$T/e.pmdb" --schema nosuch
# A schema file whose name has no '.' or '/' is taken for a preset name: the message says how to
# give the file (it only said the preset does not exist).
printf '{"channels": [{"kind": "position", "bone": "LeftFoot"}]}' > "$T/bare"
( cd "$T" && expect_error "schema file named like a preset" "preset 'bare' does not exist .*; for the file bare give ./bare" \
  "$CLI" build clips -o e.pmdb --schema bare ) || exit 1
( cd "$T" && "$CLI" build clips -o bare.pmdb --schema ./bare --quiet ) || fail "--schema ./bare"
printf '{"channels": [{"kind": "position"}]}' > "$T/bad_schema.json"
expect_error "bad schema file" bad_schema.json "$CLI" build "$T/clips" -o "$T/e.pmdb" --schema "$T/bad_schema.json"
head -c 10 "$T/q.f32" > "$T/short.f32"
expect_error "short query file" short.f32 "$CLI" search "$T/a.pmdb" --queries "$T/short.f32"
expect_error "bad mode" mode "$CLI" search "$T/a.pmdb" --queries "$T/q.f32" --mode fastest
# Build errors come before the work and stay one line (no progress on short builds).
expect_error "output directory missing" "$T/none/e.pmdb: cannot create" "$CLI" build "$T/clips" -o "$T/none/e.pmdb"
expect_error "output is a directory" "is a directory" "$CLI" build "$T/clips" -o "$T/clips"
printf '{"channels": [{"kind": "group", "channels": [{"kind": "position", "bone": "LeftFot"}]}]}' > "$T/typo.json"
expect_error "unknown joint" "typo.json: channels\[0\].channels\[0\].bone: no joint 'LeftFot' in .*synth_000.bvh" \
  "$CLI" build "$T/clips" -o "$T/e.pmdb" --schema "$T/typo.json"
# A misspelt field is an error wherever it is, never silently a default.
printf '{"channels": [{"kind": "position", "bone": "LeftFoot", "wieght": 2}]}' > "$T/k1.json"
expect_error "unknown channel field" "k1.json: channels\[0\].wieght: unknown field" "$CLI" build "$T/clips" -o "$T/e.pmdb" --schema "$T/k1.json"
printf '{"channels": [{"kind": "trajectory", "samples": [{"offset": 0.5, "wieght": 2, "flags": ["Position"]}]}]}' > "$T/k2.json"
expect_error "unknown sample field" "k2.json: channels\[0\].samples\[0\].wieght: unknown field" "$CLI" build "$T/clips" -o "$T/e.pmdb" --schema "$T/k2.json"
printf '{"channels": [{"kind": "position", "bone": "LeftFoot", "weight": 1, "weight": 5}]}' > "$T/k4.json"
expect_error "repeated schema field" "k4.json: channels\[0\].weight: appears twice" "$CLI" build "$T/clips" -o "$T/e.pmdb" --schema "$T/k4.json"
printf '{"bogus": 1, "channels": [{"kind": "position", "bone": "LeftFoot"}]}' > "$T/k3.json"
expect_error "unknown top-level field" "k3.json: (top).bogus: unknown field" "$CLI" build "$T/clips" -o "$T/e.pmdb" --schema "$T/k3.json"
printf '{"channels": [{"kind": "velocity", "bone": "hips"}]}\n}' > "$T/k5.json"
expect_error "text after the schema" "k5.json:2: text after the top-level JSON value" "$CLI" build "$T/clips" -o "$T/e.pmdb" --schema "$T/k5.json"
# Numbers cJSON reads but JSON does not allow, and nesting past cJSON's limit, are named as such.
printf '{"channels": [{"kind": "velocity", "bone": "hips",\n "weight": 02}]}' > "$T/k7.json"
expect_error "a leading zero in the schema" "k7.json:2: '02' is not a JSON number" \
  "$CLI" build "$T/clips" -o "$T/e.pmdb" --schema "$T/k7.json"
printf '{"channels": [{"kind": "velocity", "bone": "hips", "weight": -1.}]}' > "$T/k8.json"
expect_error "a bare '.' in the schema" "k8.json:1: '-1.' is not a JSON number" \
  "$CLI" build "$T/clips" -o "$T/e.pmdb" --schema "$T/k8.json"
python3 -c "print('{\"x\":' + '[' * 1200 + ']' * 1200 + '}')" > "$T/k9.json"
expect_error "a schema nested too deep" "k9.json:1: JSON nested deeper than 1000 levels" \
  "$CLI" build "$T/clips" -o "$T/e.pmdb" --schema "$T/k9.json"
# cJSON ends a string at a \u0000 escape and the text at a NUL byte: both refused, not cut short.
printf '{"name": "a\\u0000b", "channels": [{"kind": "velocity", "bone": "hips"}]}' > "$T/k6.json"
expect_error "a NUL escape in the schema" "k6.json:1: a .u0000 escape" "$CLI" build "$T/clips" -o "$T/e.pmdb" --schema "$T/k6.json"
printf '{"channels": [{"kind": "velocity", "bone": "hips"}]}\n\0}' > "$T/k7.json"
expect_error "a NUL byte in the schema" "k7.json:2: a NUL byte" "$CLI" build "$T/clips" -o "$T/e.pmdb" --schema "$T/k7.json"
# --mirror on a clip whose joint names give no left/right pairs: built (a reflection is legal), with
# one warning naming it; with the pairs given, none.
mkdir "$T/nolr"
sed 's/Left/Aaaa/g; s/Right/Bbbbb/g' "$T/clips/synth_000.bvh" > "$T/nolr/nolr.bvh"
printf '{"channels": [{"kind": "position", "bone": "AaaaFoot"}, {"kind": "velocity", "bone": "Hips"}]}' > "$T/nolr/s.json"
"$CLI" build "$T/nolr/nolr.bvh" -o "$T/nolr/a.pmdb" --schema "$T/nolr/s.json" --facing hips --mirror --quiet 2> "$T/nolr/err" \
  || fail "mirror without pairs: $(cat "$T/nolr/err")"
grep -q "warning: 1 of 1 mirrored clips have no left/right joint pairs (.*nolr.bvh)" "$T/nolr/err" \
  || fail "mirror without pairs: no warning: $(cat "$T/nolr/err")"
"$CLI" build "$T/nolr/nolr.bvh" -o "$T/nolr/b.pmdb" --schema "$T/nolr/s.json" --facing hips --mirror --quiet \
  --mirror-pair AaaaFoot=BbbbbFoot 2> "$T/nolr/err" || fail "mirror with a pair: $(cat "$T/nolr/err")"
[ -s "$T/nolr/err" ] && fail "mirror with a pair given: $(cat "$T/nolr/err")"
printf '{"channels": [{"kind": "position", "bone": "@left_fot"}]}' > "$T/role.json"
expect_error "unknown role" "role.json: channels\[0\]: .*unknown role '@left_fot'" \
  "$CLI" build "$T/clips" -o "$T/e.pmdb" --schema "$T/role.json"
# Channels of one name: export-features names them as search's breakdown does ("foot", "foot #2");
# a group keeps its name in the list (dim_channel counts it) and has no breakdown entry.
printf '{"channels": [{"kind": "group", "name": "feet", "channels": [{"kind": "position", "bone": "@left_foot", "name": "foot"},
  {"kind": "position", "bone": "@right_foot", "name": "foot"}]}, {"kind": "velocity", "bone": "@hips"}]}' > "$T/dup.json"
"$CLI" build "$T/clips" -o "$T/dup.pmdb" --schema "$T/dup.json" --quiet && "$CLI" export-features "$T/dup.pmdb" -o "$T/dupx" \
  || fail "build and export a schema with channels of one name"
head -c 36 "$T/dupx.f32" > "$T/dupq.f32"
"$CLI" search "$T/dup.pmdb" --queries "$T/dupq.f32" --json > "$T/dups.json" || fail "search the schema with channels of one name"
python3 - "$T" <<'PY' || fail "export channel names of a schema with a repeated name"
import json, sys
t = sys.argv[1]
x = json.load(open(t + "/dupx.json")); r = json.load(open(t + "/dups.json"))["results"][0]
assert x["channels"] == ["feet", "foot", "foot #2", "Velocity @hips"], x["channels"]
assert [c["kind"] for c in x["channel_info"]] == ["group", "position", "position", "velocity"], x["channel_info"]
assert [c["first_dim"] for c in x["channel_info"]] == [-1, 0, 3, 6] and x["dim_channel"] == [1, 1, 1, 2, 2, 2, 3, 3, 3], x
assert sorted(r["breakdown"]) == ["Velocity @hips", "foot", "foot #2"], r["breakdown"]
PY
printf '{"channels": [{"kind": "velocity", "bone": "@hips"}]}' > "$T/small.json"
"$CLI" build "$T/clips/synth_000.bvh" -o "$T/small.pmdb" --schema "$T/small.json" --quiet || fail "3-value schema with the default --pca"
expect_error "--pca above the cardinality" "--pca 4" "$CLI" build "$T/clips" -o "$T/e.pmdb" --schema "$T/small.json" --pca 4
expect_error "zero hips axis" "--hips-axis" "$CLI" build "$T/clips" -o "$T/e.pmdb" --facing hips --hips-axis 0,0,0
# An axis too short to normalise was refused as "zero", which it is not.
expect_error "hips axis of length 1e-7" "--hips-axis '1e-7,0,0' is too short to give a direction (its length is below 1e-6)" \
  "$CLI" build "$T/clips" -o "$T/e.pmdb" --facing hips --hips-axis 1e-7,0,0
[ -e "$T/e.pmdb" ] && fail "a failed build left a file"
# Root options reach the database: facing from a hips axis gives other features.
"$CLI" build "$T/clips/synth_000.bvh" -o "$T/hips.pmdb" --schema holden27 --facing hips --hips-axis 0,0,1 --ground zero \
  --root-smoothing 0 --quiet || fail "build with root options"
"$CLI" build "$T/clips/synth_000.bvh" -o "$T/legs.pmdb" --schema holden27 --quiet || fail "build with the default root"
cmp -s "$T/hips.pmdb" "$T/legs.pmdb" && fail "root options changed nothing"
# Facing from the legs reads no hips axis: the axis alone built the default facing without a word.
expect_error "--hips-axis without --facing hips" "--hips-axis applies to --facing hips" \
  "$CLI" build "$T/clips" -o "$T/e.pmdb" --hips-axis 1,0,0
expect_error "--hips-axis with --facing legs" "--hips-axis applies to --facing hips" \
  "$CLI" build "$T/clips" -o "$T/e.pmdb" --hips-axis 1,0,0 --facing legs
# Per-asset cost addends from the command line (mirrored copies share them).
"$CLI" build "$T/clips" -o "$T/add.pmdb" --mirror --addend 'synth_00[12]=0.5' --addend 'synth_002=-0.25' --quiet || fail "build --addend"
"$CLI" export-features "$T/add.pmdb" -o "$T/addx" || fail "export --addend database"
"$CLI" info "$T/add.pmdb" --json > "$T/addinfo.json" || fail "info --json (assets)"
"$CLI" info "$T/add.pmdb" --assets | grep -q "synth_002.mirror: poses .*mirrored, cost addend -0.25" || fail "info --assets"
python3 - "$T" <<'PY' || fail "info asset_list"
import json, sys
i = json.load(open(sys.argv[1] + "/addinfo.json"))
names = [a["name"] for a in i["asset_list"]]
assert len(names) == i["assets"] and "synth_001.mirror" in names, names
m = next(a for a in i["asset_list"] if a["name"] == "synth_001.mirror")
assert m["mirrored"] and m["cost_addend"] == 0.5 and names[m["mirror_of"]] == "synth_001", m
assert m["mirror_axis"] in (0, 1, 2) and m["joints"] == i["asset_list"][m["mirror_of"]]["joints"] > 1, m
assert all("mirror_axis" not in a for a in i["asset_list"] if not a["mirrored"])
PY
python3 - "$T" <<'PY' || fail "--addend values"
import json, sys
x = json.load(open(sys.argv[1] + "/addx.json"))
want = {"synth_001": 0.5, "synth_002": -0.25}
for p in range(x["poses"]):
    a = x["assets"][x["pose_asset"][p]]
    src = a["name"][:-len(".mirror")] if a["mirrored"] else a["name"]
    assert abs(x["cost_addend"][p] - want.get(src, 0.0)) < 1e-3, (a, src, x["cost_addend"][p])
PY
expect_error "--addend matching nothing" "--addend 'walk\*=1' matches no asset" "$CLI" build "$T/clips" -o "$T/e.pmdb" --addend 'walk*=1'
# Spans of a clip: addends add to the asset's and to each other, --exclude blocks plain searches;
# times are the clip's (these 30 fps clips have no lead-in, so pose f is at f / 30 s).
"$CLI" build "$T/clips" -o "$T/span.pmdb" --mirror --quiet --addend 'synth_001=0.5' --addend 'synth_001@1:2=-0.25' \
  --addend 'synth_00[12]@1.5:3=1' --exclude 'synth_002@0.5:1' || fail "build with spans"
"$CLI" export-features "$T/span.pmdb" -o "$T/spanx" || fail "export of a database with spans"
"$CLI" export-features "$T/add.pmdb" -o "$T/addx2" || fail "export of the database without spans"
python3 - "$T" <<'PY' || fail "span addends and exclusions"
import json, sys
t = sys.argv[1]
x, plain = json.load(open(t + "/spanx.json")), json.load(open(t + "/addx2.json"))
for p in range(x["poses"]):
    a = x["assets"][x["pose_asset"][p]]
    src = a["name"][:-len(".mirror")] if a["mirrored"] else a["name"]
    s = x["pose_frame"][p] / 30.0
    want = {"synth_001": 0.5 + (-0.25 if 1 <= s < 2 else 0) + (1 if 1.5 <= s < 3 else 0),
            "synth_002": 1.0 if 1.5 <= s < 3 else 0.0}.get(src, 0.0)
    assert abs(x["cost_addend"][p] - want) < 1e-3, (a["name"], s, x["cost_addend"][p], want)
    excluded = src == "synth_002" and 0.5 <= s < 1
    assert x["block_transition"][p] == (1 if excluded else plain["block_transition"][p]), (a["name"], s)
PY
"$CLI" info "$T/span.pmdb" --verify | grep -q "^verified .*all agree" || fail "info --verify of a database with spans"
expect_error "--exclude without a span" "--exclude 'synth\*' must be PATTERN@START:END" \
  "$CLI" build "$T/clips" -o "$T/e.pmdb" --exclude 'synth*'
expect_error "--addend span not START:END" "--addend 'synth\*@2=1': '2' is not START:END" \
  "$CLI" build "$T/clips" -o "$T/e.pmdb" --addend 'synth*@2=1'
expect_error "--addend span ending before it starts" "the span ends at 1 s, not after its start at 2 s" \
  "$CLI" build "$T/clips" -o "$T/e.pmdb" --addend 'synth*@2:1=1'
# A span follows the last '@': an asset name with one in it is matched with [@], as the error says.
mkdir "$T/at" && cp "$T/clips/synth_000.bvh" "$T/at/hero@walk.bvh" || fail "copy to hero@walk.bvh"
"$CLI" build "$T/at" -o "$T/at.pmdb" --quiet --addend 'hero[@]walk=1' --addend 'hero[@]walk@1:2=1' || fail "[@] in a pattern"
# Of clips equally long, the message about a span past every clip's end names the first.
mkdir "$T/tie" && cp "$T/clips/synth_003.bvh" "$T/tie/first.bvh" && cp "$T/clips/synth_003.bvh" "$T/tie/second.bvh" \
  || fail "copy to tie/"
expect_error "--exclude past two clips of one length" "after the end of every clip it matches, the longest ('first'" \
  "$CLI" build "$T/tie" -o "$T/e.pmdb" --exclude '*@1000:2000'
# ... also in a set that starts with ']' (a member there, as fnmatch reads it), or escaped.
"$CLI" build "$T/at" -o "$T/at2.pmdb" --quiet --addend 'hero[]@]walk=1' --addend 'hero\@walk@1:2=1' || fail "[]@] and \@ in a pattern"
"$CLI" info "$T/at2.pmdb" --assets | grep -q "hero@walk: .*cost addend 1" || fail "[]@] in a pattern: the addend is missing"
expect_error "'@' of a name taken for a span" "'walk' is not START:END .*\[@\]" \
  "$CLI" build "$T/at" -o "$T/e.pmdb" --addend 'hero@walk=1'
# Times are single floats: a span whose two ends round to one float is empty, said by the option.
expect_error "--exclude span empty as floats" "--exclude 'synth_001@1:1.00000001': the span" \
  "$CLI" build "$T/clips" -o "$T/e.pmdb" --exclude 'synth_001@1:1.00000001'
expect_error "--exclude span with a bad number" "--exclude" "$CLI" build "$T/clips" -o "$T/e.pmdb" --exclude 'synth*@x:1'
expect_error "--exclude without a pattern" "no PATTERN before the '@'" "$CLI" build "$T/clips" -o "$T/e.pmdb" --exclude '@0:1'
expect_error "--exclude matching nothing" "--exclude 'walk\*@0:1' matches no asset" \
  "$CLI" build "$T/clips" -o "$T/e.pmdb" --exclude 'walk*@0:1'
expect_error "span addends past the half float" "and the ranges holding 1 s add up to 80000" \
  "$CLI" build "$T/clips" -o "$T/e.pmdb" --addend 'synth_001@1:2=40000' --addend 'synth_001@0.5:1.5=40000'
# Given mirror pairs: the pairs the names give change nothing, another pairing changes the
# mirrored copies; unknown joints and a missing --mirror are errors.
"$CLI" build "$T/clips/synth_000.bvh" -o "$T/m0.pmdb" --mirror --schema holden27 --quiet || fail "mirror build"
"$CLI" build "$T/clips/synth_000.bvh" -o "$T/m1.pmdb" --mirror --schema holden27 --quiet --mirror-pair LeftFoot=RightFoot || fail "--mirror-pair"
"$CLI" build "$T/clips/synth_000.bvh" -o "$T/m2.pmdb" --mirror --schema holden27 --quiet --mirror-pair LeftFoot=RightToeBase || fail "--mirror-pair (odd)"
for m in m0 m1 m2; do "$CLI" export-features "$T/$m.pmdb" -o "$T/$m" || fail "export $m"; done
cmp -s "$T/m0.f32" "$T/m1.f32" || fail "--mirror-pair with the pair found from names changed the features"
# ...nor the key: the same database is one cache entry, not a rebuild.
cmp -s "$T/m0.pmdb" "$T/m1.pmdb" || fail "--mirror-pair with the pair found from names changed the file (its key)"
cmp -s "$T/m0.f32" "$T/m2.f32" && fail "--mirror-pair with another pairing changed nothing"
# Joint names past 255 bytes pair too (the left one was cut there, so no clip had both joints).
LA=LeftForeArm$(printf 'a%.0s' $(seq 300)); RA=RightForeArm$(printf 'a%.0s' $(seq 300))
sed -e "s/LeftForeArm/$LA/" -e "s/RightForeArm/$RA/" "$T/clips/synth_000.bvh" > "$T/longjoints.bvh"
"$CLI" build "$T/longjoints.bvh" -o "$T/lj.pmdb" --mirror --quiet --mirror-pair "$LA=$RA" || fail "--mirror-pair of long joint names"
expect_error "--mirror-pair unknown joint" "no clip has both joints" "$CLI" build "$T/clips" -o "$T/e.pmdb" --mirror --mirror-pair Nope=RightFoot
expect_error "--mirror-pair without --mirror" "needs --mirror" "$CLI" build "$T/clips" -o "$T/e.pmdb" --mirror-pair LeftFoot=RightFoot
# A far set drawn from the database itself is flagged.
"$CLI" bench "$T/a.pmdb" --queries 5 --far "$T/clips/synth_001.bvh" > /dev/null 2> "$T/warn.txt" || fail "bench with an inside far clip"
grep -q "is in the database" "$T/warn.txt" || fail "bench did not flag a far clip that is in the database"
# ...and clips of another seed, named apart with --name, are not.
"$CLI" synth "$T/far" --clips 1 --seed 9 --name far || fail "synth --name"
[ -f "$T/far/far_000.bvh" ] || fail "synth --name did not name the file far_000.bvh"
"$CLI" bench "$T/a.pmdb" --queries 5 --far "$T/far" > /dev/null 2> "$T/warn2.txt" || fail "bench with a new far clip"
grep -q "is in the database" "$T/warn2.txt" && fail "bench flagged a far clip that is not in the database"
expect_error "synth --name with a slash" "no path separator" "$CLI" synth "$T/far" --name a/b
expect_error "synth --name with a leading dot" "not starting with" "$CLI" synth "$T/far" --name .hidden
# --save-queries writes both sets or neither, and checks its paths before the work.
mkdir -p "$T/sq_far.f32"
expect_error "--save-queries into a directory" "sq_far.f32" "$CLI" bench "$T/a.pmdb" --queries 5 --far "$T/far" --save-queries "$T/sq"
[ -e "$T/sq_noisy.f32" ] && fail "--save-queries left half a pair"
"$CLI" bench "$T/a.pmdb" --queries 5 --far "$T/far" --save-queries "$T/sq2" > /dev/null 2>&1 || fail "--save-queries"
[ -s "$T/sq2_noisy.f32" ] && [ -s "$T/sq2_far.f32" ] || fail "--save-queries did not write both sets"
# --threads: throughput of threads sharing the database, whose answers bench itself requires to be
# one thread's (a mismatch is an error); figures are checked for shape, not speed.
"$CLI" bench "$T/a.pmdb" --queries 30 --threads 2 --json > "$T/bench_threads.json" || fail "bench --threads 2"
python3 - "$T" <<'PY' || fail "bench --threads json"
import json, math, sys
t = sys.argv[1]
assert "threads" not in json.load(open(t + "/bench.json")), "threads section without --threads"
b = json.load(open(t + "/bench_threads.json"))
for k in ["poses", "modes", "warm_read_us", "exact_speedup_vs_bruteforce", "busy", "steal_fraction"]:
    assert k in b, k
assert b["busy"] is None or isinstance(b["busy"], str), b["busy"]
assert b["steal_fraction"] is None or 0 <= b["steal_fraction"] <= 1, b["steal_fraction"]
assert [f["when"] for f in b["floor_passes"]] == ["start", "end"], b["floor_passes"]
for f in b["floor_passes"]:
    for k in ["warm_read_us", "bruteforce_us"]:
        assert math.isfinite(f[k]) and f[k] > 0, (k, f)
    for k in ["warm_read_spread", "bruteforce_spread"]:
        assert math.isfinite(f[k]) and f[k] >= 0, (k, f)
th = b["threads"]
assert th["count"] == 2 and th["rounds"] >= 1, th
assert [m["mode"] for m in th["modes"]] == ["exact", "bruteforce"], th
for m in th["modes"]:
    assert m["query_set"] == "noisy" and 1 <= m["queries"] <= 30, m
    for k in ["qps_1", "qps_n", "scaling"]:
        assert math.isfinite(m[k]) and m[k] > 0, (k, m)
    assert abs(m["scaling"] - m["qps_n"] / m["qps_1"]) <= 1e-9 * m["scaling"], m
PY
"$CLI" bench "$T/a.pmdb" --queries 10 --threads 3 > "$T/bench_threads.txt" || fail "bench --threads 3 text"
grep -q "^throughput .*3 threads" "$T/bench_threads.txt" || fail "bench --threads: no throughput section"
grep -q "^bruteforce .* on 3: " "$T/bench_threads.txt" || fail "bench --threads: no brute-force throughput line"
"$CLI" bench "$T/a.pmdb" --queries 10 --threads 1 > "$T/bench_threads1.txt" || fail "bench --threads 1"
grep -q "^throughput" "$T/bench_threads1.txt" && fail "bench --threads 1 printed a throughput section"
expect_error "bench --threads 0" "bench: --threads '0' must be a decimal integer in 1..256" \
  "$CLI" bench "$T/a.pmdb" --queries 5 --threads 0
expect_error "bench --threads x" "bench: --threads 'x' must be a decimal integer in 1..256" \
  "$CLI" bench "$T/a.pmdb" --queries 5 --threads x
expect_error "bench --threads 257" "in 1..256" "$CLI" bench "$T/a.pmdb" --queries 5 --threads 257
expect_error "bench --threads twice" "bench: --threads given twice" "$CLI" bench "$T/a.pmdb" --threads 2 --threads 3
expect_error "bench --threads without a value" "incomplete option '--threads'" "$CLI" bench "$T/a.pmdb" --threads --json
# Control characters are legal in file names: a clip or schema named after such a file gets '_'
# for them, and the build, info and its one-line output work.
mkdir -p "$T/odd"
cp "$T/clips/synth_000.bvh" "$T/odd/a"$'\n'"b.bvh"
printf '{"channels": [{"kind": "position", "bone": "LeftFoot"}]}' > "$T/odd/s"$'\t'"x.json"
"$CLI" build "$T/odd" -o "$T/odd.pmdb" --schema "$T/odd/s"$'\t'"x.json" --quiet || fail "build of a file named with a newline"
"$CLI" info "$T/odd.pmdb" --assets > "$T/odd.txt" || fail "info of odd names"
grep -q "a_b: poses" "$T/odd.txt" || fail "asset name: $(cat "$T/odd.txt")"
grep -q "^schema  *s_x.json " "$T/odd.txt" || fail "schema name: $(cat "$T/odd.txt")"
# Clips of one file name in different folders: named by as many parent folders as tell them apart.
mkdir -p "$T/same/a/walk" "$T/same/b/walk"
cp "$T/clips/synth_000.bvh" "$T/same/a/walk/x.bvh"
cp "$T/clips/synth_001.bvh" "$T/same/b/walk/x.bvh"
cp "$T/clips/synth_002.bvh" "$T/same/a/y.bvh"
"$CLI" build "$T/same" -o "$T/same.pmdb" --quiet || fail "build of same-named clips"
"$CLI" info "$T/same.pmdb" --assets > "$T/same.txt" || fail "info of same-named clips"
for name in "a/walk/x: " "b/walk/x: " "y: "; do
  grep -q "$name" "$T/same.txt" || fail "same-named clips: no asset '$name' in $(cat "$T/same.txt")"
done
# Names come from the folders, not from how the paths are spelt: a trailing or doubled slash
# made a/walk/x "a/walk//x" and a clip given from inside its folder lost it ("x" beside "b/walk/x").
"$CLI" build "$T/same/a/" "$T/same/b/" -o "$T/same_slash.pmdb" --quiet || fail "build of same-named clips, DIR/"
( cd "$T/same/a/walk" && "$CLI" build x.bvh ../y.bvh ..//..//b/./walk/x.bvh -o "$T/same_cwd.pmdb" --quiet ) \
  || fail "build of same-named clips from inside a folder"
for v in same_slash same_cwd; do
  cmp -s "$T/same.pmdb" "$T/$v.pmdb" || fail "$v: another database: $("$CLI" info "$T/$v.pmdb" --assets | grep '^asset')"
done
( cd "$T/same/a/walk" && bench_far "$T/same.pmdb" x.bvh ) || exit 1
grep -q "far clip x.bvh is in the database (asset [0-9]* 'a/walk/x')" "$TMP/far.txt" \
  || fail "bench did not flag a far clip given from inside its folder: $(cat "$TMP/far.txt")"
# A far clip that is one of them is flagged as in the database (the check compared the clip's
# name, x, with the asset's, a/walk/x), however its path is spelt (a ".." above the root is the
# root); its namesake from another folder is not, nor a clip of another name in a folder named alike.
for far in "$T/same/a/walk/x.bvh" "/../..$T/./same/b/../a/walk/x.bvh"; do
  bench_far "$T/same.pmdb" "$far"
  grep -q "far clip .*/walk/x.bvh is in the database (asset [0-9]* 'a/walk/x')" "$TMP/far.txt" \
    || fail "bench did not flag the far clip $far, named apart by its folders: $(cat "$TMP/far.txt")"
done
mkdir -p "$T/c/walk" "$T/c/a/walk" && cp "$T/clips/synth_003.bvh" "$T/c/walk/x.bvh" && cp "$T/clips/synth_003.bvh" "$T/c/a/walk/z.bvh" \
  || fail "copy the far clips"
for far in "$T/c/walk/x.bvh" "$T/c/a/walk/z.bvh"; do
  bench_far "$T/same.pmdb" "$far"
  grep -q "is in the database" "$TMP/far.txt" && fail "bench took the far clip $far for an asset: $(cat "$TMP/far.txt")"
done
# --addend patterns still match the file-name part of clips named apart by folders.
"$CLI" build "$T/same" -o "$T/same_add.pmdb" --quiet --addend 'x*=0.5' || fail "build --addend of same-named clips"
"$CLI" info "$T/same_add.pmdb" --assets > "$T/same_add.txt" || fail "info of same-named clips with addends"
[ "$(grep -c "walk/x: .*cost addend 0.5" "$T/same_add.txt")" -eq 2 ] || fail "--addend on same-named clips: $(cat "$T/same_add.txt")"
# Index options end to end: excluded ranges at both ends of non-looping clips reach export's
# block_transition flags (floor(S * fps) frames each, as pm_database_def says) and a search
# given such a pose's own row returns another; the exact tree's components and leaf size change
# its layout, not exact's answers; --loop leaves nothing to exclude.
"$CLI" build "$T/clips" -o "$T/ex.pmdb" --exclude-end 1 --exclude-start 0.5 --quiet || fail "build --exclude-*"
"$CLI" info "$T/ex.pmdb" --json > "$T/exinfo.json" || fail "info --exclude-*"
"$CLI" export-features "$T/ex.pmdb" -o "$T/ex" || fail "export --exclude-*"
python3 - "$T" <<'PY' || fail "excluded ranges"
import json, struct, sys
t = sys.argv[1]
x = json.load(open(t + "/ex.json")); i = json.load(open(t + "/exinfo.json"))
head, tail = int(0.5 * x["fps"]), int(1.0 * x["fps"])
hidden = 0
for a in x["assets"]:
    assert not a["looping"], a
    for f in range(a["poses"]):
        p = a["first_pose"] + f
        if f < head or f >= a["poses"] - tail:
            assert x["block_transition"][p] == 1, (a["name"], f)
            hidden += 1
assert i["excluded_poses"] > 0 and i["block_transition_poses"] >= hidden, (i, hidden)
# the row of an excluded pose as a query: the middle of the first asset's head
a = x["assets"][0]; p = a["first_pose"] + head // 2
d = x["cardinality"]
with open(t + "/ex.f32", "rb") as f:
    f.seek(p * d * 4); row = f.read(d * 4)
open(t + "/exq.f32", "wb").write(row)
open(t + "/exq.txt", "w").write(str(p))
PY
"$CLI" search "$T/ex.pmdb" --queries "$T/exq.f32" --json > "$T/exq.json" || fail "search for an excluded pose"
python3 - "$T" <<'PY' || fail "search returned an excluded pose"
import json, sys
t = sys.argv[1]
r = json.load(open(t + "/exq.json"))["results"][0]; x = json.load(open(t + "/ex.json"))
assert r["pose"] != int(open(t + "/exq.txt").read()) and x["block_transition"][r["pose"]] == 0, r
PY
"$CLI" build "$T/clips" -o "$T/exl.pmdb" --loop --exclude-end 1 --exclude-start 0.5 --quiet || fail "build --loop --exclude-*"
"$CLI" info "$T/exl.pmdb" --json | python3 -c "import json, sys; i = json.load(sys.stdin); assert i['excluded_poses'] == 0 and i['block_transition_poses'] == 0, i" \
  || fail "--loop: a loop has no ends to exclude"
"$CLI" build "$T/clips" -o "$T/et.pmdb" --exact-components 5 --exact-leaf 8 --quiet || fail "build --exact-components --exact-leaf"
"$CLI" info "$T/et.pmdb" --json | python3 -c "import json, sys; assert json.load(sys.stdin)['exact_components'] == 5" \
  || fail "--exact-components 5 not in info"
"$CLI" export-features "$T/et.pmdb" -o "$T/et" || fail "export --exact-components"
python3 - "$T" <<'PY' || fail "queries for the small-leaf tree"
import random, struct, sys
t = sys.argv[1]
d = __import__("json").load(open(t + "/et.json"))["cardinality"]
raw = open(t + "/et.f32", "rb").read(); n = len(raw) // (4 * d)
rng = random.Random(5)
out = bytearray()
for q in range(40):  # rows with noise of a tenth of each dimension's spread
    p = rng.randrange(n)
    row = struct.unpack_from("%df" % d, raw, p * d * 4)
    out += struct.pack("%df" % d, *[v + rng.gauss(0, 0.1) for v in row])
open(t + "/etq.f32", "wb").write(out)
PY
for m in exact bruteforce; do
  "$CLI" search "$T/et.pmdb" --queries "$T/etq.f32" --mode $m --json > "$T/et_$m.json" || fail "search --mode $m (small leaves)"
done
python3 - "$T" <<'PY' || fail "exact differs from brute force with 5 components and leaves of 8"
import json, sys
t = sys.argv[1]
e = json.load(open(t + "/et_exact.json"))["results"]; b = json.load(open(t + "/et_bruteforce.json"))["results"]
assert len(e) == 40 and all(x["pose"] == y["pose"] or abs(x["cost"] - y["cost"]) <= 1e-5 * max(1.0, y["cost"]) for x, y in zip(e, b)), (e, b)
PY
expect_error "--exact-components above the cardinality" "--exact-components 40 is more than the 31 values per pose" \
  "$CLI" build "$T/clips" -o "$T/e.pmdb" --exact-components 40
expect_error "--exact-leaf below 8" "--exact-leaf '4' must be a decimal integer in 8..4096" \
  "$CLI" build "$T/clips" -o "$T/e.pmdb" --exact-leaf 4
expect_error "--exclude-end negative" "--exclude-end '-1' must be a decimal number in 0..100000" \
  "$CLI" build "$T/clips" -o "$T/e.pmdb" --exclude-end -1
[ -e "$T/e.pmdb" ] && fail "a refused build left a file"
# A rate is printed as given (29.97), not as its float's expansion (29.969999313354492).
"$CLI" build "$T/clips/synth_000.bvh" -o "$T/ntsc.pmdb" --fps 29.97 --quiet || fail "build --fps 29.97"
"$CLI" export-features "$T/ntsc.pmdb" -o "$T/ntsc" || fail "export --fps 29.97"
"$CLI" info "$T/ntsc.pmdb" --json > "$T/ntsc.json" || fail "info --json of the 29.97 fps database"
grep -q '"fps":[[:space:]]*29.97,' "$T/ntsc.json" || fail "info --json: fps not 29.97"
grep -q '"fps":[[:space:]]*29.97,' "$T/ntsc.json" || fail "export json: fps not 29.97"
# An output named like the schema preset is no input (the preset is not a file).
( cd "$T" && "$CLI" build same/a/y.bvh -o ue-locomotion --quiet && "$CLI" build same/a/y.bvh -o ue-locomotion --quiet ) \
  || fail "-o named like a preset, built twice"
echo "ok"
