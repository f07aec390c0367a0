#!/usr/bin/env python3
"""Sweep (b): RAxML from Debian (raxmlHPC-PTHREADS-SSE3). Its threads are the loop-level
parallelism p (p >= 2: the PTHREADS build needs 2 threads); m concurrent processes share B rapid bootstraps
(task-level parallelism: process i runs B_i = B/m bootstraps, the first B mod m one more, seeds 12345+i).
Includes oversubscribed configurations (m*p above the cores). Every run is bounded by 5x the fastest
configuration of its group measured so far (at least 2 s, the first run 300 s) and recorded as censored at
the bound when it does not finish.

    validation/sweep_raxml.py                        # full sweep into validation/raxml/
    validation/sweep_raxml.py --quick --out DIR      # tiny subset (the `validation` meson test)

Inputs are derived from the alignment Debian's examl ships (/usr/share/doc/examl/testData/49.gz, 49 x 1200
DNA; raxml's own test_data is 10 x 40 with a base missing, which RAxML refuses): the first T taxa, written to
OUT/inputs/ at run time. Writes OUT/machine.json and OUT/runs.csv, and copies the platform calibration of the
offload sweep run before it (OUT/../offload/platform-calibrated.json, when there is one) to
OUT/platform-calibrated.json (all at the end, by temporary file and rename; an interrupted sweep keeps the
previous files, see docs/BAD_INPUT.md); validation/report.py fits and reports.
"""
import argparse
import csv
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import raxml_barriers  # noqa: E402

EXAML_49 = "/usr/share/doc/examl/testData/49.gz"
BINARY = "raxmlHPC-PTHREADS-SSE3"

EXTRA_SECONDS = 240.0  # default time for the extra repetitions (common.extra_repetitions_step)


def make_input(path, taxa, sites):
    with gzip.open(EXAML_49, "rt") as f:
        text = f.read().split("\n")
    rows = [l.split() for l in text[1:] if l.strip()]
    common.write_if_changed(path, f"{taxa} {sites}\n" + "".join(f"{r[0]} {r[1][:sites]}\n" for r in rows[:taxa]))


def run_config(aln, m, p, B, bound, workdir):
    """Starts m raxml processes with p threads sharing B bootstraps; returns (wall_s, censored).

    The wall time ends when the last process is reaped by a blocking wait. (Popen.wait with a timeout polls
    with sleeps of up to 50 ms, which rounded every run up to the next poll: until 2026-11-22 10:39 UTC the
    RAxML times came in steps of ~50 ms, e.g. 0.114 / 0.164 / 0.215 s for one configuration.) The bound is
    enforced by a timer thread that kills the process groups."""
    procs = []
    t0 = time.monotonic()
    for i in range(m):
        b = B // m + (1 if i < B % m else 0)
        if b == 0:
            continue
        cmd = [BINARY, "-T", str(p), "-m", "GTRCAT", "-s", aln, "-n", f"r{i}", "-w", workdir,
               "-p", str(12345 + i), "-x", str(54321 + i), "-N", str(b)]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
    wall, expired = common.wait_bounded(procs, bound, t0)
    if expired:
        return bound, True
    bad = [pr.returncode for pr in procs if pr.returncode != 0]
    if bad:
        raise RuntimeError(f"raxml exited with {bad} at m={m} p={p} B={B}")
    return wall, False


def parse_args():
    """The command line (the module's docstring above says what it runs)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(common.ROOT, "validation", "raxml"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repetitions", type=int, default=None)
    common.add_extra_repetition_args(ap, EXTRA_SECONDS, 9)
    return ap.parse_args()


def space(a):
    """What the sweep runs: (inputs {name: (taxa, sites)}, configurations (m, p), bootstrap counts, repetitions)."""
    if a.quick:
        return {"8x1200": (8, 1200)}, [(1, 2), (1, 3), (2, 2)], [1, 2], a.repetitions or 1
    return ({"16x1200": (16, 1200), "24x1200": (24, 1200)},
            [(1, 2), (2, 2), (1, 3), (1, 4), (3, 2), (2, 3), (4, 2), (2, 4)], [1, 2, 4, 8], a.repetitions or 3)


def describe(inputs):
    """machine.json's description of the runs: the machine, the binary and its version, the inputs and command."""
    info = common.machine_info([os.path.relpath(sys.argv[0], common.ROOT)] + sys.argv[1:])
    info["binary"] = shutil.which(BINARY)
    info["raxml_version"] = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "raxml"], capture_output=True,
                                           text=True).stdout
    info["inputs"] = {k: f"first {t} taxa x {s} sites of {EXAML_49}" for k, (t, s) in inputs.items()}
    info["raxml_command"] = (f"{BINARY} -T p -m GTRCAT -s ALN -n r<i> -w TMP -p 12345+i -x 54321+i -N B_i, "
                             "i = 0..m-1 started together; wall = first start to last exit")
    return info


