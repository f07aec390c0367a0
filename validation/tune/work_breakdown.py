#!/usr/bin/env python3
"""Where a new user's tune with short runs (--work) spends its machine time: the replays of bench_work.py (the
same groups, variants, platform and seeds), each with a journal, its runs sorted by stage into
  screen   short runs (of them, those stopped at their bound);
  explore  full runs while the tune explores (too few configurations measured in full for the model), of them
           those of configurations more than 10 % slower than the best (ground truth: the median of every
           recorded full run);
  decide   every other full run: repeats of the chosen and its rivals until the tune is sure or hits its cost cap;
and, across stages, the full runs of the two fastest configurations (a near tie costs most there); each as a median
over the seeds of its fraction of exhaustive trial's cost. (With progress lines as well, bench_work.py's report
finds the same P, times and runs on these groups.)

    validation/tune/work_breakdown.py             # every group and variant, 100 seeds: work/breakdown.txt
    validation/tune/work_breakdown.py --group validation/tune/groups/gromacs-water3nm-10k-work.csv --variant a \
        --seeds 40 --out /tmp/breakdown.txt
"""
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402
import common  # noqa: E402  (validation/common.py, on the path bench puts it on: the report written atomically)
import bench_work  # noqa: E402

STAGES = ["screen", "screen stopped", "explore", "explore >10 % slower", "decide", "two fastest, full"]
SLOWER = 1.10


def stages_of(journal, truth):
    """Machine seconds per stage of one replayed tune's journal, and how many full runs the two fastest had."""
    best = min(truth.values())
    fastest = set(sorted(truth, key=truth.get)[:2])
    out = dict.fromkeys(STAGES, 0.0)
    fastest_runs = 0
    with open(journal) as f:
        for line in f:
            run = json.loads(line)
            if "wall_s" not in run:
                continue  # the header
            seconds = run["wall_s"] * run["nodes"]
            key = bench.key(run["m"], run["p"], run["nodes"], run["policy"])
            if not run["short"] and key in fastest:
                out["two fastest, full"] += seconds
                fastest_runs += 1
            if run["short"]:
                out["screen"] += seconds
                if run["outcome"] == "censored":
                    out["screen stopped"] += seconds
            elif run["why"].startswith("explore"):
                out["explore"] += seconds
                if truth[key] > SLOWER * best:
                    out["explore >10 % slower"] += seconds
            else:
                out["decide"] += seconds
    return out, fastest_runs


def tune_stages(mmgp, platform, replay, seed, extra, truth, folder):
    journal = os.path.join(folder, f"journal-{seed}.jsonl")
    cmd = [mmgp, "tune", platform, "--replay", replay, "--seed", str(seed), "--json", "--quiet",
           "--journal", journal] + extra
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"work_breakdown: {' '.join(cmd)} failed: {p.stderr.strip()}")
    total = json.loads(p.stdout)["machine_s"]
    out, fastest_runs = stages_of(journal, truth)
    os.remove(journal)
    return total, out, fastest_runs


def group_rows(pool, args, path, variants):
    name = os.path.basename(path)[:-len("-work.csv")]
    short_work, full_work, rows = bench_work.read_group(path)
    lines = []
    for v in variants:
        vrows = bench_work.variant(rows, v, full_work)
        full = [r for r in vrows if int(r["work"]) == full_work]
        truth = bench.truth_of(bench.reps_of(full))
        exh_cost = bench.exhaustive_cost(truth)
        short_truth = bench.truth_of(bench.reps_of([r for r in vrows if int(r["work"]) == short_work]))
        best = min(truth, key=truth.get)
        modes = [("short runs", ["--work", f"{short_work}:{full_work}"])]
        with tempfile.TemporaryDirectory() as d:
            replay = os.path.join(d, "replay.csv")
            bench_work.write_replay(replay, vrows)
            platform, space = bench.new_user_args(args.platform, full, 1)
            extra = space + (["--replay-first", "slowest"] if v == "d" else [])
            for _, more in modes:
                res = list(pool.map(lambda sd: tune_stages(args.mmgp, platform, replay, sd, extra + more, truth, d),
                                    range(1, args.seeds + 1)))
                median = {s: statistics.median(r[1][s] for r in res) / exh_cost for s in STAGES}
                time = statistics.median(r[0] for r in res) / exh_cost
                fastest_runs = statistics.median(r[2] for r in res)
                lines.append(f"{name:<21} {v:<3} {100 * short_truth[best] / truth[best]:>10.0f}% "
                             f"{100 * time:>5.0f}%" +
                             "".join(f" {100 * median[s]:>{max(len(s), 6)}.0f}%" for s in STAGES) +
                             f" {fastest_runs:>5g}")
    return lines


def main():
    ap = bench_work.replay_arguments(__doc__.split("\n")[0], 100)
    ap.add_argument("--group", help="one group's -work.csv (default: every one in groups/)")
    ap.add_argument("--variant", choices=list(bench.VARIANTS), help="one variant (default: all)")
    ap.add_argument("--out", default=os.path.join(HERE, "work", "breakdown.txt"))
    args = ap.parse_args()
    groups = [args.group] if args.group else bench_work.work_groups()
    variants = [args.variant] if args.variant else list(bench.VARIANTS)
    lines = [f"Where mmgp tune's machine time goes with short runs (--work), {args.seeds} seeds (validation/tune/work_breakdown.py)",
             "Each column: the median over the seeds of its machine seconds as a fraction of exhaustive trial's cost "
             "(the sum of the",
             "full runs' medians); the stages' medians need not add up to the total's. Stages: screen, the short runs "
             "(screen stopped:",
             "those stopped at their bound); explore, full runs before the model is fitted (of them, configurations "
             "more than 10 %",
"slower than the best); decide, the other full runs; two fastest, full: the full runs of the two fastest configurations",
             "in any stage (runs: how many). short/full: the best configuration's short run against its full",
             "run (medians).", "",
             f"{'group':<21} {'var':<3} {'short/full':>11} {'total':>6}" + "".join(f" {s:>{max(len(s), 6) + 1}}" for s in STAGES) + "  runs"]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for path in groups:
            lines += group_rows(pool, args, path, variants)
    text = "\n".join(lines) + "\n"
    common.write_if_changed(args.out, text)
    print(text, end="")


if __name__ == "__main__":
    main()
