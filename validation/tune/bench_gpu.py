#!/usr/bin/env python3
"""mmgp tune as a new user on a GPU node: two programs' runs on an H200, replayed.

    python3 validation/tune/bench_gpu.py [--mmgp build/cli/mmgp] [--seeds 100] [--jobs 2]

Groups, one per sharing mode (MPS and time-sliced: a tune searches one mode, `--set search.sharing`):
- the libpll program's quick sweep (validation/gpu/libpll/: 4 units, m in {1, 2, 4, 8} x p in {1, 32, 132, 264},
  2 runs each), its time-sliced runs recorded again (validation/gpu/libpll/rerun-321081a/), and its full grid
  (validation/gpu/h200-2026-11-30-{1,2}/libpll/: p in {1, 8, 32, 132/m, 132, 264}, 3 runs each, twice), the new
  user's platform the one calibrated beside each (its platform.json);
- the GPU workload the device check sweeps (validation/gpu/h200-2026-11-29/sweep.json: 8 units, its "sweep" group,
  p in {1, 8, 32, SMs/m}, and its "compute" group, p up to 4 x SMs; 3 runs each, every run bounded at 30 s), the
  new user's platform the check's calibration (its platform.json).
Three tables:
1. bench.py's figures in the new user's variants a-d, seeds 1..N: mmgp tune's P(regret <= 3 %) against
   exhaustive trial's exact P, and its median and largest machine time as a fraction of exhaustive trial's, under
   each of first_runs.py's rules ("variance", "platform" (the default on a GPU node since table 3), "first");
2. first_runs.py's choice of the rule made again with these groups beside its own: its results.json re-read for
   its groups, these replayed on its seeds (1001..1040), the same loss and paired test;
3. the rule for GPU nodes alone, made on these groups only with the same loss and paired test: leave one group
   out, and leave one program out (made on the other program's groups).
Writes gpu/report.txt and gpu/results.json beside this file.
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
import bench  # noqa: E402  (the variants and replay functions)
import constants  # noqa: E402  (the loss and the paired choice)
import first_runs  # noqa: E402  (the rules)
import sweep_gpu  # noqa: E402  (validation/, on bench's path: a run's host policy)

DATA = os.path.join(bench.ROOT, "validation", "gpu", "libpll")
RERUN = os.path.join(DATA, "rerun-321081a")  # the same program and sweep, recorded again on another day
# The same program over the full grid of p (1, 8, 32, 132/m, 132, 264), 3 runs each, twice back to back on one machine
FULL = [os.path.join(bench.ROOT, "validation", "gpu", f"h200-2026-11-30-{i}", "libpll") for i in (1, 2)]
UNITS = 4
WORKLOAD = os.path.join(bench.ROOT, "validation", "gpu", "h200-2026-11-29")
WORKLOAD_UNITS = 8     # scripts/gpu-check.sh's workload: --units 8
WORKLOAD_BOUND_S = 30  # its runs' timeout


def gpu_groups():
    """(name, None, units, rows) per recording and sharing mode of the libpll program's GPU runs; the new user's
    platform, the one calibrated beside them, registered. The rerun's MPS runs cover 5 of the 16 configurations
    (the device run ended before the rest): its time-sliced group alone."""
    out = []
    both = ("mps", "time_sliced")
    for folder, label, modes in ((DATA, "gpu", both), (RERUN, "rerun", ("time_sliced",)),
                                 (FULL[0], "full1", both), (FULL[1], "full2", both)):
        rows = [r for r in csv.DictReader(open(os.path.join(folder, "runs.csv"))) if not r["failed"]]
        for mode in modes:
            name = f"libpll-{label}-{'sliced' if mode == 'time_sliced' else mode}-U{UNITS}"
            mine = [dict(r, policy="edtlp", nodes="1") for r in rows
                    if r["sharing"] == mode and sweep_gpu.policy_of(r) == "edtlp"]  # the blocking runs
            bench.NEW_USER_PLATFORM[name] = os.path.join(folder, "platform.json")
            out.append((name, None, UNITS, mine))
    return out


def workload_groups():
    """(name, None, units, rows) per group of the device check's workload sweep ("sweep", "compute") and sharing mode;
    the new user's platform, the check's calibration, registered."""
    doc = json.load(open(os.path.join(WORKLOAD, "sweep.json")))
    out = []
    for group in ("sweep", "compute"):
        for mode, short in (("mps", "mps"), ("time_sliced", "sliced")):
            rows = [{"m": str(c["m"]), "p": str(c["p"]), "sharing": mode, "rep": str(i), "wall_s": repr(t),
                     "censored": "0", "bound_s": str(WORKLOAD_BOUND_S), "policy": "edtlp", "nodes": "1"}
                    for c in doc["cases"] if c["group"] == group and c["sharing"] == mode
                    for i, t in enumerate(c["runs"])]
            name = f"workload-{group}-{short}-U{WORKLOAD_UNITS}"
            bench.NEW_USER_PLATFORM[name] = os.path.join(WORKLOAD, "platform.json")
            out.append((name, None, WORKLOAD_UNITS, rows))
    return out


def program_of(name):
    return name.split("-")[0]


def gpu_rule_lines(results, names):
    """Table 3: first_runs.py's rules decided on GPU groups alone, leave one group out and leave one program out."""
    overall, lowest, diff, se = constants.paired_choice(results, names, first_runs.OTHERS, first_runs.BASE)
    lines = ["", f"the rule for GPU nodes, decided on these {len(names)} groups alone (seeds as above): loss " +
             ", ".join(f"{constants.mean_loss(results, names, r, first_runs.BASE):.3f} {r}" for r in first_runs.RULES) +
             f"; lowest: {lowest}, paired difference {diff:+.3f} against {first_runs.BASE} (standard error {se:.3f});"
             f" decision: {overall}"]
    by_group = constants.left_out_choices(results, names, first_runs.OTHERS, first_runs.BASE)
    held = {}
    for n in names:
        others = [o for o in names if program_of(o) != program_of(n)]
        by_program = constants.paired_choice(results, others, first_runs.OTHERS, first_runs.BASE)[0]
        held[n] = (by_group[n], by_program)
        lines.append(f"  {n}: decided on the other groups: {by_group[n]}, its loss "
                     f"{constants.mean_loss(results, [n], by_group[n], first_runs.BASE):.2f}; on the other program's: "
                     f"{by_program}, its loss {constants.mean_loss(results, [n], by_program, first_runs.BASE):.2f} "
                     f"(by variance alone {constants.mean_loss(results, [n], first_runs.BASE, first_runs.BASE):.2f})")
    for how, i in (("group", 0), ("program", 1)):
        lines.append(f"mean loss on the left-out groups, leave one {how} out: "
                     f"{statistics.mean(constants.mean_loss(results, [n], held[n][i], first_runs.BASE) for n in names):.3f}"
                     f" with the rule decided without them, "
                     f"{statistics.mean(constants.mean_loss(results, [n], first_runs.BASE, first_runs.BASE) for n in names):.3f}"
                     " by variance alone")
    return lines, overall


