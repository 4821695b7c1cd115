#!/usr/bin/env python3
"""Formats bench/run.sh's JSON results as the result sections of docs/BENCHMARKS.md.

    report.py OUT_DIR DATA [DOC]

DATA names the clips: "real" (../shared/mocap), "generated", or the absolute path of the
folder PM_MOCAP_DIR named. Prints the search section (from OUT_DIR's *.build.json, *.bench.json
and the peers' *.nanoflann_*.json and *.faiss_*.json) and, when OUT_DIR/blend.json exists, the
blending section; writes each to OUT_DIR/search.md and OUT_DIR/blend.md; with DOC, replaces
the text between each section's markers in DOC (a section whose results are missing, or whose
markers DOC lacks, is left as it is; DOC is replaced whole or not at all). Results it cannot
read (not JSON, a field missing) stop it with a message naming the file or the field."""
import json
import os
import platform
import shlex
import sys

SEARCH_MARKERS = ("<!-- BEGIN search results (bench/run.sh) -->", "<!-- END search results -->")
BLEND_MARKERS = ("<!-- BEGIN blend results (bench/run.sh) -->", "<!-- END blend results -->")

# The peers `bench/run.sh` times beside posematch (their JSON: OUT_DIR/<schema>.<key>_<set>.json).
PEERS = [
    ("nanoflann", lambda n: f"nanoflann KD-tree (peer, leaf {n['nanoflann_leaf']})"),
    ("faiss", lambda n: f"FAISS HNSW (peer, approximate: M {n['faiss_m']}, efSearch {n['faiss_ef_search']})"),
]
PEER_NAMES = {"nanoflann": lambda n: "nanoflann", "faiss": lambda n: f"FAISS HNSW (efSearch {n['faiss_ef_search']})"}



def each_run(runs):
    """(set, result) for every timed setting of a peer: one per set, or one per entry of the set's
    "runs" (bench_faiss times several efSearch values on one graph), merged with the set's keys."""
    for s, n in runs.items():
        if not n:
            continue
        for run in n.get("runs", [{}]):
            yield s, {**n, **run}


def faster(ratio, a, b):
    """'A is 2.5x faster than B' for B's median over A's; below 1 the other way round, and with two
    decimals under 2x, so that a near tie does not read as a win; a ratio that would print as 1.00x
    either way says level, since 'A is 1.00x faster than B' names a winner the figures do not show."""
    if round(ratio, 2) == 1 or round(1 / ratio, 2) == 1:
        return f"{a} and {b} are level by median (ratio {ratio:.3f})"
    if ratio < 1:
        ratio, a, b = 1 / ratio, b, a
    return f"{a} is {ratio:.2f}x faster than {b}" if ratio < 2 else f"{a} is {ratio:.1f}x faster than {b}"


