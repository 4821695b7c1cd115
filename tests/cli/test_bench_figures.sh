#!/usr/bin/env bash
# bench's figures from what they are made of, never from how long anything took: the median and
# p99 of a few queries against their mean, and the brute-force optimum and cost excess of each
# mode against `posematch search` of the saved queries. Exits 77 when something it needs is
# missing.
source "$(dirname "$0")/common.sh" benchfig || { echo "FAIL: cannot source common.sh" >&2; exit 1; }
T=$TMP

"$CLI" synth "$T/clips" --clips 4 --seed 5 > /dev/null || fail "synth"
"$CLI" build "$T/clips"/synth_00{0,1,2}.bvh -o "$T/a.pmdb" --quiet || fail "build"

# 1. Of one query the median, the p99 and the mean are its time; of two the median is their mean
#    and the p99 the slower (the median was the slower one and the p99 the faster); of four the
#    p99 is the slowest, never below the median. The headline's pooled median (no --far: the
#    noisy set alone) is brute force's row median.
for n in 1 2 4; do
  "$CLI" bench "$T/a.pmdb" --queries $n --json > "$T/b$n.json" || fail "bench --queries $n"
  python3 - "$T/b$n.json" $n <<'PY' || fail "bench --queries $n: median and p99"
import json, sys
b, n = json.load(open(sys.argv[1])), int(sys.argv[2])
for m in b["modes"]:
    assert m["p99_us"] >= m["median_us"], m
    if n <= 2:
        assert m["median_us"] == m["mean_us"], m
    if n == 1:
        assert m["p99_us"] == m["median_us"], m
bf = [m for m in b["modes"] if m["mode"] == "bruteforce" and m["query_set"] == "noisy"][0]
assert b["bruteforce_median_us_all_sets"] == bf["median_us"], (b["bruteforce_median_us_all_sets"], bf)
PY
done

# 2. exact_fraction (same pose and cost as brute force) and mean_excess (the cost above the
#    optimum's over the optimum's feature distance, a mean over the set) of every mode, recomputed
#    from search's answers to the saved queries; few pcakdtree neighbours so that it misses some.
"$CLI" bench "$T/a.pmdb" --queries 40 --neighbors 2 --far "$T/clips/synth_003.bvh" --save-queries "$T/q" --json \
  > "$T/b.json" || fail "bench --save-queries"
for mode in bruteforce exact pcakdtree vptree; do
  k=(); [ $mode = pcakdtree ] && k=(--neighbors 2)
  for set in noisy far; do
    "$CLI" search "$T/a.pmdb" --queries "$T/q_$set.f32" --mode $mode "${k[@]}" --json > "$T/r_${mode}_$set.json" \
      || fail "search --mode $mode ($set)"
  done
done
python3 - "$T" <<'PY' || fail "bench exact_fraction and mean_excess"
import json, sys
t = sys.argv[1]
b = json.load(open(t + "/b.json"))
missed = 0
for set in ("noisy", "far"):
    ref = json.load(open(f"{t}/r_bruteforce_{set}.json"))["results"]
    for mode in ("bruteforce", "exact", "pcakdtree", "vptree"):
        res = json.load(open(f"{t}/r_{mode}_{set}.json"))["results"]
        row = [m for m in b["modes"] if m["mode"] == mode and m["query_set"] == set][0]
        n = len(res)
        same = sum(r["pose"] == f["pose"] and r["cost"] == f["cost"] for r, f in zip(res, ref))
        excess = sum((r["cost"] - f["cost"]) / f["dissimilarity"] for r, f in zip(res, ref) if f["dissimilarity"] > 0) / n
        assert row["exact_fraction"] == same / n, (mode, set, row, same, n)
        assert abs(row["mean_excess"] - excess) <= 1e-12, (mode, set, row, excess)
        missed += n - same
assert missed > 0, "pcakdtree with 2 neighbours missed no optimum: the check compares nothing"
PY