def figures(pool, mmgp, group, words, seeds, folder):
    """Per variant: exhaustive trial's exact P, mmgp tune's P and its median and largest machine time fraction."""
    out = {}
    for v in bench.VARIANTS:
        path, reps, truth, exh_cost, profile, extra = bench.setting_replay(group, v, folder)
        tuned = list(pool.map(lambda sd: bench.run_tune(mmgp, profile, path, sd, extra + words), seeds))
        x = bench.summary(tuned, truth, exh_cost)
        out[v] = {"exhaustive_p": bench.exact_exhaustive_p(reps, truth, v == "d"), "p": x["p_within_3pct"],
                  "median_fraction": x["median_time_fraction"],
                  "max_fraction": max(t["machine_s"] for t in tuned) / exh_cost, "runs": x["median_runs"]}
    return out


def main():
    ap = constants.replay_arguments(__doc__.split("\n")[0], 100)
    a = ap.parse_args()
    pool = concurrent.futures.ThreadPoolExecutor(a.jobs)
    groups = gpu_groups() + workload_groups()
    seeds = list(range(1, a.seeds + 1))
    table = {}
    with tempfile.TemporaryDirectory() as folder:
        for g in groups:
            table[g[0]] = {r: figures(pool, a.mmgp, g, w, seeds, folder) for r, w in first_runs.RULES.items()}
    lines = [f"# mmgp tune as a new user on the GPU runs of validation/gpu/libpll/ (and its rerun-321081a/), "
             f"validation/gpu/h200-2026-11-30-{{1,2}}/libpll/ and "
             f"validation/gpu/h200-2026-11-29/: "
             f"python3 validation/tune/bench_gpu.py --seeds {a.seeds}",
             "# per variant: exhaustive trial's exact P / mmgp tune's P(regret <= 3 %) / median and largest machine "
             "time as a fraction of exhaustive trial's / median runs; rules: first_runs.py's", ""]
    for name, by_rule in table.items():
        for rule, by_v in by_rule.items():
            lines.append(f"{name:<22} {rule:<9} " + "  ".join(
                f"{v}: {x['exhaustive_p']:.2f}/{x['p']:.2f}/{100 * x['median_fraction']:3.0f}%/"
                f"{100 * x['max_fraction']:3.0f}%/{x['runs']:g}" for v, x in by_v.items()))
    # first_runs.py's choice again, these groups beside its own
    saved = json.load(open(os.path.join(HERE, "first_runs", "results.json")))
    results, runs_seeds = dict(saved["results"]), saved["seeds"]
    with tempfile.TemporaryDirectory() as folder:
        for g in groups:
            results[g[0]] = {r: constants.measure_settings(pool, a.mmgp, g, first_runs.SETTINGS, w, runs_seeds, folder)
                             for r, w in first_runs.RULES.items()}
    names = list(results)
    overall, lowest, diff, se = constants.paired_choice(results, names, first_runs.OTHERS, first_runs.BASE)
    left = constants.left_out_choices(results, names, first_runs.OTHERS, first_runs.BASE)
    lines += ["", f"first_runs.py's choice with these {len(groups)} groups beside its {len(names) - len(groups)} "
              f"(seeds {runs_seeds[0]}..{runs_seeds[-1]}): loss " +
              ", ".join(f"{constants.mean_loss(results, names, r, first_runs.BASE):.3f} {r}" for r in first_runs.RULES) +
              f"; lowest: {lowest}, paired difference {diff:+.3f} against {first_runs.BASE} (standard error {se:.3f});"
              f" decision: {overall}"]
    for g in groups:
        rule = left[g[0]]
        lines.append(f"  {g[0]}: decided on the others: {rule}, its loss {constants.mean_loss(results, [g[0]], rule, first_runs.BASE):.2f}"
                     f" (by variance alone {constants.mean_loss(results, [g[0]], first_runs.BASE, first_runs.BASE):.2f})")
    gpu_lines, gpu_decision = gpu_rule_lines(results, [g[0] for g in groups])
    lines += gpu_lines
    constants.write_report("gpu", lines, {"seeds": seeds, "table": table, "decision": overall,
                                          "gpu_decision": gpu_decision,
                                          "first_runs_results": {g[0]: results[g[0]] for g in groups}})


if __name__ == "__main__":
    main()
