"""The validation's data, read and aggregated once for every data set: the measured runs (runs.csv), which
of them were quiet, cases as medians over their runs, and the platform the offload predictions use. Used by
report.py (the driver), raxml_fit.py (RAxML's cases), repeatability.py and raxml_unbounded.py."""
import csv
import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


def value(x):
    return x["value"] if isinstance(x, dict) and "value" in x else x


def read_runs(path):
    with open(path) as f:
        return [r for r in csv.DictReader(f) if not r["input"].startswith("#")]


def quiet_rule(d):
    """Which repetitions were measured on a quiet machine. The data set's machine.json may name them
    ("quiet_repetitions", when the machine was known to be loaded by others during the other repetitions);
    rows with an external_cpu_share column are quiet when other processes used less than 0.25 core."""
    info = json.load(open(os.path.join(d, "machine.json")))
    reps = info.get("quiet_repetitions")

    def quiet(r):
        if reps is not None and int(r["rep"]) not in reps:
            return False
        return common.is_quiet(r)
    return quiet


def aggregate(rows, keys, quiet=lambda r: True):
    """Groups repetitions. A case uses its quiet repetitions (all of them when none is quiet, and says so);
    its time is their median (a censored repetition counts as its bound and sorts after every finished one);
    it is censored when that median repetition is. `runs` are the repetitions the median is taken from when
    all of them finished (mmgp validate's interval of the median), else empty."""
    groups = defaultdict(list)
    for r in rows:
        groups[tuple(r[k] for k in keys)].append(r)
    cases = []
    for k, reps in groups.items():
        used = [r for r in reps if quiet(r)] or reps
        used.sort(key=lambda r: (int(r["censored"]), float(r["wall_s"])))
        med = used[(len(used) - 1) // 2]
        cases.append({"key": dict(zip(keys, k)), "measured_s": float(med["wall_s"]), "censored": med["censored"] == "1",
                      "runs": [float(r["wall_s"]) for r in used] if all(r["censored"] == "0" for r in used) else [],
                      "pooled": sorted({int(r["pooled_from_m"]) for r in reps if r.get("pooled_from_m")}),
                      "used": len(used), "all_quiet": len(used) == len([r for r in reps if quiet(r)]) and len(used) > 0
                      and all(quiet(r) for r in used),
                      "load": [float(r["load1_before"]) for r in used]})
    return cases


def source_of(c):
    pooled = c.get("pooled") or []
    return (f"runs.csv: median of {c['used']} {'quiet ' if c['all_quiet'] else 'NOT quiet '}repetition"
            f"{'s' if c['used'] > 1 else ''} (load {min(c['load']):.2f}-{max(c['load']):.2f})"
            + (f"; pooled with the runs labelled m={','.join(map(str, pooled))} (the same processes)" if pooled else ""))


def offload_platform(d, variant=None):
    """The calibrated profile, described as the off-load runtime uses this machine (README: "How the
    machine is described"). Every change is derived from the calibration data and recorded in _derivation."""
    cal = json.load(open(os.path.join(d, "platform-calibrated.json")))
    pl = dict(cal)
    cores = int(cal["machine"]["cores"])
    spin = value(cal["O_offload"])
    futex = cal["measurements"]["offload_futex"]["median"]
    wake = max(0.0, (futex - spin) / 2)
    pl["cores"] = cores
    pl["hpu_contexts"] = cores
    pl["apus"] = 8
    busy = cal["measurements"]["csw_futex"]["median"]
    pl["T_csw"] = busy
    pl["T_wake"] = wake
    meas = cal["measurements"]
    for key in ("spin_pause", "sched_slice", "wake_busy"):
        if key not in meas or "median" not in meas[key]:
            raise SystemExit(f"report: {os.path.join(d, 'platform-calibrated.json')}: measurements.{key}: expected the spin "
                             "harness's result (mmgp calibrate of this version), found nothing")
    pause, slice_ = meas["spin_pause"]["median"], meas["sched_slice"]["median"]
    pl["spin_pause"] = pause
    wake_busy = meas["wake_busy"]["median"]
    pl["T_wake_busy"] = wake_busy
    if slice_ is not None:
        pl["sched_slice"] = slice_
    if variant == "no-cores":  # the dedicated-hardware model: APUs do not share cores
        del pl["cores"]
        del pl["T_wake"]
        del pl["spin_pause"]
        pl.pop("sched_slice", None)
        pl["T_csw"] = wake
        del pl["T_wake_busy"]
    if variant == "wake-always":  # every edtlp switch wakes an idle core
        del pl["T_wake"]
        pl["T_csw"] = wake
    if variant in ("wake-always", "no-wake-busy"):  # no separate oversubscribed hand-back cost
        del pl["T_wake_busy"]
    if variant == "csw-yield":  # the calibrated sched_yield hand-off as T_csw, no idle-core wake-ups
        del pl["T_wake"]
        del pl["T_wake_busy"]
        pl["T_csw"] = cal["T_csw"]
    pl["_derivation"] = {
        "cores": f"machine.cores = {cores}: the runtime's HPU and APU threads are unpinned software threads time-sharing the cores",
        "hpu_contexts": "= cores: HPU threads are not pinned, any core runs them",
        "apus": "8: APUs are threads, the sweep's bound on m*p (not hardware)",
        "T_wake": f"waking a blocked thread while a core is idle = (offload_futex {futex:.3e} - offload_spin {spin:.3e}) / 2 s: "
                  "the calibrated blocking round trip (threads on two cores, each idle while it waits) wakes two blocked threads; "
                  "an edtlp off-load of the runtime blocks only the HPU thread (its master APU spins between off-loads), so it "
                  "costs the spinning round trip plus one such wake-up",
        "T_csw": f"waking a blocked thread when no core is idle = measurements.csw_futex {busy:.3e} s (futex hand-off between "
                 "two threads on one busy core)",
        "T_wake_busy": f"measurements.wake_busy.median = {wake_busy:.3e} s: processor time of one hand-back to a "
                       "blocked thread when more threads are runnable than cores (the spin harness's pairs of a "
                       "blocking HPU thread and an APU thread that waits like the runtime, 2 pairs per CPU)",
        "calibrated_T_csw": cal["T_csw"],
        "spin_pause": f"measurements.spin_pause.median = {pause:.3e} s: one iteration of a spin-wait (load + pause), "
                      "the spin harness",
        "sched_slice": (f"measurements.sched_slice.median = {slice_:.3e} s: how long a CPU-bound thread keeps its core "
                        "while another waits for it (two threads on one CPU), the spin harness") if slice_ is not None else
                       ("not given: the spin harness could not measure it (" + str(meas["sched_slice"].get("reason")) +
                        "), so waits that never block get no convoy term"),
    }
    if variant == "no-convoy":  # the model before the spin-convoy term
        del pl["spin_pause"]
        pl.pop("sched_slice", None)
    return pl