# 3. A cost addend on every asset ranks the poses as none does: the same answers, so the same
#    excess. It was a ratio of the total costs, which a uniform addend moves, and a negative one
#    (every optimum below 0) made pcakdtree's misses count as no excess at all.
for addend in 0 -100 100; do
  "$CLI" build "$T/clips"/synth_00{0,1,2}.bvh -o "$T/add$addend.pmdb" --addend "*=$addend" --quiet || fail "build --addend $addend"
  "$CLI" bench "$T/add$addend.pmdb" --queries 40 --neighbors 2 --json > "$T/add$addend.json" || fail "bench --addend $addend"
done
python3 - "$T" <<'PY' || fail "bench: cost excess with cost addends"
import json, sys
t = sys.argv[1]
rows = {a: {(m["mode"], m["query_set"]): m for m in json.load(open(f"{t}/add{a}.json"))["modes"]} for a in (0, -100, 100)}
pca = rows[0][("pcakdtree", "noisy")]
assert pca["exact_fraction"] < 1 and pca["mean_excess"] > 0, pca
for a in (-100, 100):
    for key, m in rows[a].items():
        z = rows[0][key]
        assert m["exact_fraction"] == z["exact_fraction"], (a, key, m, z)
        for k in ("mean_excess", "max_excess_ratio"):
            assert abs(m[k] - z[k]) <= 1e-3 * max(1.0, z[k]), (a, key, k, m[k], z[k])
PY
# 4. The report's structure and the figures derived from others (never a time against a bound):
#    the database's counts as info gives them, the rows of every set (max-nodes, continuing and
#    dynamic-weight variants), ratios that are the quotients of the figures printed beside them,
#    brute force as its own reference, and the thread rows with --threads. Dynamic weights are
#    applied: exact examines other candidates under them than under the database's weights.
"$CLI" info "$T/a.pmdb" --json > "$T/info.json" || fail "info --json"
"$CLI" bench "$T/a.pmdb" --queries 30 --far "$T/clips/synth_003.bvh" --threads 2 --sigma 0.25 --json > "$T/s.json" \
  || fail "bench --threads 2 --json"
"$CLI" bench "$T/a.pmdb" --queries 500 --far "$T/clips/synth_003.bvh" --max-nodes 0 --json > "$T/all.json" \
  || fail "bench --queries 500 --max-nodes 0 --json"
"$CLI" bench "$T/a.pmdb" --queries 500 --far "$T/clips/synth_003.bvh" --max-nodes 0 > "$T/all.txt" || fail "bench text"
python3 - "$T" "$T/a.pmdb" <<'PY' || fail "bench: report structure"
import json, sys
t, db = sys.argv[1], sys.argv[2]
info = json.load(open(t + "/info.json"))
b = json.load(open(t + "/s.json"))
assert b["database"] == db, b["database"]
for k in ("poses", "searchable_poses", "cardinality"):
    assert b[k] == info[k], (k, b[k], info[k])
assert b["queries"] == 30 and b["far_queries"] == 30 and b["sigma"] == 0.25, (b["queries"], b["far_queries"], b["sigma"])
assert b["bytes"] > 0 and abs(b["bytes_per_pose"] - b["bytes"] / b["poses"]) <= 1e-9 * b["bytes_per_pose"]
assert abs(b["bruteforce_vs_warm_read"] - b["bruteforce_alternating_us"] / b["warm_read_us"]) <= 1e-9 * b["bruteforce_vs_warm_read"]
assert [f["when"] for f in b["floor_passes"]] == ["start", "end"], b["floor_passes"]
start = b["floor_passes"][0]
assert start["warm_read_us"] == b["warm_read_us"] and start["bruteforce_us"] == b["bruteforce_alternating_us"], start
for f in b["floor_passes"]:
    for k in ("warm_read_spread", "bruteforce_spread"):
        assert f[k] >= 0, f
assert "steal_fraction" in b and "busy" in b
assert abs(b["exact_speedup_vs_bruteforce"] - b["bruteforce_median_us_all_sets"] / b["exact_median_us_all_sets"]) \
    <= 1e-9 * b["exact_speedup_vs_bruteforce"], b
