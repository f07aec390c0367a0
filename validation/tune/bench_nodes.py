#!/usr/bin/env python3
"""The tuner across nodes, by node-hours: mmgp tune --objective node-hours against exhaustive trial on a
synthetic group that spans 1..16 nodes.

    python3 validation/tune/bench_nodes.py [--mmgp build/cli/mmgp] [--seeds 100] [--jobs 2]

No recorded sweep spans nodes (this machine is one node), so the group is synthetic, and built so that the
tuner's prior is wrong: the "true" times are PBPI on Roadrunner triblades (the bundled pbpi-roadrunner) over
nodes 1..16 x m 1..4 x p 1..4 (256 configurations) with other application parameters than the prior's
(T_apu 300 s instead of 370 s, g 6e-5 s instead of 4e-5 s), times a smooth discrepancy the model does not have
(up to +-8 %, over log m p and log nodes), with three repetitions of log-normal run-to-run noise (3 %). The
tuner's prior is the bundled scenario as it is. Machine time is nodes x wall time.

For each window W (--within 0.05 and 0.2), the truth is the cheapest configuration in node-hours among those
whose median time is within W of the fastest median. A choice is right when its node-hours are within 3 % of
the truth's and its time within W of the fastest, with the same 3 % of slack (by the medians). Methods, one seed each per replay:

  mmgp-tune           mmgp tune pbpi-roadrunner --replay GROUP.csv --objective node-hours --within W
  mmgp-tune-no-prior  the same with --no-prior
  exhaustive          every configuration once; the cheapest whose run is within W of the fastest run

Writes groups/synthetic-nodes.csv and nodes_report.txt beside this file (or into --out DIR: the test
tune-nodes-report compares what it writes there with the committed files).
"""
import argparse
import concurrent.futures
import json
import math
import os
import random
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "validation"))
import common  # noqa: E402  (validation/common.py: the report is written atomically)
TOL = 0.03
SPACE = ["--nodes", "1:16", "--m", "1:4", "--p", "1:4"]
TRUTH_SET = ["--set", "application.T_apu=300", "--set", "application.g=6e-5"]


def true_times(mmgp):
    """{(m, p, nodes): seconds} of the synthetic program."""
    out = subprocess.run([mmgp, "predict", "pbpi-roadrunner", "--csv"] + SPACE + TRUTH_SET, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    names = out[0].split(",")
    times = {}
    for line in out[1:]:
        r = dict(zip(names, line.split(",")))
        m, p, n = int(r["m"]), int(r["p"]), int(r["nodes"])
        discrepancy = math.exp(0.08 * math.sin(1.3 * math.log2(m * p) + 0.7 * math.log2(n)))
        times[(m, p, n)] = float(r["time_s"]) * discrepancy
    return times


def write_group(times, path):
    rng = random.Random("synthetic-nodes")
    reps = {}
    lines = ["m,p,nodes,policy,time_s"]
    for (m, p, n), t in sorted(times.items()):
        for _ in range(3):
            x = round(t * math.exp(rng.gauss(0, 0.03)), 4)
            reps.setdefault((m, p, n), []).append(x)
            lines.append(f"{m},{p},{n},edtlp,{x}")
    common.write_if_changed(path, "\n".join(lines) + "\n")
    return reps


def nh(c, t):
    return c[2] * t / 3600


def truth_of(med, within):
    fastest = min(med.values())
    window = [c for c in med if med[c] <= fastest * (1 + within)]
    return min(window, key=lambda c: nh(c, med[c])), fastest


def regret(med, within, chosen):
    """The chosen one's node-hours over the truth's, minus 1; infinite outside the window (by its medians, with
    the same 3 % of slack the cost has)."""
    if chosen is None:
        return math.inf
    best, fastest = truth_of(med, within)
    if med[chosen] > fastest * (1 + within) * (1 + TOL):
        return math.inf
    return nh(chosen, med[chosen]) / nh(best, med[best]) - 1


def run_tune(mmgp, path, seed, within, extra):
    cmd = [mmgp, "tune", "pbpi-roadrunner", "--replay", path, "--seed", str(seed), "--json", "--quiet",
           "--objective", "node-hours", "--within", str(within)] + extra
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"bench_nodes: {' '.join(cmd)} failed: {p.stderr.strip()}")
    j = json.loads(p.stdout)
    c = j["chosen"]
    return {"chosen": (c["m"], c["p"], c["nodes"]) if c else None, "machine_s": j["machine_s"], "runs": j["runs"]}


