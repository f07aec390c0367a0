#!/usr/bin/env python3
"""Whether a new user's first runs should follow the platform: measured leave-one-group-out on the benchmark.

    python3 validation/tune/first_runs.py [--mmgp build/cli/mmgp] [--seeds 40] [--jobs 2] [--from results.json]

Without an application profile, mmgp tune explores until fit.min_configurations configurations have finished runs:
each next run is the configuration least known (the discrepancy process's variance). With
`--constant policy.explore_platform=1` it is the least known per machine second the platform alone expects the
run to take (the model with the application's times unknown: all of one run's work parallel). This command
replays every group of bench.py (recorded and made up) in the new user's four variants (a as recorded, b deviations
shrunk to a tenth, c the two best 0.5 % apart, d each configuration's first run its slowest) both ways, on seeds
1001.. (not the benchmark's), and scores each setting with constants.py's loss (machine time as a fraction of
exhaustive trial's plus 10 x the P shortfall below min(0.9, max(exhaustive P, the default's P))).

The rule is switched on for a group only when, on the *other* groups, it lowers the loss by more than twice the
standard error of the paired difference (over their settings); the group's own figures with that decision are
reported (leave one group out), and the decision on all groups is what mmgp tune's default is to be. Writes
first_runs/report.txt and first_runs/results.json beside this file.
"""
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402  (the groups, variants and replay functions)
import constants  # noqa: E402  (the loss)

RULES = {"variance": [], "platform": ["--constant", "policy.explore_platform=1"]}
SETTINGS = list(bench.VARIANTS)
FIRST_SEED = 1001


def mean_loss(results, names, rule):
    """The mean loss of `rule` over the settings of the groups `names`, against variance alone's."""
    return constants.mean_loss(results, names, rule, "variance")


def decide(results, names):
    """'platform' when it lowers the mean loss on `names` by more than two standard errors of the paired
    difference; else 'variance'. Returns it with the difference and its standard error."""
    chosen, _, diff, se = constants.paired_choice(results, names, ["platform"], "variance")
    return chosen, diff, se


def main():
    a = constants.replay_arguments(__doc__.split("\n")[0], 40).parse_args()
    results, seeds, names = constants.replayed_or_read(a, bench.groups() + bench.made_up_groups(), SETTINGS, RULES,
                                                       FIRST_SEED)
    overall, diff, se = decide(results, names)
    lines = [f"# a new user's first runs, by the platform or by variance alone: python3 validation/tune/first_runs.py "
             f"--seeds {a.seeds}",
             "# settings per group: the new user's variants a, b, c, d; figures P<=3% / median machine time (fraction of "
             "exhaustive trial's) / median runs",
             f"# loss: constants.py's; seeds {seeds[0]}..{seeds[-1]} (the benchmark reports seeds 1..N)", "",
             f"all groups: loss {mean_loss(results, names, 'platform'):.3f} by the platform, "
             f"{mean_loss(results, names, 'variance'):.3f} by variance alone; paired difference "
             f"{diff:+.3f} (standard error {se:.3f}); decision: {overall}", "",
             f"{'group':<22} {'decided on the others':<22} {'loss':>5} {'var.':>5}  " +
             "  ".join(f"{'variance ' + s:>19} {'platform ' + s:>19}" for s in SETTINGS)]
    held, before = [], []
    for n, rule in constants.left_out_choices(results, names, ["platform"], "variance").items():
        held.append(mean_loss(results, [n], rule))
        before.append(mean_loss(results, [n], "variance"))
        cell = lambda x: f"{x['p']:.2f}/{100 * x['time_fraction']:5.1f}%/{x['runs']:>4g}"
        lines.append(f"{n:<22} {rule:<22} {held[-1]:>5.2f} {before[-1]:>5.2f}  " +
                     "  ".join(f"{cell(results[n]['variance'][s]):>19} {cell(results[n]['platform'][s]):>19}"
                               for s in SETTINGS))
    lines.append(f"mean loss on the left-out groups: {statistics.mean(held):.3f} with the rule decided without them, "
                 f"{statistics.mean(before):.3f} by variance alone")
    os.makedirs(os.path.join(HERE, "first_runs"), exist_ok=True)
    open(os.path.join(HERE, "first_runs", "report.txt"), "w").write("\n".join(lines) + "\n")
    json.dump({"seeds": seeds, "decision": overall, "results": results},
              open(os.path.join(HERE, "first_runs", "results.json"), "w"), indent=1, sort_keys=True)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
