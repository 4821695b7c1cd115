#!/usr/bin/env bash
# make bench's pipeline end to end on a few generated clips: bench/run.sh builds both schemas'
# databases, times them, the peers and the blending jobs into PM_BENCH_OUT, and bench/report.py
# writes the sections between their markers in another document (PM_BENCH_DOC), leaving its
# prose, docs/BENCHMARKS.md and the build's bench-out alone. Checked: every figure of the report
# is the one its JSON gives, the winner named beside each peer is the one the ratio says (a near
# tie reads as level), a second report of the same results changes nothing, and bad input (a
# missing directory, no results, results that are not JSON or lack a field, a database without
# exact searches, a document without markers or that cannot be read, clips laid out otherwise
# than ../shared/mocap) stops with a message and leaves the document whole. No time is checked
# against a bound. Exits 77 when the benches are not built (make test's sanitizer and scalar
# builds leave them out).
source "$(dirname "$0")/common.sh" benchreport || { echo "FAIL: cannot source common.sh" >&2; exit 1; }
T=$TMP
BUILD=$(dirname "$CLI")
ROOT=${PM_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
REPORT=$ROOT/bench/report.py
if [ ! -x "$BUILD/bench/bench_blend" ]; then echo "SKIP: bench_blend is not built in $BUILD/bench"; exit 77; fi

# Clips laid out as ../shared/mocap is: single-person folders, and two-person for the far set.
mkdir "$T/mocap" || fail "mkdir"
"$CLI" synth "$T/mocap/walk" --clips 3 --seed 11 > /dev/null || fail "synth"
"$CLI" synth "$T/mocap/two-person" --clips 1 --seed 12 --name far > /dev/null || fail "synth far"
# The prose quotes the markers inline, as docs/BENCHMARKS.md does: only a marker line of its own counts.
cat > "$T/doc.md" <<'EOF'
Prose before, quoting `<!-- END search results -->` and `<!-- BEGIN blend results (bench/run.sh) -->`.
<!-- BEGIN search results (bench/run.sh) -->
old search
<!-- END search results -->
Prose between.
<!-- BEGIN blend results (bench/run.sh) -->
old blend
<!-- END blend results -->
Prose after.
EOF
cp "$T/doc.md" "$T/doc.orig"
sum_before=$(cksum < "$ROOT/docs/BENCHMARKS.md")
ls -l --time-style=full-iso "$BUILD/bench-out" > "$T/out.before" 2> /dev/null   # empty when there is none

# 1. run.sh with its results and document elsewhere, the clips folder given relative to the
#    working directory (the report names it by its absolute path).
(cd "$T" && PM_MOCAP_DIR=mocap PM_BENCH_OUT=$T/out PM_BENCH_DOC=$T/doc.md PM_BENCH_QUERIES=20 \
  bash "$ROOT/bench/run.sh" "$BUILD") > "$T/run.txt" 2> "$T/run.err" || fail "bench/run.sh: $(cat "$T/run.err")"
grep -q "^bench: updated $T/doc.md" "$T/run.err" || fail "run.sh: the document is not said to be updated"
[ "$(cksum < "$ROOT/docs/BENCHMARKS.md")" = "$sum_before" ] || fail "run.sh with PM_BENCH_DOC wrote docs/BENCHMARKS.md"
ls -l --time-style=full-iso "$BUILD/bench-out" 2> /dev/null | cmp -s - "$T/out.before" \
  || fail "run.sh with PM_BENCH_OUT touched $BUILD/bench-out"
for f in holden27 ue-locomotion; do
  for k in build bench; do [ -s "$T/out/$f.$k.json" ] || fail "run.sh: no $f.$k.json"; done
done

# same_prose ORIG NEW: NEW is ORIG with the two sections between its marker lines (a marker
# counts only as a line of its own) replaced by $T/out's search.md and blend.md.
same_prose() {
  python3 - "$1" "$2" "$T/out" <<'PY'
import sys
def parts(text):
    """The prose and the two sections of a document, split at the marker lines."""
    prose, sections, inside = [], [], False
    for line in text.splitlines(keepends=True):
        if line.startswith("<!-- END ") and inside:
            inside = False
        if inside:
            sections[-1] += line
        else:
            prose.append(line)
        if line.startswith("<!-- BEGIN ") and line.rstrip().endswith("-->"):
            inside = True
            sections.append("")
    return "".join(prose), sections
old_prose, _ = parts(open(sys.argv[1]).read())
new_prose, new_sections = parts(open(sys.argv[2]).read())
assert new_prose == old_prose, "the prose changed"
assert new_sections == [open(sys.argv[3] + "/search.md").read(), open(sys.argv[3] + "/blend.md").read()], "sections"
PY
}

# 2. The document: prose kept, each section what report.py printed and kept as OUT/*.md, every
#    figure the JSON's.
same_prose "$T/doc.orig" "$T/doc.md" || fail "report: the document's prose or sections"
python3 - "$T" "$REPORT" <<'PY' || fail "report: sections and figures"
import glob, importlib.util, json, os, sys
t, report = sys.argv[1], sys.argv[2]
sys.dont_write_bytecode = True  # the source tree may be read-only
spec = importlib.util.spec_from_file_location("report", report)
r = importlib.util.module_from_spec(spec)
spec.loader.exec_module(r)
run = open(t + "/run.txt").read()
search, blend = open(t + "/out/search.md").read(), open(t + "/out/blend.md").read()
assert search in run and blend in run, "run.sh does not print the sections"
# PM_MOCAP_DIR was given: its clips (not synth's fallback), named with the command that measures them again
assert f"the clips in {t}/mocap; `PM_MOCAP_DIR={t}/mocap bash bench/run.sh build` reproduces" in search, search[:400]

for schema in ("holden27", "ue-locomotion"):
    b = json.load(open(f"{t}/out/{schema}.build.json"))
    bench = json.load(open(f"{t}/out/{schema}.bench.json"))
    part = search[search.index(f"### {schema}:"):]
    part = part[:part.index("### ", 4)] if "### " in part[4:] else part
    assert part.startswith(f"### {schema}: {bench['searchable_poses']:,} searchable poses ({bench['poses']:,} in all) "
                           f"x {bench['cardinality']}\n"), part[:200]
    assert f"{b['build_s']:.2f} s for the database after {b['read_s']:.2f} s of BVH parsing" in part
    assert f"brute force / re-read = {bench['bruteforce_vs_warm_read']:.2f}" in part
    assert f"**{bench['exact_speedup_vs_bruteforce']:.1f}x**" in part
    rows = [l for l in part.splitlines() if l.startswith("| ") and not l.startswith("| mode")]
    peers = [(key, s, n) for key, _ in r.PEERS
             for s, n in r.each_run({s: json.load(open(p)) for s in ("noisy", "far")
                                     for p in [f"{t}/out/{schema}.{key}_{s}.json"] if os.path.exists(p)})]
    assert len(rows) == len(bench["modes"]) + len(peers), (schema, len(rows), len(bench["modes"]), len(peers))
    for row, m in zip(rows, bench["modes"]):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[:4] == [m["mode"], m["query_set"], f"{m['median_us']:.1f}", f"{m['p99_us']:.1f}"], (cells, m)
        assert cells[7] == f"{m['speedup_vs_bruteforce']:.1f}x", (cells, m)
    exact = {m["query_set"]: m for m in bench["modes"] if m["mode"] == "exact"}
    assert (f"exact >= 10x brute force: noisy {exact['noisy']['speedup_vs_bruteforce']:.1f}x, "
            f"far {exact['far']['speedup_vs_bruteforce']:.1f}x") in part
    assert ("the brute-force optimum on **every** query" in part) == all(
        m["exact_fraction"] == 1 for q, m in exact.items() if "max-nodes" not in q)
    # Each peer's line names the winner its ratio gives (posematch's median over the peer's).
    for key, s, n in peers:
        line = r.faster(n[f"exact_speedup_vs_{key}"], "posematch exact", r.PEER_NAMES[key](n))
        assert f"- {s}: {line} (median and p99: posematch exact {n['exact']['median_us']:.1f}" in part, (schema, key, s, line)
    if glob.glob(f"{t}/out/{schema}.nanoflann_*.json"):
        assert "| nanoflann KD-tree (peer, leaf " in part

d = json.load(open(t + "/out/blend.json"))
for res in d["results"]:
    row = [l for l in blend.splitlines() if l.startswith(f"| {res['name']} |")]
    assert len(row) == 1, res["name"]
    cells = [c.strip() for c in row[0].strip("|").split("|")]
    assert cells[1] == f"{res['ns']:.0f}" and cells[2].strip("*") == f"{res['ratio']:.3f}", (cells, res)
    has_goal = "goal_ratio" in res or "goal_ns" in res
    assert cells[4].endswith("— met" if res.get("pass") else "— **missed**") if has_goal else cells[4] == "–", (cells, res)
assert f"**{d['characters']['count']:,} characters**" in blend and f"**{d['characters']['frame_ms']:.2f} ms per frame**" in blend

# The wording of a peer comparison: a win under 2x with two decimals, above with one, and a ratio
# that would print as 1.00x either way is a tie.
assert r.faster(1.5, "A", "B") == "A is 1.50x faster than B"
assert r.faster(2.5, "A", "B") == "A is 2.5x faster than B"
assert r.faster(0.4, "A", "B") == "B is 2.5x faster than A"
assert r.faster(0.8, "A", "B") == "B is 1.25x faster than A"
# 1.00501 prints as 1.01x one way round and 1.00x the other (its inverse, 0.99501): level too.
for ratio in (1.0, 1.004, 0.996, 1.00501, 0.99502):
    assert r.faster(ratio, "A", "B") == f"A and B are level by median (ratio {ratio:.3f})", ratio
assert r.faster(1.006, "A", "B") == "A is 1.01x faster than B"
PY

# 3. The same results again: the document stays as it is, not even rewritten.
cp "$T/doc.md" "$T/doc.once"
python3 "$REPORT" "$T/out" "$T/mocap" "$T/doc.md" > /dev/null 2> "$T/err" || fail "report again: $(cat "$T/err")"
cmp -s "$T/doc.md" "$T/doc.once" || fail "report: a second report of the same results changed the document"
grep -q "updated" "$T/err" && fail "report: an unchanged document is said to be updated"

# 3b. docs/BENCHMARKS.md itself (a copy): both sections written, its prose - which quotes the
#     markers - the same to the byte.
cp "$ROOT/docs/BENCHMARKS.md" "$T/real.md"
python3 "$REPORT" "$T/out" real "$T/real.md" > /dev/null 2> "$T/err" || fail "report to BENCHMARKS.md: $(cat "$T/err")"
grep -q "has no" "$T/err" && fail "report to BENCHMARKS.md: $(cat "$T/err")"
same_prose "$ROOT/docs/BENCHMARKS.md" "$T/real.md" || fail "report to BENCHMARKS.md: prose or sections"
grep -q ", real clips; \`make bench\` (or \`bash bench/run.sh build\`) reproduces every number here" "$T/real.md" \
  || fail "report to BENCHMARKS.md: the clips or the command to reproduce"

# 4. Results of one part only: the other section is left as it was; a document without a
#    section's markers is left whole and the run says so; no document writes none.
mkdir "$T/search-only" && cp "$T/out/"*.json "$T/search-only/" && rm "$T/search-only/blend.json"
cp "$T/doc.orig" "$T/doc2.md"
python3 "$REPORT" "$T/search-only" real "$T/doc2.md" > /dev/null 2> "$T/err" || fail "report without blend.json: $(cat "$T/err")"
grep -q "^old blend$" "$T/doc2.md" || fail "report without blend.json: the blend section was not left as it was"
grep -q "^old search$" "$T/doc2.md" && fail "report without blend.json: the search section was not written"
[ -f "$T/search-only/blend.md" ] && fail "report without blend.json: wrote a blend.md"
printf 'No markers here.\n' > "$T/plain.md"
python3 "$REPORT" "$T/out" real "$T/plain.md" > /dev/null 2> "$T/err" || fail "report to a document without markers"
[ "$(cat "$T/plain.md")" = "No markers here." ] || fail "report: a document without markers was changed"
grep -q "plain.md has no '<!-- BEGIN search results" "$T/err" || fail "report: no word of the missing markers: $(cat "$T/err")"
PM_MOCAP_DIR=$T/mocap PM_BENCH_OUT=$T/out-nodoc PM_BENCH_DOC= PM_BENCH_QUERIES=5 \
  bash "$ROOT/bench/run.sh" "$BUILD" > /dev/null 2> "$T/err" || fail "run.sh with PM_BENCH_DOC empty: $(cat "$T/err")"
grep -q "updated" "$T/err" && fail "run.sh with PM_BENCH_DOC empty updated a document"
[ -s "$T/out-nodoc/search.md" ] && [ -s "$T/out-nodoc/blend.md" ] || fail "run.sh with PM_BENCH_DOC empty: no sections kept"

# 5. Bad input: a message naming the problem, a non-zero exit, the document as it was.
expect_error() { # DIR PATTERN [DOC]: report.py must fail with PATTERN in its message
  local doc=${3:-$T/doc2.md}
  cp "$doc" "$T/doc.keep"
  python3 "$REPORT" "$1" real "$doc" > /dev/null 2> "$T/err" && fail "report $1: accepted"
  grep -q "$2" "$T/err" || fail "report $1: message '$(cat "$T/err")' lacks '$2'"
  grep -q "Traceback" "$T/err" && fail "report $1: a traceback instead of a message"
  [ ! -f "$doc" ] || cmp -s "$doc" "$T/doc.keep" || fail "report $1: the document changed"
}
expect_error "$T/none" "no such directory"
mkdir "$T/empty" && expect_error "$T/empty" "no results"
mkdir "$T/bad" && cp "$T/out/"*.json "$T/bad/" && head -c 100 "$T/out/holden27.bench.json" > "$T/bad/holden27.bench.json"
expect_error "$T/bad" "holden27.bench.json: not valid JSON"
mkdir "$T/field" && cp "$T/out/"*.json "$T/field/"
python3 - "$T/field/ue-locomotion.bench.json" <<'PY' || fail "dropping a field"
import json, sys
b = json.load(open(sys.argv[1])); del b["warm_read_us"]; json.dump(b, open(sys.argv[1], "w"))
PY
expect_error "$T/field" "search results in .* lack a field.*warm_read_us"
expect_error "$T/out" "cannot read $T/missing.md" "$T/missing.md"
cat "$T/doc.orig" "$T/doc.orig" > "$T/twice.md"
expect_error "$T/out" "twice.md has 2 '<!-- BEGIN search results (bench/run.sh) -->' lines" "$T/twice.md"
mkdir "$T/noexact"
"$CLI" build "$T/mocap/walk" -o "$T/noexact/holden27.pmdb" --modes pcakdtree --quiet --json > "$T/noexact/holden27.build.json" \
  || fail "build --modes pcakdtree"
"$CLI" bench "$T/noexact/holden27.pmdb" --queries 5 --json > "$T/noexact/holden27.bench.json" 2> "$T/err" \
  || fail "bench of a database without exact: $(cat "$T/err")"
expect_error "$T/noexact" "holden27: the database answers no exact searches"
# run.sh refuses clips it cannot use rather than benchmarking something else.
PM_MOCAP_DIR=$T/nowhere PM_BENCH_OUT=$T/o PM_BENCH_DOC= bash "$ROOT/bench/run.sh" "$BUILD" > /dev/null 2> "$T/err" \
  && fail "run.sh with a missing PM_MOCAP_DIR: accepted"
grep -q "PM_MOCAP_DIR=$T/nowhere: no such directory" "$T/err" || fail "run.sh, missing PM_MOCAP_DIR: $(cat "$T/err")"
mkdir -p "$T/nofar/walk" && cp "$T/mocap/walk/"*.bvh "$T/nofar/walk/"
PM_MOCAP_DIR=$T/nofar PM_BENCH_OUT=$T/o PM_BENCH_DOC= bash "$ROOT/bench/run.sh" "$BUILD" > /dev/null 2> "$T/err" \
  && fail "run.sh without a two-person folder: accepted"
grep -q "needs folders of clips and a two-person folder" "$T/err" || fail "run.sh without two-person: $(cat "$T/err")"
[ -e "$T/o" ] && fail "run.sh refused the clips but made its results folder"
python3 "$REPORT" > /dev/null 2> "$T/err" && fail "report without arguments: accepted"
grep -q "^usage: bench/report.py OUT_DIR DATA \[DOC\]" "$T/err" || fail "report without arguments: $(cat "$T/err")"
echo "bench report: ok"
