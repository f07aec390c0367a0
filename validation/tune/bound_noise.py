#!/usr/bin/env python3
"""How soon a rival's run is stopped: bound.noise_z chosen leave-one-group-out on the benchmark's replays.

    python3 validation/tune/bound_noise.py [--mmgp build/cli/mmgp] [--seeds 40] [--jobs 2] [--from results.json]

A run of a configuration other than the chosen one is stopped at its bound. With `--constant bound.noise_z=Z`
(Z > 0) the bound is no longer only --bound-factor x the chosen's expected time: once some configuration has
run twice, a rival's run is stopped at (1 + tolerance) x the chosen's expected time x exp(max(the largest excess
of a measured run over its configuration's center, Z x the sd of the chosen's mean and one run)), never later
than the bound factor allows. Such a run says "at least the bound" and rules nothing out: the configuration may
run again. This command replays every group of bench.py (recorded, simulated and made up) with each candidate
Z in five settings (the new user's variants a, b, c, d and, where the group has one, its scenario's prior) on
seeds 1001.. (not the benchmark's), and scores each with constants.py's loss (machine time as a fraction of
exhaustive trial's plus 10 x the P shortfall below min(0.9, max(exhaustive P, the default's P)), plus 10 x machine
time above exhaustive trial's where that reaches P >= 0.9).

A candidate replaces the default (off) for a group only when, on the *other* groups, it has the lowest loss and
lowers it by more than twice the standard error of the paired difference (over their settings); the group's own
figures with that choice are reported (leave one group out), and the choice on all groups is what mmgp tune's
default is to be. Writes bound_noise/report.txt and bound_noise/results.json beside this file.
"""
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402  (the groups, variants and replay functions)
import constants  # noqa: E402  (the loss)

CANDIDATES = ["0", "1.64", "2.33", "3.09"]  # the first: off, mmgp tune's default before this command chose
SETTINGS = list(bench.VARIANTS) + ["prior"]
FIRST_SEED = 1001


def mean_loss(results, names, z):
    """The mean loss of candidate z over the settings of the groups `names`, against the default's (off)."""
    return constants.mean_loss(results, names, z, CANDIDATES[0])


def cell(x):
    return f"{x['p']:.2f}/{100 * x['time_fraction']:5.1f}%"


def report(results, names, seeds):
    off = CANDIDATES[0]
    overall, best, diff, se = constants.paired_choice(results, names, CANDIDATES, off)
    lines = constants.report_header("how soon a rival's run is stopped, bound.noise_z chosen leave one group out",
                                    "bound_noise.py", seeds,
                                    "the new user's variants a, b, c, d and the scenario's prior; figures P<=3% / "
                                    "median machine time (fraction of exhaustive trial's)")
    lines += ["candidate (loss on all groups):"]
    lines += [f"  {mean_loss(results, names, z):.3f}  bound.noise_z={z}" + ("  (off)" if z == off else "")
              for z in CANDIDATES]
    lines += ["", f"lowest loss: bound.noise_z={best}, {diff:+.3f} against off (standard error {se:.3f}, paired over "
              "the groups' settings)",
              f"chosen on all groups (the lowest when more than two standard errors below off, else off): "
              f"bound.noise_z={overall}", "",
              "left-out group: the candidate chosen on the others, and the group's own figures with it, against off",
              f"{'group':<22} {'chosen':>6} {'loss':>5} {'off':>5}  " +
              "  ".join(f"{'off ' + s:>13} {'chosen ' + s:>13}" for s in SETTINGS)]
    held, before = [], []
    for n, z in constants.left_out_choices(results, names, CANDIDATES, off).items():
        held.append(mean_loss(results, [n], z))
        before.append(mean_loss(results, [n], off))
        lines.append(f"{n:<22} {z:>6} {held[-1]:>5.2f} {before[-1]:>5.2f}  " +
                     "  ".join(f"{cell(results[n][off][s]):>13} {cell(results[n][z][s]):>13}" if s in results[n][off]
                               else f"{'-':>13} {'-':>13}" for s in SETTINGS))
    lines.append(f"mean loss on the left-out groups: {statistics.mean(held):.3f} with the candidate chosen without them, "
                 f"{statistics.mean(before):.3f} off")
    return lines, overall


def main():
    a = constants.replay_arguments(__doc__.split("\n")[0], 40).parse_args()
    words = {z: ["--constant", f"bound.noise_z={z}"] for z in CANDIDATES}
    results, seeds, names = constants.replayed_or_read(a, bench.groups() + bench.made_up_groups(), SETTINGS, words,
                                                       FIRST_SEED)
    lines, overall = report(results, names, seeds)
    constants.write_report("bound_noise", lines,
                           {"seeds": seeds, "candidates": CANDIDATES, "chosen": overall, "results": results})


if __name__ == "__main__":
    main()
