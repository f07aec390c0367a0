#!/usr/bin/env python3
"""Sweep (d): a real MPI program over emulated nodes, predicted from the network tables `mmgp calibrate --mpi`
measures. The program is ExaML (Debian's examl: maximum-likelihood phylogenetics, the alignment's sites split over
the MPI ranks), evaluating and optimising the model and branch lengths of the examl 49-taxon test tree (-f e).

    sudo python3 validation/sweep_mpi.py [--build build] [--reps 5] [--skip-calibrate]

1. mmgp calibrate --quick --mpi -o mpi/platform-calibrated.json: this machine, with allreduce, reduce, bcast and
   send/recv tables on 1 node x 2 processes (shared memory) and 2 nodes x 1 process (network namespaces joined by
   veth pairs and a bridge, shaped to 1 Gbit/s);
2. the program's communication counted, not guessed: a PMPI library (mpi/pmpi_count.c, built here with mpicc) is
   preloaded into one run and records every collective by size (mpi/counts.json);
3. the runs, --reps times each, repetitions outermost: 1 process; 2 processes on 1 node (mpirun --bind-to core, as
   the 1-node tables were measured); 1 process on each of 2 nodes (the namespaces, as the 2-node tables were).
   The time is the program's own ("Overall Time", start-up of mpirun excluded), the wall time beside it;
4. the application profile (mpi/app-examl.json): data decomposition, strong scaling, T_apu = the 1-process
   time, the counted collectives as its communication; predicted with `mmgp predict` at nodes = 1, 2 (m = 2, 1);
   mpi/report.txt: predicted against measured.
Needs root (namespaces), OpenMPI, examl and the built mmgp (scripts/setup.sh installs them).
"""
import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "mpi")
sys.path.insert(0, HERE)
import common  # noqa: E402

TESTDATA = "/usr/share/doc/examl/testData"
EXAML = "/usr/lib/examl/bin/examl-sse3"  # the SIMD variant every x86-64 machine runs (the dispatcher picks by CPU)
MPIRUN = ["mpirun", "--allow-run-as-root"]


def sh(cmd):
    subprocess.run(cmd, shell=True, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)


