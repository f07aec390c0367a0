#!/usr/bin/env python3
"""Where a new user's tune with short runs spends its machine time, on one group of bench_work.py: the screen
(short runs), the full runs of the two fastest configurations (a near tie costs most there), and the other full
runs, each as a fraction of exhaustive trial's cost and in runs, medians over --seeds replays (the journal of each says which
run was which).

    validation/tune/work_breakdown.py validation/tune/groups/gromacs-water3nm-10k-work.csv --variant a --seeds 40
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402
import bench_work  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("group")
    ap.add_argument("--variant", default="a", choices=list(bench.VARIANTS))
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--mmgp", default=os.path.join(bench.ROOT, "build", "cli", "mmgp"))
    ap.add_argument("--platform", default=os.path.join(HERE, "host.json"))
    a = ap.parse_args()
    short_work, full_work, rows = bench_work.read_group(a.group)
    vrows = bench_work.variant(rows, a.variant, full_work)
    full = [r for r in vrows if int(r["work"]) == full_work]
    truth = bench.truth_of(bench.reps_of(full))
    exh = bench.exhaustive_cost(truth)
    fastest = set(sorted(truth, key=truth.get)[:2])
    parts = {"screen": [], "two fastest, full": [], "others, full": [], "all": []}
    counts = {k: [] for k in parts}
    with tempfile.TemporaryDirectory() as d:
        replay = os.path.join(d, "replay.csv")
        bench_work.write_replay(replay, vrows)
        platform, space = bench.new_user_args(a.platform, full, 1)
        extra = space + (["--replay-first", "slowest"] if a.variant == "d" else [])
        for seed in range(1, a.seeds + 1):
            journal = os.path.join(d, f"j{seed}.jsonl")
            cmd = [a.mmgp, "tune", platform, "--replay", replay, "--seed", str(seed), "--quiet", "--journal", journal,
                   "--work", f"{short_work}:{full_work}"] + extra
            subprocess.run(cmd, check=True, capture_output=True)
            spent = {k: 0.0 for k in parts}
            runs = {k: 0 for k in parts}
            for line in open(journal):
                run = json.loads(line)
                if "run" not in run:
                    continue
                t = run["wall_s"] * run["nodes"]
                key = bench.key(run["m"], run["p"], run["nodes"], run["policy"])
                part = "screen" if run.get("short") else "two fastest, full" if key in fastest else "others, full"
                for k in (part, "all"):
                    spent[k] += t
                    runs[k] += 1
            for k in parts:
                parts[k].append(spent[k] / exh)
                counts[k].append(runs[k])
    print(f"{os.path.basename(a.group)} variant {a.variant}, {a.seeds} seeds, exhaustive trial {exh:.1f} s; "
          f"two fastest: {', '.join(str(k) for k in sorted(fastest))}")
    for k, v in parts.items():
        print(f"  {k:<18} median {100 * statistics.median(v):5.1f} %, {statistics.median(counts[k]):g} runs")


if __name__ == "__main__":
    main()
