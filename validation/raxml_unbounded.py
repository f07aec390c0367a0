#!/usr/bin/env python3
"""One RAxML configuration without the sweep's bound, against the prediction of the committed data set.

The sweep stops a run at 5x the fastest configuration of its group and records it as censored, so the
oversubscribed configurations it reports only say "slower than the bound". This measures one of them to
the end (up to --timeout) and prints the measured wall times next to what the data set's fitted profile
predicts (mmgp validate on a one-case validation file beside the data set's scenario):

    validation/raxml_unbounded.py 16x1200 --m 1 --p 3 --bootstraps 1
    validation/raxml_unbounded.py 16x1200 --m 2 --p 2 --bootstraps 2 --repetitions 3

The command line of every run is the sweep's (sweep_raxml.run_config), on a copy of the data set's
inputs/INPUT.phy; nothing is written to the data set. A run stopped at --timeout counts as its bound, as in
the report's median.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import measured  # noqa: E402
import sweep_raxml  # noqa: E402


def validate(mmgp, scen, case):
    """mmgp validate on a one-case file: the case as the report computes it, or exits with mmgp's message."""
    with tempfile.TemporaryDirectory() as td:
        vf = os.path.join(td, "v.json")
        with open(vf, "w") as f:
            json.dump({"schema": "mmgp/1", "kind": "validation", "name": "one unbounded RAxML configuration",
                       "scenario": os.path.abspath(scen), "cases": [case]}, f)
        r = subprocess.run([mmgp, "validate", vf, "--json"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"raxml_unbounded: {r.stderr.strip()}")
    return json.loads(r.stdout)["cases"][0]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input", help="an input of the data set, e.g. 16x1200 (DIR/inputs/INPUT.phy)")
    ap.add_argument("--m", type=int, required=True, help="concurrent RAxML processes")
    ap.add_argument("--p", type=int, required=True, help="threads per process (-T), at least 2")
    ap.add_argument("--bootstraps", type=int, required=True, help="B, shared by the m processes")
    ap.add_argument("--repetitions", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per run (default 600)")
    ap.add_argument("--dir", default=os.path.join(common.ROOT, "validation", "raxml"), help="the data set")
    ap.add_argument("--mmgp", default=os.path.join(common.ROOT, "build", "cli", "mmgp"))
    a = ap.parse_args()
    aln = os.path.join(a.dir, "inputs", f"{a.input}.phy")
    scen = os.path.join(a.dir, f"scenario-{a.input}.json")
    for path in (aln, scen):
        if not os.path.exists(path):
            sys.exit(f"raxml_unbounded: {path}: no such file (an input of {a.dir}: run validation/report.py first)")
    if a.p < 2 or a.m < 1 or a.bootstraps < 1 or a.repetitions < 1 or not a.timeout > 0:
        sys.exit("raxml_unbounded: expected --p >= 2, --m, --bootstraps and --repetitions >= 1, --timeout > 0")
    if not os.access(a.mmgp, os.X_OK):
        sys.exit(f"raxml_unbounded: {a.mmgp}: not an executable (build the project first, or give --mmgp)")
    if shutil.which(sweep_raxml.BINARY) is None:
        sys.exit(f"raxml_unbounded: {sweep_raxml.BINARY} not found (apt-get install raxml)")
    label = f"{a.input} B={a.bootstraps} m={a.m} p={a.p}"
    case = {"m": a.m, "p": a.p, "policy": "edtlp", "application": {"units": a.bootstraps}, "label": label}
    validate(a.mmgp, scen, dict(case, measured_s=1.0))  # the configuration is feasible, before measuring
    rows = []
    try:
        for rep in range(a.repetitions):
            # RAxML writes ALN.reduced beside its input: run on a copy, the data set stays as it is.
            with tempfile.TemporaryDirectory() as wd:
                copy = os.path.join(wd, os.path.basename(aln))
                shutil.copyfile(aln, copy)
                load = common.load1()
                wall, censored = sweep_raxml.run_config(copy, a.m, a.p, a.bootstraps, a.timeout, wd)
            common.log(f"rep {rep} {label}: {'> ' if censored else ''}{wall:.2f} s{' (timeout)' if censored else ''}")
            rows.append({"wall_s": f"{wall:.4f}", "censored": str(int(censored)), "load1_before": f"{load:.2f}"})
    except KeyboardInterrupt:
        common._stop_children()
        raise
    # The median as the report takes it (a timed-out run counts as its bound, after every finished one).
    (agg,) = measured.aggregate([dict(r, key="k") for r in rows], ["key"])
    c = validate(a.mmgp, scen, dict(case, measured_s=agg["measured_s"], censored=agg["censored"], **({"runs": agg["runs"]} if agg["runs"] else {})))
    finished = [float(r["wall_s"]) for r in rows if r["censored"] == "0"]
    print(f"{label}: measured {'> ' if c['censored'] else ''}{c['measured_s']:.2f} s ({len(finished)} of {len(rows)} "
          f"runs finished: {', '.join(f'{w:.2f}' for w in finished) or '-'}), predicted {c['predicted_s']:.2f} s"
          + (f" ({c['err_pct']:+.1f} %)" if not c["censored"] else
             f" ({'at least' if c['predicted_s'] >= c['measured_s'] else 'BELOW'} the timeout)"))


if __name__ == "__main__":
    main()
