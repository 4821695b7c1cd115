#!/usr/bin/env bash
# bench's figures from what they are made of, never from how long anything took: the median and
# p99 of a few queries against their mean. Exits 77 when something it needs is missing.
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

exit 0
