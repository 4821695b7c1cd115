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
exit 0
