#!/usr/bin/env python3
"""Formats bench/run.sh's JSON results as the Markdown section of docs/BENCHMARKS.md."""
import json
import os
import platform
import subprocess
import sys

out, data = sys.argv[1], sys.argv[2]


def load(name):
    path = os.path.join(out, name)
    return json.load(open(path)) if os.path.exists(path) else None


def cpu():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


lines = []
lines.append(f"Measured on {cpu()}, one thread, {data} clips; "
             f"`make bench` (or `bash bench/run.sh build`) reproduces every number here.\n")
for schema in ("holden27", "ue-locomotion"):
    b, bench = load(f"{schema}.build.json"), load(f"{schema}.bench.json")
    if not b or not bench:
        continue
    lines.append(f"### {schema}: {bench['searchable_poses']:,} searchable poses "
                 f"({bench['poses']:,} in all) x {bench['cardinality']}\n")
    lines.append(f"- build (one thread): {b['build_s']:.2f} s for the database after "
                 f"{b['read_s']:.2f} s of BVH parsing ({b['total_s']:.2f} s end to end); "
                 f"{bench['bytes'] / 1e6:.1f} MB, {bench['bytes_per_pose']:.0f} bytes per pose")
    lines.append(f"- warm re-read of the value matrix: {bench['warm_read_us']:.0f} us; "
                 f"brute force / re-read = {bench['bruteforce_vs_warm_read']:.2f} (brute force "
                 f"{bench['bruteforce_alternating_us']:.0f} us, the two timed in alternation)")
    lines.append(f"- exact vs brute force, mean of both sets' medians: "
                 f"**{bench['exact_speedup_vs_bruteforce']:.1f}x**")
    exact_rows = [m for m in bench["modes"] if m["mode"] == "exact"]
    all_exact = all(m["exact_fraction"] == 1.0 for m in exact_rows)
    per_set = {m["query_set"]: m["speedup_vs_bruteforce"] for m in exact_rows}
    lines.append("- goals: exact returns the brute-force optimum on "
                 + ("**every** query of every set, with and without dynamic weights" if all_exact else "NOT every query")
                 + f"; exact >= 10x brute force: noisy {per_set.get('noisy', 0):.1f}x, far {per_set.get('far', 0):.1f}x"
                 + f"; brute force <= 1.5x the re-read: {bench['bruteforce_vs_warm_read']:.2f}"
                 + f"; build < 3 s: {b['build_s']:.2f} s (+{b['read_s']:.2f} s parsing)\n")
    lines.append("| mode | query set | median us | p99 us | brute-force optimum | mean excess | worst | "
                 "speed vs brute force | exact costs | build ms | bytes |")
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for m in bench["modes"]:
        lines.append(f"| {m['mode']} | {m['query_set']} | {m['median_us']:.1f} | {m['p99_us']:.1f} | "
                     f"{100 * m['exact_fraction']:.1f}% | {100 * m['mean_excess']:.2f}% | "
                     f"{m['max_excess_ratio']:.2f}x | {m['speedup_vs_bruteforce']:.1f}x | "
                     f"{m['candidates']:.0f} | {m['build_ms']:.0f} | {m['bytes'] / 1e6:.1f} MB |")
    for s in ("noisy", "far"):
        n = load(f"{schema}.nanoflann_{s}.json")
        if not n:
            continue
        lines.append(f"| nanoflann KD-tree (peer, leaf {n['nanoflann_leaf']}) | {s} | "
                     f"{n['nanoflann']['median_us']:.1f} | {n['nanoflann']['p99_us']:.1f} | "
                     f"{100 * n['nanoflann']['exact_fraction']:.1f}% | {100 * n['nanoflann']['mean_excess']:.2f}% | | "
                     f"{n['nanoflann_speedup_vs_bruteforce']:.1f}x | | {n['nanoflann_build_ms']:.0f} | |")
    lines.append("")
    for s in ("noisy", "far"):
        n = load(f"{schema}.nanoflann_{s}.json")
        if n:
            lines.append(f"- {s}: posematch exact is {n['exact_speedup_vs_nanoflann']:.1f}x faster than nanoflann "
                         f"(medians {n['exact']['median_us']:.1f} vs {n['nanoflann']['median_us']:.1f} us, same run)")
    lines.append("")
print("\n".join(lines))
