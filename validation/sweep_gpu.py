#!/usr/bin/env python3
"""The libpll bootstrap program on a GPU node: the off-load runtime's processes (mmgp-offload-run --accelerator
cuda) over m x p, time-sliced and under MPS, with repetitions, every run bounded; predicted with nothing fitted
(the calibrated platform + the program's profile measured by mmgp profile --accelerator cuda).

    validation/sweep_gpu.py --platform gpu.json                       # the full sweep into validation/gpu/libpll/
    validation/sweep_gpu.py --platform gpu.json --quick --out DIR     # the device check's reduced form
    validation/sweep_gpu.py --platform gpu.json --policies edtlp,os   # each run blocking and, alternated, spinning

m in {1, 2, 4, 8} x p in {1, 8, 32, S/m, S, 2S} (S: the platform's SMs; quick: p in {1, 32, S, 2S}, 24 taxa x
50,000 sites and 4 units instead of 100,000 and 8), only the
mappings the model calls feasible (m*p <= S x slots under MPS, p <= S x slots time-sliced). MPS is swept where the
platform lists it and the daemon can be started (as root), and stopped after. Each run's bound is the runtime's
own watchdog (--bound seconds, and the process is killed 30 s later); a run past it is recorded as censored.

Writes OUT/app.json (the profile), OUT/platform.json (a copy of --platform), OUT/runs.csv (every run),
OUT/sweep.json (the cases: the median of each mapping's runs, in the GPU data sets' format, validation/gpu_set.py),
OUT/cpu.json (the same program on the node's CPU cores, the best of m x p over the cores, and the GPU's best run
against it: a ratio measured in one run of this script), OUT/validate.txt (mmgp validate sweep.json), and mmgp fit
on 6 configurations with the rest predicted by what it fitted (OUT/fit-runs.csv, app-fitted.json,
sweep-fitted.json, validate-fitted.txt); with --policies naming os, also the program profiled spinning
(OUT/app-os.json) and the spinning cases predicted by it (OUT/sweep-os.json, validate-os.txt); each by temporary
file and rename. Standard library only: the device machine has python3 and nothing else.
"""
import argparse
import csv
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--platform", required=True, help="the GPU node's platform (mmgp calibrate --accelerator cuda)")
    ap.add_argument("--out", default=os.path.join(common.ROOT, "validation", "gpu", "libpll"))
    ap.add_argument("--bin", default=None,
                    help="the folder holding mmgp and mmgp-offload-run (a bundle's bin/; default: build/cli, build/offload)")
    ap.add_argument("--quick", action="store_true", help="the device check's reduced form (fewer p, 2 repetitions)")
    ap.add_argument("--simulate", default=None, help="TAXA:SITES of the simulated alignment (default 24:100000; quick: 24:50000)")
    ap.add_argument("--units", type=int, default=None, help="bootstrap units of every run (default 8; quick: 4)")
    ap.add_argument("--repetitions", type=int, default=None, help="runs per mapping (default 3; quick: 2)")
    ap.add_argument("--bound", type=float, default=60.0, help="seconds a run may take (the runtime's watchdog; default 60)")
    ap.add_argument("--modes", default="time_sliced,mps", help="sharing modes to sweep, of those the platform lists")
    ap.add_argument("--policies", default="edtlp",
                    help="host policies to sweep: edtlp (each process's host thread blocks on its grids, the default) "
                         "and/or os (it spins), alternated run by run; with os the program is profiled spinning too")
    ap.add_argument("--budget", type=float, default=None,
                    help="seconds after which no further mapping is started (default: none; the runs done are kept)")
    return ap.parse_args()


def programs(a):
    if a.bin:
        return os.path.join(a.bin, "mmgp"), os.path.join(a.bin, "mmgp-offload-run")
    return (os.path.join(common.ROOT, "build", "cli", "mmgp"), os.path.join(common.ROOT, "build", "offload", "mmgp-offload-run"))


def value(v):
    """A profile key's value: the number itself, or its {"value": ...}."""
    return v["value"] if isinstance(v, dict) else v


