#!/usr/bin/env python3
"""The tuner's constants, chosen leave-one-group-out on the benchmark's replays.

    python3 validation/tune/constants.py [--mmgp build/cli/mmgp] [--seeds 20] [--jobs 2] [--from results.json]

mmgp tune has constants no measurement fixes by itself: the prior of the run-to-run noise (`noise.sd`), what that
prior is worth in degrees of freedom of repetitions (`noise.dof`), whether a configuration with fewer than three
runs is taken to be as noisy as the noisiest one (`noise.few_runs_noisiest`), how many configurations must have
finished runs before a tune without an application profile fits the model and follows it
(`fit.min_configurations`), and the run bound (`--bound-factor`, in multiples of the chosen configuration's time). This command replays every group of bench.py (the same groups,
variants and replay functions) with every combination of GRID, in four settings per group: the new user's three
variants (only a platform: as recorded, deviations shrunk to a tenth, the two best 0.5 % apart) and the group's
scenario with its prior. Seeds 1001.. are used, not the benchmark's 1..N, so that the figures the benchmark
reports are not those the constants were chosen on.

The loss of a setting: mmgp tune's median machine time as a fraction of exhaustive trial's, plus PENALTY x how
far its P(regret <= 3 %) falls short of the target, plus PENALTY x how far its machine time exceeds exhaustive
trial's where that reaches P >= 0.9. The target is 0.9, or less where neither exhaustive trial nor the defaults
before reach it: then the better of the two (a choice is never worse than trying everything once, and no group
loses what it had). A combination's loss on a set of groups is
the mean over their settings.

A combination replaces the defaults before only when its loss is lower by more than twice the standard error of
the paired difference (over the groups' settings): with a few dozen seeds per setting the losses of the best
combinations lie within each other's noise, and the lowest one alone is chosen by that noise. For every group the
choice is made on the *other* groups and the group's own figures with it are reported (leave one group out): what
a program no group uses can expect. The choice on all groups is what mmgp tune's defaults
(libmmgp/include/mmgp/tune.hpp) are to be. Writes constants/report.txt and constants/results.json beside this
file. The other commands that choose a constant this way (bound_noise.py, first_runs.py) take their options,
replays, loss and leave-one-group-out choice from here.
"""
import concurrent.futures
import itertools
import json
import math
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402  (the benchmark's groups, variants and replay functions)
import common  # noqa: E402  (validation/common.py, on the path bench puts it on: the reports written atomically)

# The candidates; the first value of each is mmgp tune's default before this command chose.
GRID = {
    "noise.sd": ["0.1", "0.03"],
    "noise.dof": ["4", "1"],
    "noise.few_runs_noisiest": ["1", "0"],
    "fit.min_configurations": ["5", "2"],
    "bound-factor": ["3", "2", "1.5"],
}
PENALTY = 10.0
# Measured beside the chosen combination, not chosen among: the next run by the knowledge gradient instead of by
# P(beats the chosen) per machine second.
ALSO = {"policy.knowledge_gradient": "1"}
SETTINGS = ["a", "b", "c", "prior"]
FIRST_SEED = 1001


def args_of(combo):
    """mmgp tune's words for one combination of the grid."""
    out = []
    for name, value in combo.items():
        out += ["--bound-factor", value] if name == "bound-factor" else ["--constant", f"{name}={value}"]
    return out


def label(combo):
    return " ".join(f"{k}={v}" for k, v in combo.items())


def loss(x, before):
    """One setting's loss from its figures and the defaults' figures in the same setting (see the module's text)."""
    target = min(0.9, max(x["exhaustive_p"], before["p"]))
    over = max(0.0, x["time_fraction"] - 1) if x["exhaustive_p"] >= 0.9 else 0.0
    return x["time_fraction"] + PENALTY * max(0.0, target - x["p"]) + PENALTY * over


def measure_settings(pool, mmgp, group, settings, words, seeds, folder):
    """The figures of one group with mmgp tune's extra `words`, per setting the group has ("prior" needs its
    scenario; "d" replays each configuration's slowest run first): P, median machine time fraction and runs of
    mmgp tune, and exhaustive trial's P. Shared by the commands that choose a constant (this one, first_runs.py,
    bound_noise.py)."""
    out = {}
    for s in settings:
        if s == "prior" and not group[1]:
            continue  # a made-up group: no program, no application profile
        path, reps, truth, exh_cost, profile, extra = bench.setting_replay(group, s, folder)
        exh = [bench.exhaustive(reps, sd, s == "d") for sd in seeds]
        tuned = list(pool.map(lambda sd: bench.run_tune(mmgp, profile, path, sd, extra + words), seeds))
        x = bench.summary(tuned, truth, exh_cost)
        out[s] = {"p": x["p_within_3pct"], "time_fraction": x["median_time_fraction"], "runs": x["median_runs"],
                  "exhaustive_p": bench.summary(exh, truth, exh_cost)["p_within_3pct"]}
    return out


def paired_losses(results, names, key, base):
    """The loss of `key` in every setting `base` was measured in, over the groups `names`, against `base`'s
    figures in the same setting; in one order, so that two keys' lists pair up."""
    return [loss(results[n][key][s], results[n][base][s]) for n in names for s in results[n][base]]


def mean_loss(results, names, key, base):
    return statistics.mean(paired_losses(results, names, key, base))


def paired_choice(results, names, keys, base):
    """The key with the least loss on `names` when it beats `base` by more than twice the standard error of the
    paired difference (over the groups' settings); else `base`. Returns it, and the lowest-loss key with its
    difference and standard error."""
    best = min(keys, key=lambda k: mean_loss(results, names, k, base))
    d = [x - y for x, y in zip(paired_losses(results, names, best, base), paired_losses(results, names, base, base))]
    se = statistics.stdev(d) / math.sqrt(len(d)) if len(d) > 1 else 0.0
    return (best if statistics.mean(d) < -2 * se else base), best, statistics.mean(d), se


def left_out_choices(results, names, keys, base):
    """For each group, paired_choice made on the *other* groups (leave one group out)."""
    return {n: paired_choice(results, [o for o in names if o != n], keys, base)[0] for n in names}


DEFAULT = label({name: values[0] for name, values in GRID.items()})


def replayed_or_read(a, groups, settings, words_of, first_seed):
    """The figures of every group (measure_settings in `settings`) for each key of words_of (key -> mmgp tune's
    extra words), on seeds first_seed.. (a: replay_arguments' options); with --from, those a previous run wrote.
    Returns (results, seeds, the names of the groups measured in the benchmark's order)."""
    if a.from_results:
        saved = json.load(open(a.from_results))
        results, seeds = saved["results"], saved["seeds"]
    else:
        seeds = list(range(first_seed, first_seed + a.seeds))
        pool = concurrent.futures.ThreadPoolExecutor(a.jobs)
        results = {}
        with tempfile.TemporaryDirectory() as folder:
            for g in groups:
                results[g[0]] = {k: measure_settings(pool, a.mmgp, g, settings, words, seeds, folder)
                                 for k, words in words_of.items()}
                print(g[0], file=sys.stderr, flush=True)
    return results, seeds, [g[0] for g in groups if g[0] in results]


def report_header(what, script, seeds, settings):
    """The first lines of a report of a command that chooses a constant with constants.py's loss."""
    return [f"# {what}: python3 validation/tune/{script} --seeds {len(seeds)}", f"# settings per group: {settings}",
            f"# loss: constants.py's; seeds {seeds[0]}..{seeds[-1]} (the benchmark reports seeds 1..N)", ""]


def write_report(folder, lines, doc):
    """Writes folder/report.txt (the lines) and folder/results.json (doc) beside this file, each atomically (a
    kill leaves the old file or the new one), and prints the report."""
    os.makedirs(os.path.join(HERE, folder), exist_ok=True)
    common.write_if_changed(os.path.join(HERE, folder, "report.txt"), "\n".join(lines) + "\n")
    common.write_if_changed(os.path.join(HERE, folder, "results.json"), json.dumps(doc, indent=1, sort_keys=True))
    print("\n".join(lines))


def replay_arguments(description, seeds):
    """The options of a command that replays the benchmark's groups and chooses a constant (this one,
    bound_noise.py, first_runs.py): the binary, the seeds, the jobs, and a results.json to re-read instead of
    replaying."""
    ap = bench.replay_options(description, seeds)
    ap.add_argument("--from", dest="from_results", default="",
                    help="read the replays' figures from a results.json this command wrote (no replays)")
    return ap


def main():
    a = replay_arguments(__doc__.split("\n")[0], 20).parse_args()
    combos = [dict(zip(GRID, values)) for values in itertools.product(*GRID.values())]
    keys = [label(c) for c in combos]
    groups = bench.groups()
    results, seeds, names = replayed_or_read(a, groups, SETTINGS, {label(c): args_of(c) for c in combos}, FIRST_SEED)
    a.seeds = len(seeds)
    default = DEFAULT
    overall, lowest, diff, se = paired_choice(results, names, keys, default)
    lines = [f"# mmgp tune's constants chosen leave-one-group-out: python3 validation/tune/constants.py --seeds {a.seeds}",
             f"# {len(combos)} combinations of {', '.join(GRID)}; settings per group: the new user's variants a, b, c "
             "and the scenario's prior",
             f"# loss: machine time / exhaustive trial's + {PENALTY:g} x P shortfall below min(0.9, max(exhaustive P, the defaults' P)) + "
             f"{PENALTY:g} x machine time above exhaustive trial's where it reaches P >= 0.9",
             f"# seeds {seeds[0]}..{seeds[-1]} (the benchmark reports seeds 1..N)", "",
             "combination (loss on all groups):"]
    for k in sorted(keys, key=lambda k: mean_loss(results, names, k, default)):
        lines.append(f"  {mean_loss(results, names, k, default):.3f}  {k}" + ("  (the defaults before)" if k == default else ""))
    lines += ["", f"lowest loss: {lowest}, {diff:+.3f} against the defaults before (standard error {se:.3f}, "
              "paired over the groups' settings)",
              f"chosen on all groups (the lowest when it is more than two standard errors below the defaults before, "
              f"else those): {overall}", "",
              "left-out group: the combination chosen on the others, and the group's own figures with it "
              "(P<=3% / machine time fraction per setting), against the defaults before",
              f"{'group':<22} {'chosen on the others':<66} {'loss':>5} {'before':>6}  " +
              "  ".join(f"{s:>12}" for s in SETTINGS)]
    logo = left_out_choices(results, names, keys, default)
    for n, k in logo.items():
        own = results[n][k]
        lines.append(f"{n:<22} {k:<66} {mean_loss(results, [n], k, default):>5.2f} "
                     f"{mean_loss(results, [n], default, default):>6.2f}  " +
                     "  ".join(f"{own[s]['p']:.2f}/{100 * own[s]['time_fraction']:>5.1f}%" for s in SETTINGS))
    held = statistics.mean(mean_loss(results, [n], logo[n], default) for n in names)
    before = statistics.mean(mean_loss(results, [n], default, default) for n in names)
    lines.append(f"mean loss on the left-out groups: {held:.3f} with the constants chosen without them, "
                 f"{before:.3f} with the defaults before")
    # The chosen combination with ALSO on top, on the same seeds: its loss on all groups against the chosen's.
    also = dict(combos[keys.index(overall)], **ALSO)
    if label(also) not in results[names[0]]:
        pool = concurrent.futures.ThreadPoolExecutor(a.jobs)
        with tempfile.TemporaryDirectory() as folder:
            for g in groups:
                if g[0] in results:
                    results[g[0]][label(also)] = measure_settings(pool, a.mmgp, g, SETTINGS, args_of(also), seeds,
                                                                  folder)
    lines.append(f"the chosen with {label(ALSO)}: loss {mean_loss(results, names, label(also), default):.3f} on all "
                 f"groups (the chosen: {mean_loss(results, names, overall, default):.3f})")
    write_report("constants", lines, {"grid": GRID, "seeds": seeds, "penalty": PENALTY, "chosen": overall,
                                      "left_out": logo, "results": results})


if __name__ == "__main__":
    main()
