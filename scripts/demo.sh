#!/usr/bin/env bash
# make demo: builds a pose-search database from ../shared/mocap (or from generated clips when
# the real ones are absent), prints what it holds, answers a few queries made from frames of
# clips the database has never seen, runs a short benchmark and blends a walk with a run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case "$build" in /*) ;; *) build="$root/$build" ;; esac
# The test suite runs it on its own CLI and scratch directory (tests/cli/test_demo.sh).
pm=${PM_DEMO_CLI:-$build/posematch}
out=${PM_DEMO_OUT:-$build/demo}
mkdir -p "$out"
mocap=${PM_MOCAP_DIR:-$root/../shared/mocap}
say() { printf '\n== %s\n' "$*"; }
if [ -d "$mocap" ]; then
  sources=()
  for d in "$mocap"/*/; do [ "$(basename "$d")" = two-person ] || sources+=("$d"); done
  queries=("$mocap/two-person/cmu-18_01-19_01-walk-shake-hands/18_01.bvh" "$mocap/two-person/cmu-60_14-61_14-salsa/61_14_scaled.bvh")
  far=("$mocap/two-person")
  walk="$mocap/bandai-namco/dataset-2/dataset-2_walk_normal_001.bvh"
  run="$mocap/bandai-namco/dataset-2/dataset-2_run_normal_010.bvh"
  say "Building a database from the real clips in $mocap (all but two-person/), mirrored, 30 fps"
else
  say "No ../shared/mocap here: building from 60 generated clips instead"
  "$pm" synth "$out/clips" --clips 60 --seed 1
  "$pm" synth "$out/unseen" --clips 6 --seed 2 --name unseen
  sources=("$out/clips")
  queries=("$out/unseen/unseen_000.bvh" "$out/unseen/unseen_001.bvh")
  far=("$out/unseen")
  walk="$out/unseen/unseen_000.bvh"
  run="$out/unseen/unseen_001.bvh"
fi
"$pm" build "${sources[@]}" -o "$out/demo.pmdb" --schema ue-locomotion --fps 30 --mirror --cache "$out/cache"

say "posematch info"
"$pm" info "$out/demo.pmdb"

for q in "${queries[@]}"; do
  for frame in 40 80; do
    say "Best pose for frame $frame of $(basename "$q") (a clip the database has never seen)"
    "$pm" search "$out/demo.pmdb" --query-clip "$q" --frame "$frame"
    echo "   UE-style approximate search (4 PCA components, 200 neighbours):"
    "$pm" search "$out/demo.pmdb" --query-clip "$q" --frame "$frame" --mode pcakdtree | head -1
  done
done

say "Benchmark summary (300 queries per set; make bench runs the full one)"
"$pm" bench "$out/demo.pmdb" --queries 300 --far "${far[@]}"

say "Blending a walk and a run: a 1D blend space on root speed (docs/BLEND_SPACE.md)"
# JSON strings: the paths are the demo's own, without quotes or backslashes.
cat > "$out/walk_run.json" <<JSON
{"name": "walk_run", "axes": [{"name": "speed", "min": 0, "max": 4}],
 "samples": [{"name": "walk", "clip": "$walk", "params": [1.2]},
             {"name": "run", "clip": "$run", "params": [3.2]}]}
JSON
"$pm" blend "$out/walk_run.json" --param 2.2 --weights
"$pm" blend "$out/walk_run.json" --param 2.2 -o "$out/walk_run_2.2.bvh"
