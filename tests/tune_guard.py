#!/usr/bin/env python3
"""The `tune-guard` test: mmgp tune, for a user who brings only a program, never costs more than trying every
configuration once where that already finds the best, and a cost cap never makes it choose worse.

Replays a few recorded groups of validation/tune/ in the benchmark's new-user setting (only the platform
validation/tune/host.json, no application profile; the variants as recorded, with deviations shrunk to a
tenth, with the two best 0.5 % apart, and with each configuration's first run its slowest), 10 seeds each, with
bench.py's own replay functions. Fails when, on a group and variant where running every configuration once
reaches P(regret <= 3 %) >= 0.9, the median machine time of mmgp tune exceeds the median machine time of running
every configuration once on the same seeds by more than SLACK (a tune that runs each configuration once costs what
exhaustive trial costs, and the two draw their runs independently: the medians of such a tie differ by a few
hundredths of a per cent on the steady program); or when, on the made-up shape of validation/tune/shape/ (the best
configuration left last behind a stopped run and a near tie), P(regret <= 3 %) is below 0.95 or the median
machine time above exhaustive trial's.
Usage: tune_guard.py MMGP
"""
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "validation", "tune"))
import bench  # noqa: E402  (the benchmark's replay functions)

def steady_program():
    """A deterministic program (0.3 + 1.2 / (m p)^0.8 s, m 1..4, p 1..2), five runs each within 0.1 %: the
    case where noise assumed rather than measured would have the tuner repeat what it already knows."""
    rows = []
    for m in range(1, 5):
        for p in (1, 2):
            t = 0.3 + 1.2 / (m * p) ** 0.8
            for rep, wobble in enumerate((1.0, 1.001, 0.999, 1.0005, 0.9995)):
                rows.append({"m": str(m), "p": str(p), "policy": "edtlp", "rep": str(rep), "wall_s": f"{t * wobble:.6f}",
                             "censored": "0", "bound_s": ""})
    return ("steady-sleep-U8", None, 8, rows)


GROUPS = ["raxml-16x1200-U4", "raxml-24x1200-U1", "raxml-24x1200-U2", "gromacs-water4nm-U400", "libpll-49x1200-U16"]
SEEDS = 10
SLACK = 0.005


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    mmgp = sys.argv[1]
    failures, checked = [], 0
    with tempfile.TemporaryDirectory() as folder:
        shapes = [g[0] for g in bench.made_up_groups()]
        for group in bench.groups() + [steady_program()] + bench.made_up_groups():
            name = group[0]
            if name not in GROUPS and name != "steady-sleep-U8" and name not in shapes:
                continue
            for variant in bench.VARIANTS:
                path, reps, truth, exh_cost, scen, extra = bench.setting_replay(group, variant, folder)
                exh = [bench.exhaustive(reps, sd, variant == "d") for sd in range(1, SEEDS + 1)]
                exh_p = bench.summary(exh, truth, exh_cost)["p_within_3pct"]
                exh_s = statistics.median(r["machine_s"] for r in exh)
                tuned = [bench.run_tune(mmgp, scen, path, sd, extra) for sd in range(1, SEEDS + 1)]
                tune_p = bench.summary(tuned, truth, exh_cost)["p_within_3pct"]
                fraction = statistics.median(r["machine_s"] for r in tuned) / exh_s
                print(f"{name} ({variant}): exhaustive trial P {exh_p:.2f}; mmgp tune P {tune_p:.2f} at "
                      f"{100 * fraction:.1f} % of its machine time")
                if exh_p >= 0.9:
                    checked += 1
                    if fraction > 1 + SLACK:
                        failures.append(f"{name} ({variant}): {100 * fraction:.1f} % of exhaustive trial's machine time")
                if name in shapes and (tune_p < 0.95 or fraction > 1 + SLACK):
                    failures.append(f"{name} ({variant}): P {tune_p:.2f} (at least 0.95 expected) at "
                                    f"{100 * fraction:.1f} % of exhaustive trial's machine time (at most 100 %)")
    if checked == 0:  # nothing compared must not pass
        print("no group where exhaustive trial reaches P >= 0.9: nothing checked")
        return 1
    for f in failures:
        print(f"FAIL {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
