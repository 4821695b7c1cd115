#!/usr/bin/env bash
# build --modes: databases that answer some search modes only, on generated clips. What info says
# of them, what search and bench do with them, and the option's errors.
source "$(dirname "$0")/common.sh" dbmodes || { echo "FAIL: cannot source common.sh" >&2; exit 1; }
T=$TMP

"$CLI" synth "$T/clips" --clips 6 --seed 5 > /dev/null || fail "synth"
build() { # name --modes value (or nothing)
  local name=$1; shift
  "$CLI" build "$T/clips" -o "$T/$name.pmdb" --schema holden27 --mirror --quiet "$@" || fail "build $name $*"
}
build default
build all --modes all
build listed --modes vptree,pcakdtree,exact,bruteforce
build trees --modes exact,pcakdtree,vptree
for x in all listed trees; do
  cmp -s "$T/default.pmdb" "$T/$x.pmdb" || fail "--modes of every mode ($x) differs from the default build"
done
build exact --modes exact
build exact1 --modes exact --threads 1
build exact2 --modes exact --threads 2
cmp -s "$T/exact1.pmdb" "$T/exact2.pmdb" || fail "--modes exact: 1 and 2 threads give different databases"
build exactbf --modes exact,bruteforce
cmp -s "$T/exact.pmdb" "$T/exactbf.pmdb" || fail "brute force's name changed an exact-only database"
build kd --modes pcakdtree
build bf --modes bruteforce

# info: the modes line, and the JSON's modes list; the PCA space's unique vectors are the KD-tree's.
"$CLI" info "$T/exact.pmdb" > "$T/exact.txt" || fail "info exact"
grep -qx "modes           exact, bruteforce (pcakdtree, vptree left out: build --modes)" "$T/exact.txt" \
  || fail "info modes line: $(grep modes "$T/exact.txt")"
grep -q "^unique vectors  .*; the PCA space's are the KD-tree's, left out$" "$T/exact.txt" || fail "info unique vectors: $(cat "$T/exact.txt")"
"$CLI" info "$T/default.pmdb" | grep -qx "modes           exact, bruteforce, pcakdtree, vptree (all)" || fail "info modes line, all"
"$CLI" info "$T/kd.pmdb" | grep -q "^exact tree      left out (it would split on [0-9]* components)$" || fail "info exact tree line"
for x in default exact kd bf; do
  "$CLI" info "$T/$x.pmdb" --json > "$T/$x.json" || fail "info --json $x"
  "$CLI" info "$T/$x.pmdb" --verify > /dev/null || fail "info --verify $x"
done
python3 - "$T" <<'PY' || fail "info --json modes"
import json, os, sys
t = sys.argv[1]
d = {x: json.load(open(os.path.join(t, x + ".json"))) for x in ("default", "exact", "kd", "bf")}
assert d["default"]["modes"] == ["exact", "bruteforce", "pcakdtree", "vptree"], d["default"]["modes"]
assert d["exact"]["modes"] == ["exact", "bruteforce"] and d["exact"]["unique_pca_vectors"] is None
assert d["kd"]["modes"] == ["bruteforce", "pcakdtree"]
assert d["kd"]["unique_pca_vectors"] == d["default"]["unique_pca_vectors"] > 0
assert d["bf"]["modes"] == ["bruteforce"]
# Smaller, by the structures left out; the same poses and vectors.
assert d["bf"]["bytes"] < d["kd"]["bytes"] < d["exact"]["bytes"] < d["default"]["bytes"], [d[x]["bytes"] for x in d]
for x in d:
    assert d[x]["poses"] == d["default"]["poses"] and d[x]["unique_vectors"] == d["default"]["unique_vectors"]
    assert (d[x]["key"] == d["default"]["key"]) == (x == "default")
PY

# search: the modes kept answer as the full database does; the others are an error naming the file.
clip=$T/clips/synth_002.bvh
for m in exact bruteforce; do
  "$CLI" search "$T/default.pmdb" --query-clip "$clip" --frame 30 --mode $m --json > "$T/s_full.json" || fail "search full $m"
  "$CLI" search "$T/exact.pmdb" --query-clip "$clip" --frame 30 --mode $m --json > "$T/s_exact.json" || fail "search exact-only $m"
  cmp -s "$T/s_full.json" "$T/s_exact.json" || fail "search --mode $m differs on the exact-only database"
