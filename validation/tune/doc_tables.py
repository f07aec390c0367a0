#!/usr/bin/env python3
"""The tables of docs/TUNE.md, printed from the benchmark's results.json (validation/tune/bench.py writes it), so
that the docs quote the report rather than copies of it:

    python3 validation/tune/doc_tables.py methods     # P (machine time) per group and method, and the means
    python3 validation/tune/doc_tables.py new-user    # the new user's variants
    python3 validation/tune/doc_tables.py parallel    # runs in flight
"""
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
METHODS = ["mmgp-tune", "mmgp-tune-no-prior", "exhaustive", "random", "optuna"]
VARIANTS = {"a": "as recorded", "b": "deviations / 10", "c": "two best 0.5 % apart", "d": "slowest run first"}


def short(name):
    """The group's name as the docs write it: without the units suffix for single-input programs."""
    for prefix in ("gromacs-", "iqtree-", "pwx-", "smpi-"):
        if name.startswith(prefix):
            return name.rsplit("-U", 1)[0]
    return name


def pct(x):
    return f"{100 * x:.0f} %"


def methods(groups):
    print("| group | configs | resolution | mmgp-tune | no prior | exhaustive | random | optuna |")
    print("|---|---|---|---|---|---|---|---|")
    recorded = {n: g for n, g in groups.items() if "methods" in g and not n.startswith("smpi-")}
    simulated = {n: g for n, g in groups.items() if "methods" in g and n.startswith("smpi-")}

    def row(n, g, suffix=""):
        cells = [f"{g['methods'][m]['p_within_3pct']:.2f} ({pct(g['methods'][m]['median_time_fraction'])})"
                 for m in METHODS]
        print(f"| {short(n)}{suffix} | {g['configurations']} | {g['resolution']:.2f} | " + " | ".join(cells) + " |")

    def mean_row(label, gs):
        means = [statistics.mean(g["methods"][m]["p_within_3pct"] for g in gs.values()) for m in METHODS]
        res = statistics.mean(g["resolution"] for g in gs.values())
        print(f"| {label} | | {res:.2f} | **{means[0]:.3f}** | " + " | ".join(f"{x:.3f}" for x in means[1:]) + " |")

    for n in sorted(recorded):
        row(n, recorded[n])
    mean_row(f"mean over the {len(recorded)} recorded groups", recorded)
    for n in sorted(simulated):
        row(n, simulated[n], " (simulated)")
    mean_row(f"mean over all {len(recorded) + len(simulated)} groups", {**recorded, **simulated})


def new_user(groups):
    print("| group | configs | variant | resolution | exhaustive P | oracle | mmgp-tune P | machine time | runs |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in sorted(groups, key=lambda n: (n.startswith(("smpi-", "shape-")), n)):
        g = groups[n]
        for v, label in VARIANTS.items():
            x = g["new_user"][v]
            t = x["tune"]
            print(f"| {short(n)} | {g['configurations']} | {label} | {x['resolution']:.2f} | {x['exhaustive_p']:.2f} | "
                  f"{pct(x['oracle_fraction'])} | {t['p_within_3pct']:.2f} | {pct(t['median_time_fraction'])} | "
                  f"{t['median_runs']:g} |")


def parallel(groups):
    print("| group | K=1 P | K=2 P | machine | decision | K=4 P | machine | decision |")
    print("|---|---|---|---|---|---|---|---|")
    for n in sorted(groups):
        g = groups[n]
        if "parallel" not in g or n.startswith("smpi-"):
            continue
        par = g["parallel"]
        cells = [f"{par['1']['p_within_3pct']:.2f}"]
        for k in ("2", "4"):
            cells += [f"{par[k]['p_within_3pct']:.2f}", pct(par[k]["machine_ratio"]), pct(par[k]["decision_ratio"])]
        print(f"| {short(n)} | " + " | ".join(cells) + " |")


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ("methods", "new-user", "parallel"):
        print(__doc__, file=sys.stderr)
        return 2
    groups = json.load(open(os.path.join(HERE, "results.json")))["groups"]
    {"methods": methods, "new-user": new_user, "parallel": parallel}[sys.argv[1]](groups)
    return 0


if __name__ == "__main__":
    sys.exit(main())
