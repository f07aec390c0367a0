#!/usr/bin/env python3
"""The `validation` meson test (about 30-60 s): keeps the measure -> fit -> validate -> plot pipeline honest.

1. Regenerates the committed reports from the committed data (validation/offload, validation/raxml) in a
   temporary copy and checks that the summaries equal the committed summary.json (the report is a pure
   function of the committed measurements and the model).
2. Measures a tiny subset live (simulated 8x200 alignment on the off-load runtime, 6 configurations;
   RAxML on 8 taxa x 300 sites, 3 configurations x B = 1, 2 (5 cases: B=1 m=2 pooled into m=1), with its synchronisations counted) and runs the report on it: the
   pipeline must work end to end and produce the JSON keys and plots. Accuracy is not asserted on the live
   subset (CI machines are loaded); it is asserted on the committed data by step 1.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def same(a, b, path=""):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in set(a) | set(b):
            if k not in a or k not in b:
                check(False, f"summary key {path}/{k} present in only one of committed and regenerated")
            else:
                same(a[k], b[k], f"{path}/{k}")
    elif isinstance(a, list) and isinstance(b, list):
        check(len(a) == len(b), f"{path}: list lengths differ")
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}/{i}")
    elif isinstance(a, float) or isinstance(b, float):
        check(a is not None and b is not None and math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9),
              f"{path}: committed {a}, regenerated {b}")
    else:
        check(a == b, f"{path}: committed {a!r}, regenerated {b!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    a = ap.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="mmgp-validation-") as tmp:
        # 1. committed data -> same report
        for kind in ("offload", "raxml"):
            src = os.path.join(HERE, kind)
            if not os.path.exists(os.path.join(src, "runs.csv")):
                print(f"note: no committed {kind} data", file=sys.stderr)
                continue
            dst = os.path.join(tmp, "committed", kind)
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("plots"))
            subprocess.run([py, os.path.join(HERE, "report.py"), "--build", a.build, "--dir", dst, "--kind", kind,
                            "--no-plots"], check=True, stdout=subprocess.DEVNULL)
            committed = json.load(open(os.path.join(src, "summary.json")))
            regenerated = json.load(open(os.path.join(dst, "summary.json")))
            same(committed, regenerated, kind)
        # 2. live tiny subset
        off = os.path.join(tmp, "live", "offload")
        subprocess.run([py, os.path.join(HERE, "sweep_offload.py"), "--quick", "--build", a.build, "--out", off],
                       check=True, stderr=subprocess.DEVNULL)
        for f in ("machine.json", "platform-calibrated.json", "app-sim8x200.json", "runs.csv"):
            check(os.path.exists(os.path.join(off, f)), f"live offload: {f} written")
        subprocess.run([py, os.path.join(HERE, "report.py"), "--build", a.build, "--dir", off, "--kind", "offload"],
                       check=True, stdout=subprocess.DEVNULL)
        rep = json.load(open(os.path.join(off, "report.json")))
        for k in ("cases", "mean_abs_err_pct", "max_abs_err_pct", "std_abs_err_pct", "optimal_hit", "regret_pct",
                  "censored", "censored_right", "censored_ranked_last", "fitted", "held_back"):
            check(k in rep["summary"], f"live offload: summary key {k}")
        check(rep["summary"]["cases"] == 6, "live offload: 6 cases")
        for c in rep["cases"]:
            check(c["predicted_s"] > 0 and c["measured_s"] > 0, f"live offload: {c['label']} has times")
        if shutil.which("gnuplot"):
            for f in ("scatter.svg", "scatter.png", "sim8x200_U3.svg", "sim8x200_U3.png"):
                check(os.path.getsize(os.path.join(off, "plots", f)) > 1000, f"live offload: plot {f}")
        if shutil.which("raxmlHPC-PTHREADS-SSE3"):
            rx = os.path.join(tmp, "live", "raxml")
            subprocess.run([py, os.path.join(HERE, "sweep_raxml.py"), "--quick", "--out", rx], check=True,
                           stderr=subprocess.DEVNULL)
            shutil.copy(os.path.join(off, "platform-calibrated.json"), rx)
            subprocess.run([py, os.path.join(HERE, "report.py"), "--build", a.build, "--dir", rx, "--kind", "raxml"],
                           check=True, stdout=subprocess.DEVNULL)
            rep = json.load(open(os.path.join(rx, "report.json")))
            # (m, p) = (1, 2), (1, 3), (2, 2) at B = 1 and 2; at B = 1, m = 2 starts the one process of m = 1,
            # so its runs are pooled into (1, 2): 5 cases, and the pooled case says so.
            check(rep["summary"]["cases"] == 5, "live raxml: 5 cases (3 configurations x B = 1, 2, less the pooled one)")
            pooled = [c for c in rep["cases"] if "pooled with the runs labelled m=2" in c["source"]]
            check(len(pooled) == 1 and pooled[0]["label"].endswith("B=1 m=1 p=2"),
                  "live raxml: B=1 m=2 p=2 pooled into B=1 m=1 p=2")
            bar = json.load(open(os.path.join(rx, "machine.json"))).get("barriers", {}).get("8x300", {})
            check(bar.get("N_per_bootstrap", 0) > 0 and bar.get("start_up_jobs", -1) >= 0,
                  "live raxml: synchronisations per bootstrap counted (machine.json barriers)")
            check(any(c["role"] == "fitted" for c in rep["cases"]), "live raxml: a fitted case")
            check(sum(c["role"] == "fitted" for c in rep["cases"]) <= len(rep["cases"]) // 3, "live raxml: <= 1/3 fitted")
        else:
            print("note: raxml not installed, RAxML subset skipped", file=sys.stderr)
    if failures:
        print(f"{len(failures)} failure(s)", file=sys.stderr)
        sys.exit(1)
    print("validation pipeline: OK")


if __name__ == "__main__":
    main()
