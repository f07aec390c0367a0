#!/usr/bin/env python3
"""Records the groups of `mmgp tune --work SHORT:FULL`'s benchmark: programs whose amount of work is one number on
their command line, each configuration of their space run short and full, `--repetitions` times (3), every run
bounded (5x the fastest finished run of the same work so far, validation/ranks_threads.py's rule). Writes one
replay file per program, validation/tune/groups/NAME-work.csv, with the replay columns and `work`:

    m,p,nodes,policy,units,work,time_s,censored,bound_s,progress

where `progress` is the run's progress timeline as mmgp tune --progress-regex reads it from the program's own
output, "t:count;t:count;..." (seconds since the run started, the count its line reached; empty for a program
without progress lines):

    validation/tune/record_work.py                       # every program
    validation/tune/record_work.py --only gromacs        # one

The programs (their short and full work):
  gromacs  gmx mdrun -v on 884 SPC/E waters in a 3 nm box (validation/sweep_gromacs.py's water3nm input),
           -nsteps 100 and 1000, m thread-MPI ranks x p OpenMP threads (12 configurations); progress: its
           "step N" lines (every 100 steps)
  gromacs-10k  the same, -nsteps 1000 and 10000
  pwx      pw.x on 64 Si atoms (validation/sweep_pwx.py's input), electron_maxstep 2 (scf_must_converge false)
           and the SCF to convergence (electron_maxstep 100), m MPI ranks x p BLAS threads (12 configurations);
           progress: its "iteration #  N" lines (8 iterations to convergence; GFORTRAN_UNBUFFERED_PRECONNECTED=y
           so that each line leaves when it is written)
  libpll   mmgp-offload-run, the libpll bootstrap program on a simulated 24 x 600 alignment, --units 8 and 64,
           m host threads x p APU threads, edtlp and os (40 configurations)
The rounds go short then full over the whole space each time, so that the machine's drift falls on both alike.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402
import ranks_threads  # noqa: E402
import sweep_gromacs  # noqa: E402
import sweep_pwx  # noqa: E402

FIRST_BOUND_S = 120.0


class Gromacs:
    name, works = "gromacs-water3nm", (100, 1000)
    progress = r"^step (\d+)"
    confs = [(m, p, "edtlp") for (m, p) in sweep_gromacs.CONFS]

    def __init__(self, workdir):
        self.tpr, _ = sweep_gromacs.make_input(workdir, "water3nm", 3.0, 1000)

    def command(self, m, p, pol, work, d):
        return ([sweep_gromacs.GMX, "-quiet", "mdrun", "-s", self.tpr, "-deffnm", os.path.join(d, "x"), "-nsteps",
                 str(work), "-ntmpi", str(m), "-ntomp", str(p), "-npme", "0", "-pin", "off", "-nb", "cpu", "-v"],
                dict(os.environ, OMP_NUM_THREADS=str(p)))


class GromacsLong(Gromacs):
    """The same input and space, at ten times the work: a short run of 1,000 steps is mostly steps, not start-up
    (gmx tune_pme's benchmarks are a few thousand steps for that reason)."""
    name, works = "gromacs-water3nm-10k", (1000, 10000)


class PwX:
    name, works = "pwx-si64", (2, 100)
    progress = r"iteration #\s*(\d+)"
    confs = [(m, p, "edtlp") for (m, p) in sweep_pwx.CONFS]

    def __init__(self, workdir):
        self.workdir = workdir

    def command(self, m, p, pol, work, d):
        text = sweep_pwx.si64_input(d).replace(
            "  conv_thr = 1e-6", f"  conv_thr = 1e-6\n  electron_maxstep = {work}\n  scf_must_converge = .false.")
        infile = os.path.join(d, "si64.in")
        with open(infile, "w") as f:
            f.write(text)
        cmd = sweep_pwx.command(m, p, infile)
        return cmd[:cmd.index(sweep_pwx.PWX)] + ["-x", "GFORTRAN_UNBUFFERED_PRECONNECTED=y"] + cmd[cmd.index(sweep_pwx.PWX):], None


class Libpll:
    name, works = "libpll-24x600", (8, 64)
    progress = None
    confs = [(m, p, pol) for m in range(1, 9) for p in range(1, 9) if m * p <= 8 for pol in ("edtlp", "os")]

    def __init__(self, workdir):
        self.runner = os.path.join(common.ROOT, "build", "offload", "mmgp-offload-run")
        if not os.access(self.runner, os.X_OK):
            sys.exit(f"record_work: {self.runner} not built (ninja -C build)")

    def command(self, m, p, pol, work, d):
        return ([self.runner, "--simulate", "24:600", "--m", str(m), "--p", str(p), "--policy", pol,
                 "--units", str(work), "--timeout", "600"], None)


def bounded_progress_run(cmd, bound, pattern, what, env=None):
    """One run of cmd in a session of its own: (wall_s, censored, timeline). Its standard output and error are read
    as they come, split at newlines and carriage returns; each line `pattern` matches adds (seconds since the start,
    the number it captured). Past `bound` seconds the process group is killed (censored at the bound)."""
    t0 = time.monotonic()
    pr = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, env=env)
    timeline, rx = [], re.compile(pattern) if pattern else None

    def read():
        buf = b""
        while True:
            chunk = pr.stdout.read1(65536)
            if not chunk:
                break
            buf += chunk
            *lines, buf = re.split(rb"[\r\n]", buf)
            t = time.monotonic() - t0
            for line in lines:
                hit = rx.search(line.decode(errors="replace").strip()) if rx else None
                if hit:
                    timeline.append((t, float(hit.group(1))))

    reader = threading.Thread(target=read)
    reader.start()
    wall, expired = common.wait_bounded([pr], bound, t0)
    reader.join()
    if expired:
        return bound, True, timeline
    if pr.returncode != 0:
        raise RuntimeError(f"{what} exited with {pr.returncode}")
    return wall, False, timeline