@contextlib.contextmanager
def namespaces(nodes, cores):
    """`nodes` network namespaces joined to a bridge (the layout mmgp calibrate --mpi measures on), and the
    mpirun arguments that place one process in each, on a core of its own. Removed whatever happens."""
    tag = f"mmgpx{os.getpid() % 100000}"
    subnet = f"10.78.{20 + os.getpid() % 200}"
    made = []
    tmp = tempfile.mkdtemp(prefix=tag)
    try:
        sh(f"ip link add {tag}br type bridge && ip addr add {subnet}.254/24 dev {tag}br && ip link set {tag}br up")
        made.append(("link", f"{tag}br"))
        case = ""
        for i in range(nodes):
            ns = f"{tag}n{i}"
            sh(f"ip netns add {ns}")
            made.append(("netns", ns))
            sh(f"ip link add {tag}v{i} type veth peer name eth0 netns {ns} && ip link set {tag}v{i} master {tag}br up && "
               f"ip -n {ns} addr add {subnet}.{i + 1}/24 dev eth0 && ip -n {ns} link set eth0 up && ip -n {ns} link set lo up")
            if subprocess.run(f"tc -n {ns} qdisc add dev eth0 root netem delay 25us rate 1gbit", shell=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
                subprocess.run(f"tc -n {ns} qdisc add dev eth0 root tbf rate 1gbit burst 256kb latency 50ms", shell=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            case += f"  {subnet}.{i + 1}) ns={ns}; cpus={i % cores};;\n"
        agent = os.path.join(tmp, "agent.sh")
        with open(agent, "w") as f:
            f.write("#!/bin/sh\nwhile [ $# -gt 0 ]; do case \"$1\" in -*) shift;; *) break;; esac; done\n"
                    f"host=$1; shift\ncase \"$host\" in\n{case}  *) exit 255;;\nesac\n"
                    "exec ip netns exec \"$ns\" taskset -c \"$cpus\" /bin/sh -c \"$*\"\n")
        os.chmod(agent, 0o755)
        hosts = ",".join(f"{subnet}.{i + 1}:1" for i in range(nodes))
        yield ["--host", hosts, "--bind-to", "none", "--mca", "plm_rsh_agent", agent, "--mca", "plm_rsh_no_tree_spawn", "1",
               "--mca", "btl", "self,vader,tcp", "--mca", "btl_tcp_if_include", f"{subnet}.0/24",
               "--mca", "oob_tcp_if_include", f"{subnet}.0/24"]
    finally:
        for kind, name in reversed(made):
            subprocess.run(f"ip {'netns del' if kind == 'netns' else 'link del'} {name}", shell=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(tmp, ignore_errors=True)


def examl(work, np_, placement, name, env=()):
    """One ExaML run in `work`; returns (the program's time, wall time)."""
    for f in os.listdir(work):
        if f.startswith("ExaML_"):
            os.remove(os.path.join(work, f))
    cmd = MPIRUN + ["-np", str(np_)] + placement + [x for e in env for x in ("-x", e)] + \
        [EXAML, "-s", "49.binary", "-t", "49.tree", "-m", "GAMMA", "-f", "e", "-n", name]
    for attempt in (1, 2):  # a run over the namespaces has hung once in tens (mpirun's start-up): tried again
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=120)
            break
        except subprocess.TimeoutExpired:
            common.log(f"{name}: no end after 120 s (attempt {attempt})")
            if attempt == 2:
                raise
    wall = time.monotonic() - t0
    m = re.search(r"Overall Time for evaluating the likelihood of 1 trees: ([0-9.]+) secs", p.stdout)
    if p.returncode != 0 or not m:
        raise SystemExit(f"sweep_mpi: {' '.join(cmd)} failed ({p.returncode}): {p.stdout[-400:]} {p.stderr[-400:]}")
    return float(m.group(1)), wall


def parse_args():
    """The command line (the module's docstring above says what it runs)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--skip-calibrate", action="store_true", help="keep mpi/platform-calibrated.json")
    return ap.parse_args()


def check_requirements():
    """Exits with a line naming what is missing: root (the namespaces), OpenMPI, examl, iproute2."""
    if os.geteuid() != 0:
        raise SystemExit("sweep_mpi: the emulated nodes are network namespaces: run as root")
    for prog in ("mpirun", "mpicc", "parse-examl", "ip", "taskset"):
        if not shutil.which(prog):
            raise SystemExit(f"sweep_mpi: {prog} not found (scripts/setup.sh installs OpenMPI, examl, iproute2)")
    if not os.path.exists(EXAML):
        raise SystemExit(f"sweep_mpi: {EXAML} not found (apt-get install examl)")


def count_collectives(work):
    """The collectives, counted in a run of 2 processes (each rank makes the same calls): mpi/counts.json written,
    the first rank's calls returned."""
    lib = os.path.join(work, "libcount.so")
    subprocess.run(["mpicc", "-shared", "-fPIC", "-O2", "-o", lib, os.path.join(OUT, "pmpi_count.c")], check=True)
    counts_file = os.path.join(work, "counts.jsonl")
    examl(work, 2, ["--bind-to", "core"], "count", env=(f"LD_PRELOAD={lib}", f"MPI_COUNT_OUT={counts_file}"))
    ranks = [json.loads(line) for line in open(counts_file) if line.strip()]
    counts = ranks[0]["calls"]
    common.write_if_changed(os.path.join(OUT, "counts.json"), json.dumps(
        {"program": "ExaML -f e on examl's 49-taxon test data, 2 processes",
         "counted_by": "validation/mpi/pmpi_count.c (PMPI, preloaded)", "ranks": ranks}, indent=1) + "\n")
    return counts


LAYOUTS = [("1x1", 1, 1), ("1x2", 1, 2), ("2x1", 2, 1)]  # (label, nodes, processes per node) of the runs


def run_layouts(work, reps, cores):
    """The runs, `reps` times each, repetitions outermost: a row each (the program's time and the wall time)."""
    rows = []
    for rep in range(reps):
        for label, nodes, ppn in LAYOUTS:
            if nodes == 1:
                t, wall = examl(work, ppn, ["--bind-to", "core"], f"{label}r{rep}")
            else:
                with namespaces(nodes, cores) as placement:
                    t, wall = examl(work, nodes * ppn, placement, f"{label}r{rep}")
            common.log(f"rep {rep} nodes={nodes} ppn={ppn}: {t:.3f} s (wall {wall:.3f} s)")
            rows.append({"rep": rep, "nodes": nodes, "ppn": ppn, "time_s": t, "wall_s": wall})
    return rows


def application(counts, med):
    """The application (mpi/app-examl.json, written): all its work split over the ranks (T_apu, measured on 1
    process), the counted collectives once per run (N = 1: one phase); reduce and bcast as ExaML calls them, the
    one allreduce, the barriers left out. Returns (the profile, its communication)."""
    comm = []
    for prim in ("allreduce", "reduce", "bcast"):
        for size, count in sorted(counts.get(prim, {}).items(), key=lambda kv: int(kv[0])):
            comm.append({"primitive": prim, "bytes": int(size), "count": count})
    app = {"schema": "mmgp/1", "kind": "application", "name": "examl-49-fe",
           "description": "ExaML -f e on examl's 49-taxon test alignment (1,200 sites) and tree: the sites split over "
                          "the MPI ranks, each likelihood and derivative a reduce + bcast",
           "decomposition": "data", "scaling": "strong", "N": 1, "T_hpu": 0, "T_apu": med[(1, 1)], "C_apu": 0, "g": 0,
           "communication": comm,
           "sources": {"T_apu": "validation/sweep_mpi.py: median of the 1-process runs (mpi/runs.csv)",
                       "communication": "counted by validation/mpi/pmpi_count.c in a 2-process run (mpi/counts.json); "
                                        f"{sum(counts.get('barrier', {}).values())} barriers not modelled (no table)",
                       "T_hpu, C_apu, g": "0: no host-only part and no off-load in an MPI-only program"}}
    app_path = os.path.join(OUT, "app-examl.json")
    common.write_if_changed(app_path, json.dumps(app, indent=1) + "\n")
    return app, comm


def predict(mmgp, path, nodes, ppn):
    """mmgp predict's best configuration of scenario `path` at m = ppn, p = 1 on `nodes` nodes."""
    r = subprocess.run([mmgp, "predict", path, "--m", str(ppn), "--p", "1", "--nodes", str(nodes), "--json"],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)["best"]


def one_node_prediction(mmgp, app, scen, med, pred):
    """The same with the program's serial part taken from the 1-node runs: t(1x1) = S + P, t(1x2) = S + P/2 + c(1x2)
    (c: the predicted communication); S stays whole on every rank (T_hpu), P is split (T_apu). Predicts 2 nodes
    (mpi/app-examl-1node.json, mpi/scenario-examl-1node.json written); returns (S, P, the prediction)."""
    c12 = pred[(1, 2)]["breakdown"]["communication"]
    par = 2 * (med[(1, 1)] - med[(1, 2)] + c12)
    serial = med[(1, 1)] - par
    app2 = dict(app, name="examl-49-fe-1node", T_hpu=max(serial, 0.0), T_apu=par,
                sources=dict(app["sources"], **{"T_hpu, T_apu": "the 1-node runs: t(1x1) = T_hpu + T_apu, t(1x2) = "
                                                                 "T_hpu + T_apu/2 + the predicted communication"}))
    common.write_if_changed(os.path.join(OUT, "app-examl-1node.json"), json.dumps(app2, indent=1) + "\n")
    scen2_path = os.path.join(OUT, "scenario-examl-1node.json")
    common.write_if_changed(scen2_path, json.dumps(dict(scen, application="app-examl-1node.json"), indent=1) + "\n")
    return serial, par, predict(mmgp, scen2_path, 2, 1)


def write_report(reps, info, comm, med, pred, serial, par, pred2):
    """mpi/report.txt (also printed) and mpi/report.json: predicted against measured."""
    lines = [f"# ExaML -f e, examl 49-taxon test data: predicted (mmgp predict mpi/scenario-examl.json) against measured",
             f"# (median of {reps} runs, the program's own time); python3 validation/sweep_mpi.py --reps {reps}",
             f"# collectives per rank (counted): " + ", ".join(f"{c['primitive']} {c['bytes']} B x {c['count']}" for c in comm),
             "", f"{'nodes':>5} {'ppn':>3} {'measured':>10} {'predicted':>10} {'error':>8}  {'of which communication':>22}"]
    report = {"machine": info, "rows": []}
    for _, nodes, ppn in LAYOUTS:
        t = pred[(nodes, ppn)]["time_s"]
        comm_s = pred[(nodes, ppn)]["breakdown"]["communication"]
        err = (t - med[(nodes, ppn)]) / med[(nodes, ppn)]
        lines.append(f"{nodes:>5} {ppn:>3} {med[(nodes, ppn)]:>9.3f}s {t:>9.3f}s {100 * err:>+7.1f}%  {comm_s:>21.3f}s")
        report["rows"].append({"nodes": nodes, "ppn": ppn, "measured_s": med[(nodes, ppn)], "predicted_s": t,
                               "communication_s": comm_s, "error": err})
    err2 = (pred2["time_s"] - med[(2, 1)]) / med[(2, 1)]
    lines += ["", f"with the serial part from the 1-node runs (mpi/scenario-examl-1node.json: T_hpu {serial:.3f} s whole "
                  f"on every rank, T_apu {par:.3f} s split):",
              f"{2:>5} {1:>3} {med[(2, 1)]:>9.3f}s {pred2['time_s']:>9.3f}s {100 * err2:>+7.1f}%  "
              f"{pred2['breakdown']['communication']:>21.3f}s"]
    report["two_node_from_one_node_runs"] = {"T_hpu": serial, "T_apu": par, "predicted_s": pred2["time_s"],
                                             "measured_s": med[(2, 1)], "error": err2, "breakdown": pred2["breakdown"]}
    common.write_if_changed(os.path.join(OUT, "report.txt"), "\n".join(lines) + "\n")
    common.write_if_changed(os.path.join(OUT, "report.json"), json.dumps(report, indent=1) + "\n")
    print("\n".join(lines))


def main():
    a = parse_args()
    check_requirements()
    mmgp = os.path.join(a.build, "cli", "mmgp")
    os.makedirs(OUT, exist_ok=True)
    info = common.machine_info([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:])
    plat = os.path.join(OUT, "platform-calibrated.json")
    if not a.skip_calibrate:
        common.log("mmgp calibrate --quick --mpi")
        subprocess.run([mmgp, "calibrate", "--quick", "--mpi", "--quiet", "-o", plat], check=True)
    cores = os.cpu_count() or 1

    with tempfile.TemporaryDirectory(prefix="mmgp-examl-") as work:
        subprocess.run(f"zcat {TESTDATA}/49.gz > 49.phy && cp {TESTDATA}/49.tree . && "
                       "parse-examl -s 49.phy -m DNA -n 49 > /dev/null", shell=True, cwd=work, check=True)
        counts = count_collectives(work)
        rows = run_layouts(work, a.reps, cores)
    text = "rep,nodes,ppn,time_s,wall_s\n" + "".join(f"{r['rep']},{r['nodes']},{r['ppn']},{r['time_s']},{r['wall_s']:.4f}\n"
                                                     for r in rows)
    common.write_if_changed(os.path.join(OUT, "runs.csv"), text)
    med = {(n, p): common.median(r["time_s"] for r in rows if (r["nodes"], r["ppn"]) == (n, p)) for _, n, p in LAYOUTS}
    app, comm = application(counts, med)
    scen = {"schema": "mmgp/1", "name": "ExaML 49 taxa over emulated nodes", "platform": "platform-calibrated.json",
            "application": "app-examl.json", "search": {"m": [1, 2], "p": [1, 1], "nodes": [1, 2]}}
    scen_path = os.path.join(OUT, "scenario-examl.json")
    common.write_if_changed(scen_path, json.dumps(scen, indent=1) + "\n")
    pred = {(nodes, ppn): predict(mmgp, scen_path, nodes, ppn) for _, nodes, ppn in LAYOUTS}
    serial, par, pred2 = one_node_prediction(mmgp, app, scen, med, pred)
    write_report(a.reps, info, comm, med, pred, serial, par, pred2)


if __name__ == "__main__":
    main()
