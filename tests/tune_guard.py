#!/usr/bin/env python3
"""The `tune-guard` test: mmgp tune, for a user who brings only a program, never costs more than trying every
configuration once where that already finds the best.

Replays a few recorded groups of validation/tune/ in the benchmark's new-user setting (only the platform
validation/tune/host.json, no application profile; the variants as recorded and with deviations shrunk to a
tenth and with the two best 0.5 % apart), 10 seeds each, with bench.py's own replay functions. Fails when, on a group and variant where running
every configuration once reaches P(regret <= 3 %) >= 0.9, the median machine time of mmgp tune exceeds it.
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


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    mmgp = sys.argv[1]
    failures, checked = [], 0
    with tempfile.TemporaryDirectory() as folder:
        for group in bench.groups() + [steady_program()]:
            name = group[0]
            if name not in GROUPS and name != "steady-sleep-U8":
                continue
            for variant in ("a", "b", "c"):
                path, reps, truth, exh_cost, scen, extra = bench.setting_replay(group, variant, folder)
                exh = [bench.exhaustive(reps, sd) for sd in range(1, SEEDS + 1)]
                exh_p = bench.summary(exh, truth, exh_cost)["p_within_3pct"]
                tuned = [bench.run_tune(mmgp, scen, path, sd, extra) for sd in range(1, SEEDS + 1)]
                fraction = statistics.median(r["machine_s"] for r in tuned) / exh_cost
                print(f"{name} ({variant}): exhaustive trial P {exh_p:.2f}; mmgp tune {100 * fraction:.1f} % of its "
                      f"machine time")
                if exh_p >= 0.9:
                    checked += 1
                    if fraction > 1:
                        failures.append(f"{name} ({variant}): {100 * fraction:.1f} % of exhaustive trial's machine time")
    if checked == 0:  # nothing compared must not pass
        print("no group where exhaustive trial reaches P >= 0.9: nothing checked")
        return 1
    for f in failures:
        print(f"FAIL {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
