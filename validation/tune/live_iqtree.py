#!/usr/bin/env python3
"""mmgp tune on real IQ-TREE 2 (MPI ranks x OpenMP threads) on this machine, as a new user runs it: a platform
calibrated here and the program, no application profile. Checked against an exhaustive sweep of the same space.

    python3 validation/tune/live_iqtree.py [--build build] [--reps 3] [--work SHORT]

1. mmgp calibrate --quick -o live-iqtree/platform.json (this machine);
2. mmgp tune live-iqtree/platform.json --m 1:4 --p 1:2 --units 800 --launcher openmpi --no-bind --oversubscribe
   -- iqtree2-mpi ... -nt {p} (the recorded sweep's input and options, validation/sweep_iqtree.py), journal
   live-iqtree/journal.jsonl;
3. every configuration of the space --reps times, run and bounded as the recorded sweep runs them
   (live-iqtree/sweep.csv);
4. live-iqtree/report.txt: the tune's choice, its regret against the sweep's medians, its machine time against
   running every configuration once (the sum of the sweep's medians, a stopped configuration at its bound).

With --work SHORT, the tune screens with short runs: -nstop {work}, --work SHORT:800 (IQ-TREE stops its search
after that many iterations without a better tree: a short run is the same search stopped sooner), everything in
live-iqtree-work/ (its own calibration and sweep).
"""
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "validation"))
import common  # noqa: E402  (validation/common.py: the live scripts' start)
import ranks_threads  # noqa: E402  (the recorded sweep's rounds and bounds)
import sweep_iqtree  # noqa: E402  (the recorded sweep's input, command and bounded run)

ALN = sweep_iqtree.ALIGNMENTS["24x1200"]
UNITS = sweep_iqtree.NSTOP


def live_dir(a):
    return os.path.join(HERE, "live-iqtree-work" if a.work else "live-iqtree")


def program(live, nstop):
    """One run: m ranks (mpirun -np {m}, rendered by mmgp's openmpi launcher) of p threads each. Unbound (--no-bind):
    bound to cores, IQ-TREE refuses p threads on one core. One output prefix, overwritten (-redo): the runs are one
    at a time."""
    return ["iqtree2-mpi", "-s", ALN, "-m", "GTR+G4", "-nt", "{p}", "-seed", "1", "-nstop", nstop, "-quiet",
            "-redo", "-pre", os.path.join(live, "work", "x")]


def sweep(reps):
    """Every configuration of the space reps times, in rounds, bounded as the recorded sweep bounds its runs."""
    program = sweep_iqtree.IqTree()

    def measure(name, m, p, rep, bound):
        wall, cens = program.run(name, m, p, bound)
        print(f"sweep rep {rep} m={m} p={p}: {wall:.2f} s{' CENSORED' if cens else ''}", file=sys.stderr, flush=True)
        return cens, wall, {"m": m, "p": p, "nodes": 1, "rep": rep, "time_s": f"{wall:.4f}", "censored": int(cens),
                            "bound_s": f"{bound:.2f}"}

    return ranks_threads.rounds(program, reps, measure)


