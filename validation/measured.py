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
                      "load": [float(r["load1_before"]) for r in used if r.get("load1_before")]})
    return cases


def source_of(c):
    pooled = c.get("pooled") or []
    return (f"runs.csv: median of {c['used']} {'quiet ' if c['all_quiet'] else 'NOT quiet '}repetition"
            f"{'s' if c['used'] > 1 else ''} (load {min(c['load']):.2f}-{max(c['load']):.2f})"
            + (f"; pooled with the runs labelled m={','.join(map(str, pooled))} (the same processes)" if pooled else ""))


def offload_platform(d, mmgp, variant=None, max_threads=8):
    """The calibrated profile DIR/platform-calibrated.json described as the off-load runtime uses this machine:
    exactly what `mmgp calibrate --time-shared --from DIR/platform-calibrated.json --max-threads N` writes (docs/
    COMMANDS.md), the platform a user gets from mmgp calibrate. `variant` then undoes one modelling decision
    for the ablations; each such edit is recorded in _derivation."""
    cal_path = os.path.join(d, "platform-calibrated.json")
    pl = common.run_json([mmgp, "calibrate", "--time-shared", "--from", cal_path, "--max-threads", str(max_threads),
                          "--quiet"])
    cal = json.load(open(cal_path))
    der = pl["_derivation"]
    wake = value(pl["T_wake"])
    if variant == "no-cores":  # the dedicated-hardware model: APUs do not share cores
        for key in ("cores", "T_wake", "spin_pause", "sched_slice", "T_wake_busy"):
            pl.pop(key, None)
        pl["T_csw"] = wake
        der["variant"] = "no-cores: no time-shared cores; T_csw = the idle-core wake-up T_wake"
    if variant == "wake-always":  # every edtlp switch wakes an idle core
        del pl["T_wake"]
        pl["T_csw"] = wake
        der["variant"] = "wake-always: T_csw = the idle-core wake-up T_wake, no separate busy-core hand-off"
    if variant in ("wake-always", "no-wake-busy"):  # no separate oversubscribed hand-back cost
        pl.pop("T_wake_busy", None)
        der["variant_T_wake_busy"] = "not given: no separate hand-back cost on oversubscribed cores"
    if variant == "csw-yield":  # the calibrated sched_yield hand-off as T_csw, no idle-core wake-ups
        del pl["T_wake"]
        pl.pop("T_wake_busy", None)
        pl["T_csw"] = cal["T_csw"]
        der["variant"] = "csw-yield: T_csw = the sched_yield() hand-off (measurements.csw_yield), no T_wake"
    if variant == "no-convoy":  # the model before the spin-convoy term
        del pl["spin_pause"]
        pl.pop("sched_slice", None)
        der["variant"] = "no-convoy: no spin_pause and sched_slice, so no convoy term"
    return pl
