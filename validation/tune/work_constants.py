#!/usr/bin/env python3
"""When a tune with short runs stops exploring in full: short.explore_pairs chosen leave one group out on the groups
recorded with short runs.

    python3 validation/tune/work_constants.py [--seeds 40] [--jobs 2]     # about 10 s here

Before the model is fitted (fit.min_configurations configurations measured in full), a new user's tune explores:
it runs in full the configurations the screen ranks first. With short runs it may stop exploring sooner, once
short.explore_pairs configurations have run both ways while the short runs rank, and judge the others by their
projections (each with the carry-over line's own uncertainty at its short time). This command replays the
groups of bench_work.py (validation/tune/groups/*-work.csv) with --work and each candidate (0: explore until the
model is fitted) in the variants a, b, c, d on seeds 1001.. (not the benchmark's), and scores each with
constants.py's loss (machine time as a fraction of exhaustive trial's plus 10 x the P shortfall below
min(0.9, max(exhaustive P, the base's P)), plus 10 x machine time above exhaustive trial's where that reaches
P >= 0.9). A candidate replaces 0 only when it has the lowest loss and lowers it by more than twice the standard
error of the paired difference over the groups' variants; leave one group out reports each group's figures with
the candidate chosen on the others. Writes work_constants/report.txt and work_constants/results.json.
"""
import concurrent.futures
import os
import statistics
import sys
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402
import bench_work  # noqa: E402  (the groups with short runs, their variants and replays)
import constants  # noqa: E402  (the loss and the choice)

CANDIDATES = ["0", "2", "3", "4"]  # the first: the base, exploring until the model is fitted
FIRST_SEED = 1001
MODE = "short runs"


def measure(pool, a, path, candidate):
    """One group's figures with one candidate, per variant, in constants.py's form."""
    args = SimpleNamespace(mmgp=a.mmgp, platform=a.platform, seeds=a.seeds, first_seed=FIRST_SEED,
                           constant=[f"short.explore_pairs={candidate}"], modes=[MODE])
    _, out = bench_work.bench_group(pool, args, path)
    return {v: {"p": x[MODE]["p_within_3pct"], "time_fraction": x[MODE]["median_time_fraction"],
                "runs": x[MODE]["median_runs"], "exhaustive_p": x["exhaustive_p"]} for v, x in out.items()}


def cell(x):
    return f"{x['p']:.2f}/{100 * x['time_fraction']:5.1f}%"


def report(results, names, seeds):
    base = CANDIDATES[0]
    overall, best, diff, se = constants.paired_choice(results, names, CANDIDATES, base)
    lines = constants.report_header("when a tune with short runs stops exploring in full, short.explore_pairs chosen "
                                    "leave one group out", "work_constants.py", seeds,
                                    "the variants a, b, c, d with short runs (--work); figures P<=3% / median machine "
                                    "time (fraction of exhaustive trial's)")
    lines += ["candidate (loss on all groups):"]
    lines += [f"  {constants.mean_loss(results, names, k, base):.3f}  short.explore_pairs={k}" +
              ("  (explore until the model is fitted)" if k == base else "") for k in CANDIDATES]
    lines += ["", f"lowest loss: short.explore_pairs={best}, {diff:+.3f} against {base} (standard error {se:.3f}, "
              "paired over the groups' variants)",
              f"chosen on all groups (the lowest when more than two standard errors below {base}, else {base}): "
              f"short.explore_pairs={overall}", "",
              "left-out group: the candidate chosen on the others, and the group's own figures with it, against "
              f"{base}",
              f"{'group':<22} {'chosen':>6} {'loss':>5} {'base':>5}  " +
              "  ".join(f"{'base ' + v:>13} {'chosen ' + v:>13}" for v in bench.VARIANTS)]
    held, before = [], []
    for n, k in constants.left_out_choices(results, names, CANDIDATES, base).items():
        held.append(constants.mean_loss(results, [n], k, base))
        before.append(constants.mean_loss(results, [n], base, base))
        lines.append(f"{n:<22} {k:>6} {held[-1]:>5.2f} {before[-1]:>5.2f}  " +
                     "  ".join(f"{cell(results[n][base][v]):>13} {cell(results[n][k][v]):>13}" for v in bench.VARIANTS))
    lines.append(f"mean loss on the left-out groups: {statistics.mean(held):.3f} with the candidate chosen without them, "
                 f"{statistics.mean(before):.3f} with {base}")
    return lines, overall


def main():
    a = bench_work.replay_arguments(__doc__.split("\n")[0], 40).parse_args()
    paths = bench_work.work_groups()
    names = [os.path.basename(p)[:-len("-work.csv")] for p in paths]
    results = {}
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        for name, path in zip(names, paths):
            results[name] = {k: measure(pool, a, path, k) for k in CANDIDATES}
    seeds = list(range(FIRST_SEED, FIRST_SEED + a.seeds))
    lines, overall = report(results, names, seeds)
    constants.write_report("work_constants", lines,
                           {"seeds": seeds, "candidates": CANDIDATES, "chosen": overall, "results": results})


if __name__ == "__main__":
    main()
