#!/usr/bin/env python3
"""The tuner across nodes on a simulated cluster: skeleton.c (100 phases of 50 ms of computation split over all
ranks and threads, one 2 KiB allreduce each) simulated by SimGrid SMPI over nodes x m x p, written as a tune
benchmark group (validation/tune/groups/smpi-fattree-skel-U1.csv or smpi-gige-skel-U1.csv, the replay format
bench.py reads back).

The grid: nodes 1, 2, 4, 8, 16 x m 1, 2, 4, 8 x every p with m p <= 8 (the described 8-core node full or not;
75 configurations, at most 128 ranks). p divides each phase's computation as in sweep_skeleton.py (SMPI simulates
ranks, not threads). The simulator is deterministic, so each configuration is simulated once and recorded once
(one repetition, no noise added: a replay of it always draws the same time). Policy edtlp (the skeleton
off-loads nothing; the column is the replay format's), units 1.

    python3 validation/simulate/sweep_nodes_group.py                              # fattree-ib.xml: seconds
    python3 validation/simulate/sweep_nodes_group.py --cluster gige --calibrate   # gige.xml: its tables too

Writes the group CSV and CLUSTER-nodes-group.txt beside this file (the simulated times, each simulation's wall
and CPU time, the totals). The scenario bench.py pairs the group with is scenario-skeleton-CLUSTER.json here,
its platform (the prior's and the new user's) PLATFORM[CLUSTER]: fattree-ib-platform.json as check_tables.py
writes it (1-64 nodes x 1-8 processes per node); gige-platform.json has 1-2 processes per node only, so the GigE
group has its own, gige-ppn8-platform.json (--calibrate: mmgp calibrate --simulate gige.xml --nodes 1:16 --ppn 8,
about 20 s here).
"""
import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PHASES, WORK_S, BYTES = 100, 0.05, 2048
NODES, MS, CORES = [1, 2, 4, 8, 16], [1, 2, 4, 8], 8
SPEED = {"fattree-ib": "10Gf", "gige": "1Gf"}  # sweep_skeleton.py's (computation is not simulated either way)
SHORT = {"fattree-ib": "fattree", "gige": "gige"}
PLATFORM = {"fattree-ib": "fattree-ib-platform.json", "gige": "gige-ppn8-platform.json"}


def simulate(exe, xml, nodes, m, p, d, speed):
    hosts = os.path.join(d, f"h{nodes}x{m}")
    with open(hosts, "w") as f:
        for n in range(nodes):
            f.write(f"node-{n}\n" * m)
    t0, c0 = time.time(), resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(["nice", "-n", "19", "smpirun", "-np", str(nodes * m), "-platform", xml, "-hostfile", hosts,
                          "--cfg=smpi/simulate-computation:no", f"--cfg=smpi/host-speed:{speed}",
                          "--log=root.thres:critical", exe, str(PHASES), str(WORK_S), str(BYTES), str(p)],
                         capture_output=True, text=True, check=True).stdout
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (c1.ru_utime + c1.ru_stime) - (c0.ru_utime + c0.ru_stime)
    return float(out.strip().splitlines()[-1]), time.time() - t0, cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cluster", default="fattree-ib", choices=sorted(SPEED))
    ap.add_argument("--exe", help="an already built skeleton (default: smpicc skeleton.c into a temporary folder)")
    ap.add_argument("--calibrate", action="store_true", help="gige: write gige-ppn8-platform.json first")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    a = ap.parse_args()
    xml = os.path.join(HERE, a.cluster + ".xml")
    name = f"smpi-{SHORT[a.cluster]}-skel-U1"
    if a.calibrate and a.cluster == "gige":
        rel = lambda f: os.path.relpath(os.path.join(HERE, f), ROOT)
        subprocess.run(["nice", "-n", "19", os.path.join(os.path.abspath(a.build), "cli", "mmgp"), "calibrate",
                        "--simulate", rel("gige.xml"), "--node", rel("node-8core.json"), "--nodes", f"1:{max(NODES)}",
                        "--ppn", str(CORES), "-q", "-o", rel(PLATFORM["gige"])], cwd=ROOT, check=True)
    group = os.path.join(ROOT, "validation", "tune", "groups", name + ".csv")
    log = [f"# {name}: skeleton.c ({PHASES} phases x {WORK_S} s / (nodes m p), one {BYTES}-byte allreduce each) "
           f"simulated by SMPI on {a.cluster}.xml, one run per configuration (deterministic)",
           f"# python3 validation/simulate/sweep_nodes_group.py --cluster {a.cluster}; "
           f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {os.getloadavg()[0]:.1f} at start",
           f"{'nodes':>5} {'m':>2} {'p':>2} {'ranks':>5} {'simulated_s':>12} {'wall_s':>7} {'cpu_s':>6}"]
    rows, t_all, cpu_all, slowest = [], time.time(), 0.0, (0.0, "")
    with tempfile.TemporaryDirectory() as d:
        exe = a.exe
        if not exe:
            exe = os.path.join(d, "skeleton")
            subprocess.run(["nice", "-n", "19", "smpicc", "-O2", os.path.join(HERE, "skeleton.c"), "-o", exe],
                           check=True, capture_output=True)
        for nodes in NODES:
            for m in MS:
                for p in range(1, CORES // m + 1):
                    t, wall, cpu = simulate(exe, xml, nodes, m, p, d, SPEED[a.cluster])
                    cpu_all += cpu
                    slowest = max(slowest, (wall, f"{nodes} x {m} x {p}"))
                    rows.append((m, p, nodes, t))
                    log.append(f"{nodes:>5} {m:>2} {p:>2} {nodes * m:>5} {t:>12.6f} {wall:>7.2f} {cpu:>6.2f}")
                    print(log[-1], file=sys.stderr, flush=True)
    with open(group, "w") as f:
        f.write("m,p,nodes,policy,units,time_s,censored,bound_s\n")
        for m, p, nodes, t in sorted(rows):
            f.write(f"{m},{p},{nodes},edtlp,1,{t:.6f},0,\n")
    best = min(rows, key=lambda r: r[3])
    log.append(f"# {len(rows)} configurations in {time.time() - t_all:.1f} s of wall time, {cpu_all:.1f} s of CPU; "
               f"slowest simulation {slowest[0]:.2f} s ({slowest[1]}, nodes x m x p); fastest configuration "
               f"m={best[0]} p={best[1]} nodes={best[2]}: {best[3]:.6f} s")
    open(os.path.join(HERE, f"{a.cluster}-nodes-group.txt"), "w").write("\n".join(log) + "\n")
    print(log[-1])
    print(f"wrote {os.path.relpath(group, ROOT)}")


if __name__ == "__main__":
    main()
