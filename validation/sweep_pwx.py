#!/usr/bin/env python3
"""Sweep (e): Quantum ESPRESSO's pw.x from Debian, a plane-wave DFT code mapped as MPI ranks x threaded BLAS: m
ranks (mpirun -np m, the plane waves and FFT planes shared among them) with p threads each (OMP_NUM_THREADS=p in
the OpenMP build of OpenBLAS, put first on LD_LIBRARY_PATH: Debian's pw.x is not itself built with OpenMP, its
dense linear algebra is where the threads work). Ranks and threads beyond the two cores share them.

    validation/sweep_pwx.py                      # full sweep into validation/pwx/ (3 rounds)
    validation/sweep_pwx.py --repetitions 1      # one round

The input is a 64-atom silicon supercell (2 x 2 x 2 conventional diamond cells, a = 10.26 bohr), LDA with
Si.pz-vbc.UPF from quantum-espresso-data, 14 Ry, Gamma only, one SCF to 1e-6 Ry: written by this script. The
space is m 1..4 x p 1..4 with m p <= 8 (the platform's time-shared bound on this 2-core machine): 12
configurations. The processes are not bound to cores (mpirun --bind-to none --oversubscribe). Every run is
bounded (validation/ranks_threads.py).

Writes OUT/platform.json (mmgp calibrate, first), OUT/machine.json, OUT/runs.csv (the columns of the other
sweeps), and the two prior runs (m = 1 with p = 1 and 2, measured before the sweep and not part of it) to
OUT/fit-si64.csv, from which `mmgp fit` makes the prior application profile OUT/app-fitted-si64.json.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import ranks_threads  # noqa: E402

PWX = "pw.x"
PSEUDO_DIR = "/usr/share/espresso/pseudo"  # quantum-espresso-data
OPENBLAS_OPENMP = "/usr/lib/x86_64-linux-gnu/openblas-openmp"  # libopenblas0-openmp
ECUT_RY = 14
CONFS = [(m, p) for m in range(1, 5) for p in range(1, 5) if m * p <= 8]

# The diamond structure's 8 atoms in the conventional cubic cell, crystal coordinates.
DIAMOND = [(0, 0, 0), (0, .5, .5), (.5, 0, .5), (.5, .5, 0), (.25, .25, .25), (.25, .75, .75), (.75, .25, .75),
           (.75, .75, .25)]


def si64_input(outdir):
    """The pw.x input: 2 x 2 x 2 conventional cells of silicon (64 atoms), Gamma only."""
    atoms = [(x / 2 + i / 2, y / 2 + j / 2, z / 2 + k / 2) for i in (0, 1) for j in (0, 1) for k in (0, 1)
             for (x, y, z) in DIAMOND]
    lines = ["&control", "  calculation = 'scf'", f"  pseudo_dir = '{PSEUDO_DIR}'", f"  outdir = '{outdir}'",
             "  prefix = 'si64'", "  disk_io = 'none'", "/", "&system", "  ibrav = 1", "  celldm(1) = 20.52",
             f"  nat = {len(atoms)}", "  ntyp = 1", f"  ecutwfc = {ECUT_RY}", "/", "&electrons",
             "  conv_thr = 1e-6", "  mixing_beta = 0.7", "/", "ATOMIC_SPECIES", "  Si 28.086 Si.pz-vbc.UPF",
             "ATOMIC_POSITIONS crystal"]
    lines += [f"  Si {x:.4f} {y:.4f} {z:.4f}" for (x, y, z) in atoms]
    lines += ["K_POINTS gamma", ""]
    return "\n".join(lines)


def command(m, p, infile):
    """The launch line of one run: m ranks, p BLAS threads each, unbound."""
    return ["mpirun", "--allow-run-as-root", "-np", str(m), "--bind-to", "none", "--oversubscribe",
            "-x", f"OMP_NUM_THREADS={p}", "-x", f"LD_LIBRARY_PATH={OPENBLAS_OPENMP}", PWX, "-in", infile]


class PwX:
    name = "pwx"
    title = "pw.x"
    inputs = {"si64": 1}
    confs = CONFS

    def __init__(self):
        self.info = {
            "binary": shutil.which(PWX),
            "quantum_espresso_version": subprocess.run(["dpkg-query", "-W", "-f=${Version}", "quantum-espresso"],
                                                       capture_output=True, text=True).stdout,
            "openblas_openmp_version": subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libopenblas0-openmp"],
                                                      capture_output=True, text=True).stdout,
            "pwx_command": " ".join(command("m", "p", "si64.in")),
            "inputs": {"si64": f"64-atom Si supercell (2x2x2 conventional cells), Si.pz-vbc.UPF, ecutwfc {ECUT_RY} Ry, "
                               "Gamma only, one SCF to 1e-6 Ry (written by validation/sweep_pwx.py)"},
        }

    def run(self, name, m, p, bound):
        """One run with m ranks x p threads; returns (wall_s, censored). The bound kills the process group."""
        with tempfile.TemporaryDirectory() as d:
            infile = os.path.join(d, "si64.in")
            with open(infile, "w") as f:
                f.write(si64_input(d))
            return ranks_threads.bounded_run(command(m, p, infile), bound, f"{PWX} at m={m} p={p}")


def main():
    a = ranks_threads.arguments(__doc__, "pwx", (PWX, "mpirun"),
                                "scripts/setup.sh installs quantum-espresso, quantum-espresso-data, "
                                "libopenblas0-openmp and openmpi-bin")
    if not os.path.exists(os.path.join(PSEUDO_DIR, "Si.pz-vbc.UPF")):
        sys.exit(f"sweep_pwx: {PSEUDO_DIR}/Si.pz-vbc.UPF not found (quantum-espresso-data)")
    if not os.path.isdir(OPENBLAS_OPENMP):
        sys.exit(f"sweep_pwx: {OPENBLAS_OPENMP} not found (libopenblas0-openmp)")
    ranks_threads.sweep(a, PwX())


if __name__ == "__main__":
    main()
