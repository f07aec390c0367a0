#!/usr/bin/env python3
"""The simulated network tables held against a plain program: `mmgp calibrate --simulate` on the 64-node fat tree
(fattree-ib.xml, 8 processes per node), its wall time and memory, and its allreduce tables at 2 KiB and 512 KiB on
16 and 64 nodes against a direct smpirun of allreduce_plain.c (one MPI_Allreduce, nothing of mmgp's) on the same
file and ranks; and the allreduce tables of the bundled ps3 node on gige.xml by processes per node. Writes fattree-ib-platform.json and check_tables.txt beside this file.

    python3 validation/simulate/check_tables.py [--build build]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def plain_allreduce(exe, xml, nodes, ppn, size, d):
    hosts = os.path.join(d, f"h{nodes}x{ppn}")
    with open(hosts, "w") as f:
        for n in range(nodes):
            f.write(f"node-{n}\n" * ppn)
    out = subprocess.run(["smpirun", "-np", str(nodes * ppn), "-platform", xml, "-hostfile", hosts,
                          "--cfg=smpi/simulate-computation:no", "--log=root.thres:critical", exe, str(size), "10"],
                         capture_output=True, text=True, check=True).stdout
    return float(out.strip().splitlines()[-1])


def packing(mmgp):
    """Allreduce on gige.xml with the bundled ps3 node: 1..6 processes per node at 2, 4 and 8 nodes."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "ps3-gige.json")
        subprocess.run([mmgp, "calibrate", "--simulate", os.path.join(HERE, "gige.xml"), "--node", "ps3", "--nodes",
                        "1:8", "-q", "-o", out], check=True)
        tables = {(t["primitive"], t["nodes"], t["ppn"]): dict((int(b), s) for b, s in t["points"])
                  for t in json.load(open(out))["network"]["tables"]}
    rows = ["allreduce on gige.xml (ps3 node), microseconds, by processes per node",
            f"{'nodes':>5} {'bytes':>7} " + " ".join(f"{p:>8}" for p in range(1, 7))]
    for nodes in (2, 4, 8):
        for size in (8, 2048, 131072):
            rows.append(f"{nodes:>5} {size:>7} " + " ".join(f"{tables[('allreduce', nodes, p)][size] * 1e6:>8.0f}"
                                                           for p in range(1, 7)))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    a = ap.parse_args()
    mmgp = os.path.join(a.build, "cli", "mmgp")
    xml = os.path.join(HERE, "fattree-ib.xml")
    out = os.path.join(HERE, "fattree-ib-platform.json")
    load = open("/proc/loadavg").read().split()[0]
    r = subprocess.run(["/usr/bin/time", "-f", "%e %M %U %S", mmgp, "calibrate", "--simulate", os.path.relpath(xml, ROOT),
                        "--node", "qs20", "--nodes", "1:64", "--ppn", "8", "--name", "qs20-on-fattree-ib", "-q",
                        "-o", os.path.relpath(out, ROOT)], cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(r.stderr)
    wall, rss_kb, user, system = r.stderr.strip().splitlines()[-1].split()
    prof = json.load(open(out))
    tables = {(t["primitive"], t["nodes"], t["ppn"]): dict((int(b), s) for b, s in t["points"])
              for t in prof["network"]["tables"]}
    lines = [f"mmgp calibrate --simulate fattree-ib.xml --nodes 1:64 --ppn 8: {float(wall):.0f} s wall "
             f"({float(user) + float(system):.0f} s of CPU in the processes it waited for), "
             f"{int(rss_kb) / 1048576:.2f} GiB peak memory of one process (the largest smpirun), "
             f"{len(prof['network']['tables'])} tables; load average {load} when started",
             "", "allreduce: table (mmgp-mpi-bench under SMPI) against a plain program on the same file and ranks",
             f"{'nodes':>5} {'ppn':>4} {'bytes':>7} {'table':>12} {'plain':>12} {'diff':>7}"]
    worst = 0.0
    with tempfile.TemporaryDirectory() as d:
        exe = os.path.join(d, "allreduce_plain")
        subprocess.run(["smpicc", "-O2", os.path.join(HERE, "allreduce_plain.c"), "-o", exe], check=True,
                       capture_output=True)
        for nodes in (16, 64):
            for ppn in (1, 8):
                for size in (2048, 524288):
                    t = tables[("allreduce", nodes, ppn)][size]
                    p = plain_allreduce(exe, xml, nodes, ppn, size, d)
                    diff = (t - p) / p * 100
                    worst = max(worst, abs(diff))
                    lines.append(f"{nodes:>5} {ppn:>4} {size:>7} {t:>12.4e} {p:>12.4e} {diff:>+6.1f}%")
    lines.append(f"largest difference: {worst:.1f} %")
    lines += ["", *packing(mmgp)]
    open(os.path.join(HERE, "check_tables.txt"), "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
