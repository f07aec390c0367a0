#!/usr/bin/env python3
"""[C]'s PS3 cluster, simulated: the bundled platform profiles/platforms/ps3-cluster.json (the ps3 node with the MPI
tables SMPI gives on validation/simulate/ps3-cluster.xml, every node count 1..8 x 1..6 processes per node) and the
optimum of the bundled scenario pbpi-ps3-cluster per node count (ps3-cluster-report.txt).

    python3 validation/simulate/ps3_cluster.py tables [--mmgp build/cli/mmgp]   # ~1 minute here
    python3 validation/simulate/ps3_cluster.py report [--mmgp build/cli/mmgp]   # a few seconds

`mmgp calibrate --simulate --nodes LO:HI` simulates the powers of two and HI only; the four runs 1:2, 3:4, 5:6, 7:8
give every node count, merged here into one profile.
"""
import argparse
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
XML = os.path.join("validation", "simulate", "ps3-cluster.xml")
PROFILE = os.path.join(ROOT, "profiles", "platforms", "ps3-cluster.json")
REPORT = os.path.join(HERE, "ps3-cluster-report.txt")


def dump(v, indent=""):
    """JSON with one line per table and per simulated run (a profile of 188 tables stays readable)."""
    if isinstance(v, dict) and not ("primitive" in v or "simulated" in v):
        inner = indent + " "
        return "{\n" + ",\n".join(f"{inner}{json.dumps(k)}: {dump(x, inner)}" for k, x in v.items()) + "\n" + indent + "}"
    if isinstance(v, list) and v and isinstance(v[0], (dict, str)):
        inner = indent + " "
        return "[\n" + ",\n".join(inner + dump(x, inner) for x in v) + "\n" + indent + "]"
    return json.dumps(v, ensure_ascii=False)


def tables(mmgp):
    merged, runs, notes, node = [], [], [], None
    with tempfile.TemporaryDirectory() as d:
        for lo, hi in ((1, 2), (3, 4), (5, 6), (7, 8)):
            out = os.path.join(d, f"{lo}-{hi}.json")
            subprocess.run([mmgp, "calibrate", "--simulate", XML, "--node", "ps3", "--nodes", f"{lo}:{hi}",
                            "--ppn", "6", "-q", "-o", out], cwd=ROOT, check=True)
            p = json.load(open(out))
            node = node or p
            for t in p["network"]["tables"]:
                t.pop("statistics", None)  # one deterministic repetition: median = the value, no spread
                merged.append(t)
            runs += p["network"]["measurements"]["runs"]
            notes += [n for n in p["network"]["notes"] if n not in notes]
    merged.sort(key=lambda t: (t["primitive"], t["nodes"], t["ppn"]))
    runs.sort(key=lambda r: (r["nodes"], r["ppn"]))
    net = node["network"]
    net["tables"], net["measurements"]["runs"] = merged, runs
    net["notes"] = notes + [
        "the four runs of mmgp calibrate --simulate (--nodes 1:2, 3:4, 5:6, 7:8, --ppn 6) merged by "
        "validation/simulate/ps3_cluster.py tables: every node count 1..8 has its tables, none is extrapolated",
        "what the simulation does not contain: the PS3 hypervisor's NIC path beyond a per-message latency, LAM/MPI's own "
        "progress engine, OS overhead with more than two processes per PPE ([C] §3.1); with the binomial reduce and "
        "broadcast, an allreduce with 2 processes per node costs the 1-per-node one plus one intra-node step each way "
        "(validation/simulate/README.md, 'The PS3 cluster of [C]')"]
    prof = {
        "schema": "mmgp/1",
        "kind": "platform",
        "name": "ps3-cluster",
        "description": "[C]'s cluster of Sony PlayStation 3s: 8 nodes of one Cell BE (one PPE with 2 SMT threads, 6 SPEs "
                       "usable under Linux) on a Gigabit Ethernet switch, the NIC reached through the PS3's hypervisor, "
                       "LAM/MPI 7.1.1. The node is the bundled ps3; the MPI tables are simulated by SimGrid's SMPI on "
                       "validation/simulate/ps3-cluster.xml (1-8 nodes, 1-6 processes per node), whose comment gives "
                       "the source or ASSUMPTION of every number of the network.",
    }
    for k in ("hpu_contexts", "apus", "O_offload", "T_csw", "alpha", "sources"):
        prof[k] = node[k]
    prof["nodes"] = {"value": 8, "source": "[C] §2: 8 PS3 nodes in dedicated mode; the tables were simulated on 1 to 8 "
                                           "nodes of validation/simulate/ps3-cluster.xml"}
    prof["network"] = net
    tmp = PROFILE + ".tmp"
    with open(tmp, "w") as f:
        f.write(dump(prof) + "\n")
    os.replace(tmp, PROFILE)
    print(f"wrote {os.path.relpath(PROFILE, ROOT)}: {len(merged)} tables, {len(runs)} simulated runs")


