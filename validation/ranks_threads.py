"""The shared loop of the sweeps of real programs mapped as m ranks x p threads on this machine
(validation/sweep_gromacs.py, validation/sweep_iqtree.py): the platform calibrated first, the prior's two runs
per input (m = 1, p = 1 and 2) fitted by `mmgp fit`, then rounds of every configuration, each run bounded.

Every run is bounded by 5x the fastest configuration of its input measured so far (at least 3 s, the first run
300 s) and recorded as censored at the bound when it does not finish (its process group is killed). A
configuration censored once is not repeated.

A program is described by a `program` object with:
  name                 short name for messages ("sweep_NAME")
  inputs               {input name: units} (units: the work of one run, the N of the fit)
  confs                [(m, p), ...] in sweep order
  run(input, m, p, bound) -> (wall_s, censored)    one bounded run
  info                 dict added to machine.json (binary, version, command line, inputs)
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

import common

FLOOR_S = 3.0
FIRST_BOUND_S = 300.0


def arguments(doc, name, tools, install):
    """The sweep's command line (--out, default validation/NAME; --repetitions, default 5; --mmgp), after checking
    that every program of `tools` is on PATH (`install` says how to get them)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(common.ROOT, "validation", name))
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--mmgp", default=os.path.join(common.ROOT, "build", "cli", "mmgp"))
    a = ap.parse_args()
    for tool in tools:
        if shutil.which(tool) is None:
            sys.exit(f"sweep_{name}: {tool} not found ({install})")
    return a


def bounded_run(cmd, bound, what, env=None):
    """One run of cmd in a session of its own: (wall_s, censored). Past `bound` seconds its process group is
    killed and the run is censored at the bound; a non-zero exit status is an error naming `what`."""
    t0 = time.monotonic()
    pr = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=env)
    wall, expired = common.wait_bounded([pr], bound, t0)
    if expired:
        return bound, True
    if pr.returncode != 0:
        raise RuntimeError(f"{what} exited with {pr.returncode}")
    return wall, False


def prior_fit(a, program, name, platform, best):
    """The prior: two runs at m = 1 (p = 1, 2) measured before the sweep and not part of it; `mmgp fit` makes
    OUT/app-fitted-NAME.json from them (data decomposition, only T_hpu and T_apu free)."""
    units = program.inputs[name]
    fit_rows = []
    for p in (1, 2):
        wall, _ = program.run(name, 1, p, FIRST_BOUND_S)
        best[name] = min(best.get(name, wall), wall)
        fit_rows.append(f"1,{p},1,{units},{wall:.4f},edtlp\n")
        common.log(f"prior {name} m=1 p={p}: {wall:.2f} s")
    fit_csv = common.staging([os.path.join(a.out, f"fit-{name}.csv")], os.path.join(a.out, f"fit-{name}.csv"))[0]
    with open(fit_csv, "w") as f:
        f.write("m,p,nodes,units,time_s,policy\n" + "".join(fit_rows))
    app = os.path.join(a.out, f"app-fitted-{name}.json")
    cmd = [a.mmgp, "fit", fit_csv, "--platform", common.staged_files()[os.path.abspath(platform)],
           "--decomposition", "data", "--N", str(units), "--fix", "C_apu=0", "--fix", "g=0", "--fix", "T_start=0",
           "--name", f"{program.title} {name}", "-o", app]
    p = subprocess.run(common.staging(cmd, app), capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"sweep_{program.name}: {' '.join(cmd)}: {p.stderr.strip()}")


def rounds(program, repetitions, measure, best=None):
    """`repetitions` rounds of every input x configuration of `program`, each run bounded:
    measure(name, m, p, rep, bound) runs one and returns (censored, wall_s, row). The bound is 5x the fastest
    finished run of the input so far (`best`, seconds per input, may start filled), at least FLOOR_S, and
    FIRST_BOUND_S before any; a configuration censored once is not run again. Returns the rows."""
    best = {} if best is None else best
    censored_once, rows = set(), []
    for rep in range(repetitions):
        for name in program.inputs:
            for (m, p) in program.confs:
                if (name, m, p) in censored_once:
                    continue
                bound = max(FLOOR_S, 5.0 * best[name]) if name in best else FIRST_BOUND_S
                cens, wall, row = measure(name, m, p, rep, bound)
                if cens:
                    censored_once.add((name, m, p))
                else:
                    best[name] = min(best.get(name, wall), wall)
                rows.append(row)
    return rows


def sweep(a, program):
    """Calibrates, fits the priors and sweeps every input x configuration a.repetitions times into a.out."""
    files = ["runs.csv", "machine.json", "platform.json"] + \
        [f"{p}-{n}.{e}" for n in program.inputs for p, e in (("fit", "csv"), ("app-fitted", "json"))]
    os.makedirs(a.out, exist_ok=True)
    common.begin_sweep(a.out, files)
    info = common.machine_info([os.path.relpath(sys.argv[0], common.ROOT)] + sys.argv[1:])
    info.update(program.info)
    info["bound"] = f"5 x the fastest configuration of the input measured so far, at least {FLOOR_S} s " \
                    f"(the first run {FIRST_BOUND_S:.0f} s)"
    t0 = time.time()
    best = {}

    # This machine, time-shared (ranks and threads share the cores), calibrated just before the runs.
    platform = os.path.join(a.out, "platform.json")
    cal = subprocess.run(common.staging([a.mmgp, "calibrate", "--quiet", "-o", platform], platform),
                         capture_output=True, text=True)
    if cal.returncode != 0:
        sys.exit(f"sweep_{program.name}: mmgp calibrate: {cal.stderr.strip()}")
    info["platform_calibration"] = "mmgp calibrate --quiet, run by this sweep before its first run"
    for name in program.inputs:
        prior_fit(a, program, name, platform, best)

    def measure(name, m, p, rep, bound):
        l0 = common.load1()
        ext = common.ExternalCpu()
        wall, cens = program.run(name, m, p, bound)
        ext_share = ext.share(wall)
        common.log(f"rep {rep} {name} m={m} p={p}: {wall:.2f} s{' CENSORED' if cens else ''} (others {ext_share:.2f} core)")
        return cens, wall, {"input": name, "units": program.inputs[name], "m": m, "p": p, "policy": "edtlp",
                            "rep": rep, "wall_s": f"{wall:.4f}", "censored": int(cens), "bound_s": f"{bound:.2f}",
                            "load1_before": f"{l0:.2f}", "load1_after": f"{common.load1():.2f}",
                            "external_cpu_share": f"{ext_share:.3f}"}

    rows = rounds(program, a.repetitions, measure, best)
    common.finish_sweep(a.out, rows, info, t0)