def record(prog, repetitions):
    """Every configuration short and full, `repetitions` rounds; the rows of the replay file."""
    best, censored_once, rows = {}, set(), []
    for rep in range(repetitions):
        for work in prog.works:
            for (m, p, pol) in prog.confs:
                if (work, m, p, pol) in censored_once:
                    continue
                bound = max(ranks_threads.FLOOR_S, 5.0 * best[work]) if work in best else FIRST_BOUND_S
                with tempfile.TemporaryDirectory() as d:
                    cmd, env = prog.command(m, p, pol, work, d)
                    wall, cens, timeline = bounded_progress_run(cmd, bound, prog.progress,
                                                                f"{prog.name} m={m} p={p} work={work}", env=env)
                if cens:
                    censored_once.add((work, m, p, pol))
                else:
                    best[work] = min(best.get(work, wall), wall)
                progress = ";".join(f"{t:.3f}:{c:g}" for t, c in timeline)
                rows.append(f"{m},{p},1,{pol},1,{work},{wall:.4f},{int(cens)},{bound:.2f},{progress}\n")
                common.log(f"{prog.name} rep {rep} m={m} p={p} {pol} work={work}: {wall:.3f} s{' (censored)' if cens else ''}")
    return rows


def main():
    kinds = {"gromacs": Gromacs, "gromacs-10k": GromacsLong, "pwx": PwX, "libpll": Libpll}
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=list(kinds), action="append")
    ap.add_argument("--repetitions", type=int, default=3)
    a = ap.parse_args()
    chosen = a.only or list(kinds)
    with tempfile.TemporaryDirectory() as workdir:
        for key in chosen:
            prog = kinds[key](workdir)
            rows = record(prog, a.repetitions)
            out = os.path.join(HERE, "groups", f"{prog.name}-work.csv")
            common.atomic_write(out, lambda f: f.write("m,p,nodes,policy,units,work,time_s,censored,bound_s,progress\n" + "".join(rows)))
            common.log(f"wrote {out}")


if __name__ == "__main__":
    main()
