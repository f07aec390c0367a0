#!/usr/bin/env python3
"""The tune benchmark's "short runs" mode: mmgp tune as a new user (a platform calibrated here, no application
profile) on the groups recorded with short and full runs (validation/tune/groups/*-work.csv, written by
record_work.py), with full runs only (today's new user) and with --work SHORT:FULL, on the variants a-d of
bench.py, --seeds replays each.

    validation/tune/bench_work.py                 # all groups, 100 seeds: work/report.txt, work/results.json
    validation/tune/bench_work.py --seeds 20

Ground truth: the median of every recorded full run of a configuration (censored ones at their bound); exhaustive
trial's cost is the sum of those medians (machine seconds). Exhaustive trial's P(regret <= 3 %) is computed
exactly over every draw of one full run per configuration (variant d: each configuration's slowest run). Machine
time counts every run the tune started, short and stopped ones included.
"""
import argparse
import concurrent.futures
import csv
import json
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402

TOL = bench.TOL
OUT = os.path.join(HERE, "work")


def read_group(path):
    """(short work, full work, rows): rows as dicts m, p, nodes, policy, work, wall_s, censored, bound_s, rep."""
    rows = list(csv.DictReader(open(path)))
    works = sorted({int(r["work"]) for r in rows})
    if len(works) != 2:
        raise SystemExit(f"bench_work: {path}: expected two work values, found {works}")
    seen = {}
    for r in rows:
        r["wall_s"] = r.pop("time_s")
        k = (r["m"], r["p"], r["nodes"], r["policy"], r["work"])
        r["rep"] = str(seen.get(k, 0))
        seen[k] = seen.get(k, 0) + 1
    return works[0], works[1], rows


def variant(rows, v, full_work):
    """bench.variant_rows on the full runs; the short runs follow: (b) their deviations shrunk alike, (c) the second
    best's short runs scaled by the factor of its full ones."""
    full = [r for r in rows if int(r["work"]) == full_work]
    short = [r for r in rows if int(r["work"]) != full_work]
    if v in ("a", "d"):
        return rows
    new_full = bench.variant_rows(full, v)
    if v == "b":
        new_short = bench.variant_rows(short, "b")
    else:
        truth = bench.truth_of(bench.reps_of(full))
        best, second = sorted(truth, key=truth.get)[:2]
        factor = min(1.0, 1.005 * truth[best] / truth[second])
        new_short = []
        for r in short:
            r = dict(r)
            if bench.key(r["m"], r["p"], bench.nodes_of(r), r["policy"]) == second:
                r["wall_s"] = f"{float(r['wall_s']) * factor:.6g}"
                if r["bound_s"]:
                    r["bound_s"] = f"{float(r['bound_s']) * factor:.6g}"
            new_short.append(r)
    return new_full + new_short


def write_replay(path, rows):
    with open(path, "w") as f:
        f.write("m,p,nodes,policy,units,work,time_s,censored,bound_s\n")
        for r in rows:
            f.write(f"{r['m']},{r['p']},{bench.nodes_of(r)},{r['policy']},1,{r['work']},{r['wall_s']},{r['censored']},"
                    f"{r['bound_s']}\n")


def exact_exhaustive_p(reps, truth, slowest_first):
    """P(the fastest of one run per configuration is within the tolerance of the best), exactly: each configuration's
    run drawn uniformly from its recorded ones (slowest_first: its slowest); ties go to neither."""
    draws = {k: ([max(v)] if slowest_first else v) for k, v in reps.items()}
    best = min(truth.values())
    p = 0.0
    for k, vs in draws.items():
        if truth[k] > best * (1 + TOL) + 1e-12:
            continue
        for t, cens in vs:
            if cens:
                continue
            q = 1.0 / len(vs)
            for j, ws in draws.items():
                if j != k:
                    q *= sum(1 for (u, c) in ws if c or u > t) / len(ws)
            p += q
    return p


