#!/usr/bin/env bash
# make bench: builds the benchmark databases from ../shared/mocap or PM_MOCAP_DIR (every single-person folder,
# several skeletons, 60 fps, mirrored), times every search mode on two query sets in one run,
# times two peers on the same matrix and queries (nanoflann's exact KD-tree; FAISS's approximate
# HNSW graph, about 16 s to build per run on one thread), runs the blending bench, and
# rewrites the search and blending result sections of docs/BENCHMARKS.md (bench/report.py).
# Search throughput with threads sharing a database uses the CPUs up to 8.
#   bash bench/run.sh [BUILD_DIR]        PM_BENCH_QUERIES=N changes the queries per set (1000)
# PM_BENCH_OUT=DIR keeps the databases and JSON results elsewhere than BUILD_DIR/bench-out, and
# PM_BENCH_DOC=FILE has another document's sections rewritten (empty: none), so that a run on
# other clips (PM_MOCAP_DIR) leaves docs/BENCHMARKS.md and the bench databases as they are.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case "$build" in /*) ;; *) build="$root/$build" ;; esac
pm="$build/posematch"
out=${PM_BENCH_OUT:-$build/bench-out}
doc=${PM_BENCH_DOC-$root/docs/BENCHMARKS.md}
queries=${PM_BENCH_QUERIES:-1000}
# Threads for the throughput figures: every CPU, but at least 2 so that the section is always
# there (on one CPU it shows what sharing the core costs) and at most 8, so that figures from
# machines with many cores stay comparable with the rest.
cpus=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
threads=$(( cpus < 2 ? 2 : cpus > 8 ? 8 : cpus ))
mocap=${PM_MOCAP_DIR:-$root/../shared/mocap}
if [ -n "${PM_MOCAP_DIR:-}" ] && [ ! -d "$mocap" ]; then
  echo "bench: PM_MOCAP_DIR=$mocap: no such directory" >&2
  exit 1
fi
if [ -d "$mocap" ]; then
  sources=()
  for d in "$mocap"/*/; do
    [ -d "$d" ] && [ "$(basename "$d")" != two-person ] && sources+=("$d")
  done
  far=("$mocap/two-person")
  if [ ${#sources[@]} -eq 0 ] || [ ! -d "${far[0]}" ]; then
    echo "bench: $mocap needs folders of clips and a two-person folder (the far query set), as ../shared/mocap has" >&2
    exit 1
  fi
  data=real
  # Clips given this way are named in the report, with the command that measures them again: as
  # an absolute path, valid from anywhere and never mistaken for "real" or "generated".
  [ -n "${PM_MOCAP_DIR:-}" ] && data=$(cd "$mocap" && pwd)
  mkdir -p "$out" # only once the clips are known to be usable: a refused run leaves nothing behind
else
  mkdir -p "$out"
  echo "bench: $mocap not found: benchmarking on generated clips instead (numbers are not comparable)" >&2
  "$pm" synth "$out/synth" --clips 400 --fps 60
  "$pm" synth "$out/synth-far" --clips 20 --seed 7 --fps 60 --name far
  sources=("$out/synth")
  far=("$out/synth-far")
  data="generated"
fi

for schema in holden27 ue-locomotion; do
  echo "bench: building the $schema database (one thread)" >&2
  "$pm" build "${sources[@]}" -o "$out/$schema.pmdb" --schema "$schema" --fps 60 --mirror --threads 1 --quiet --json \
    > "$out/$schema.build.json"
  echo "bench: searching ($queries queries per set)" >&2
  "$pm" bench "$out/$schema.pmdb" --queries "$queries" --far "${far[@]}" --threads "$threads" --json \
    --save-queries "$out/$schema.q" \
    > "$out/$schema.bench.json"
  for peer in nanoflann faiss; do
    rm -f "$out/$schema.${peer}_"*.json # no stale figures when a peer is not built
    [ -x "$build/bench/bench_$peer" ] || continue
    echo "bench: the $peer peer on the same queries" >&2
    for set in noisy far; do
      "$build/bench/bench_$peer" "$out/$schema.pmdb" "$out/$schema.q_$set.f32" --name "$set" --json \
        > "$out/$schema.${peer}_$set.json"
    done
  done
done
rm -f "$out/blend.json" # no stale figures when bench_blend is not built
if [ -x "$build/bench/bench_blend" ]; then
  echo "bench: blending" >&2
  "$build/bench/bench_blend" --json > "$out/blend.json"
fi
# Prints the search and blending sections, keeps them as $out/search.md and $out/blend.md, and
# writes them between their markers in docs/BENCHMARKS.md (or PM_BENCH_DOC).
python3 "$root/bench/report.py" "$out" "$data" ${doc:+"$doc"}
