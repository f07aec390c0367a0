#!/usr/bin/env python3
"""mmgp calibrate --simulate end to end on small simulated clusters (at most 8 ranks, a few seconds): the tables
it writes, physical checks on them (a slower network gives slower calls; a call across nodes costs at least the
link's latency), the profile read back by predict, and its bad input (an unreadable platform file, missing
options) refused with one line, exit 2, nothing written. Skipped (exit 77) when this build has no simulator.

    python3 tests/simulate_test.py MMGP_BINARY
"""
import json
import os
import subprocess
import sys
import tempfile

MMGP = os.path.abspath(sys.argv[1])
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CALIB = os.path.join(os.path.dirname(os.path.dirname(MMGP)), "calibration")
failures = []

CLUSTER = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="node-" suffix="" radical="0-{last}" speed="1Gf" core="4"
           bw="{bw}" lat="{lat}" loopback_bw="5GBps" loopback_lat="1us"/>
</platform>
"""


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(args, env=None):
    return subprocess.run([MMGP] + args, capture_output=True, text=True, env=env)


def tool_path(name):
    return os.path.join(CALIB, name)


def table(profile, prim, nodes, ppn):
    for t in profile["network"]["tables"]:
        if (t["primitive"], t["nodes"], t["ppn"]) == (prim, nodes, ppn):
            return dict((int(b), s) for b, s in t["points"])
    return None


def simulate(d, name, bw, lat, extra=()):
    xml = os.path.join(d, name + ".xml")
    open(xml, "w").write(CLUSTER.format(last=9, bw=bw, lat=lat))
    out = os.path.join(d, name + ".json")
    r = run(["calibrate", "--simulate", xml, "--node", "ps3", "--nodes", "1:4", "--ppn", "2", "-o", out, *extra])
    return r, out


def physical_checks(d):
    """A gigabit cluster simulated: the tables it writes, and a slower network or a call across nodes costs more;
    returns (its profile, its path)."""
    r, out = simulate(d, "gige", "125MBps", "50us")
    check(r.returncode == 0, f"calibrate --simulate exits 0 ({r.stderr.strip()[-300:]})")
    prof = json.load(open(out))
    runs = [(t["nodes"], t["ppn"]) for t in prof["network"]["tables"] if t["primitive"] == "allreduce"]
    check(sorted(runs) == [(1, 2), (2, 1), (2, 2), (4, 1), (4, 2)], f"nodes 1, 2, 4 x ppn 1..2 simulated: {runs}")
    check(prof["nodes"]["value"] == 4, "nodes = the highest node count simulated")
    check(all(t["source"].startswith("simulated: gige.xml, SimGrid ") for t in prof["network"]["tables"]),
          "every table says it was simulated, on which file, by which SimGrid")
    across = table(prof, "allreduce", 2, 1)
    check(across is not None and across[8] >= 50e-6, f"an allreduce across 2 nodes costs >= the 50 us latency: {across and across[8]}")
    check(across is not None and across[1 << 20] >= (1 << 20) / 125e6,
          f"1 MiB across a 125 MB/s link takes >= 8.4 ms: {across and across[1 << 20]}")
    inside = table(prof, "allreduce", 1, 2)
    check(inside is not None and inside[1 << 20] < across[1 << 20], "within a node (loopback) is faster than across")
    r2, out2 = simulate(d, "slow", "12.5MBps", "500us", ("-q",))
    slow = table(json.load(open(out2)), "allreduce", 4, 2) if r2.returncode == 0 else None
    fast = table(prof, "allreduce", 4, 2)
    check(slow is not None and all(slow[b] > fast[b] for b in fast), "a 10x slower network: every call slower")
    return prof, out


def predict_check(d, out):
    """The simulated platform read back by predict."""
    p = run(["predict", out, "--json"])  # a platform profile alone is refused by predict; read it via a scenario
    scen = os.path.join(d, "scen.json")
    json.dump({"schema": "mmgp/1", "name": "s", "platform": out, "application": "pbpi",
               "search": {"m": [1, 2], "p": [1, 3], "nodes": [1, 4]}}, open(scen, "w"))
    p = run(["predict", scen, "--json"])
    check(p.returncode == 0, f"predict reads the simulated platform ({p.stderr.strip()})")


def config_checks(d, prof):
    """A file that chooses SMPI's collective algorithms in its own <config> (validation/simulate/ps3-cluster.xml
    does): read, simulated with them, and named in the profile's notes."""
    cfg = os.path.join(d, "cfg.xml")
    open(cfg, "w").write(CLUSTER.format(last=3, bw="125MBps", lat="50us").replace(
        '<platform version="4.1">', '<platform version="4.1">\n  <config>\n    <prop id="smpi/allreduce" value="redbcast"/>\n'
        '    <prop id="smpi/reduce" value="binomial"/>\n  </config>'))
    out3 = os.path.join(d, "cfg.json")
    r = run(["calibrate", "--simulate", cfg, "--node", "ps3", "--nodes", "1:2", "--ppn", "2", "-o", out3, "-q"])
    notes = json.load(open(out3))["network"]["notes"] if r.returncode == 0 else []
    check(r.returncode == 0 and any("smpi/allreduce=redbcast, smpi/reduce=binomial" in n for n in notes),
          f"a file's own <config> (smpi/allreduce, smpi/reduce) is accepted and named in the notes: {r.stderr.strip()[-200:]} {notes[:1]}")
    check(not any("smpi/" in n for n in prof["network"]["notes"]), "a file without <config>: no SMPI setting named")