keys = [(m["mode"], m["query_set"]) for m in b["modes"]]
want = []
for s in ("noisy", "far"):
    want += [("bruteforce", s), ("exact", s), ("pcakdtree", s), ("vptree", s), ("exact", s + "+max-nodes=512")]
    if s == "noisy":
        want += [("bruteforce", "noisy+continuing"), ("exact", "noisy+continuing")]
    want += [("bruteforce", s + "+dynamic"), ("exact", s + "+dynamic"), ("bruteforce", s + "+dynamic-dims"), ("exact", s + "+dynamic-dims")]
assert keys == want, keys
rows = {(m["mode"], m["query_set"]): m for m in b["modes"]}
for (mode, s), m in rows.items():
    for k in ("median_us", "p99_us", "mean_us", "exact_fraction", "proven_fraction", "mean_excess", "max_excess_ratio",
              "speedup_vs_bruteforce", "candidates", "nodes", "build_ms", "bytes"):
        assert k in m, (mode, s, k)
    base = s.split("+max-nodes")[0]
    bf = rows[("bruteforce", base)]
    if mode == "bruteforce":
        assert m["speedup_vs_bruteforce"] == 1 and m["exact_fraction"] == 1 and m["mean_excess"] == 0, m
        assert m["max_excess_ratio"] == 1 and m["nodes"] == 0, m
    else:
        assert abs(m["speedup_vs_bruteforce"] - bf["median_us"] / m["median_us"]) <= 1e-9 * m["speedup_vs_bruteforce"], (mode, s, m, bf)
    if mode == "exact":
        assert m["exact_fraction"] == 1 and m["proven_fraction"] == 1, (s, m)
# Brute force examines every searchable pose (the continuing one besides, when given).
assert rows[("bruteforce", "noisy")]["candidates"] == b["searchable_poses"], rows[("bruteforce", "noisy")]
assert rows[("bruteforce", "noisy+continuing")]["candidates"] == b["searchable_poses"] + 1
for s in ("noisy", "far"):
    c = [rows[("exact", s + v)]["candidates"] for v in ("", "+dynamic", "+dynamic-dims")]
    assert len(set(c)) == 3, (s, "dynamic weights changed nothing", c)
# Mode structures' sizes and build times as the database reports them, the same for every set
# (the build times are the load's, measured once per run).
for mode in ("exact", "pcakdtree", "vptree"):
    assert rows[(mode, "noisy")]["bytes"] == rows[(mode, "far")]["bytes"] > 0, mode
    assert rows[(mode, "noisy")]["build_ms"] == rows[(mode, "far")]["build_ms"], mode
th = b["threads"]
assert th["count"] == 2 and th["rounds"] == 11, th
assert [(x["mode"], x["query_set"], x["queries"]) for x in th["modes"]] == [("exact", "noisy", 30), ("bruteforce", "noisy", 30)], th
for x in th["modes"]:
    assert abs(x["scaling"] - x["qps_n"] / x["qps_1"]) <= 1e-9 * x["scaling"], x
# No --max-nodes rows with 0; a far clip of fewer frames than --queries gives all of them; no threads
# object with one thread; queries of brute force's thread row are capped at 200.
a = json.load(open(t + "/all.json"))
assert not any("max-nodes" in m["query_set"] for m in a["modes"]), [m["query_set"] for m in a["modes"]]
assert a["queries"] == 500 and 0 < a["far_queries"] < 500, a["far_queries"]
assert "threads" not in a
text = open(t + "/all.txt").read().splitlines()
head = f"{db}: {a['poses']} poses ({a['searchable_poses']} searchable) x {a['cardinality']}, 500 queries per set " \
       f"(far: {a['far_queries']}, all its clips' frames), {a['bytes'] / a['poses']:.1f} bytes/pose"