def count_barriers(a, inputs, info):
    """N of the model: RAxML's synchronisations per bootstrap, counted in the program itself (gdb, one worker),
    for every input (written to OUT/inputs/ first)."""
    info["barriers"] = {}
    for name, (taxa, sites) in inputs.items():
        aln = os.path.join(a.out, "inputs", f"{name}.phy")
        make_input(aln, taxa, sites)
        try:
            info["barriers"][name] = raxml_barriers.barriers(aln)
        except raxml_barriers.BarrierError as e:
            sys.exit(f"sweep_raxml: counting RAxML's synchronisations: {e}")
        common.log(f"{name}: {info['barriers'][name]['N_per_bootstrap']} synchronisations per bootstrap, "
                   f"{info['barriers'][name]['start_up_jobs']} in the start-up")


FLOOR = 2.0  # seconds: the bound is 5x the fastest run of the group, at least this


def measure(a, inputs, best, censored_once, name, B, m, p, rep):
    """One bounded run of configuration (m, p) with B bootstraps, as a row of runs.csv; `best` holds each
    (input, B) group's fastest finished run so far, `censored_once` the configurations that reached their bound."""
    key = (name, B)
    aln = os.path.join(a.out, "inputs", f"{name}.phy")
    make_input(aln, *inputs[name])
    bound = max(FLOOR, 5.0 * best[key]) if key in best else 300.0
    l0 = common.load1()
    ext = common.ExternalCpu()
    with tempfile.TemporaryDirectory() as wd:
        wall, cens = run_config(os.path.abspath(aln), m, p, B, bound, wd)
    ext_share = ext.share(wall)
    if cens:
        censored_once.add((name, B, m, p))
    else:
        best[key] = min(best.get(key, wall), wall)
    common.log(f"rep {rep} {name} B={B} m={m} p={p}: {wall:.2f} s{' CENSORED' if cens else ''} (others {ext_share:.2f} core)")
    return {"input": name, "units": B, "m": m, "p": p, "policy": "edtlp", "rep": rep,
            "wall_s": f"{wall:.4f}", "censored": int(cens), "bound_s": f"{bound:.2f}",
            "load1_before": f"{l0:.2f}", "load1_after": f"{common.load1():.2f}",
            "external_cpu_share": f"{ext_share:.3f}"}


def join_calibration(a, info):
    """The predictions use the calibration of the offload sweep run just before (the same state of the
    machine): it joins this data set, renamed into place with runs.csv."""
    src = common.offload_calibration(a.out)
    if os.path.exists(src):
        cal = os.path.join(a.out, "platform-calibrated.json")
        shutil.copyfile(src, common.staging([cal], cal)[0])
        info["platform_calibration"] = "copy of ../offload/platform-calibrated.json (the offload sweep's mmgp calibrate)"
    elif os.path.exists(os.path.join(a.out, "platform-calibrated.json")):
        common.log(f"sweep_raxml: no {src}: the predictions keep the data set's older platform-calibrated.json")
        info["platform_calibration"] = "the data set's own platform-calibrated.json, older than these runs (no offload sweep)"


def main():
    a = parse_args()
    if shutil.which(BINARY) is None:
        sys.exit(f"sweep_raxml: {BINARY} not found (apt-get install raxml)")
    os.makedirs(os.path.join(a.out, "inputs"), exist_ok=True)
    common.begin_sweep(a.out, ["runs.csv", "machine.json", "platform-calibrated.json"])
    inputs, confs, bootstraps, reps = space(a)
    info = describe(inputs)
    count_barriers(a, inputs, info)
    info["bound"] = f"5 x the fastest configuration of the (input, B) group measured so far, at least {FLOOR} s"
    t0 = time.time()
    rows = []
    best = {}
    censored_once = set()
    for rep in range(reps):
        for name in inputs:
            for B in bootstraps:
                for (m, p) in confs:
                    if (name, B, m, p) in censored_once:
                        continue  # censored once: not repeated (it would only cost the bound again)
                    rows.append(measure(a, inputs, best, censored_once, name, B, m, p, rep))
    # More repetitions where the median is still uncertain (common.extra_repetitions); not for m > B, which
    # runs the processes of m = B (the report pools them).
    common.extra_repetitions_step(
        a, EXTRA_SECONDS, rows, ("input", "units", "m", "p"),
        lambda r: measure(a, inputs, best, censored_once, r["input"], r["units"], r["m"], r["p"], int(r["rep"]) + 1),
        info, reps, eligible=lambda r: int(r["m"]) <= int(r["units"]), which=" with m <= B")
    join_calibration(a, info)
    common.finish_sweep(a.out, rows, info, t0)


if __name__ == "__main__":
    main()