def bad_option_checks(d, dest):
    """An unreadable platform file, more nodes than its hosts and missing options: refused, nothing written."""
    bad = os.path.join(d, "bad.xml")
    open(bad, "w").write(CLUSTER.format(last=3, bw="oops", lat="1us"))
    r = run(["calibrate", "--simulate", bad, "--node", "ps3", "--nodes", "1:2", "-o", dest])
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 2 and len(lines) == 1 and bad in lines[0] and "cannot parse number" in lines[0]
          and not os.path.exists(dest), f"an unreadable platform file: one line naming it and SimGrid's message: {lines}")
    small = os.path.join(d, "small.xml")
    open(small, "w").write(CLUSTER.format(last=1, bw="125MBps", lat="50us"))
    r = run(["calibrate", "--simulate", small, "--node", "ps3", "--nodes", "1:4", "-o", dest])
    check(r.returncode == 2 and "expected at least 4 hosts" in r.stderr and not os.path.exists(dest),
          f"more nodes than the file's hosts refused: {r.stderr.strip()}")
    r = run(["calibrate", "--simulate", small, "--nodes", "1:2", "-o", dest])
    check(r.returncode == 2 and "--node" in r.stderr and not os.path.exists(dest), f"no --node: {r.stderr.strip()}")
    r = run(["calibrate", "--node", "ps3", "--nodes", "1:2", "-o", dest])
    check(r.returncode == 2 and "--simulate" in r.stderr, f"--node without --simulate: {r.stderr.strip()}")


def refused(args, fragment, what, dest, env=None):
    """A calibrate --simulate refused: exit 2, one line holding `fragment`, nothing written to dest."""
    r = run(args, env)
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 2 and len(lines) == 1 and fragment in lines[0] and not os.path.exists(dest),
          f"{what}: {r.returncode} {lines}")


def unsimulable_checks(d, dest):
    """What SMPI cannot simulate is the file's error, in one line, exit 2, nothing written: a link of zero
    bandwidth, two hosts without a route between them; and the environment's: TMPDIR, smpirun not on PATH."""
    zero = os.path.join(d, "zero.xml")
    open(zero, "w").write(CLUSTER.format(last=3, bw="0Bps", lat="50us"))
    refused(["calibrate", "--simulate", zero, "--node", "ps3", "--nodes", "1:2", "-o", dest],
            "has a bandwidth of 0.000000 B/s; SMPI needs one above 0", "a link of zero bandwidth", dest)
    noroute = os.path.join(d, "noroute.xml")
    open(noroute, "w").write('<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
                             '<platform version="4.1"><zone id="z" routing="Full"><host id="n1" speed="1Gf"/>'
                             '<host id="n2" speed="1Gf"/></zone></platform>\n')
    refused(["calibrate", "--simulate", noroute, "--node", "ps3", "--nodes", "1:2", "-o", dest, "-q"],
            "expected a cluster SMPI can simulate with nodes=2 ppn=1, found: You're trying to send data from n1 to n2",
            "two hosts without a route", dest)
    gige = os.path.join(d, "gige.xml")
    # Options taken and ignored once; a run with no table to simulate (once a profile with none, exit 0); "-o -"
    # (once a file named "-").
    for extra, fragment in ((["--accelerator", "cuda"], "expected none of"), (["--cv-threshold", "0.5"], "excludes"),
                            (["--time-shared"], "excludes")):
        refused(["calibrate", "--simulate", gige, "--node", "ps3", "--nodes", "1:2", "-o", dest, *extra], fragment,
                " ".join(extra) + " with --simulate", dest)
    refused(["calibrate", "--simulate", gige, "--node", "ps3", "--nodes", "1:1", "--ppn", "1", "-o", dest],
            "expected at least two ranks to simulate (nodes x processes per node >= 2), found 1 x 1", "1 node x 1 rank", dest)
    dash = os.path.join(d, "dash")
    os.makedirs(dash, exist_ok=True)
    r = subprocess.run([MMGP, "calibrate", "--simulate", gige, "--node", "ps3", "--nodes", "1:2", "-q", "-o", "-"],
                       capture_output=True, text=True, cwd=dash)
    check(r.returncode == 2 and "-o: expected a file name" in r.stderr and not os.listdir(dash),
          f"-o - refused, nothing written: {r.stderr.strip()}")
    refused(["calibrate", "--simulate", gige, "--node", "ps3", "--nodes", "1:2", "-o", dest],
            'TMPDIR: expected a directory for the simulation\'s host files, found "/nonexistent"', "TMPDIR missing",
            dest, dict(os.environ, TMPDIR="/nonexistent"))
    refused(["calibrate", "--simulate", gige, "--node", "ps3", "--nodes", "1:2", "-o", dest],
            "PATH: expected SimGrid's smpirun on it", "smpirun not on PATH",
            dest, dict(os.environ, PATH="/nonexistent", MMGP_SIMGRID_HOSTS=tool_path("mmgp-simgrid-hosts"),
                       MMGP_MPI_BENCH_SMPI=tool_path("mmgp-mpi-bench-smpi")))


def main():
    for tool in ("mmgp-mpi-bench-smpi", "mmgp-simgrid-hosts"):
        if not os.path.exists(os.path.join(CALIB, tool)):
            print(f"skipped: {tool} not built (SimGrid not found at build time, or a sanitizer build)")
            return 77
    with tempfile.TemporaryDirectory() as d:
        prof, out = physical_checks(d)
        predict_check(d, out)
        config_checks(d, prof)
        dest = os.path.join(d, "never.json")
        bad_option_checks(d, dest)
        unsimulable_checks(d, dest)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