done
"$CLI" search "$T/kd.pmdb" --query-clip "$clip" --frame 30 --mode pcakdtree --json > "$T/s_kd.json" || fail "search kd-only"
"$CLI" search "$T/default.pmdb" --query-clip "$clip" --frame 30 --mode pcakdtree --json > "$T/s_full.json" || fail "search full pcakdtree"
cmp -s "$T/s_full.json" "$T/s_kd.json" || fail "search --mode pcakdtree differs on the kd-only database"
"$CLI" search "$T/exact.pmdb" --query-clip "$clip" --frame 30 --mode vptree > /dev/null 2> "$T/err.txt"
rc=$?
[ $rc -eq 1 ] || fail "search of a left-out mode: status $rc"
[ "$(cat "$T/err.txt")" = "posematch: search: $T/exact.pmdb was built without the vptree mode (build --modes left its structure out); --mode exact or bruteforce" ] \
  || fail "search of a left-out mode: $(cat "$T/err.txt")"
"$CLI" search "$T/kd.pmdb" --query-clip "$clip" --frame 30 > /dev/null 2> "$T/err.txt" && fail "default exact search of a kd-only database"
grep -q "built without the exact mode.*--mode bruteforce or pcakdtree" "$T/err.txt" || fail "exact on kd-only: $(cat "$T/err.txt")"

# bench: the modes the database answers, and no exact headline without exact.
"$CLI" bench "$T/kd.pmdb" --queries 20 --threads 2 --json > "$T/bench_kd.json" || fail "bench kd-only"
"$CLI" bench "$T/exact.pmdb" --queries 20 --json > "$T/bench_exact.json" || fail "bench exact-only"
python3 - "$T" <<'PY' || fail "bench of partial databases"
import json, sys
kd = json.load(open(sys.argv[1] + "/bench_kd.json"))
assert sorted({r["mode"] for r in kd["modes"]}) == ["bruteforce", "pcakdtree"], kd["modes"]
assert "exact_speedup_vs_bruteforce" not in kd and kd["bruteforce_median_us_all_sets"] > 0
assert [r["mode"] for r in kd["threads"]["modes"]] == ["bruteforce"], kd["threads"]
ex = json.load(open(sys.argv[1] + "/bench_exact.json"))
assert sorted({r["mode"] for r in ex["modes"]}) == ["bruteforce", "exact"], ex["modes"]
assert ex["exact_speedup_vs_bruteforce"] > 0
assert any(r["query_set"] == "noisy+dynamic-dims" for r in ex["modes"])
PY

# --max-nodes times exact: given for a database without it, an error rather than rows left out.
"$CLI" bench "$T/kd.pmdb" --queries 5 --max-nodes 100 > /dev/null 2> "$T/err.txt"
rc=$?
[ $rc -eq 1 ] || fail "bench --max-nodes of a kd-only database: status $rc"
[ "$(cat "$T/err.txt")" = "posematch: bench: --max-nodes times exact, which $T/kd.pmdb was built without (build --modes)" ] \
  || fail "bench --max-nodes of a kd-only database: $(cat "$T/err.txt")"
"$CLI" bench "$T/kd.pmdb" --queries 5 --max-nodes 0 > /dev/null || fail "bench --max-nodes 0 of a kd-only database"

# The option's errors: usage errors (status 2, one line).
expect_usage() { # message args...
  local msg=$1; shift
  "$CLI" build "$T/clips" -o "$T/bad.pmdb" --quiet "$@" > /dev/null 2> "$T/err.txt"
  local rc=$?
  [ $rc -eq 2 ] || fail "build $*: status $rc"
  [ "$(cat "$T/err.txt")" = "posematch: $msg" ] || fail "build $*: $(cat "$T/err.txt")"
  [ -e "$T/bad.pmdb" ] && fail "build $* wrote a database"
  return 0
}
expect_usage "build: --modes 'exact,kd': 'kd' is not exact, pcakdtree, vptree or bruteforce (or give all)" --modes exact,kd
expect_usage "build: --modes '': '' is not exact, pcakdtree, vptree or bruteforce (or give all)" --modes ''
expect_usage "build: --modes 'exact,': '' is not exact, pcakdtree, vptree or bruteforce (or give all)" --modes exact,
expect_usage "build: --modes 'vptree,vptree' names vptree twice" --modes vptree,vptree
expect_usage "build: --modes given twice ('exact' and 'vptree')" --modes exact --modes vptree
echo "ok"
