#!/usr/bin/env python3
"""Sweep (c): GROMACS from Debian (gmx mdrun, thread-MPI + OpenMP), a molecular dynamics code mapped as
ranks x threads: m thread-MPI ranks (domain decomposition, -ntmpi) with p OpenMP threads each (-ntomp), no
separate PME ranks, no pinning. A field and a structure the model was not written for: every rank and thread
splits the same time steps (data decomposition), and ranks beyond the cores busy-wait on each other.

Every run is bounded as validation/ranks_threads.py says (5x the fastest configuration of its input so far); a
configuration censored once is not repeated.

    validation/sweep_gromacs.py                      # full sweep into validation/gromacs/
    validation/sweep_gromacs.py --repetitions 1      # one round

Inputs are boxes of SPC/E water made at run time from GROMACS's own spc216.gro (gmx solvate, OPLS-AA), PME
electrostatics, 0.9 nm cut-offs, h-bond constraints, v-rescale thermostat, no output: OUT/inputs/NAME.tpr.
Writes OUT/platform.json (mmgp calibrate, first), OUT/machine.json and OUT/runs.csv (the columns of the other sweeps), and the two prior runs of each input
(m=1 with p=1 and p=2, measured before the sweep and not part of it) to OUT/fit-NAME.csv, from which
`mmgp fit` makes the prior application profile OUT/app-fitted-NAME.json.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import ranks_threads  # noqa: E402

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
        return ranks_threads.bounded_run(cmd, bound, f"gmx mdrun at m={m} p={p}",
                                         env=dict(os.environ, OMP_NUM_THREADS=str(p)))


class Gromacs:
    name = "gromacs"
    title = "GROMACS"
    inputs = {name: steps for name, (_, steps) in INPUTS.items()}
    confs = CONFS

    def __init__(self, inputs_dir):
        self.info = {
            "binary": shutil.which(GMX),
            "gromacs_version": subprocess.run(["dpkg-query", "-W", "-f=${Version}", "gromacs"], capture_output=True,
                                              text=True).stdout,
            "gromacs_command": "gmx mdrun -s NAME.tpr -ntmpi m -ntomp p -npme 0 -pin off -nb cpu (OMP_NUM_THREADS=p)",
            "inputs": {},
        }
        self.tprs = {}
        for name, (box, steps) in INPUTS.items():
            self.tprs[name], waters = make_input(inputs_dir, name, box, steps)
            self.info["inputs"][name] = f"{waters} SPC/E waters in a {box} nm box (gmx solvate of spc216.gro), {steps} MD steps"

    def run(self, name, m, p, bound):
        return run_config(self.tprs[name], m, p, bound)


def main():
    a = ranks_threads.arguments(__doc__, "gromacs", (GMX,), "apt-get install gromacs")
    inputs_dir = os.path.join(a.out, "inputs")
    os.makedirs(inputs_dir, exist_ok=True)
    ranks_threads.sweep(a, Gromacs(inputs_dir))

if __name__ == "__main__":
    main()
