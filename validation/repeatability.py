#!/usr/bin/env python3
"""How well does this machine repeat a measurement? Compares two sweeps' runs.csv of the same configurations
(the same program and inputs, measured at different times) the way the report compares a prediction with a
measurement: each configuration's case is the median of its quiet repetitions (measured.aggregate, RAxML
duplicates pooled; quiet = other processes below 0.25 core, from runs.csv alone: a data set's machine.json
`quiet_repetitions`, which the report also honours, is not read), and the "error" of sweep B against sweep
A is B/A - 1. The mean |B/A - 1| is the floor
below which no model can be shown to be right on this machine.

It also prints what no prediction, from any model, can do better than on these two sweeps. For a configuration
measured a <= b, any predicted x has |x/a - 1| + |x/b - 1| >= 1 - a/b (equality only at x = a), so the mean
|error| over both sweeps is at least the mean of (1 - a/b) / 2; and x is within e of both only when
b/a <= (1 + e)/(1 - e): the configurations above that ratio cannot be predicted within e on both sweeps.
Per group of configurations (input, units), it also prints each sweep's fastest configuration and what it
measured in the other sweep (a perfect predictor of one sweep's optimum has that regret on the other).

    validation/repeatability.py OLD/runs.csv NEW/runs.csv            # e.g. an older commit's runs.csv, via git show
    validation/repeatability.py --kind raxml OLD.csv validation/raxml/runs.csv
    validation/repeatability.py --kind gpu validation/gpu/h200-2026-11-30-{1,2}/libpll/runs.csv   # GPU sweeps
"""
import argparse
import csv
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import measured  # noqa: E402
import raxml_fit  # noqa: E402


def gpu_rows(path):
    """A GPU sweep's runs.csv (validation/sweep_gpu.py): its runs that did not fail, each with its host policy (edtlp
    where the column is absent, as sweep_gpu.py reads it) and no load column."""
    with open(path) as f:
        rows = [dict(r, policy=r.get("policy") or "edtlp") for r in csv.DictReader(f) if not r.get("failed")]
    return rows


def cases(path, kind):
    """{key: case}, the key's first fields the group (input, units; a GPU sweep's sharing mode and policy), its last
    two m and p."""
    if kind == "gpu":
        return {tuple(c["key"].values()): c for c in measured.aggregate(gpu_rows(path), ["sharing", "policy", "m", "p"])}
    rows = measured.read_runs(path)
    if kind == "raxml":
        rows = raxml_fit.pool_same_processes(rows)
    return {tuple(c["key"].values()): c
            for c in measured.aggregate(rows, ["input", "units", "m", "p", "policy"], common.is_quiet)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", help="runs.csv of the earlier sweep")
    ap.add_argument("b", help="runs.csv of the later sweep")
    ap.add_argument("--kind", choices=["offload", "raxml", "gpu"], default="offload")
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
    print(f"|B/A - 1|: mean {statistics.mean(ab):.1f} %, median {common.median(ab):.1f} %, max {max(ab):.1f} %; "
          f"within 5 %: {sum(1 for x in ab if x <= 5)}, within 15 %: {sum(1 for x in ab if x <= 15)}")
    lo_hi = {k: sorted((A[k]["measured_s"], B[k]["measured_s"])) for k in both}
    floor = statistics.mean(50.0 * (1.0 - lo / hi) for lo, hi in lo_hi.values())
    beyond = {e: sum(1 for lo, hi in lo_hi.values() if hi / lo > (1 + e) / (1 - e)) for e in (0.05, 0.15, 0.25)}
    print(f"any prediction: mean |error| over both sweeps >= {floor:.2f} %; configurations no prediction can "
          f"match within 5 % in both: {beyond[0.05]}, within 15 %: {beyond[0.15]}, within 25 %: {beyond[0.25]}")
    groups = {}
    for k in both:
        groups.setdefault(k[:2], []).append(k)  # offload, raxml: input, units; gpu: sharing, policy
    for g, ks in sorted(groups.items()):
        best_a = min(ks, key=lambda k: A[k]["measured_s"])
        best_b = min(ks, key=lambda k: B[k]["measured_s"])
        reg_b = 100.0 * (B[best_a]["measured_s"] / B[best_b]["measured_s"] - 1.0)
        reg_a = 100.0 * (A[best_b]["measured_s"] / A[best_a]["measured_s"] - 1.0)
        print(f"  group {' '.join(str(x) for x in g)}: fastest in A {' '.join(str(x) for x in best_a[2:])} "
              f"(regret in B {reg_b:.1f} %), fastest in B {' '.join(str(x) for x in best_b[2:])} (regret in A {reg_a:.1f} %)")
    for k in sorted(both, key=lambda k: -abs(diff[k]))[:a.worst]:
        print(f"  {' '.join(str(x) for x in k):28s} A {A[k]['measured_s']:.4f} s ({A[k]['used']} runs)  "
              f"B {B[k]['measured_s']:.4f} s ({B[k]['used']} runs)  {diff[k]:+.1f} %")


if __name__ == "__main__":
    main()
