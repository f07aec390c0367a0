#!/usr/bin/env python3
"""Sweep (a): the libpll off-load runtime at every (m, p) with m*p <= 8, both host policies,
two alignment sizes and several bootstrap counts, with repetitions. Also measures what the predictions
may use: the platform profile (mmgp calibrate) and the sequential application profile (mmgp profile).

    validation/sweep_offload.py                 # full sweep into validation/offload/ (~10 min on a quiet 2-core VM)
    validation/sweep_offload.py --quick --out DIR   # tiny subset (the `validation` meson test)

Writes OUT/machine.json, OUT/platform-calibrated.json, OUT/app-<input>.json, OUT/runs.csv (all at the end, by
temporary file and rename; an interrupted sweep keeps the previous files, see docs/BAD_INPUT.md). Then run
validation/report.py to get the report and plots. Each run is bounded (5x the group's fastest run so far,
at least 2 s); a bounded run is recorded as censored at the bound.
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

EXAML_49 = "/usr/share/doc/examl/testData/49.gz"

# name -> arguments selecting the alignment (shared by mmgp profile and mmgp-offload-run)
INPUTS_FULL = {
    "49x1200": ["--alignment", EXAML_49],
    "24x600": ["--alignment", EXAML_49, "--taxa", "24", "--sites", "600"],
}
INPUTS_QUICK = {"sim8x200": ["--simulate", "8:200"]}
EXTRA_SECONDS = 420.0  # default time for the extra repetitions (common.extra_repetitions_step)


def configurations(max_threads, quick):
    if quick:
        return [(1, 1, "edtlp"), (2, 1, "edtlp"), (1, 2, "edtlp"), (2, 2, "edtlp"), (1, 1, "os"), (2, 1, "os")]
    out = []
    for pol in ("edtlp", "os"):
        for m in range(1, max_threads + 1):
            for p in range(1, max_threads // m + 1):
                out.append((m, p, pol))
    # fast ones first, so that the bound (5x the fastest so far) is meaningful early
    out.sort(key=lambda c: (c[0] * c[1], c[2] != "edtlp", c[1]))
    return out


def parse_args():
    """The command line (the module's docstring above says what it runs)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(common.ROOT, "validation", "offload"))
    ap.add_argument("--build", default=os.path.join(common.ROOT, "build"))
    ap.add_argument("--quick", action="store_true", help="tiny subset (simulated 8x200, 6 configurations, 1 repetition)")
    ap.add_argument("--repetitions", type=int, default=None)
    ap.add_argument("--units", default=None, help="comma-separated bootstrap counts (default 5,16; quick: 3)")
    ap.add_argument("--inputs", default=None, help="comma-separated subset of the inputs (49x1200, 24x600)")
    common.add_extra_repetition_args(ap, EXTRA_SECONDS, 15)
    ap.add_argument("--profile-tolerance", type=float, default=0.10,
                    help="calibrate and profile again after the sweep when a profile's sequential runs and the sweep's "
                         "runs of m=1, p=1, edtlp differ by more than this fraction (default 0.10)")
    ap.add_argument("--skip-calibrate", action="store_true", help="keep OUT/platform-calibrated.json")
    ap.add_argument("--skip-profile", action="store_true", help="keep OUT/app-*.json")
    return ap.parse_args()


def calibrate(a, mmgp, info):
    """1. Platform profile of this machine (OUT/platform-calibrated.json, staged)."""
    plat = os.path.join(a.out, "platform-calibrated.json")
    common.log("mmgp calibrate")
    cmd = [mmgp, "calibrate", "-o", plat] + (["--quick"] if a.quick else [])
    subprocess.run(common.staging(cmd, plat), check=True, stderr=subprocess.DEVNULL)
    info["calibrate_command"] = " ".join(["build/cli/mmgp"] + cmd[1:])


def profile(a, mmgp, inputs, info, name):
    """2. Sequential application profile of one input (16 units; the report sets `units` per group): its command
    recorded, and OUT/app-NAME.json measured (staged) unless --skip-profile."""
    app = os.path.join(a.out, f"app-{name}.json")
    cmd = [mmgp, "profile"] + inputs[name] + ["--name", f"libpll-{name}", "-o", app]
    # 9 pairs: g comes from the undisturbed p = 2 runs only (offload/app_profile.hpp)
    cmd += ["--units", "3", "--repetitions", "2"] if a.quick else ["--repetitions", "9"]
    info["profile_commands"][name] = " ".join(["build/cli/mmgp"] + cmd[1:])
    if not a.skip_profile:
        common.log(f"mmgp profile {name}")
        subprocess.run(common.staging(cmd, app), check=True)


def measure_profiles(a, mmgp, inputs, info):
    """1. and 2.: the platform profile (unless --skip-calibrate), then every input's application profile."""
    if not a.skip_calibrate:
        calibrate(a, mmgp, info)
    for name in inputs:
        profile(a, mmgp, inputs, info, name)


def measure(runner, inputs, best, name, u, m, p, pol, rep):
    """One bounded run of the off-load runtime, as a row of runs.csv; `best` holds each (input, units) group's
    fastest finished run so far, which sets the bound."""
    key = (name, u)
    bound = max(2.0, 5.0 * best[key]) if key in best else 120.0
    cmd = [runner] + inputs[name] + ["--units", str(u), "--m", str(m), "--p", str(p), "--policy", pol,
                                        "--timeout", str(bound + 5)]
    l0 = common.load1()
    ext = common.ExternalCpu()
    censored = False
    try:
        d = common.run_json(cmd, timeout=bound)
        wall, offloads = d["wall_s"], d["offloads"]
    except subprocess.TimeoutExpired:
        censored, wall, offloads = True, bound, ""
    ext_share = ext.share(wall)
    if not censored:
        best[key] = min(best.get(key, wall), wall)
    common.log(f"rep {rep} {name} U={u} m={m} p={p} {pol}: {wall:.3f} s{' CENSORED' if censored else ''} (others {ext_share:.2f} core)")
    return {"input": name, "units": u, "m": m, "p": p, "policy": pol, "rep": rep,
            "wall_s": f"{wall:.6f}", "censored": int(censored), "bound_s": f"{bound:.3f}",
            "load1_before": f"{l0:.2f}", "load1_after": f"{common.load1():.2f}",
            "offloads": offloads, "external_cpu_share": f"{ext_share:.3f}"}


def consistency(a, inputs, rows):
    """input -> (median wall time of the profile's sequential runs, of the sweep's quiet runs of m=1, p=1,
    edtlp with the profile's units), for the inputs the sweep has such runs of."""
    out = {}
    staged = common.staged_files()
    for name in inputs:
        app = json.load(open(staged[os.path.join(a.out, f"app-{name}.json")]))
        runs = [float(r["wall_s"]) for r in rows if r["input"] == name and int(r["units"]) == int(app["units"])
                and (r["m"], r["p"], r["policy"]) == (1, 1, "edtlp") and not int(r["censored"])
                and common.is_quiet(r)]
        if runs:
            out[name] = (common.median(app["measurements"]["wall_s_p1"]), common.median(runs))
    return out


def described(c):
    """A consistency() result as machine.json records it (rounded, with the ratio)."""
    return {name: {"profile_wall_s": round(prof, 6), "sweep_wall_s": round(sweep, 6),
                   "ratio": round(prof / sweep, 3)} for name, (prof, sweep) in c.items()}


def worst(c):  # the largest |log(profile / sweep)|, unrounded
    return max((abs(math.log(prof / sweep)) for prof, sweep in c.values()), default=0.0)


def check_profiles(a, inputs, rows, info, again):
    """5. The profiles must describe the machine as the sweep found it: each profile's own sequential runs
    (m = 1, p = 1, edtlp) against the sweep's runs of that configuration. The profile and the calibration run
    once, before the sweep, and a slow spell of this shared VM then (other tenants; it does not show in
    this VM's load) skews every prediction (2026-11-22 06:52: the 49x1200 profile took 1.51x the sweep's
    time for the same runs). When a profile is more than 10 % off, calibrate and profile again now, once
    (`again` measures them)."""
    check = consistency(a, inputs, rows)
    info["profile_check"] = {"rule": "median wall time of the profile's sequential runs against the sweep's "
                                     f"quiet runs of m=1, p=1, edtlp with the same units; more than "
                                     f"{100 * a.profile_tolerance:.0f} % apart: calibrate and profile again after "
                                     "the sweep, once",
                             "before_sweep": described(check)}
    if not check:
        info["profile_check"]["note"] = "no quiet run of m=1, p=1, edtlp with the profiles' units: not checked"
    if check and worst(check) > math.log(1.0 + a.profile_tolerance):
        profile_again(a, inputs, rows, info, again, check)
    else:
        info["profile_check"]["used"] = "before_sweep"


def profile_again(a, inputs, rows, info, again, check):
    """Calibrates and profiles again after the sweep, keeping the profiles (before or after) closer to it."""
    common.log(f"profiles inconsistent with the sweep ({described(check)}): calibrating and profiling again")
    staged = common.staged_files()
    first = {final: path + ".first" for final, path in staged.items()}  # still temporary names
    for final, path in staged.items():
        os.replace(path, first[final])
    try:
        again()
        after = consistency(a, inputs, rows)
        info["profile_check"]["after_sweep"] = described(after)
        keep_first = worst(after) > worst(check)
        why = "before_sweep (closer than after_sweep)"
    except Exception as e:  # the sweep's runs and the first profiles are kept, not lost with the re-run
        keep_first, why = True, f"before_sweep (calibrating/profiling again failed: {e})"
        common.log(f"profile check: {e}; keeping the profiles measured before the sweep")
    if keep_first:  # the calibration stays with its profiles
        for final, path in staged.items():
            os.replace(first[final], path)
        info["profile_check"]["used"] = why
    else:
        info["profile_check"]["used"] = "after_sweep"


def main():
    a = parse_args()
    os.makedirs(a.out, exist_ok=True)
    mmgp = os.path.join(a.build, "cli", "mmgp")
    runner = os.path.join(a.build, "offload", "mmgp-offload-run")
    inputs = INPUTS_QUICK if a.quick else INPUTS_FULL
    if a.inputs:
        inputs = {k: v for k, v in inputs.items() if k in a.inputs.split(",")}
    common.begin_sweep(a.out, ["runs.csv", "machine.json"] + ([] if a.skip_calibrate else ["platform-calibrated.json"])
                       + ([] if a.skip_profile else [f"app-{name}.json" for name in inputs]))
    reps = a.repetitions or (1 if a.quick else 5)
    units = [int(u) for u in (a.units or ("3" if a.quick else "5,16")).split(",")]
    info = common.machine_info([os.path.relpath(sys.argv[0], common.ROOT)] + sys.argv[1:])
    info["inputs"] = {k: " ".join(v) for k, v in inputs.items()}
    info["units"] = units
    info["repetitions"] = reps
    t0 = time.time()
    # 1. and 2. The platform profile of this machine and the sequential application profile per input.
    info["profile_commands"] = {}
    measure_profiles(a, mmgp, inputs, info)
    # 3. The sweep: repetitions outermost, so that slow drifts of the machine spread over all configurations.
    confs = configurations(8, a.quick)
    rows = []
    best = {}
    for rep in range(reps):
        for name in inputs:
            for u in units:
                for (m, p, pol) in confs:
                    rows.append(measure(runner, inputs, best, name, u, m, p, pol, rep))
    # 4. More repetitions where the median is still uncertain (common.extra_repetitions).
    common.extra_repetitions_step(
        a, EXTRA_SECONDS, rows, ("input", "units", "m", "p", "policy"),
        lambda r: measure(runner, inputs, best, r["input"], r["units"], r["m"], r["p"], r["policy"], int(r["rep"]) + 1),
        info, reps)
    # 5. The profiles checked against the sweep (and measured again when they disagree with it).
    if not a.skip_profile:
        check_profiles(a, inputs, rows, info, lambda: measure_profiles(a, mmgp, inputs, info))
    common.finish_sweep(a.out, rows, info, t0)


if __name__ == "__main__":
    main()