assert text[0] == head, (text[0], head)
assert any(l.startswith("exact vs brute force, median over both sets' queries: ") for l in text), text
h = [i for i, l in enumerate(text) if l.startswith("mode ")][0]
table = text[h + 1:h + 1 + len(a["modes"])]
assert text[h + 1 + len(a["modes"])].startswith("exact vs brute force, median over both sets' queries: "), text
for l, m in zip(table, a["modes"]):
    f = l.split()
    assert f[:2] == [m["mode"], m["query_set"]], (l, m)
    assert [f[8], f[9], f[11]] == [f"{m['candidates']:.0f}", f"{m['nodes']:.0f}", str(m["bytes"])], (l, m)
    assert f[4] == f"{100 * m['exact_fraction']:.1f}%" and f[12] == f"{100 * m['proven_fraction']:.1f}%", (l, m)
PY
"$CLI" bench "$T/a.pmdb" --queries 300 --threads 3 --json > "$T/t3.json" || fail "bench --threads 3"
python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["threads"]; assert t["count"] == 3 and [x["queries"] for x in t["modes"]] == [300, 200], t' \
  "$T/t3.json" || fail "bench --threads 3: thread rows"
"$CLI" bench "$T/a.pmdb" --queries 300 --threads 3 > "$T/t3.txt" || fail "bench --threads 3 (text)"
grep -q "^throughput on the noisy set, 3 threads sharing the database vs 1 (medians of 11 alternating passes; same answers):$" "$T/t3.txt" \
  || fail "bench --threads 3: no throughput line: $(cat "$T/t3.txt")"
grep -qE "^bruteforce +200 queries: .* q/s on 3: " "$T/t3.txt" || fail "bench --threads 3: brute force's row"
grep -q "median over the noisy set's queries (no --far set)" "$T/t3.txt" || fail "bench without --far: the headline's set"

# 5. The query sets: a seed gives the same noisy queries, another seed others; with --sigma 0 each
#    is a searchable pose's own features (export-features' rows); the far set is the held-out
#    clip's frames evenly spaced, all of them when it has fewer than --queries.
for run in 1a:1 1b:1 2:2; do
  "$CLI" bench "$T/a.pmdb" --queries 20 --seed "${run#*:}" --max-nodes 0 --save-queries "$T/seed${run%:*}" > /dev/null \
    || fail "bench --seed ${run#*:}"
done
cmp -s "$T/seed1a_noisy.f32" "$T/seed1b_noisy.f32" || fail "bench --seed 1 twice gave other queries"
cmp -s "$T/seed1a_noisy.f32" "$T/seed2_noisy.f32" && fail "bench --seed 1 and --seed 2 gave the same queries"
"$CLI" bench "$T/a.pmdb" --queries 40 --sigma 0 --max-nodes 0 --far "$T/clips/synth_003.bvh" --save-queries "$T/zero" > /dev/null \
  || fail "bench --sigma 0"
"$CLI" bench "$T/a.pmdb" --queries 100000 --max-nodes 0 --far "$T/clips/synth_003.bvh" --save-queries "$T/allfar" > /dev/null \
  || fail "bench --far with every frame"
"$CLI" export-features "$T/a.pmdb" -o "$T/ex" > /dev/null || fail "export-features"
python3 - "$T" <<'PY' || fail "bench: query sets"
import json, sys
t = sys.argv[1]
ex = json.load(open(t + "/ex.json"))
card = ex["cardinality"]
def rows(path):
    data = open(path, "rb").read()
    assert len(data) % (card * 4) == 0, path
    return [data[i:i + card * 4] for i in range(0, len(data), card * 4)]