def main():
    def more(ap):
        ap.add_argument("--work", type=int, default=0, help="screen with short runs of -nstop WORK (0: whole runs)")
    a, mmgp = common.live_tune_start(__doc__, live_dir, lambda a: os.path.join(live_dir(a), "work"), more)
    live = live_dir(a)
    work = ["--work", f"{a.work}:{UNITS}"] if a.work else []
    prog = program(live, "{work}" if a.work else str(UNITS))
    t0 = time.time()
    platform = os.path.join(live, "platform.json")
    subprocess.run([mmgp, "calibrate", "--quick", "--quiet", "-o", platform], check=True)
    calib_s = time.time() - t0
    # --timeout: the first run has no bound but this (nothing measured sets one yet), and a configuration whose
    # threads spin on each other can take minutes.
    cmd = [mmgp, "tune", platform, "--m", "1:4", "--p", "1:2", "--units", str(UNITS), "--launcher", "openmpi",
           "--no-bind", "--oversubscribe", "--timeout", "120", "--journal", os.path.join(live, "journal.jsonl"),
           "--plot", os.path.join(live, "tune.svg"), "--json"] + work + ["--"] + prog
    t0 = time.time()
    tune = subprocess.run(cmd, capture_output=True, text=True)
    tune_wall = time.time() - t0
    shutil.rmtree(os.path.join(live, "work"), ignore_errors=True)
    shutil.rmtree(os.path.join(live, "journal.jsonl.logs"), ignore_errors=True)  # the runs' logs: empty (-quiet)
    if tune.returncode != 0:
        sys.exit(f"live: mmgp tune failed: {tune.stderr}")
    j = json.loads(tune.stdout)
    with open(os.path.join(live, "tune.json"), "w") as f:
        f.write(json.dumps(j, indent=1) + "\n")
    rows = sweep(a.reps)
    with open(os.path.join(live, "sweep.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["m", "p", "nodes", "rep", "time_s", "censored", "bound_s"])
        w.writeheader()
        w.writerows(rows)
    space = sweep_iqtree.CONFS
    med = {k: statistics.median(float(r["time_s"]) for r in rows if (r["m"], r["p"]) == k) for k in space}
    stopped = {(r["m"], r["p"]) for r in rows if r["censored"]}
    best = min(med, key=med.get)
    once = sum(med.values())
    chosen = (j["chosen"]["m"], j["chosen"]["p"]) if j["chosen"] else None
    lines = [json.loads(line) for line in open(os.path.join(live, "journal.jsonl"))]
    runs = [x for x in lines[1:] if "mark" not in x]  # a --retry-failed session's marks are not runs
    lines = [
        f"# mmgp tune on IQ-TREE 2 (24 taxa x 1200 sites, GTR+G4, -nstop {UNITS}; MPI ranks x OpenMP threads) on this "
        "machine, as a new user (a platform calibrated here, no application profile)"
        + (f", screening with short runs (-nstop {a.work})" if a.work else "") + ": "
        "python3 validation/tune/live_iqtree.py" + (f" --work {a.work}" if a.work else ""),
        f"calibration (mmgp calibrate --quick): {calib_s:.1f} s",
        "tune: " + " ".join(os.path.basename(w) if w == mmgp else w for w in cmd[1:]),
        f"tune: stopped: {j['stop']} after {j['runs']} runs, {j['machine_s']:.1f} machine s ({tune_wall:.1f} s of wall "
        f"time with mmgp's own work); chose " + (f"m={chosen[0]} p={chosen[1]}" if chosen else "nothing"),
        "tune's runs: " + ", ".join(f"{r['m']}x{r['p']}{' short' if r.get('short') else ''} {r['wall_s']:.1f} s"
                                    f"{' (stopped)' if r['outcome'] == 'censored' else ''}" for r in runs if "wall_s" in r),
        f"sweep: {len(space)} configurations x {a.reps} runs (a configuration stopped at its bound once is not run "
        f"again); one run of each configuration: {once:.1f} s (medians; stopped ones at their bound)",
        f"sweep's best: m={best[0]} p={best[1]} {med[best]:.2f} s (median of {a.reps})",
        (f"tune's choice in the sweep: {med[chosen]:.2f} s, regret {100 * (med[chosen] / med[best] - 1):.1f} %" if chosen else ""),
        f"tune's machine time / one run of each configuration: {100 * j['machine_s'] / once:.0f} %",
        "",
        "sweep medians (s):",
    ] + [f"  m={m} p={p}: {med[(m, p)]:.2f}" + (" (stopped at its bound)" if (m, p) in stopped else "")
         for m, p in sorted(space, key=lambda k: med[k])]
    with open(os.path.join(live, "report.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
