#!/usr/bin/env python3
"""mmgp tune on real RAxML on this machine, from calibration to the chosen mapping, checked against an exhaustive
sweep of the same space.

    python3 validation/tune/live_raxml.py [--build build] [--reps 3]

1. mmgp calibrate --quick -o live/platform.json (this machine, time-shared description);
2. mmgp tune live/scenario.json (that platform + RAxML's fitted application profile as the prior, m in 1..4,
   p in 1..4, 4 bootstraps per run) --launcher local -- raxmlHPC-PTHREADS-SSE3 ..., journal live/journal.jsonl;
3. the same command at every configuration of the space, --reps times each, bounded like the recorded sweeps
   (live/sweep.csv);
4. live/report.txt: the tune's choice, its regret against the sweep's medians, and the machine time of each.
"""
import csv
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "validation"))
import common  # noqa: E402  (validation/common.py: the live scripts' start, the sweeps' bounded wait)
LIVE = os.path.join(HERE, "live")
ALN = os.path.join(ROOT, "validation", "raxml", "inputs", "16x1200.phy")
UNITS = 4
# One rank's share of the bootstraps ({units}) with p threads ({p}), in a directory of its own. The processes are
# not bound to cores (--no-bind): the calibrated platform describes threads time-sharing the cores, and RAxML's
# spinning threads pinned to fewer cores than they are (taskset -c 0 raxmlHPC-PTHREADS -T 1) livelock.
PROGRAM = ["sh", "-c", "d=$(mktemp -d) && raxmlHPC-PTHREADS-SSE3 -T {p} -m GTRCAT -s " + ALN +
           " -n r{rank} -w $d -p 12345 -x 54321 -N {units} >/dev/null; s=$?; rm -rf $d; exit $s"]


def main():
    a, mmgp = common.live_tune_start(__doc__, LIVE, LIVE)
    t0 = time.time()
    subprocess.run([mmgp, "calibrate", "--quick", "--quiet", "-o", os.path.join(LIVE, "platform.json")], check=True)
    calib_s = time.time() - t0
    scen = {"schema": "mmgp/1", "name": "RAxML 16x1200 on this machine", "platform": "platform.json",
            "application": "../../raxml/app-fitted-16x1200.json", "search": {"m": [1, 4], "p": [1, 4]}}
    scen_path = os.path.join(LIVE, "scenario.json")
    json.dump(scen, open(scen_path, "w"), indent=1)
    tune = subprocess.run([mmgp, "tune", scen_path, "--units", str(UNITS), "--launcher", "local", "--no-bind",
                           "--journal", os.path.join(LIVE, "journal.jsonl"), "--plot", os.path.join(LIVE, "tune.svg"),
                           "--json", "--"] + PROGRAM, capture_output=True, text=True)
    if tune.returncode != 0:
        sys.exit(f"live: mmgp tune failed: {tune.stderr}")
    j = json.loads(tune.stdout)
    open(os.path.join(LIVE, "tune.json"), "w").write(json.dumps(j, indent=1) + "\n")

    # The exhaustive sweep: every configuration of the space, --reps times, in rounds.
    rows = []
    space = [(c["m"], c["p"]) for c in j["configurations"]]  # the tune's feasible space (m*p <= the platform's apus)
    # Every sweep run is bounded like the recorded sweeps: 5x the fastest run so far (at least 5 s); a run past
    # it is killed (its process group) and recorded as censored at the bound, and not run again.
    fastest, censored_once = None, set()
    for rep in range(a.reps):
        for m, p in space:
            if (m, p) in censored_once:
                continue  # censored once: not repeated (it would only cost the bound again)
            r = subprocess.run([mmgp, "launch", scen_path, "--m", str(m), "--p", str(p), "--units", str(UNITS),
                                "--launcher", "local", "--no-bind", "--json", "--"] + PROGRAM, capture_output=True, text=True, check=True)
            command = json.loads(r.stdout)["command"]
            bound = max(5.0, 5 * fastest) if fastest else 300.0
            t0 = time.monotonic()
            pr = subprocess.Popen(["sh", "-c", command], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True)
            wall, expired = common.wait_bounded([pr], bound, t0)
            rc, cens = (None, 1) if expired else (pr.returncode, 0)
            if expired:
                wall = bound
                censored_once.add((m, p))
            if not cens and rc == 0:
                fastest = min(fastest or wall, wall)
            rows.append({"m": m, "p": p, "nodes": 1, "rep": rep, "time_s": f"{wall:.4f}", "exit": rc,
                         "censored": cens, "bound_s": f"{bound:.2f}"})
            print(f"sweep rep {rep} m={m} p={p}: {wall:.2f} s{' CENSORED' if cens else ''}", file=sys.stderr, flush=True)
    with open(os.path.join(LIVE, "sweep.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["m", "p", "nodes", "rep", "time_s", "exit", "censored", "bound_s"])
        w.writeheader()
        w.writerows(rows)
    med = {(m, p): statistics.median(float(r["time_s"]) for r in rows if (r["m"], r["p"]) == (m, p)) for m, p in space}
    best = min(med, key=med.get)
    chosen = (j["chosen"]["m"], j["chosen"]["p"]) if j["chosen"] else None
    sweep_s = sum(float(r["time_s"]) for r in rows)
    lines = [
        f"# mmgp tune on RAxML (16 taxa x 1200 sites, {UNITS} bootstraps per run) on this machine: "
        "python3 validation/tune/live_raxml.py",
        f"calibration (mmgp calibrate --quick): {calib_s:.1f} s",
        f"tune: stopped: {j['stop']} after {j['runs']} runs, {j['machine_s']:.2f} machine s; chose m={chosen[0]} p={chosen[1]}"
        if chosen else "tune: chose nothing",
        f"sweep: {len(space)} configurations x {a.reps} runs, {sweep_s:.2f} s; one run each would take about "
        f"{sum(med.values()):.2f} s",
        f"sweep's best: m={best[0]} p={best[1]} {med[best]:.3f} s (median of {a.reps})",
        (f"tune's choice in the sweep: {med[chosen]:.3f} s, regret {100 * (med[chosen] / med[best] - 1):.1f} %" if chosen else ""),
        f"tune's machine time / one run of each configuration: {100 * j['machine_s'] / sum(med.values()):.0f} %",
        "",
        "sweep medians (s):",
    ] + [f"  m={m} p={p}: {med[(m, p)]:.3f}" for m, p in sorted(space, key=lambda k: med[k])]
    open(os.path.join(LIVE, "report.txt"), "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