def exhaustive(reps, seed, within):
    rng = random.Random(f"exhaustive/{seed}")
    drawn = {c: v[rng.randrange(len(v))] for c, v in reps.items()}
    fastest = min(drawn.values())
    window = [c for c in drawn if drawn[c] <= fastest * (1 + within)]
    chosen = min(window, key=lambda c: nh(c, drawn[c]))
    return {"chosen": chosen, "machine_s": sum(c[2] * t for c, t in drawn.items()), "runs": len(drawn)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mmgp", default=os.path.join(ROOT, "build", "cli", "mmgp"))
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=HERE,
                    help="the folder to write groups/synthetic-nodes.csv and nodes_report.txt into (default: beside "
                         "this file, the committed ones)")
    args = ap.parse_args()
    times = true_times(args.mmgp)
    os.makedirs(os.path.join(args.out, "groups"), exist_ok=True)
    path = os.path.join(args.out, "groups", "synthetic-nodes.csv")
    reps = write_group(times, path)
    med = {c: statistics.median(v) for c, v in reps.items()}
    exh_cost = sum(c[2] * statistics.mean(v) for c, v in reps.items())
    pool = concurrent.futures.ThreadPoolExecutor(args.jobs)
    lines = [f"# mmgp tune --objective node-hours on a synthetic group over 1..16 nodes ({len(reps)} configurations), "
             f"{args.seeds} seeded replays per method", "# (python3 validation/tune/bench_nodes.py --seeds "
             f"{args.seeds}; the group and the truth: the script's opening comment)",
             "# P: fraction of replays whose choice is within 3 % of the best node-hours in the window; regret: median of "
             "the chosen node-hours over the best's ('out': outside the window); time: median machine time (nodes x "
             "wall) / exhaustive trial's expected machine time; runs: median (mmgp tune's default budget: 50)", ""]
    lines.append(f"{'window':>7} {'truth (m x p, nodes)':>22} {'method':<19} {'P':>5} {'med regret':>10} {'time':>7} "
                 f"{'runs':>5}")
    for within in (0.05, 0.2):
        best, _ = truth_of(med, within)
        res = {
            "mmgp-tune": list(pool.map(lambda s: run_tune(args.mmgp, path, s, within, []), range(1, args.seeds + 1))),
            "mmgp-tune-no-prior": list(pool.map(lambda s: run_tune(args.mmgp, path, s, within, ["--no-prior"]),
                                                range(1, args.seeds + 1))),
            "exhaustive": [exhaustive(reps, s, within) for s in range(1, args.seeds + 1)],
        }
        for method, rs in res.items():
            regrets = [regret(med, within, r["chosen"]) for r in rs]
            p = sum(x <= TOL + 1e-12 for x in regrets) / len(rs)
            mr = statistics.median(regrets)
            frac = statistics.median(r["machine_s"] for r in rs) / exh_cost
            lines.append(f"{100 * within:>6g}% {f'{best[0]} x {best[1]}, {best[2]}':>22} {method:<19} {p:>5.2f} "
                         f"{'out' if math.isinf(mr) else f'{100 * mr:.1f} %':>10} {100 * frac:>6.1f}% "
                         f"{statistics.median(r['runs'] for r in rs):>5g}")
    common.write_if_changed(os.path.join(args.out, "nodes_report.txt"), "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
