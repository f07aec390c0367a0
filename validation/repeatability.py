#!/usr/bin/env python3
"""How well does this machine repeat a measurement? Compares two sweeps' runs.csv of the same configurations
(the same program and inputs, measured at different times) the way the report compares a prediction with a
measurement: each configuration's case is the median of its quiet repetitions (report.aggregate, RAxML
duplicates pooled; quiet = other processes below 0.25 core, from runs.csv alone: a data set's machine.json
`quiet_repetitions`, which the report also honours, is not read), and the "error" of sweep B against sweep
A is B/A - 1. The mean |B/A - 1| is the floor
below which no model can be shown to be right on this machine.

    validation/repeatability.py OLD/runs.csv NEW/runs.csv            # e.g. an older commit's runs.csv, via git show
    validation/repeatability.py --kind raxml OLD.csv validation/raxml/runs.csv
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402
import raxml_fit  # noqa: E402


def cases(path, kind):
    rows = report.read_runs(path)
    if kind == "raxml":
        rows = raxml_fit.pool_same_processes(rows)
    return {tuple(c["key"].values()): c
            for c in report.aggregate(rows, ["input", "units", "m", "p", "policy"], report.common.is_quiet)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", help="runs.csv of the earlier sweep")
    ap.add_argument("b", help="runs.csv of the later sweep")
    ap.add_argument("--kind", choices=["offload", "raxml"], default="offload")
    ap.add_argument("--worst", type=int, default=10, help="list this many configurations that differ most")
    a = ap.parse_args()
    for path in (a.a, a.b):
        if not os.path.exists(path):
            sys.exit(f"repeatability: {path}: no such file")
    A, B = cases(a.a, a.kind), cases(a.b, a.kind)
    both = sorted(k for k in A if k in B and not A[k]["censored"] and not B[k]["censored"])
    if not both:
        sys.exit("repeatability: no configuration is uncensored in both sweeps")
    diff = {k: 100.0 * (B[k]["measured_s"] / A[k]["measured_s"] - 1.0) for k in both}
    ab = [abs(v) for v in diff.values()]
    cens = sum(1 for k in A if k in B and A[k]["censored"] != B[k]["censored"])
    print(f"{len(both)} configurations uncensored in both sweeps ({len(A)} in A, {len(B)} in B; "
          f"{cens} censored in one only)")
    print(f"|B/A - 1|: mean {statistics.mean(ab):.1f} %, median {statistics.median(ab):.1f} %, max {max(ab):.1f} %; "
          f"within 5 %: {sum(1 for x in ab if x <= 5)}, within 15 %: {sum(1 for x in ab if x <= 15)}")
    for k in sorted(both, key=lambda k: -abs(diff[k]))[:a.worst]:
        print(f"  {' '.join(str(x) for x in k):28s} A {A[k]['measured_s']:.4f} s ({A[k]['used']} runs)  "
              f"B {B[k]['measured_s']:.4f} s ({B[k]['used']} runs)  {diff[k]:+.1f} %")


if __name__ == "__main__":
    main()
