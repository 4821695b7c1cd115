#!/usr/bin/env bash
# Determinism across builds: a database cache may be shared by machines whose posematch was built
# by another compiler with other flags, so this build's CLI and a reference build's
# (PM_REFERENCE_CLI; `make test` gives the sanitizer build the release build's) must write the same
# bytes for the same inputs: generated clips, databases of both presets (mirrored, several
# threads, a blend space), exported features, searches in every mode (with dynamic weights and a
# continuing pose), blends and bench's query sets. Exits 77 (skipped) without a reference CLI.
source "$(dirname "$0")/common.sh" cross_build || { echo "FAIL: cannot source common.sh" >&2; exit 1; }
REF=${PM_REFERENCE_CLI:-}
if [ -z "$REF" ] || [ ! -x "$REF" ]; then
  echo "SKIP: PM_REFERENCE_CLI is not set to another build's posematch"
  exit 77
fi
if [ "$(realpath "$REF")" = "$(realpath "$CLI")" ]; then
  echo "SKIP: PM_REFERENCE_CLI is this build's own posematch"
  exit 77
fi

# run NAME ARGS...: runs both CLIs with ARGS, where a leading @/ stands for the side's output
# directory; their stdout, exit status and every file written must match.
mkdir -p "$TMP/a" "$TMP/b"
run() {
  local name=$1 side bin dir
  shift
  for side in a b; do
    if [ $side = a ]; then bin=$CLI; else bin=$REF; fi
    dir=$TMP/$side
    local args=()
    local arg
    # Only a leading @/: an @ elsewhere is the path's own (a CI workspace such as job@2 puts one
    # in $TMP, and clip file names may hold one).
    for arg in "$@"; do
      case $arg in
        @/*) args+=("$dir/${arg#@/}") ;;
        *) args+=("$arg") ;;
      esac
    done
    "$bin" "${args[@]}" > "$dir/$name.out" 2> "$dir/$name.err"
    echo $? > "$dir/$name.status"
  done
  [ "$(cat "$TMP/a/$name.status")" = 0 ] || fail "$name: this build exited $(cat "$TMP/a/$name.status"): $(head -1 "$TMP/a/$name.err")"
}

run synth synth @/clips --clips 6 --seed 11
run synth60 synth @/clips60 --clips 2 --seed 12 --fps 60 --name other
cat > "$TMP/space.json" <<'EOF'
{
  "name": "gait",
  "axes": [{"name": "x", "min": 0, "max": 4}, {"name": "y", "min": 0, "max": 4}],
  "samples": [
    {"name": "s0", "clip": "clips/synth_000.bvh", "params": [0, 0]},
    {"name": "s1", "clip": "clips/synth_001.bvh", "params": [4, 0]},
    {"name": "s2", "clip": "clips/synth_002.bvh", "params": [0, 4]},
    {"name": "s3", "clip": "clips/synth_003.bvh", "params": [4, 4]}
  ]
}
EOF
cp "$TMP/space.json" "$TMP/a/space.json"
cp "$TMP/space.json" "$TMP/b/space.json"

run h27 build @/clips @/clips60 -o @/h27.pmdb --schema holden27 --fps 60 --mirror --threads 3 --quiet
run ue build @/clips -o @/ue.pmdb --schema ue-locomotion --fps 30 --pca 6 --quiet
run space build @/space.json @/clips/synth_004.bvh -o @/space.pmdb --quiet
for db in h27 ue space; do
  run "info_$db" info @/$db.pmdb --json
  run "export_$db" export-features @/$db.pmdb -o @/$db.features
done
run blend blend @/space.json --param 1.3,2.9 -o @/blend.bvh
run weights blend @/space.json --param 5,-1 --weights --json
run inspect inspect @/clips/synth_005.bvh --json

# Queries and weights made once (from this side's export) and given to both.
python3 - "$TMP" <<'EOF' || fail "cannot write the queries"
import json, random, struct, sys
tmp = sys.argv[1]
random.seed(5)
for db in ("h27", "ue", "space"):
    meta = json.load(open(f"{tmp}/a/{db}.features.json"))
    n, card = meta["poses"], meta["cardinality"]
    raw = open(f"{tmp}/a/{db}.features.f32", "rb").read()
    rows = []
    for _ in range(40):
        p = random.randrange(n)
        row = struct.unpack_from(f"<{card}f", raw, 4 * p * card)
        rows.append([v + random.gauss(0, 0.3) * s for v, s in zip(row, meta["scale"])])
    with open(f"{tmp}/{db}.q.f32", "wb") as f:
        for r in rows:
            f.write(struct.pack(f"<{card}f", *r))
    with open(f"{tmp}/{db}.w.f32", "wb") as f:
        f.write(struct.pack(f"<{card}f", *[random.uniform(0.25, 4) for _ in range(card)]))
EOF
for db in h27 ue space; do
  for mode in exact bruteforce pcakdtree vptree; do
    run "search_${db}_$mode" search @/$db.pmdb --queries "$TMP/$db.q.f32" --mode $mode --json
  done
  run "search_${db}_weights" search @/$db.pmdb --queries "$TMP/$db.q.f32" --weights "$TMP/$db.w.f32" --json
  run "search_${db}_continuing" search @/$db.pmdb --queries "$TMP/$db.q.f32" --continuing 7 \
    --continuing-addend -0.5 --json
done

# bench's query sets (its noise comes from the seed through pm_expf, not libm): the same rows
# from every build; its timings differ, so only the saved rows are compared.
run bench bench @/h27.pmdb --queries 40 --seed 3 --save-queries @/bench_h27
rm -f "$TMP"/[ab]/bench.out "$TMP"/[ab]/bench.err

# Real clips when present: a few files of every single-person folder, both presets.
if [ -d "$MOCAP" ]; then
  real=()
  for d in "$MOCAP"/*/; do
    [ "$(basename "$d")" = two-person ] && continue
    while IFS= read -r f; do real+=("$f"); done < <(find "$d" -name '*.bvh' | LC_ALL=C sort | head -2)
  done
  run real_h27 build "${real[@]}" -o @/real_h27.pmdb --schema holden27 --mirror --quiet
  run real_ue build "${real[@]}" -o @/real_ue.pmdb --mirror --threads 2 --quiet
  run real_search search @/real_ue.pmdb --query-clip "${real[0]}" --frame 40 --json
  # A frame of the database finds itself at cost 0 whatever the arithmetic; a held-out clip's
  # frame gives costs whose last bits depend on it.
  far=$(find "$MOCAP/two-person" -name '*.bvh' 2>/dev/null | LC_ALL=C sort | head -1)
  if [ -n "$far" ]; then
    for db in real_h27 real_ue; do
      for mode in exact bruteforce pcakdtree vptree; do
        run "far_${db}_$mode" search @/$db.pmdb --query-clip "$far" --frame 200 --mode $mode --json
      done
    done
  fi
else
  echo "note: $MOCAP not found: generated clips only"
fi

# Everything each side wrote, byte for byte (paths to the side's own directory aside in what it
# printed). The directories are replaced as plain strings, not as a sed pattern: a '#' in $TMP
# made sed fail, and the two empty streams of the failed seds compared equal.
python3 - "$TMP" "$CLI" "$REF" <<'EOF' || exit 1
import os, sys
tmp, cli, ref = sys.argv[1:]
def files(side):
    root = os.path.join(tmp, side)
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)
a, b = files("a"), files("b")
if a != b:
    sys.exit(f"FAIL: the builds wrote different files: only {cli}'s: {sorted(set(a) - set(b))[:3]}, "
             f"only {ref}'s: {sorted(set(b) - set(a))[:3]}")
for f in a:
    data = {}
    for side in "ab":
        with open(os.path.join(tmp, side, f), "rb") as fh:
            data[side] = fh.read()
        if not f.endswith((".pmdb", ".f32", ".bvh")):
            data[side] = data[side].replace(os.path.join(tmp, side).encode(), b"DIR")
    if data["a"] != data["b"]:
        at = next((i for i, (x, y) in enumerate(zip(data["a"], data["b"])) if x != y),
                  min(len(data["a"]), len(data["b"])))
        sys.exit(f"FAIL: {f} differs between {cli} and {ref} (from byte {at}: "
                 f"{data['a'][at:at + 40]!r} vs {data['b'][at:at + 40]!r})")
print(f"ok: {len(a)} outputs byte-identical between the two builds")
EOF
