#!/usr/bin/env python3
"""Where the libpll program's short GPU runs lose their 50-80 ms: the same mappings run with the host thread blocking
on its grids (--policy edtlp, the program's and the sweep's way) and spinning (--policy os), alternated, repeated.

    python3 validation/gpu/wait_noise.py --bin gpu-bundle/bin --out DIR [--reps 6]       # on the device
    python3 validation/gpu/wait_noise.py --out DIR --predict-with SWEEPDIR [--mmgp build/cli/mmgp]  # here

A run's time is the off-load runtime's own (wall_s, from the start signal to the last process's finish); its
roundtrip_s is the time the host threads spent in their off-loads' round trips. Time-sliced mappings of one process
first (no daemon), then mappings of several processes under MPS where the daemon can be started (as root; stopped
after). Writes DIR/wait-noise.csv (every run) and DIR/wait-noise.txt (per mapping and policy: median, min, max
of wall_s and roundtrip_s), each by temporary file and rename. With --predict-with, no run: DIR/wait-noise.csv's
mappings predicted with nothing fitted on the platform and profile of a sweep recorded on the same machine
(SWEEPDIR/platform.json and app.json, validation/sweep_gpu.py's), every policy its own group:
DIR/wait-noise-sweep.json (the cases, in the GPU data sets' format) and DIR/validate-wait-noise.txt (mmgp validate).
Standard library only.
"""
import argparse
import csv
import io
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402  (validation/common.py: files written atomically, the log)
import sweep_gpu  # noqa: E402  (the MPS daemon)

MAPPINGS = [("time_sliced", 1, 132), ("time_sliced", 1, 264), ("mps", 2, 132), ("mps", 4, 32), ("mps", 4, 132)]
POLICIES = ("edtlp", "os")
FIELDS = ["sharing", "m", "p", "policy", "rep", "wall_s", "roundtrip_s", "failed"]


def one_run(a, sharing, m, p, policy):
    env = dict(os.environ, MMGP_SHARING=sharing)
    env.pop("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", None)
    cmd = [os.path.join(a.bin, "mmgp-offload-run"), "--accelerator", a.accelerator, "--m", str(m), "--p", str(p),
           "--policy", policy, "--timeout", "20", "--simulate", a.simulate, "--units", str(a.units)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=50, env=env)
    except subprocess.TimeoutExpired:
        return None, None, "timed out"
    if r.returncode != 0:
        return None, None, f"exit {r.returncode}: {r.stderr.strip()[:200]}"
    j = json.loads(r.stdout)
    return j["wall_s"], j["timers"].get("roundtrip_s"), ""


def summary(rows):
    out = ["mapping                      policy   runs   wall_s median [min, max]        roundtrip_s median [min, max]"]
    keys = []
    for r in rows:
        k = (r["sharing"], r["m"], r["p"], r["policy"])
        if k not in keys:
            keys.append(k)
    for k in keys:
        ok = [r for r in rows if (r["sharing"], r["m"], r["p"], r["policy"]) == k and not r["failed"]]
        if not ok:
            out.append(f"{k[0]} m={k[1]} p={k[2]}  {k[3]}: every run failed")
            continue
        w = [r["wall_s"] for r in ok]
        t = [r["roundtrip_s"] for r in ok if r["roundtrip_s"] is not None]
        rt = f"{statistics.median(t) * 1e3:8.1f} [{min(t) * 1e3:.1f}, {max(t) * 1e3:.1f}] ms" if t else "-"
        out.append(f"{k[0]:12} m={k[1]} p={k[2]:<4}  {k[3]:6} {len(ok):5}   {statistics.median(w) * 1e3:8.1f} "
                   f"[{min(w) * 1e3:.1f}, {max(w) * 1e3:.1f}] ms   {rt}")
    return "\n".join(out) + "\n"


