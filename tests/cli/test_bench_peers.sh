#!/usr/bin/env bash
# The peer benchmarks beside the CLI's build (build/bench/bench_nanoflann, bench_faiss) on a small
# generated database: nanoflann's exact KD-tree finds the brute-force optimum of every query in
# posematch's space, FAISS's HNSW reports each efSearch it was asked for, both say how many
# alternating passes their times are the median of, and a bad --passes, --leaf, --m,
# --ef-construction, --ef-search item or unknown option is refused with a message. Figures of
# time are only checked for shape (p99 >= median > 0). Exits 77 when neither peer is built.
source "$(dirname "$0")/common.sh" benchpeers || { echo "FAIL: cannot source common.sh" >&2; exit 1; }
T=$TMP
BENCH_DIR=$(dirname "$CLI")/bench
NF=$BENCH_DIR/bench_nanoflann
FA=$BENCH_DIR/bench_faiss
if [ ! -x "$NF" ] && [ ! -x "$FA" ]; then echo "SKIP: no peer benchmark built in $BENCH_DIR"; exit 77; fi

"$CLI" synth "$T/clips" --clips 4 --seed 3 > /dev/null || fail "synth"
"$CLI" build "$T/clips"/synth_00{0,1,2}.bvh -o "$T/a.pmdb" --quiet || fail "build"
"$CLI" bench "$T/a.pmdb" --queries 40 --passes 1 --far "$T/clips/synth_003.bvh" --save-queries "$T/q" > /dev/null \
  || fail "bench --save-queries"

for peer in "$NF" "$FA"; do
  [ -x "$peer" ] || continue
  name=$(basename "$peer")
  for set in noisy far; do
    "$peer" "$T/a.pmdb" "$T/q_$set.f32" --name $set --passes 2 --json > "$T/$name.$set.json" 2> "$T/err" \
      || fail "$name $set: $(cat "$T/err")"
  done
  "$peer" "$T/a.pmdb" "$T/q_noisy.f32" --passes 1 > "$T/$name.txt" || fail "$name (text)"
  grep -q "median of 1 alternating passes" "$T/$name.txt" || fail "$name: the text does not give its passes"
  # Options are read as the CLI reads its own (pm_cli_int), with its message.
  opts=()
  for bad in 0 16 x; do opts+=("--passes $bad:$name: --passes '$bad' must be a decimal integer in 1..15"); done
  case $name in
    bench_nanoflann) for bad in 0 8x; do opts+=("--leaf $bad:$name: --leaf '$bad' must be a decimal integer in 1..1000000"); done ;;
    *) opts+=("--m 1:$name: --m '1' must be a decimal integer in 2..1024"
              "--ef-construction abc:$name: --ef-construction 'abc' must be a decimal integer in 1..1000000"
              "--ef-search 0:$name: --ef-search '0' must be a decimal integer in 1..1000000"
              "--ef-search 16,:$name: --ef-search '16,': '' must be a decimal integer in 1..1000000"
              "--ef-search 16,,64:$name: --ef-search '16,,64': '' must be a decimal integer in 1..1000000"
              "--ef-search 16,0:$name: --ef-search '16,0': '0' must be a decimal integer in 1..1000000") ;;
  esac
  opts+=("--bogus:unknown or incomplete option --bogus")
  for o in "${opts[@]}"; do
    args=${o%%:*} want=${o#*:}
    # shellcheck disable=SC2086  # the option and its value are two words
    "$peer" "$T/a.pmdb" "$T/q_noisy.f32" $args > /dev/null 2> "$T/err" && fail "$name $args was taken"
    grep -qF -- "$want" "$T/err" || fail "$name $args: $(cat "$T/err")"
  done
done
python3 - "$T" "$NF" "$FA" <<'PY' || fail "peer figures"
import json, os, sys
t, nf, fa = sys.argv[1:4]
def shape(s, what):
    assert 0 < s["median_us"] <= s["p99_us"], (what, s)
for set_ in ("noisy", "far"):
    if os.access(nf, os.X_OK):
        n = json.load(open(f"{t}/bench_nanoflann.{set_}.json"))
        assert n["query_set"] == set_ and n["queries"] == 40 and n["passes"] == 2, n
        assert n["nanoflann"]["exact_fraction"] == 1.0, ("nanoflann is exact in posematch's space", n)
        for k in ("nanoflann", "exact", "bruteforce"):
            shape(n[k], k)
    if os.access(fa, os.X_OK):
        f = json.load(open(f"{t}/bench_faiss.{set_}.json"))
        assert f["query_set"] == set_ and f["queries"] == 40 and f["passes"] == 2, f
        assert [r["faiss_ef_search"] for r in f["runs"]] == [16, 64], f["runs"]
        for r in f["runs"]:
            assert 0.0 <= r["faiss"]["exact_fraction"] <= 1.0 and r["faiss"]["mean_excess"] >= 0.0, r
            shape(r["faiss"], "faiss")
        shape(f["exact"], "exact")
        shape(f["bruteforce"], "bruteforce")
PY
exit 0
