#!/usr/bin/env python3
"""Sweep (d): IQ-TREE 2 from Debian (iqtree2-mpi), a maximum-likelihood phylogenetics code mapped as MPI ranks x
OpenMP threads: m ranks (mpirun -np m, the candidate trees of the search shared among them) with p threads each
(-nt p, the likelihood's sites split among them). Ranks and threads beyond the two cores spin on each other.

    validation/sweep_iqtree.py                      # full sweep into validation/iqtree/
    validation/sweep_iqtree.py --repetitions 1      # one round

The input is the RAxML sweep's 24 x 1200 alignment (validation/raxml/inputs/24x1200.phy), a fixed model (GTR+G4:
IQ-TREE refuses model selection with more than one rank), seed 1, and a tree search that stops after 800
iterations without a better tree (-nstop 800): 10-25 s a run here. The processes are not bound to cores
(mpirun --bind-to none --oversubscribe): bound to cores, IQ-TREE refuses p threads on fewer cores, and mpirun
refuses more ranks than cores. Every run is bounded (validation/ranks_threads.py), which is what ends the
configurations that spin.

Writes OUT/platform.json (mmgp calibrate, first), OUT/machine.json, OUT/runs.csv (the columns of the other
sweeps), and the two prior runs (m = 1 with p = 1 and 2, measured before the sweep and not part of it) to
OUT/fit-24x1200.csv, from which `mmgp fit` makes the prior application profile OUT/app-fitted-24x1200.json.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import ranks_threads  # noqa: E402

IQTREE = "iqtree2-mpi"
NSTOP = 800
ALIGNMENTS = {"24x1200": os.path.join(common.ROOT, "validation", "raxml", "inputs", "24x1200.phy")}
# p <= 2: IQ-TREE refuses more threads than the machine's cores ("You have specified more threads than CPU cores
# available", exit 2); ranks are not limited (mpirun --oversubscribe).
CONFS = [(1, 1), (1, 2), (2, 1), (2, 2), (3, 1), (3, 2), (4, 1), (4, 2)]


def command(alignment, m, p, prefix):
    """The launch line of one run: m ranks, p threads each, unbound."""
    return ["mpirun", "--allow-run-as-root", "-np", str(m), "--bind-to", "none", "--oversubscribe",
            "-x", f"OMP_NUM_THREADS={p}", IQTREE, "-s", alignment, "-m", "GTR+G4", "-nt", str(p),
            "-seed", "1", "-nstop", str(NSTOP), "-quiet", "-pre", prefix]


class IqTree:
    name = "iqtree"
    title = "IQ-TREE"
    inputs = {name: NSTOP for name in ALIGNMENTS}
    confs = CONFS

    def __init__(self):
        self.info = {
            "binary": shutil.which(IQTREE),
            "iqtree_version": subprocess.run(["dpkg-query", "-W", "-f=${Version}", "iqtree"], capture_output=True,
                                             text=True).stdout,
            "iqtree_command": " ".join(command("NAME.phy", "m", "p", "DIR/x")),
            "inputs": {name: f"{os.path.relpath(path, common.ROOT)}, GTR+G4, -nstop {NSTOP}"
                       for name, path in ALIGNMENTS.items()},
        }

    def run(self, name, m, p, bound):
        """One run with m ranks x p threads; returns (wall_s, censored). The bound kills the process group."""
        with tempfile.TemporaryDirectory() as d:
            return ranks_threads.bounded_run(command(ALIGNMENTS[name], m, p, os.path.join(d, "x")), bound,
                                             f"{IQTREE} at m={m} p={p}")


def main():
    a = ranks_threads.arguments(__doc__, "iqtree", (IQTREE, "mpirun"), "scripts/setup.sh installs iqtree and openmpi-bin")
    ranks_threads.sweep(a, IqTree())

if __name__ == "__main__":
    main()