def predict_with(a):
    """The recorded runs as validation cases (the median of each mapping and policy) on SWEEPDIR's platform and
    profile, and mmgp validate's report of them."""
    with open(os.path.join(a.out, "wait-noise.csv")) as f:
        rows = [r for r in csv.DictReader(f) if not r["failed"]]
    cases = []
    for r in rows:
        key = {"m": int(r["m"]), "p": int(r["p"]), "sharing": r["sharing"], "policy": r["policy"]}
        if any(all(c[k] == v for k, v in key.items()) for c in cases):
            continue
        runs = [float(x["wall_s"]) for x in rows
                if (int(x["m"]), int(x["p"]), x["sharing"], x["policy"]) == tuple(key.values())]
        cases.append(dict(key, group=f"policy {r['policy']}", measured_s=statistics.median(runs), runs=runs,
                          source=f"validation/gpu/wait_noise.py, {len(runs)} runs"))
    here = os.path.abspath(a.out)
    rel = lambda name: os.path.relpath(os.path.join(os.path.abspath(a.predict_with), name), here)  # noqa: E731
    doc = {"schema": "mmgp/1", "kind": "validation",
           "name": "the libpll program on the GPU, its host thread blocking and spinning, nothing fitted",
           "scenario": {"schema": "mmgp/1", "name": "libpll-gpu", "platform": rel("platform.json"),
                        "application": rel("app.json")},
           "cases": cases}
    sweep = os.path.join(a.out, "wait-noise-sweep.json")
    common.write_json(sweep, doc)
    v = subprocess.run([a.mmgp, "validate", sweep], capture_output=True, text=True)
    report = v.stdout + "".join(line + "\n" for line in v.stderr.splitlines() if "calibrated on another machine" not in line)
    common.write_if_changed(os.path.join(a.out, "validate-wait-noise.txt"), report)
    sys.stdout.write(report)
    return v.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", help="the folder holding mmgp-offload-run (a bundle's bin/)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=6, help="runs per mapping and policy (default 6)")
    ap.add_argument("--simulate", default="24:50000", help="TAXA:SITES (default 24:50000, the device check's)")
    ap.add_argument("--units", type=int, default=4)
    ap.add_argument("--accelerator", default="cuda", help="cuda (default), or cpu to try the script without a GPU")
    ap.add_argument("--predict-with", help="a recorded sweep's folder: predict DIR's runs with its platform and profile")
    ap.add_argument("--mmgp", default=os.path.join(common.ROOT, "build", "cli", "mmgp"))
    a = ap.parse_args()
    if a.predict_with:
        sys.exit(predict_with(a))
    if not a.bin:
        ap.error("--bin is needed to run (or --predict-with to predict recorded runs)")
    os.makedirs(a.out, exist_ok=True)
    rows = []
    daemon = False
    try:
        for sharing, m, p in MAPPINGS:
            if sharing == "mps" and not daemon:
                daemon = sweep_gpu.mps_daemon(True)
                if not daemon:
                    common.log("the MPS daemon could not be started: the MPS mappings not run")
                    break
            for rep in range(a.reps):
                for policy in POLICIES:
                    wall, rt, why = one_run(a, sharing, m, p, policy)
                    rows.append({"sharing": sharing, "m": m, "p": p, "policy": policy, "rep": rep, "wall_s": wall,
                                 "roundtrip_s": rt, "failed": why})
            common.log(f"{sharing} m={m} p={p}: " + ", ".join(
                f"{pol} {[round(r['wall_s'] * 1e3, 1) for r in rows[-2 * a.reps:] if r['policy'] == pol and r['wall_s']]}"
                for pol in POLICIES))
    finally:
        if daemon:
            sweep_gpu.mps_daemon(False)
        buf = io.StringIO()
        w = csv.DictWriter(buf, FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        common.write_if_changed(os.path.join(a.out, "wait-noise.csv"), buf.getvalue())
        common.write_if_changed(os.path.join(a.out, "wait-noise.txt"), summary(rows))
    sys.stdout.write(summary(rows))


if __name__ == "__main__":
    main()