def predict_rows(mmgp, nodes, extra=()):
    r = subprocess.run([mmgp, "predict", "pbpi-ps3-cluster", "--nodes", str(nodes), "--csv", *extra], cwd=ROOT,
                       check=True, capture_output=True, text=True)
    return list(csv.DictReader(io.StringIO(r.stdout)))


def report(mmgp):
    lines = ["# mmgp predict pbpi-ps3-cluster --nodes N (N = 1..8): the optimum per node count, and the two mappings",
             "# [C] names (1 x 6, 2 x 3) term by term. Regenerate: python3 validation/simulate/ps3_cluster.py report",
             "#",
             "# nodes  best m x p  best time s | 1x6 time s  2x3 time s  2x3-1x6 s | host  offload  csw  comm (2x3 - 1x6, s)"]
    for n in range(1, 9):
        rows = predict_rows(mmgp, n)
        best = min(rows, key=lambda r: float(r["time_s"]))
        at = {(int(r["m"]), int(r["p"])): r for r in rows}
        a, b = at[(1, 6)], at[(2, 3)]
        d = {k: float(b[k]) - float(a[k]) for k in ("time_s", "host_s", "offload_s", "context_switch_s", "communication_s")}
        lines.append(f"{n:7d}  {best['m']:>4} x {best['p']:<4} {float(best['time_s']):11.3f} | {float(a['time_s']):10.3f} "
                     f"{float(b['time_s']):11.3f} {d['time_s']:+10.3f} | {d['host_s']:+.3f} {d['offload_s']:+.3f} "
                     f"{d['context_switch_s']:+.3f} {d['communication_s']:+.3f}")
    lines += ["#", "# the other data sets of [C] §3.2 and the other T_hpu ASSUMPTION (--set application.T_hpu=..,T_apu=..,C_apu=..):",
              "# best m x p at nodes 1 .. 8"]
    for name, (th, ta, ca) in (("small 218 x 1,250 (x 0.2547)", (0.3311, 94.23, 0.438)),
                               ("medium 218 x 3,000 (x 0.6112)", (0.7946, 226.1, 1.051)),
                               ("large, T_hpu by species only (2.649 s)", (2.649, 376.9, 1.752))):
        sets = ("--set", f"application.T_hpu={th}", "--set", f"application.T_apu={ta}", "--set", f"application.C_apu={ca}")
        bests = []
        for n in range(1, 9):
            b = min(predict_rows(mmgp, n, sets), key=lambda r: float(r["time_s"]))
            bests.append(f"{b['m']}x{b['p']}")
        lines.append(f"#   {name:40s} " + " ".join(bests))
    prof = json.load(open(PROFILE))
    lines += ["#", "# the simulated allreduce of 8 bytes (s): ppn = 1 and 2 at every node count, and their difference"]
    for n in range(1, 9):
        c = {}
        for t in prof["network"]["tables"]:
            if t["primitive"] == "allreduce" and t["nodes"] == n and t["ppn"] in (1, 2):
                c[t["ppn"]] = dict((int(x), s) for x, s in t["points"])[8]
        one = c.get(1, 0.0)
        lines.append(f"#   nodes {n}: ppn 1 {one * 1e6:8.1f} us   ppn 2 {c[2] * 1e6:8.1f} us   2 - 1 {(c[2] - one) * 1e6:+7.1f} us")
    text = "\n".join(lines) + "\n"
    open(REPORT, "w").write(text)
    sys.stdout.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("tables", "report"))
    ap.add_argument("--mmgp", default=os.environ.get("MMGP_BIN", os.path.join(ROOT, "build", "cli", "mmgp")))
    a = ap.parse_args()
    mmgp = os.path.abspath(a.mmgp)
    (tables if a.what == "tables" else report)(mmgp)


if __name__ == "__main__":
    main()