db = rows(t + "/ex.f32")
searchable = {r for r, bt in zip(db, ex["block_transition"]) if not bt}
noisy = rows(t + "/zero_noisy.f32")
assert len(noisy) == 40 and all(q in searchable for q in noisy), "a --sigma 0 query is not a searchable pose's features"
assert len(set(noisy)) > 1, "every query is the same pose"
every = rows(t + "/allfar_far.f32")
far = rows(t + "/zero_far.f32")
n = len(every)
assert 40 < n < 100000, n
assert far == [every[i * n // 40] for i in range(40)], "the far set is not the clip's frames evenly spaced"
PY

# 6. With --far the headline's pooled medians are over both sets' queries together: of three
#    queries per set a row's median, p99 (the slowest) and mean give all three times, so the
#    pooled median is known. (Each set's times come sorted: their concatenation is not.)
for run in 1 2 3; do
  "$CLI" bench "$T/a.pmdb" --queries 3 --seed $run --max-nodes 0 --far "$T/clips/synth_003.bvh" --json > "$T/p$run.json" \
    || fail "bench --queries 3 --far"
done
python3 - "$T" <<'PY' || fail "bench: pooled medians over both sets"
import json, sys
t = sys.argv[1]
for run in (1, 2, 3):
    b = json.load(open(f"{t}/p{run}.json"))
    rows = {(m["mode"], m["query_set"]): m for m in b["modes"]}
    for mode, key in (("bruteforce", "bruteforce_median_us_all_sets"), ("exact", "exact_median_us_all_sets")):
        times = []
        for s in ("noisy", "far"):
            m = rows[(mode, s)]
            times += [3 * m["mean_us"] - m["median_us"] - m["p99_us"], m["median_us"], m["p99_us"]]
        times.sort()
        pooled = (times[2] + times[3]) / 2
        assert abs(b[key] - pooled) <= 1e-6 * max(1.0, pooled), (run, key, b[key], pooled, times)
PY

# 7. The noise of the noisy set is Gaussian with sigma in normalised units: the first query of a
#    seed comes from the same pose whatever the sigma, so with --sigma 1 against --sigma 0 its
#    values differ by N(0, 1) times each dimension's scale.
for seed in 1 2 3 4 5 6 7 8 9 10; do
  for sigma in 0 1; do
    "$CLI" bench "$T/a.pmdb" --queries 1 --seed $seed --sigma $sigma --max-nodes 0 --save-queries "$T/n${seed}_$sigma" > /dev/null \
      || fail "bench --seed $seed --sigma $sigma"
  done
done
python3 - "$T" <<'PY' || fail "bench: the noise is not N(0, 1) in normalised units"
import array, json, sys
t = sys.argv[1]
scale = json.load(open(t + "/ex.json"))["scale"]
z = []
for seed in range(1, 11):
    a = array.array("f", open(f"{t}/n{seed}_0_noisy.f32", "rb").read())
    b = array.array("f", open(f"{t}/n{seed}_1_noisy.f32", "rb").read())
    z += [(y - x) / s for x, y, s in zip(a, b, scale) if s > 0]
n = len(z)
mean = sum(z) / n
sd = (sum((v - mean) ** 2 for v in z) / n) ** 0.5
assert n >= 200 and abs(mean) < 0.2 and 0.8 < sd < 1.2, (n, mean, sd)
PY
# 8. --passes times each group of rows N times, alternated, and takes each query's median: the
#    answers do not depend on it (every pass must answer as the first), only the times do; the
#    report says how many passes its times are the median of.
for n in 1 5; do
  "$CLI" bench "$T/a.pmdb" --queries 25 --passes $n --far "$T/clips/synth_003.bvh" --json > "$T/pass$n.json" \
    || fail "bench --passes $n"
  "$CLI" bench "$T/a.pmdb" --queries 5 --passes $n > "$T/pass$n.txt" || fail "bench --passes $n (text)"
done
grep -q "^each query's time: the median of 5 passes" "$T/pass5.txt" || fail "bench --passes 5: no line on the passes"
grep -q "median of" "$T/pass1.txt" && fail "bench --passes 1 speaks of passes"
python3 - "$T" <<'PY' || fail "bench --passes: answers differ with the number of passes"
import json, sys
t = sys.argv[1]
one, five = (json.load(open(f"{t}/pass{n}.json")) for n in (1, 5))
assert one["passes"] == 1 and five["passes"] == 5, (one["passes"], five["passes"])
assert [(m["mode"], m["query_set"]) for m in one["modes"]] == [(m["mode"], m["query_set"]) for m in five["modes"]]
for a, b in zip(one["modes"], five["modes"]):
    for k in ("exact_fraction", "proven_fraction", "mean_excess", "max_excess_ratio", "candidates", "nodes"):
        assert a[k] == b[k], (a["mode"], a["query_set"], k, a[k], b[k])
PY
exit 0