def tune_once(mmgp, platform, path, seed, extra):
    """One replayed tune: bench.run_tune's record, with its short runs."""
    cmd = [mmgp, "tune", platform, "--replay", path, "--seed", str(seed), "--json", "--quiet"] + extra
    p = bench.subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"bench_work: {' '.join(cmd)} failed: {p.stderr.strip()}")
    j = json.loads(p.stdout)
    c = j["chosen"]
    return {"chosen": bench.key(c["m"], c["p"], c["nodes"], c["policy"]) if c else None, "machine_s": j["machine_s"],
            "runs": j["runs"], "short_runs": (j.get("short_runs") or {}).get("short_runs", 0),
            "ranks": (j.get("short_runs") or {}).get("ranks", True)}


def bench_group(pool, args, path):
    name = os.path.basename(path)[:-len("-work.csv")]
    short_work, full_work, rows = read_group(path)
    out = {}
    for v in bench.VARIANTS:
        vrows = variant(rows, v, full_work)
        full = [r for r in vrows if int(r["work"]) == full_work]
        reps = bench.reps_of(full)
        truth = bench.truth_of(reps)
        exh_cost = bench.exhaustive_cost(truth)
        with tempfile.TemporaryDirectory() as d:
            replay = os.path.join(d, f"{name}-{v}.csv")
            write_replay(replay, vrows)
            platform, space = bench.new_user_args(args.platform, full, 1)
            extra = space + (["--replay-first", "slowest"] if v == "d" else [])
            seeds = range(1, args.seeds + 1)
            mode = {}
            for label, more in (("full runs", []), ("short runs", ["--work", f"{short_work}:{full_work}"])):
                res = list(pool.map(lambda sd: tune_once(args.mmgp, platform, replay, sd, extra + more), seeds))
                s = bench.summary(res, truth, exh_cost)
                s["median_short_runs"] = statistics.median(r["short_runs"] for r in res)
                s["max_time_fraction"] = max(r["machine_s"] for r in res) / exh_cost
                s["ranks"] = sum(r["ranks"] for r in res) / len(res)
                mode[label] = s
        out[v] = {"exhaustive_p": exact_exhaustive_p(reps, truth, v == "d"), "configurations": len(truth),
                  "work": f"{short_work}:{full_work}", **mode}
    return name, out


def report(results, seeds):
    lines = [f"mmgp tune as a new user with full runs only and with --work SHORT:FULL (short runs), {seeds} seeds "
             "(validation/tune/bench_work.py)",
             "exh P: exhaustive trial's P(regret <= 3 %), exact; P, time, runs: mmgp tune's P(regret <= 3 %), median "
             "machine time",
             "(every run, short and stopped ones included) as a fraction of exhaustive trial's, median runs; short: "
             "median short runs", ""]
    lines.append(f"{'group':<22} {'var':<3} {'exh P':>5} | {'full runs: P':>12} {'time':>6} {'runs':>5} | "
                 f"{'short runs: P':>13} {'time':>6} {'runs':>5} {'short':>5}")
    for name, by_v in results.items():
        for v, x in by_v.items():
            f, s = x["full runs"], x["short runs"]
            lines.append(f"{name:<22} {v:<3} {x['exhaustive_p']:>5.2f} | {f['p_within_3pct']:>12.2f} "
                         f"{100 * f['median_time_fraction']:>5.1f}% {f['median_runs']:>5g} | {s['p_within_3pct']:>13.2f} "
                         f"{100 * s['median_time_fraction']:>5.1f}% {s['median_runs']:>5g} {s['median_short_runs']:>5g}")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mmgp", default=os.path.join(bench.ROOT, "build", "cli", "mmgp"))
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--platform", default=os.path.join(HERE, "host.json"))
    args = ap.parse_args()
    groups = sorted(os.path.join(HERE, "groups", f) for f in os.listdir(os.path.join(HERE, "groups"))
                    if f.endswith("-work.csv"))
    results = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for path in groups:
            name, out = bench_group(pool, args, path)
            results[name] = out
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
        f.write("\n")
    text = report(results, args.seeds)
    with open(os.path.join(OUT, "report.txt"), "w") as f:
        f.write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
