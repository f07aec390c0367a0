#!/usr/bin/env python3
"""How a new user's first runs are chosen: by the platform or by how little is known, measured leave-one-group-out.

    python3 validation/tune/first_runs.py [--mmgp build/cli/mmgp] [--seeds 40] [--jobs 2] [--from results.json]

Without an application profile, mmgp tune explores until fit.min_configurations configurations have finished runs:
each next run is the configuration least known (the discrepancy process's variance; "variance", the default on a
CPU node; on a GPU node the default is "platform", decided on GPU groups by validation/tune/bench_gpu.py). Each
rule names its constants, so that it is the same rule on either kind of node.
Two rules let the platform speak, the model with the application's times unknown (all of one run's work
parallel):
- "platform" (`--constant policy.explore_platform=1`): each exploring run is the least known per machine second
  the platform alone expects it to take;
- "first" (`--constant policy.first_platform=1`): the tune's first run (it runs without a bound, and its time
  bounds the later runs) is the configuration the platform alone expects to be the fastest; the others as by
  default.
This command replays every group of bench.py (recorded and made up) in the new user's four variants (a as
recorded, b deviations shrunk to a tenth, c the two best 0.5 % apart, d each configuration's first run its
slowest) under each rule, on seeds 1001.. (not the benchmark's), and scores each setting with constants.py's loss
(machine time as a fraction of exhaustive trial's plus 10 x the P shortfall below min(0.9, max(exhaustive P, the
default's P))).

For a group, the rule of lowest loss on the *other* groups replaces the default only when it lowers their loss by
more than twice the standard error of the paired difference (over their settings); the group's own figures with
that decision are reported (leave one group out), and the decision on all groups is what mmgp tune's default is
to be. Writes first_runs/report.txt and first_runs/results.json beside this file.
"""
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402  (the groups, variants and replay functions)
import constants  # noqa: E402  (the loss)

RULES = {"variance": ["--constant", "policy.explore_platform=0"], "platform": ["--constant", "policy.explore_platform=1"],
         "first": ["--constant", "policy.explore_platform=0", "--constant", "policy.first_platform=1"]}
BASE = "variance"
OTHERS = [r for r in RULES if r != BASE]
SETTINGS = list(bench.VARIANTS)
FIRST_SEED = 1001


def mean_loss(results, names, rule):
    """The mean loss of `rule` over the settings of the groups `names`, against variance alone's."""
    return constants.mean_loss(results, names, rule, BASE)


def cell(x):
    return f"{x['p']:.2f}/{100 * x['time_fraction']:5.1f}%/{x['runs']:>4g}"


def main():
    a = constants.replay_arguments(__doc__.split("\n")[0], 40).parse_args()
    results, seeds, names = constants.replayed_or_read(a, bench.groups() + bench.made_up_groups(), SETTINGS, RULES,
                                                       FIRST_SEED)
    overall, lowest, diff, se = constants.paired_choice(results, names, OTHERS, BASE)
    lines = constants.report_header("a new user's first runs, by the platform or by how little is known",
                                    "first_runs.py", seeds,
                                    "the new user's variants a, b, c, d; figures P<=3% / median machine time "
                                    "(fraction of exhaustive trial's) / median runs")
    lines += ["all groups: loss " + ", ".join(f"{mean_loss(results, names, r):.3f} {r}" for r in RULES) +
              f"; lowest: {lowest}, paired difference {diff:+.3f} against {BASE} (standard error {se:.3f}); "
              f"decision: {overall}", "",
              f"{'group':<22} {'decided on the others':<22} {'loss':>5} {'var.':>5}  " +
              "  ".join(f"{r + ' ' + s:>19}" for s in SETTINGS for r in RULES)]
    held, before = [], []
    for n, rule in constants.left_out_choices(results, names, OTHERS, BASE).items():
        held.append(mean_loss(results, [n], rule))
        before.append(mean_loss(results, [n], BASE))
        lines.append(f"{n:<22} {rule:<22} {held[-1]:>5.2f} {before[-1]:>5.2f}  " +
                     "  ".join(f"{cell(results[n][r][s]):>19}" for s in SETTINGS for r in RULES))
    lines.append(f"mean loss on the left-out groups: {statistics.mean(held):.3f} with the rule decided without them, "
                 f"{statistics.mean(before):.3f} by variance alone")
    constants.write_report("first_runs", lines, {"seeds": seeds, "rules": RULES, "decision": overall, "results": results})


if __name__ == "__main__":
    main()