def load(out, name):
    path = os.path.join(out, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        try:
            return json.load(f)
        except ValueError as e:
            sys.exit(f"bench/report.py: {path}: not valid JSON ({e})")


def cpu():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def floor_note(bench):
    """How steady the alternated passes were: their spread at the start and at the end of the run."""
    f = bench["floor_passes"]
    note = (f"spread (p90 - p10) / median of the passes {100 * max(f[0]['warm_read_spread'], f[0]['bruteforce_spread']):.0f}% "
            f"at the start and {100 * max(f[1]['warm_read_spread'], f[1]['bruteforce_spread']):.0f}% at the end, "
            f"re-read {f[0]['warm_read_us']:.0f} then {f[1]['warm_read_us']:.0f} us")
    if bench.get("steal_fraction") is not None:
        note += f", {100 * bench['steal_fraction']:.1f}% of the CPU time stolen by the hypervisor"
    return note


def usable_cpus():
    # What nproc (and so bench/run.sh's thread count) sees: taskset and CPU limits included.
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count()


def search_section(out, data):
    lines = []
    benches = [load(out, f"{s}.bench.json") for s in ("holden27", "ue-locomotion")]
    counts = sorted({b["threads"]["count"] for b in benches if b and "threads" in b})
    threads = (f"one thread but for the throughput lines ({' and '.join(map(str, counts))} threads)"
               if counts else "one thread")
    passes = sorted({b.get("passes", 1) for b in benches if b})
    if passes and passes[-1] > 1:
        threads += (f", each query's time the median of {' and '.join(map(str, passes))} passes alternated with "
                    f"the other rows of its set")
    n_cpus = usable_cpus()
    if data in ("real", "generated"):
        clips, command = f"{data} clips", "`make bench` (or `bash bench/run.sh build`)"
    else:  # clips given through PM_MOCAP_DIR: `make bench` would measure others
        clips, command = f"the clips in {data}", f"`PM_MOCAP_DIR={shlex.quote(data)} bash bench/run.sh build`"
    lines.append(f"Measured on {cpu()} ({n_cpus} CPU{'' if n_cpus == 1 else 's'}), {threads}, {clips}; "
                 f"{command} reproduces every number here.\n")
    # `posematch bench` times a re-read of the matrix and a brute-force search in alternation at
    # the start and at the end of its run: both do the same work every time, so a wide spread, a
    # median that moved, or CPU time the hypervisor gave away marks a run whose absolute figures
    # are not to be trusted (ratios measured in the same run suffer less).
    busy = [f"{s}: {b['busy']}" for s, b in zip(("holden27", "ue-locomotion"), benches) if b and b.get("busy")]
    if busy:
        note = (f"**A busy run** ({'; '.join(busy)}): something else was using the machine, and this "
                f"run's absolute figures are less reliable than an idle machine's; rerun `make bench` when "
                f"it is idle.\n")
        lines.append(note)
        print("bench: " + note.replace("**", "").strip(), file=sys.stderr)
    found = False
    for schema in ("holden27", "ue-locomotion"):
        b, bench = load(out, f"{schema}.build.json"), load(out, f"{schema}.bench.json")
        if not b or not bench:
            continue
        found = True
        # Every timed run of every peer: (key, label, set, result), for the table rows and the lines.
        peer_runs = [(key, label, s, n) for key, label in PEERS
                     for s, n in each_run({s: load(out, f"{schema}.{key}_{s}.json") for s in ("noisy", "far")})]
        lines.append(f"### {schema}: {bench['searchable_poses']:,} searchable poses "
                     f"({bench['poses']:,} in all) x {bench['cardinality']}\n")
        lines.append(f"- build (one thread): {b['build_s']:.2f} s for the database after "
                     f"{b['read_s']:.2f} s of BVH parsing ({b['total_s']:.2f} s end to end); "
                     f"{bench['bytes'] / 1e6:.1f} MB, {bench['bytes_per_pose']:.0f} bytes per pose")
        lines.append(f"- warm re-read of the value matrix: {bench['warm_read_us']:.0f} us; "
                     f"brute force / re-read = {bench['bruteforce_vs_warm_read']:.2f} (brute force "
                     f"{bench['bruteforce_alternating_us']:.0f} us, the two timed in alternation; "
                     f"{floor_note(bench)})")
        if "exact_speedup_vs_bruteforce" not in bench:
            sys.exit(f"bench/report.py: {schema}: the database answers no exact searches (built with "
                     f"--modes): this report reads every mode's rows")
        lines.append(f"- exact vs brute force, median over the queries of both sets: "
                     f"**{bench['exact_speedup_vs_bruteforce']:.1f}x** ({bench['bruteforce_median_us_all_sets']:.1f} vs "
                     f"{bench['exact_median_us_all_sets']:.1f} us)")
        th = bench.get("threads")
        if th:
            rows = {m["mode"]: m for m in th["modes"]}
            parts = [f"{'brute force' if mode == 'bruteforce' else mode} ({m['queries']:,} queries) "
                     f"{m['qps_n']:,.0f} vs {m['qps_1']:,.0f} queries/s on one thread, "
                     + (f"**{m['scaling']:.2f}x**" if mode == "exact" else f"{m['scaling']:.2f}x")
                     for mode, m in rows.items()]
            lines.append(f"- throughput of {th['count']} threads searching the one database "
                         f"(`posematch bench DB.pmdb --threads {th['count']}`, noisy queries, medians of "
                         f"{th['rounds']} passes of each alternated; every answer the same as one thread's): "
                         + "; ".join(parts))
        # A work budget (max_nodes) trades exactness for a bounded walk: its rows are reported
        # beside the goals, not counted in them.
        exact_rows = [m for m in bench["modes"] if m["mode"] == "exact" and "max-nodes" not in m["query_set"]]
        all_exact = all(m["exact_fraction"] == 1.0 for m in exact_rows)
        per_set = {m["query_set"]: m["speedup_vs_bruteforce"] for m in exact_rows}
        lines.append("- goals: exact returns the brute-force optimum on "
                     + ("**every** query of every set, with and without dynamic weights" if all_exact else "NOT every query")
                     + f"; exact >= 10x brute force: noisy {per_set.get('noisy', 0):.1f}x, far {per_set.get('far', 0):.1f}x"
                     + f"; brute force <= 1.5x the re-read: {bench['bruteforce_vs_warm_read']:.2f}"
                     + f"; build < 3 s: {b['build_s']:.2f} s (+{b['read_s']:.2f} s parsing)\n")
        lines.append("| mode | query set | median us | p99 us | brute-force optimum | mean excess | worst | "
                     "speed vs brute force | exact costs | tree nodes | build ms | bytes |")
        lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for m in bench["modes"]:
            lines.append(f"| {m['mode']} | {m['query_set']} | {m['median_us']:.1f} | {m['p99_us']:.1f} | "
                         f"{100 * m['exact_fraction']:.1f}% | {100 * m['mean_excess']:.2f}% | "
                         f"{m['max_excess_ratio']:.2f}x | {m['speedup_vs_bruteforce']:.1f}x | "
                         f"{m['candidates']:.0f} | {m['nodes']:.0f} | {m['build_ms']:.0f} | {m['bytes'] / 1e6:.1f} MB |")
        for key, label, s, n in peer_runs:
            lines.append(f"| {label(n)} | {s} | "
                         f"{n[key]['median_us']:.1f} | {n[key]['p99_us']:.1f} | "
                         f"{100 * n[key]['exact_fraction']:.1f}% | {100 * n[key]['mean_excess']:.2f}% | | "
                         f"{n[f'{key}_speedup_vs_bruteforce']:.1f}x | | | {n[f'{key}_build_ms']:.0f} | |")
        lines.append("")
        plain = {m["query_set"]: m for m in exact_rows}
        for m in bench["modes"]:
            if "max-nodes" not in m["query_set"]:
                continue
            base, nodes = m["query_set"].split("+max-nodes=")
            full = plain.get(base)
            if full:
                lines.append(f"- {base}, exact with a budget of {nodes} tree nodes (`max_nodes`): p99 {m['p99_us']:.1f} "
                             f"against {full['p99_us']:.1f} us without one, median {m['median_us']:.1f} against "
                             f"{full['median_us']:.1f}; the optimum on {100 * m['exact_fraction']:.1f}% of the queries "
                             f"(proven on {100 * m['proven_fraction']:.1f}%), mean excess {100 * m['mean_excess']:.3f}%")
        for key, label, s, n in peer_runs:
            lines.append(f"- {s}: {faster(n[f'exact_speedup_vs_{key}'], 'posematch exact', PEER_NAMES[key](n))} "
                         f"(median and p99: posematch exact {n['exact']['median_us']:.1f} and "
                         f"{n['exact']['p99_us']:.1f} us, {PEER_NAMES[key](n)} {n[key]['median_us']:.1f} and "
                         f"{n[key]['p99_us']:.1f} us; same run)")
        lines.append("")
    return "\n".join(lines) + "\n" if found else None


def blend_section(out):
    d = load(out, "blend.json")
    if not d:
        return None
    lines = []
    lines.append(f"Measured on {cpu()} by `bench_blend --json` ({d['joints']} joints; every figure is the median "
                 f"of {d['rounds']:,} interleaved batches of {d['batch']} calls, one run); `make bench` (or "
                 f"`bash bench/run.sh build`) regenerates this table.\n")
    lines.append("| case | ns | ratio to scalar baseline | ratio to auto-vectorised baseline | goal | "
                 "ozz-animation 0.16 |")
    lines.append("|---|---:|---:|---:|---|---|")
    lines.append(f"| baseline: {d['baseline']} 3 x {d['joints']} nlerp | {d['baseline_ns']:.0f} | 1.000 | "
                 f"{d['baseline_ns'] / d['baseline_autovec_ns']:.2f} | – | – |")
    for r in d["results"]:
        ratio = f"{r['ratio']:.3f}"
        if "goal_ratio" in r:
            goal, ratio = f"{'<' if r.get('goal_strict') else '≤'} {r['goal_ratio']:.2f}", f"**{ratio}**"
        elif "goal_ns" in r:
            goal = f"< {r['goal_ns']:.0f} ns"
        else:
            goal = None
        goal = f"{goal} — {'met' if r['pass'] else '**missed**'}" if goal else "–"
        ozz = "–" if r["ozz_0_16"] == "-" else r["ozz_0_16"]
        lines.append(f"| {r['name']} | {r['ns']:.0f} | {ratio} | {r['ratio_autovec']:.2f} | {goal} | {ozz} |")
    c = d["characters"]
    lines.append("")
    lines.append(f"- **{c['count']:,} characters** (a three-sample blend space + local-to-model each): "
                 f"**{c['frame_ms']:.2f} ms per frame**, {c['per_character_ns']:.0f} ns per character "
                 f"(median of {c['frames']} frames)")
    lookup = d.get("lookup")
    if lookup:
        lines.append("")
        lines.append(f"Blend-space lookup (`pm_blend_space_weights_at`: finding the cell, or the nearest hull "
                     f"element outside the hull, and its weights), ns per query, median of {lookup['rounds']} passes "
                     f"over {lookup['queries']:,} queries; baselines from the same run: the layout's 16-sample space "
                     f"and a scan of every cell and hull element giving the same answers.\n")
        lines.append("| layout | samples | ns per query | ratio to 16 samples | scan of every cell, ns | speed-up |")
        lines.append("|---|---:|---:|---:|---:|---:|")
        for r in lookup["results"]:
            lines.append(f"| {r['layout']} | {r['samples']:,} | {r['ns']:.0f} | {r['ratio_to_16']:.2f} | "
                         f"{r['brute_ns']:,.0f} | {r['speedup_vs_brute']:.1f}x |")
    return "\n".join(lines) + "\n"


def replace_section(text, markers, section):
    """TEXT with SECTION between the marker lines, or None when TEXT has no BEGIN line followed by
    an END line. A marker counts only as a line of its own: prose that quotes one is left alone."""
    begin, end = markers
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.rstrip("\r\n") == begin]
    if len(starts) > 1:
        raise ValueError(f"{len(starts)} '{begin}' lines: which one is meant?")
    if not starts:
        return None
    stop = next((i for i in range(starts[0] + 1, len(lines)) if lines[i].rstrip("\r\n") == end), None)
    if stop is None:
        return None
    # The BEGIN line ends in a newline: an END line follows it.
    return "".join(lines[:starts[0] + 1]) + section + "".join(lines[stop:])


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: bench/report.py OUT_DIR DATA [DOC]")
    out, data = sys.argv[1], sys.argv[2]
    doc = sys.argv[3] if len(sys.argv) > 3 else None
    if not os.path.isdir(out):
        sys.exit(f"bench/report.py: {out}: no such directory (bench/run.sh writes its results there)")
    text = None
    if doc:
        try:
            with open(doc) as f:
                text = f.read()
        except OSError as e:
            sys.exit(f"bench/report.py: cannot read {doc}: {e.strerror}")
    sections = []
    for name, markers, make in (("search", SEARCH_MARKERS, lambda: search_section(out, data)),
                                ("blend", BLEND_MARKERS, lambda: blend_section(out))):
        try:
            section = make()
        except (KeyError, IndexError, TypeError) as e:
            sys.exit(f"bench/report.py: the {name} results in {out} lack a field or have one of another shape "
                     f"({type(e).__name__}: {e}): written by another version of the benchmarks? rerun make bench")
        if section is not None:
            sections.append((name, markers, section))
    if not sections:
        sys.exit(f"bench/report.py: {out}: no results (neither *.build.json with *.bench.json nor blend.json)")
    for name, _, section in sections:
        with open(os.path.join(out, f"{name}.md"), "w") as f:
            f.write(section)
        print(section)
    if text is None:
        return
    new = text
    for name, markers, section in sections:
        try:
            replaced = replace_section(new, markers, section)
        except ValueError as e:
            sys.exit(f"bench/report.py: {doc} has {e}")
        if replaced is None:
            print(f"bench: {doc} has no '{markers[0]}' ... '{markers[1]}' pair: its {name} results are not "
                  f"written there", file=sys.stderr)
        else:
            new = replaced
    if new != text:
        # Through a temporary file beside it, so that a failed write leaves the document whole.
        tmp = f"{doc}.tmp{os.getpid()}"
        try:
            with open(tmp, "w") as f:
                f.write(new)
            os.replace(tmp, doc)
        except OSError as e:
            if os.path.exists(tmp):
                os.remove(tmp)
            sys.exit(f"bench/report.py: cannot write {doc}: {e.strerror}")
        print("bench: updated", doc, file=sys.stderr)


if __name__ == "__main__":
    main()
