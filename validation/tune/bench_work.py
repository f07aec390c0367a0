#!/usr/bin/env python3
"""The tune benchmark's modes from less than whole runs: mmgp tune as a new user (a platform calibrated here, no
application profile) on the groups recorded with short and full runs and their progress timelines
(validation/tune/groups/*-work.csv, written by record_work.py), on the variants a-d of bench.py, --seeds replays
each, in four modes: full runs only (today's new user), "short runs" (--work SHORT:FULL), "progress"
(--progress-total N: each full run's recorded timeline stops it as a live run would be; N is the count the
group's finished full runs reach) and "both".

    validation/tune/bench_work.py                 # all groups, 100 seeds: work/report.txt, work/results.json
    validation/tune/bench_work.py --seeds 20
    validation/tune/bench_work.py --constant progress.chosen_z=1.645 --out work-progress-chosen
                                                  # a tuner constant in every mode: that folder's report

Ground truth: the median of every recorded full run of a configuration (censored ones at their bound); exhaustive
trial's cost is the sum of those medians (machine seconds). Exhaustive trial's P(regret <= 3 %) is computed
exactly over every draw of one full run per configuration (variant d: each configuration's slowest run). Machine
time counts every run the tune started, short and stopped ones included.
"""
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
        r["orig_wall_s"] = r["wall_s"]
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
        f.write("m,p,nodes,policy,units,work,time_s,censored,bound_s,progress\n")
        for r in rows:
            f.write(f"{r['m']},{r['p']},{bench.nodes_of(r)},{r['policy']},1,{r['work']},{r['wall_s']},{r['censored']},"
                    f"{r['bound_s']},{scaled_timeline(r)}\n")


def scaled_timeline(r):
    """The row's timeline, its times scaled as variant_rows scaled its time (the (b) and (c) variants)."""
    text = r.get("progress") or ""
    if not text or "orig_wall_s" not in r or r["censored"] == "1":
        return text
    factor = float(r["wall_s"]) / float(r["orig_wall_s"])
    return ";".join(f"{float(t) * factor:.4f}:{c}" for t, c in (x.split(":") for x in text.split(";")))


def progress_total(rows, full_work):
    """The count the group's finished full runs reach (0: no timelines)."""
    ends = [float(r["progress"].rsplit(":", 1)[1]) for r in rows
            if int(r["work"]) == full_work and r["censored"] != "1" and r.get("progress")]
    return max(ends) if ends else 0


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
            for c in args.constant:
                extra += ["--constant", c]
            seeds = range(args.first_seed, args.first_seed + args.seeds)
            mode = {}
            total = progress_total(rows, full_work)
            work = ["--work", f"{short_work}:{full_work}"]
            progress = ["--progress-total", f"{total:g}"] if total > 0 else None
            modes = [("full runs", []), ("short runs", work)]
            if progress:
                modes += [("progress", progress), ("both", work + progress)]
            if getattr(args, "modes", None):  # a caller's subset (work_constants.py)
                modes = [m for m in modes if m[0] in args.modes]
            for label, more in modes:
                res = list(pool.map(lambda sd: tune_once(args.mmgp, platform, replay, sd, extra + more), seeds))
                s = bench.summary(res, truth, exh_cost)
                s["median_short_runs"] = statistics.median(r["short_runs"] for r in res)
                s["max_time_fraction"] = max(r["machine_s"] for r in res) / exh_cost
                s["ranks"] = sum(r["ranks"] for r in res) / len(res)
                mode[label] = s
        out[v] = {"exhaustive_p": bench.exact_exhaustive_p(reps, truth, v == "d"), "configurations": len(truth),
                  "work": f"{short_work}:{full_work}", "progress_total": progress_total(rows, full_work), **mode}
    return name, out


MODES = ["full runs", "short runs", "progress", "both"]


def work_groups():
    """The groups recorded with short and full runs: validation/tune/groups/*-work.csv, sorted."""
    folder = os.path.join(HERE, "groups")
    return sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith("-work.csv"))


def replay_arguments(description, seeds):
    """The options every replay of these groups takes (bench_work.py, work_breakdown.py, work_constants.py):
    bench.replay_options' and the new user's platform."""
    ap = bench.replay_options(description, seeds)
    ap.add_argument("--platform", default=os.path.join(HERE, "host.json"))
    return ap


def report(results, seeds, constants=(), first_seed=1):
    with_constants = "".join(f" --constant {c}" for c in constants)
    from_seed = f" --first-seed {first_seed}" if first_seed != 1 else ""
    lines = [f"mmgp tune as a new user from less than whole runs, {seeds} seeds (validation/tune/bench_work.py"
             f"{with_constants}{from_seed})",
             "exh P: exhaustive trial's P(regret <= 3 %), exact. Per mode (full runs only; --work, short runs; "
             "--progress-total, progress lines;",
             "both): P, mmgp tune's P(regret <= 3 %); time, its median machine time (every run, short and stopped "
             "ones included) as a",
             "fraction of exhaustive trial's (the sum of the full runs' medians); max, the largest; runs, median runs "
             "(short, of them short).",
             "Targets: P >= exh P - 0.03 in every row; time <= 35 % with short runs, <= 60 % with progress lines, "
             "never above 100 %.", ""]
    width = max([17] + [len(name) for name in results])
    head = f"{'group':<{width}} {'var':<3} {'exh P':>5}"
    for m in MODES:
        head += f" | {m:>10}: P  time   max runs"
    lines.append(head)
    for name, by_v in results.items():
        for v, x in by_v.items():
            row = f"{name:<{width}} {v:<3} {x['exhaustive_p']:>5.2f}"
            for m in MODES:
                s = x.get(m)
                if s is None:
                    row += f" | {'-':>13} {'-':>5} {'-':>5} {'-':>4}"
                    continue
                runs = f"{s['median_runs']:g}" + (f"({s['median_short_runs']:g})" if s["median_short_runs"] else "")
                row += (f" | {s['p_within_3pct']:>13.2f} {100 * s['median_time_fraction']:>4.0f}% "
                        f"{100 * s['max_time_fraction']:>4.0f}% {runs:>4}")
            lines.append(row)
    return "\n".join(lines) + "\n"


def main():
    ap = replay_arguments(__doc__.split("\n")[0], 100)
    ap.add_argument("--first-seed", type=int, default=1, help="the replays' seeds start here (default 1)")
    ap.add_argument("--constant", action="append", default=[], metavar="NAME=VALUE",
                    help="a tuner constant (mmgp tune --constant) in every mode and replay")
    ap.add_argument("--out", default=OUT, help="the folder of report.txt and results.json (default: work)")
    args = ap.parse_args()
    groups = work_groups()
    results = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for path in groups:
            name, out = bench_group(pool, args, path)
            results[name] = out
    out = os.path.join(HERE, args.out)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
        f.write("\n")
    text = report(results, args.seeds, args.constant, args.first_seed)
    with open(os.path.join(out, "report.txt"), "w") as f:
        f.write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
