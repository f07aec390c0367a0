#!/usr/bin/env python3
"""Sweep (c): GROMACS from Debian (gmx mdrun, thread-MPI + OpenMP), a molecular dynamics code mapped as
ranks x threads: m thread-MPI ranks (domain decomposition, -ntmpi) with p OpenMP threads each (-ntomp), no
separate PME ranks, no pinning. A field and a structure the model was not written for: every rank and thread
splits the same time steps (data decomposition), and ranks beyond the cores busy-wait on each other.

Every run is bounded by 5x the fastest configuration of its input measured so far (at least 3 s, the first run
300 s) and recorded as censored at the bound when it does not finish (its process group is killed). A
configuration censored once is not repeated.

    validation/sweep_gromacs.py                      # full sweep into validation/gromacs/
    validation/sweep_gromacs.py --repetitions 1      # one round

Inputs are boxes of SPC/E water made at run time from GROMACS's own spc216.gro (gmx solvate, OPLS-AA), PME
electrostatics, 0.9 nm cut-offs, h-bond constraints, v-rescale thermostat, no output: OUT/inputs/NAME.tpr.
Writes OUT/platform.json (mmgp calibrate, first), OUT/machine.json and OUT/runs.csv (the columns of the other sweeps), and the two prior runs of each input
(m=1 with p=1 and p=2, measured before the sweep and not part of it) to OUT/fit-NAME.csv, from which
`mmgp fit` makes the prior application profile OUT/app-fitted-NAME.json.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

GMX = "gmx"
# name: (box edge in nm, MD steps)
INPUTS = {"water3nm": (3.0, 1000), "water4nm": (4.0, 400)}
CONFS = [(1, 1), (1, 2), (1, 3), (1, 4), (2, 1), (2, 2), (2, 3), (2, 4), (3, 1), (3, 2), (4, 1), (4, 2)]
MDP = """integrator = md
dt = 0.002
nsteps = {steps}
cutoff-scheme = Verlet
coulombtype = PME
rcoulomb = 0.9
rvdw = 0.9
tcoupl = v-rescale
tc-grps = System
tau-t = 0.1
ref-t = 300
constraints = h-bonds
nstxout-compressed = 0
nstenergy = 0
nstlog = 0
"""


def make_input(folder, name, box, steps):
    """OUT/inputs/NAME.tpr: a water box of edge `box` nm, `steps` MD steps."""
    tpr = os.path.join(folder, f"{name}.tpr")
    with tempfile.TemporaryDirectory() as d:
        def gmx(*args):
            p = subprocess.run([GMX, "-quiet", *args], cwd=d, capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit(f"sweep_gromacs: gmx {' '.join(args)}: {p.stderr.strip()[-400:]}")
        gmx("solvate", "-cs", "spc216.gro", "-box", str(box), str(box), str(box), "-o", "conf.gro")
        waters = sum(1 for line in open(os.path.join(d, "conf.gro")) if " OW " in line)
        with open(os.path.join(d, "topol.top"), "w") as f:
            f.write('#include "oplsaa.ff/forcefield.itp"\n#include "oplsaa.ff/spce.itp"\n'
                    f"[ system ]\nwater\n[ molecules ]\nSOL {waters}\n")
        with open(os.path.join(d, "md.mdp"), "w") as f:
            f.write(MDP.format(steps=steps))
        gmx("grompp", "-f", "md.mdp", "-c", "conf.gro", "-p", "topol.top", "-o", "x.tpr", "-maxwarn", "2")
        shutil.copyfile(os.path.join(d, "x.tpr"), tpr)
    return tpr, waters


def run_config(tpr, m, p, bound):
    """One mdrun with m ranks x p threads; returns (wall_s, censored). The bound kills the process group."""
    with tempfile.TemporaryDirectory() as d:
        cmd = [GMX, "-quiet", "mdrun", "-s", tpr, "-deffnm", os.path.join(d, "x"), "-ntmpi", str(m), "-ntomp", str(p),
               "-npme", "0", "-pin", "off", "-nb", "cpu"]
        t0 = time.monotonic()
        pr = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                              env=dict(os.environ, OMP_NUM_THREADS=str(p)))
        wall, expired = common.wait_bounded([pr], bound, t0)
        if expired:
            return bound, True
        if pr.returncode != 0:
            raise RuntimeError(f"gmx mdrun exited with {pr.returncode} at m={m} p={p}")
        return wall, False


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(common.ROOT, "validation", "gromacs"))
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--mmgp", default=os.path.join(common.ROOT, "build", "cli", "mmgp"))
    a = ap.parse_args()
    if shutil.which(GMX) is None:
        sys.exit(f"sweep_gromacs: {GMX} not found (apt-get install gromacs)")
    inputs_dir = os.path.join(a.out, "inputs")
    os.makedirs(inputs_dir, exist_ok=True)
    files = ["runs.csv", "machine.json", "platform.json"] + [f"{p}-{n}.{e}" for n in INPUTS for p, e in (("fit", "csv"), ("app-fitted", "json"))]
    common.begin_sweep(a.out, files)
    info = common.machine_info([os.path.relpath(sys.argv[0], common.ROOT)] + sys.argv[1:])
    info["binary"] = shutil.which(GMX)
    info["gromacs_version"] = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "gromacs"], capture_output=True,
                                             text=True).stdout
    info["gromacs_command"] = "gmx mdrun -s NAME.tpr -ntmpi m -ntomp p -npme 0 -pin off -nb cpu (OMP_NUM_THREADS=p)"
    info["inputs"] = {}
    tprs = {}
    for name, (box, steps) in INPUTS.items():
        tprs[name], waters = make_input(inputs_dir, name, box, steps)
        info["inputs"][name] = f"{waters} SPC/E waters in a {box} nm box (gmx solvate of spc216.gro), {steps} MD steps"
    floor = 3.0
    info["bound"] = f"5 x the fastest configuration of the input measured so far, at least {floor} s (the first run 300 s)"
    t0 = time.time()
    best, censored_once, rows = {}, set(), []

    # This machine, time-shared (ranks and threads share the cores), calibrated just before the runs.
    platform = os.path.join(a.out, "platform.json")
    cal = subprocess.run(common.staging([a.mmgp, "calibrate", "--quiet", "-o", platform], platform),
                         capture_output=True, text=True)
    if cal.returncode != 0:
        sys.exit(f"sweep_gromacs: mmgp calibrate: {cal.stderr.strip()}")
    info["platform_calibration"] = "mmgp calibrate --quiet, run by this sweep before its first run"

    # The prior: two runs per input at m = 1 (p = 1, 2), measured before the sweep; mmgp fit makes the profile.
    for name in INPUTS:
        fit_rows = []
        for p in (1, 2):
            wall, cens = run_config(tprs[name], 1, p, 300.0)
            best[name] = min(best.get(name, wall), wall)
            fit_rows.append(f"1,{p},1,{INPUTS[name][1]},{wall:.4f},edtlp\n")
            common.log(f"prior {name} m=1 p={p}: {wall:.2f} s")
        fit_csv = common.staging([os.path.join(a.out, f"fit-{name}.csv")], os.path.join(a.out, f"fit-{name}.csv"))[0]
        with open(fit_csv, "w") as f:
            f.write("m,p,nodes,units,time_s,policy\n" + "".join(fit_rows))
        app = os.path.join(a.out, f"app-fitted-{name}.json")
        cmd = [a.mmgp, "fit", fit_csv, "--platform", common.staged_files()[os.path.abspath(platform)], "--decomposition", "data",
               "--N", str(INPUTS[name][1]), "--fix", "C_apu=0", "--fix", "g=0", "--fix", "T_start=0",
               "--name", f"GROMACS {name}", "-o", app]
        p = subprocess.run(common.staging(cmd, app), capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"sweep_gromacs: {' '.join(cmd)}: {p.stderr.strip()}")

    def measure(name, m, p, rep):
        bound = max(floor, 5.0 * best[name]) if name in best else 300.0
        l0 = common.load1()
        ext = common.ExternalCpu()
        wall, cens = run_config(tprs[name], m, p, bound)
        ext_share = ext.share(wall)
        if cens:
            censored_once.add((name, m, p))
        else:
            best[name] = min(best.get(name, wall), wall)
        common.log(f"rep {rep} {name} m={m} p={p}: {wall:.2f} s{' CENSORED' if cens else ''} (others {ext_share:.2f} core)")
        return {"input": name, "units": INPUTS[name][1], "m": m, "p": p, "policy": "edtlp", "rep": rep,
                "wall_s": f"{wall:.4f}", "censored": int(cens), "bound_s": f"{bound:.2f}",
                "load1_before": f"{l0:.2f}", "load1_after": f"{common.load1():.2f}",
                "external_cpu_share": f"{ext_share:.3f}"}

    for rep in range(a.repetitions):
        for name in INPUTS:
            for (m, p) in CONFS:
                if (name, m, p) not in censored_once:
                    rows.append(measure(name, m, p, rep))
    common.finish_sweep(a.out, rows, info, t0)


if __name__ == "__main__":
    main()