def platform_facts(path):
    """The SMs (apus), the blocks an SM holds (apu_slots) and the sharing modes of a GPU platform."""
    with open(path) as f:
        p = json.load(f)
    sms = int(value(p["apus"]))
    slots = int(value(p.get("apu_slots", 1)))
    modes = value(p.get("sharing", ["time_sliced"]))
    return sms, slots, list(modes)


def mappings(sms, slots, mode, quick):
    """The (m, p) of one mode that the model calls feasible, in sweep order."""
    out = []
    for m in (1, 2, 4, 8):
        ps = (1, 32, sms, 2 * sms) if quick else (1, 8, 32, max(1, sms // m), sms, 2 * sms)
        for p in sorted(set(ps)):
            if (mode == "mps" and m * p > sms * slots) or p > sms * slots:
                continue
            out.append((m, p))
    return out


def workload(a):
    return ["--simulate", a.simulate, "--units", str(a.units)]


def one_run(a, offload_run, m, p, mode, extra=(), policy="edtlp"):
    """One bounded run: (wall seconds, censored, why it failed or ""). A run past its bound is censored at the bound;
    a run that fails otherwise (a CUDA error, a process killed) is recorded with its reason and the sweep goes on."""
    env = dict(os.environ, MMGP_SHARING=mode)
    env.pop("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", None)  # each process sets its own from p (cuda_accelerator.hpp)
    cmd = [offload_run, *extra, "--m", str(m), "--p", str(p), "--policy", policy, "--timeout", str(a.bound)] + workload(a)
    t0 = time.time()
    try:
        p_ = subprocess.run(cmd, capture_output=True, text=True, timeout=a.bound + 30, env=env)
    except subprocess.TimeoutExpired:
        return a.bound, True, ""
    if p_.returncode != 0:
        if "watchdog" in p_.stderr:
            return a.bound, True, ""
        why = f"exit {p_.returncode}: {p_.stderr.strip()[:300]}"
        common.log(f"m={m} p={p} {mode}: failed after {time.time() - t0:.1f} s ({why})")
        return None, False, why
    return json.loads(p_.stdout)["wall_s"], False, ""


def mps_daemon(start):
    """Starts (or stops) the MPS control daemon; True when it runs after a start. Its output goes nowhere (a daemon
    holding a captured pipe would keep subprocess waiting), and neither call may take more than 30 s."""
    quiet = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30)
    try:
        if start:
            if os.geteuid() != 0 or not shutil.which("nvidia-cuda-mps-control"):
                return False
            ok = subprocess.run(["nvidia-cuda-mps-control", "-d"], **quiet).returncode == 0
            time.sleep(1)
            return ok
        with subprocess.Popen(["nvidia-cuda-mps-control"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) as q:
            q.communicate(b"quit\n", timeout=30)
    except (subprocess.TimeoutExpired, OSError) as e:
        common.log(f"nvidia-cuda-mps-control: {e}")
    time.sleep(1)
    return False


FIELDS = ["m", "p", "sharing", "policy", "rep", "wall_s", "censored", "bound_s", "failed"]


def policy_of(run):
    """A run's or a case's host policy: edtlp (blocking) where none is named, as in the sweeps recorded before the
    policies were swept."""
    return run.get("policy", "edtlp")


def write_runs(a, rows):
    """OUT/runs.csv: every run so far (rewritten after each mapping, so that an interrupted sweep keeps its runs)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=FIELDS, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    common.write_if_changed(os.path.join(a.out, "runs.csv"), buf.getvalue())


def sweep_mode(a, offload_run, sms, slots, mode, reps, rows, t0):
    for m, p in mappings(sms, slots, mode, a.quick):
        if a.budget is not None and time.time() - t0 > a.budget:
            common.log(f"the budget of {a.budget:.0f} s is spent: m={m} p={p} {mode} and what follows not run")
            return
        for rep in range(reps):
            for policy in a.policy_list:  # alternated, so that the policies see the same drift
                wall, censored, why = one_run(a, offload_run, m, p, mode, ["--accelerator", "cuda"], policy)
                rows.append({"m": m, "p": p, "sharing": mode, "policy": policy, "rep": rep,
                             "wall_s": "" if wall is None else wall, "censored": int(censored), "bound_s": a.bound,
                             "failed": why})
        for policy in a.policy_list:
            mine = [r["wall_s"] for r in rows[-reps * len(a.policy_list):] if r["policy"] == policy]
            common.log(f"m={m} p={p} {mode}{'' if policy == 'edtlp' else ' ' + policy}: {mine}")
        write_runs(a, rows)


def cases_of(rows, source):
    """One case per mapping and policy: the median of its runs; a mapping whose median run was stopped at its bound
    is a censored case (measured_s is a bound); a mapping with a failed run is left out (runs.csv says why). Group
    "libpll" the blocking runs (edtlp, no policy key: the sweeps recorded before the policies), "libpll os" the
    spinning ones."""
    groups = {}
    for r in rows:
        groups.setdefault((r["m"], r["p"], r["sharing"], policy_of(r)), []).append(r)
    out = []
    for (m, p, mode, policy), rs in groups.items():
        if any(r["failed"] for r in rs):
            continue
        runs = sorted(rs, key=lambda r: r["wall_s"])
        mid = runs[(len(runs) - 1) // 2]  # the lower median: censored only when half the runs or more were
        stopped = sum(1 for r in rs if r["censored"])
        case = {"m": m, "p": p, "sharing": mode, "group": "libpll", "measured_s": common.median([r["wall_s"] for r in runs]),
                "runs": [r["wall_s"] for r in rs if not r["censored"]],
                "source": f"{source}, {len(rs)} runs" + (f", {stopped} stopped at the bound" if stopped else "")}
        if policy != "edtlp":
            case["policy"], case["group"] = policy, f"libpll {policy}"
        if mid["censored"]:
            case["measured_s"], case["censored"] = mid["wall_s"], True
        if not case["runs"]:
            del case["runs"]
        out.append(case)
    return out


FIT_CASES = 6  # configurations mmgp fit is given; the rest are predicted with what it fitted


def held_from_profile(profile):
    """mmgp fit's words for what it takes from the program's profile instead of fitting: N (counted), the waits per
    off-load (counted: they price the time-sliced runs of several processes, none of which the fit is given), C_apu
    (the runs it takes cannot separate C_apu from T_hpu on a GPU node: both cost the same per unit in every mapping
    but a time-sliced one of several processes) and the decomposition (the program's: each unit runs whole on one
    process; six configurations whose runs under MPS vary up to 2.5x between repetitions can point the fit's
    choice of structure elsewhere)."""
    held = ["--N", repr(value(profile["N"])), "--waits-per-offload", repr(value(profile.get("waits_per_offload", 1))),
            "--fix", f"C_apu={value(profile['C_apu'])!r}"]
    if profile.get("decomposition"):
        held += ["--decomposition", value(profile["decomposition"])]
    return held


def fit_and_validate(a, mmgp, cases, sms):
    """mmgp fit on FIT_CASES configurations its linear form takes (within the SMs; time-sliced only at m = 1, where
    nothing is shared: time-sliced runs of several processes would only be priced, the waits being held), evenly spread over the sweep's order, with what held_from_profile() holds; the rest predicted with the
    fitted profile (OUT/app-fitted.json,
    OUT/sweep-fitted.json, OUT/validate-fitted.txt). Returns mmgp validate's exit status, or None when too few
    configurations qualify."""
    eligible = [c for c in cases if policy_of(c) == "edtlp" and c["m"] * c["p"] <= sms and
                (c["sharing"] == "mps" or c["m"] == 1) and not c.get("censored") and c["runs"]]
    if len(eligible) < FIT_CASES or len(cases) <= FIT_CASES:
        common.log(f"fit: {len(eligible)} configurations it can take, fewer than {FIT_CASES}: not fitted")
        return None
    step = len(eligible) / FIT_CASES
    chosen = [eligible[int(i * step)] for i in range(FIT_CASES)]
    with open(os.path.join(a.out, "app.json")) as f:
        held = held_from_profile(json.load(f))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["m", "p", "nodes", "units", "policy", "sharing", "time_s"])
    for c in chosen:
        for t in c["runs"]:
            w.writerow([c["m"], c["p"], 1, a.units, "edtlp", c["sharing"], t])
    common.write_if_changed(os.path.join(a.out, "fit-runs.csv"), buf.getvalue())
    fitted = os.path.join(a.out, "app-fitted.json")
    f = subprocess.run([mmgp, "fit", os.path.join(a.out, "fit-runs.csv"), "--platform", os.path.join(a.out, "platform.json"),
                        *held, "--name", "libpll-gpu-fitted", "-o", fitted], capture_output=True, text=True)
    report = f.stdout + f.stderr
    if f.returncode != 0:
        common.write_if_changed(os.path.join(a.out, "validate-fitted.txt"), report)
        return f.returncode
    chosen_keys = {(c["m"], c["p"], c["sharing"]) for c in chosen}
    rest = [dict(c, group="libpll fitted") for c in cases
            if policy_of(c) == "edtlp" and (c["m"], c["p"], c["sharing"]) not in chosen_keys]
    doc = {"schema": "mmgp/1", "kind": "validation",
           "name": f"libpll bootstrap on the GPU, mmgp fit on {FIT_CASES} configurations, the rest predicted",
           "scenario": {"schema": "mmgp/1", "name": "libpll-gpu-fitted", "platform": "platform.json",
                        "application": "app-fitted.json"},
           "cases": rest}
    common.write_json(os.path.join(a.out, "sweep-fitted.json"), doc)
    v = subprocess.run([mmgp, "validate", os.path.join(a.out, "sweep-fitted.json")], capture_output=True, text=True)
    common.write_if_changed(os.path.join(a.out, "validate-fitted.txt"), report + "\n" + v.stdout + v.stderr)
    return v.returncode


def cpu_reference(a, offload_run, gpu_best):
    """The same program on the node's CPU cores (m x p over the cores, edtlp), the best run, against the GPU's."""
    cores = os.cpu_count() or 1
    best = None
    for m in sorted({1, cores // 2, cores} - {0}):
        p = max(1, cores // m)
        wall, censored, why = one_run(a, offload_run, m, p, "time_sliced")
        common.log(f"CPU m={m} p={p}: {why or f'{wall:.3f} s'}")
        if wall is not None and not censored and (best is None or wall < best["wall_s"]):
            best = {"m": m, "p": p, "wall_s": wall}
    return {"cores": cores, "cpu_best": best, "gpu_best": gpu_best,
            "gpu_over_cpu": gpu_best["wall_s"] / best["wall_s"] if best and gpu_best else None,
            "note": "the CPU runtime (APU threads on libpll) and the GPU runtime, the same alignment and units, "
                    "measured in one run of validation/sweep_gpu.py"}


def main():
    # A stop from outside (timeout's SIGTERM, an interrupt) unwinds, so that the MPS daemon is stopped and the runs
    # so far stay in runs.csv.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    a = parse_args()
    mmgp, offload_run = programs(a)
    reps = a.repetitions or (2 if a.quick else 3)
    a.simulate = a.simulate or ("24:50000" if a.quick else "24:100000")
    a.units = a.units or (4 if a.quick else 8)
    sms, slots, modes = platform_facts(a.platform)
    a.policy_list = [x for x in a.policies.split(",") if x]
    if not a.policy_list or any(x not in ("edtlp", "os") for x in a.policy_list):
        sys.exit(f"sweep_gpu: --policies: expected edtlp and/or os, found {a.policies!r}")
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    shutil.copyfile(a.platform, os.path.join(a.out, "platform.json.tmp"))
    os.replace(os.path.join(a.out, "platform.json.tmp"), os.path.join(a.out, "platform.json"))
    common.log(f"profile: {sms} SMs x {slots} slots, modes {modes}")
    # The profile at least 3 repetitions, quick or not: its per-off-load cost C_apu is a difference of round trips
    # whose spread over 2 repetitions was wide (cv 0.19 and 0.76 on two H200 runs).
    prof_reps = max(3, reps)
    # --platform: C_apu leaves out what the model charges an off-load on the platform the sweep predicts with.
    # Blocking (app.json), and where the spinning runs are swept also spinning (app-os.json: the profile for them).
    for policy, name in (("edtlp", "app.json"), ("os", "app-os.json")):
        if policy != "edtlp" and policy not in a.policy_list:  # the blocking profile always: the sweep's own
            continue
        prof = subprocess.run([mmgp, "profile", "--accelerator", "cuda", *workload(a), "--repetitions", str(prof_reps),
                               "--platform", a.platform, "--policy", policy, "--quiet", "-o", os.path.join(a.out, name)],
                              capture_output=True, text=True, timeout=(2 * prof_reps + 3) * (a.bound + 30))
        if prof.returncode != 0:
            sys.exit(f"sweep_gpu: mmgp profile --accelerator cuda --policy {policy} failed ({prof.returncode}): "
                     f"{prof.stderr.strip()}")
    rows = []
    for mode in [m for m in a.modes.split(",") if m in modes]:
        if mode == "mps" and not mps_daemon(True):
            common.log("the MPS daemon could not be started (root and nvidia-cuda-mps-control needed): MPS not swept")
            continue
        try:
            sweep_mode(a, offload_run, sms, slots, mode, reps, rows, t0)
        finally:
            if mode == "mps":
                mps_daemon(False)
    source = f"mmgp-offload-run --accelerator cuda --simulate {a.simulate} --units {a.units}"
    cases = cases_of(rows, source)
    write_runs(a, rows)
    doc = {"schema": "mmgp/1", "kind": "validation", "name": "libpll bootstrap on the GPU, nothing fitted",
           "scenario": {"schema": "mmgp/1", "name": "libpll-gpu", "platform": "platform.json", "application": "app.json"},
           "cases": cases}
    common.write_json(os.path.join(a.out, "sweep.json"), doc)
    v = subprocess.run([mmgp, "validate", os.path.join(a.out, "sweep.json")], capture_output=True, text=True)
    common.write_if_changed(os.path.join(a.out, "validate.txt"), v.stdout + v.stderr)
    spinning = [c for c in cases if policy_of(c) == "os"]
    vo = None
    if spinning:  # the spinning runs by their own profile
        doc_os = {"schema": "mmgp/1", "kind": "validation",
                  "name": "libpll bootstrap on the GPU, its host spinning, by the spinning profile, nothing fitted",
                  "scenario": dict(doc["scenario"], application="app-os.json"), "cases": spinning}
        common.write_json(os.path.join(a.out, "sweep-os.json"), doc_os)
        vo = subprocess.run([mmgp, "validate", os.path.join(a.out, "sweep-os.json")], capture_output=True, text=True)
        common.write_if_changed(os.path.join(a.out, "validate-os.txt"), vo.stdout + vo.stderr)
    else:  # no spinning case now: no earlier sweep's file stays beside these (app-os.json is this sweep's if os was)
        for name in ("sweep-os.json", "validate-os.txt") + (() if "os" in a.policy_list else ("app-os.json",)):
            if os.path.exists(os.path.join(a.out, name)):
                os.remove(os.path.join(a.out, name))
    uncensored = [c for c in cases if not c.get("censored") and policy_of(c) == "edtlp"]  # blocking, as the CPU runs
    gpu_best = min(({"m": c["m"], "p": c["p"], "sharing": c["sharing"], "wall_s": c["measured_s"]} for c in uncensored),
                   key=lambda c: c["wall_s"], default=None)
    common.write_json(os.path.join(a.out, "cpu.json"), cpu_reference(a, offload_run, gpu_best))
    fitted = fit_and_validate(a, mmgp, cases, sms)
    common.log(f"{len(rows)} runs, {len(cases)} cases in {time.time() - t0:.0f} s; mmgp validate: exit {v.returncode}; "
               + ("" if vo is None else f"by the spinning profile: exit {vo.returncode}; ")
               + f"fitted: {'not fitted' if fitted is None else f'exit {fitted}'}")
    return 0 if v.returncode == 0 and fitted in (None, 0) and (vo is None or vo.returncode == 0) else 1


if __name__ == "__main__":
    sys.exit(main())
