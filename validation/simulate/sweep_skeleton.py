#!/usr/bin/env python3
"""The cluster model checked at scale: skeleton.c (100 phases of 50 ms of computation split over all threads,
one 2 KiB allreduce each) simulated by SMPI on the described clusters, against mmgp's prediction from the tables
`mmgp calibrate --simulate` wrote for the same file and node (node-8core.json, skeleton-app.json).

Per cluster: the tables (calibrate --simulate), then the skeleton at every node count x m in M (p = 8 / m, the
node full), each a case of an mmgp validation file grouped by node count (the optimum per node count), then
`mmgp validate`. Writes CLUSTER-platform.json, CLUSTER-cases.json and CLUSTER-report.txt beside this file.

    python3 validation/simulate/sweep_skeleton.py                 # fattree-ib 1..64 nodes, gige 1..256: minutes
    python3 validation/simulate/sweep_skeleton.py --large         # gige up to 1,024 nodes (m <= 2): longer
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PHASES, WORK_S, BYTES = 100, 0.05, 2048


def rel(path):
    return os.path.relpath(path, ROOT)


def simulate(exe, xml, nodes, m, p, d, speed):
    hosts = os.path.join(d, f"h{nodes}x{m}")
    with open(hosts, "w") as f:
        for n in range(nodes):
            f.write(f"node-{n}\n" * m)
    t0 = time.time()
    out = subprocess.run(["smpirun", "-np", str(nodes * m), "-platform", xml, "-hostfile", hosts,
                          "--cfg=smpi/simulate-computation:no", f"--cfg=smpi/host-speed:{speed}",
                          "--log=root.thres:critical", exe, str(PHASES), str(WORK_S), str(BYTES), str(p)],
                         capture_output=True, text=True, check=True).stdout
    return float(out.strip().splitlines()[-1]), time.time() - t0


def sweep(mmgp, exe, cluster, max_nodes, ms, speed, d):
    xml = os.path.join(HERE, cluster + ".xml")
    plat = os.path.join(HERE, cluster + "-platform.json")
    subprocess.run([mmgp, "calibrate", "--simulate", rel(xml), "--node", rel(os.path.join(HERE, "node-8core.json")),
                    "--nodes", f"1:{max_nodes}", "--ppn", str(max(ms)), "-q", "-o", rel(plat)], cwd=ROOT, check=True)
    cases, slowest = [], 0.0
    nodes = 1
    while nodes <= max_nodes:
        for m in ms:
            t, took = simulate(exe, xml, nodes, m, 8 // m, d, speed)
            slowest = max(slowest, took)
            cases.append({"m": m, "p": 8 // m, "nodes": nodes, "measured_s": t, "group": f"nodes={nodes}",
                          "source": f"skeleton.c simulated by SMPI on {cluster}.xml ({took:.1f} s to simulate)"})
            print(f"{cluster}: nodes={nodes} m={m} p={8 // m}: {t:.4f} s ({took:.1f} s)", file=sys.stderr)
        nodes *= 2
    doc = {"schema": "mmgp/1", "kind": "validation", "name": f"skeleton on {cluster}.xml (SMPI)",
           "scenario": {"name": f"skeleton-{cluster}", "platform": os.path.basename(plat),
                        "application": "skeleton-app.json", "search": {"m": [1, 8], "p": [1, 8],
                                                                       "nodes": [1, max_nodes]}},
           "cases": cases}
    path = os.path.join(HERE, cluster + "-cases.json")
    json.dump(doc, open(path, "w"), indent=1)
    rep = subprocess.run([mmgp, "validate", rel(path)], cwd=ROOT, capture_output=True, text=True)
    open(os.path.join(HERE, cluster + "-report.txt"), "w").write(rep.stdout)
    return rep.stdout.strip().splitlines()[-3:], slowest


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--large", action="store_true")
    a = ap.parse_args()
    mmgp = os.path.abspath(os.path.join(a.build, "cli", "mmgp"))
    with tempfile.TemporaryDirectory() as d:
        exe = os.path.join(d, "skeleton")
        subprocess.run(["smpicc", "-O2", os.path.join(HERE, "skeleton.c"), "-o", exe], check=True, capture_output=True)
        runs = [("fattree-ib", 64, [1, 2, 4, 8], "10Gf"), ("gige", 1024 if a.large else 256, [1, 2], "1Gf")]
        for cluster, max_nodes, ms, speed in runs:
            summary, slowest = sweep(mmgp, exe, cluster, max_nodes, ms, speed, d)
            print(f"{cluster}: slowest simulation {slowest:.1f} s; " + " | ".join(summary))


if __name__ == "__main__":
    main()
