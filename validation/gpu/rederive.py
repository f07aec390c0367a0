#!/usr/bin/env python3
"""A recorded GPU profile's T_apu, C_apu and slot curve derived again from its own measurements by the rules mmgp
profile --accelerator cuda now follows, and the recorded sweep predicted with them: how a change of those rules
reads on runs already taken, without a device.

    python3 validation/gpu/rederive.py validation/gpu/libpll/rerun-321081a [--mmgp build/cli/mmgp]

The rules (offload/process_profile.cpp), per repetition, then the medians:
- what the model charges an off-load on the platform (model_offload_charge(): O_offload + T_csw + the transfer's
  latency + bytes / bandwidth / p, from DIR/platform.json), where the profile predates it (no
  measurements.offload_charge_s): C_apu at p = S and at p = 1 gain N x (the empty grid's round trip the profile
  left out - that charge at p = S, at p = 1), as mmgp profile --platform leaves out the charge instead;
- the split grids' floor (split_floor()), where the profile predates it (no measurements.split_floor_s): a + b/p
  through the split work at p = 1 (measurements.T_apu_s) and at p = S (measurements.slot_split_s[0] per unit),
  a = (tS - t1/S) / (1 - 1/S) when 0 < a < t1; T_apu - a, C_apu + a, and the slot curve over the split work less
  the floor;
- of what the off-loads cost beyond their split work, the part that falls as 1/p (offload_split()) through its
  value at p = 1 (measurements.C_apu_p1_s) and at p = S (measurements.C_apu_s less the floor): b = (c1 - cS) /
  (1 - 1/S), 0 when not positive or cS < 0, at most S cS; T_apu + b, C_apu - b/S.
- the times an off-load's host waits for its grids (waits_per_offload, which the model charges a time-sliced switch
  each), where the profile predates the count: the program's off-loads by kind in a run of the same workload on
  this machine's CPU threads (mmgp-offload-run, the provenance's data, units, rounds, newton and seed; its
  off-loads per unit must equal the profile's N), each kind's waits on the GPU off-loader
  (offload/cuda/device_slice.cu): newview 2 (the P matrices' grid, then newview's), evaluate 2 (the P matrix,
  then the edge's grid), sumtable 1, derivatives 1, the weights 0 (a copy).
A profile that already records the first (measurements.offload_charge_s) follows today's rules: only its sweep's fit
and the waits' fit below are taken again (the profile's files are not written); one that records the third (measurements.offload_split_s) has it undone first and taken again after the charge.
T_apu and C_apu keep their value and source only (their repetitions' statistics were the old values'); the
measurements hold the values derived again. Writes
DIR/app-rederived.json, DIR/sweep-rederived.json (the sweep's cases, the scenario naming app-rederived.json) and
DIR/validate-rederived.txt (mmgp validate of it), each by temporary file and rename; where the sweep was fitted
(DIR/fit-runs.csv), its fit again on those runs with what validation/sweep_gpu.py holds from the profile
(app-fitted-rederived.json, sweep-fitted-rederived.json, validate-fitted-rederived.txt); and the waits mmgp fit fits
to the sweep's time-sliced runs of several processes against the count (fit_waits(): waits-fitted-rederived.csv,
waits-fitted-rederived.txt). Standard library only.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402  (validation/common.py: the files written atomically)
import sweep_gpu  # noqa: E402  (what mmgp fit holds from the profile; a profile key's value)
from sweep_gpu import value  # noqa: E402


def offload_split(c1, cs, sms):
    """The part of the off-loads' cost beyond their split work that divides by p (offload_split() in C++)."""
    if sms <= 1 or not cs >= 0:
        return 0.0
    b = (c1 - cs) / (1.0 - 1.0 / sms)
    return min(b, sms * cs) if b > 0 else 0.0


def split_floor(t1, ts, sms):
    """The split grids' floor per unit (split_floor() in C++)."""
    if sms <= 1:
        return 0.0
    a = (ts - t1 / sms) / (1.0 - 1.0 / sms)
    return a if 0 < a < t1 else 0.0


def slot_curve(slot_split, units, floor):
    """f(k) = k T(kS) / T(S) over the split work less the floor (slot_curve() in C++), k = 1, 2, 4."""
    if any(t / units - floor <= 0 for t in slot_split):
        floor = 0.0
    base = slot_split[0] / units - floor
    return [[1, 1]] + [[k, k * (t / units - floor) / base] for k, t in zip((2, 4), slot_split[1:])]


def offload_charge(platform, nbytes, p):
    """What the model charges one off-load of a process alone (model_offload_charge() in C++, which asks the engine;
    its test checks the same sum): O_offload + T_csw + the transfer's latency + bytes / bandwidth / p."""
    dma = platform.get("dma")
    if not dma:
        if nbytes > 0:
            sys.exit("rederive: platform.json has no dma: the profile's bytes cannot be charged (nor predicted)")
        return value(platform["O_offload"]) + value(platform["T_csw"])
    per_byte = dma["s_per_byte"] if "s_per_byte" in dma else 1 / dma["bandwidth_Bps"]
    return value(platform["O_offload"]) + value(platform["T_csw"]) + dma.get("latency_s", 0.0) + nbytes * per_byte / p


WAITS_BY_KIND = {"newview": 2, "evaluate": 2, "sumtable": 1, "derivatives": 1, "weights": 0}


def waits_per_offload(offload_run, app):
    """The waits per off-load of the profile's program, from its off-loads by kind on the CPU threads."""
    pv = app["provenance"]
    cmd = [offload_run, "--m", "1", "--p", "2", "--simulate", f"{pv['taxa']}:{pv['sites']}", "--units",
           str(value(app["units"])), "--rounds", str(pv["rounds"]), "--newton", str(pv["newton"]), "--seed",
           str(pv["seed"]), "--timeout", "600"]
    if not pv["data"].startswith("simulated"):
        sys.exit(f"rederive: the profile's data is not simulated ({pv['data']}): its off-loads cannot be counted here")
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"rederive: {' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()}")
    run = json.loads(done.stdout)
    kinds = run["offloads_by_kind"]
    n = run["offloads"] / value(app["units"])
    if abs(n - value(app["N"])) > 1e-9:
        sys.exit(f"rederive: {' '.join(cmd)}: {n} off-loads a unit, the profile's N is {value(app['N'])}: not its program")
    return sum(WAITS_BY_KIND[k] * c for k, c in kinds.items()) / run["offloads"], kinds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--mmgp", default=os.path.join(common.ROOT, "build", "cli", "mmgp"))
    ap.add_argument("--offload-run", default=os.path.join(common.ROOT, "build", "offload", "mmgp-offload-run"))
    a = ap.parse_args()
    app = json.load(open(os.path.join(a.dir, "app.json")))
    platform = json.load(open(os.path.join(a.dir, "platform.json")))
    sms = int(value(platform["apus"]))
    m = app["measurements"]
    if "offload_charge_s" in m:  # the profile follows today's rules: only the fit is taken again
        print(f"rederive: {a.dir}/app.json: measurements.offload_charge_s is there: the profile follows today's "
              "rules; the sweep's fit and the waits' fit taken again")
        return refit(a, app) or fit_waits(a, app, platform, "app.json")
    if not m.get("C_apu_p1_s") or not m.get("slot_split_s") or m.get("C_apu_s") == m.get("C_apu_p1_s"):
        sys.exit(f"rederive: {a.dir}/app.json: a profile measured at p = S expected (measurements.C_apu_p1_s, "
                 "C_apu_s apart from it, slot_split_s)")
    units = int(value(app["units"]))
    t_apu, c_apu = list(m["T_apu_s"]), list(m["C_apu_s"])
    m.setdefault("T_apu_p1_s", list(m["T_apu_s"]))  # a profile from before the floor: T_apu_s is the p = 1 value
    if "offload_split_s" in m:  # undone here, taken again below over the new C_apu
        t_apu = [t - b for t, b in zip(t_apu, m["offload_split_s"])]
        c_apu = [c + b / sms for c, b in zip(c_apu, m["offload_split_s"])]
    # N per unit from the p = 1 runs: the p = S run's own off-load count (the C++ rule's) is not recorded; it is the
    # same program, so the same count.
    per_rep = list(zip(m["N"], m["empty_grid_roundtrip_s"], m["bytes_per_offload"]))
    charge_1 = [offload_charge(platform, b, 1) for _, _, b in per_rep]
    charge_s = [offload_charge(platform, b, sms) for _, _, b in per_rep]
    c_apu = [c + n * (e - ch) for c, (n, e, _), ch in zip(c_apu, per_rep, charge_s)]
    m["C_apu_p1_s"] = [c + n * (e - ch) for c, (n, e, _), ch in zip(m["C_apu_p1_s"], per_rep, charge_1)]
    m["offload_charge_s"] = {"p1": charge_1, "at_S": charge_s}
    floors = m.get("split_floor_s")
    if not floors:  # a profile from before the floor: take it as today's profile does
        ts = m["slot_split_s"][0] / units
        floors = [split_floor(t, ts, sms) for t in t_apu]
        t_apu = [t - f for t, f in zip(t_apu, floors)]
        c_apu = [c + f for c, f in zip(c_apu, floors)]
        m["split_floor_s"] = floors
        app["slot_time"] = slot_curve(m["slot_split_s"], units, statistics.median(floors))
    moved = [offload_split(c1, cs - f, sms) for c1, cs, f in zip(m["C_apu_p1_s"], c_apu, floors)]
    t_apu = [t + b for t, b in zip(t_apu, moved)]
    c_apu = [c - b / sms for c, b in zip(c_apu, moved)]
    note = (f" (derived again by validation/gpu/rederive.py: less the model's charge per off-load on the platform, "
            f"{statistics.median(charge_s):.6g} s at p = {sms}, instead of the empty grid's round trip; the split grids' floor {statistics.median(floors):.6g} s "
            f"per unit to C_apu; the off-loads' part that divides by p, {statistics.median(moved):.6g} s per unit "
            f"through C_apu at p = 1 and at p = {sms}, to T_apu)")
    for key, values in (("T_apu", t_apu), ("C_apu", c_apu)):
        app[key] = {"value": max(0.0, statistics.median(values)), "source": app[key].get("source", "") + note}
    m["offload_split_s"] = moved
    m["T_apu_s"], m["C_apu_s"] = t_apu, c_apu
    if "waits_per_offload" not in app:
        waits, kinds = waits_per_offload(a.offload_run, app)
        app["waits_per_offload"] = {
            "value": waits,
            "source": "derived by validation/gpu/rederive.py: the program's off-loads by kind on the CPU threads "
                      f"({json.dumps(kinds, sort_keys=True)}), each kind's waits for its grids on the GPU off-loader "
                      f"({json.dumps(WAITS_BY_KIND, sort_keys=True)})"}
    common.write_json(os.path.join(a.dir, "app-rederived.json"), app)
    status = validate_with(a, "sweep.json", "app-rederived.json", "sweep-rederived.json", "validate-rederived.txt")
    return refit(a, app) or fit_waits(a, app, platform) or status


def validate_with(a, sweep, application, written, report, head=""):
    """DIR/`sweep`'s cases predicted with DIR/`application`: the sweep naming it written to DIR/`written`, mmgp validate's
    report (after `head`) to DIR/`report`; prints its last line and returns its exit status."""
    doc = json.load(open(os.path.join(a.dir, sweep)))
    doc["scenario"] = dict(doc["scenario"], application=application)
    doc["name"] = doc.get("name", "sweep") + ", the profile derived again (validation/gpu/rederive.py)"
    common.write_json(os.path.join(a.dir, written), doc)
    v = subprocess.run([a.mmgp, "validate", os.path.join(a.dir, written)], capture_output=True, text=True)
    common.write_if_changed(os.path.join(a.dir, report), head + v.stdout + v.stderr)
    print((v.stdout + v.stderr).strip().splitlines()[-1])
    return v.returncode


def refit(a, app):
    """The sweep's fit on its recorded fit-runs.csv again, holding what sweep_gpu.py holds from the profile derived
    again: DIR/app-fitted-rederived.json, sweep-fitted-rederived.json, validate-fitted-rederived.txt. Written after
    the profile's files: if the fit fails, those are today's and the fitted ones a previous run's (or none)."""
    runs = os.path.join(a.dir, "fit-runs.csv")
    if not (os.path.exists(runs) and os.path.exists(os.path.join(a.dir, "sweep-fitted.json"))):
        return 0
    fitted = os.path.join(a.dir, "app-fitted-rederived.json")
    f = subprocess.run([a.mmgp, "fit", runs, "--platform", os.path.join(a.dir, "platform.json"),
                        *sweep_gpu.held_from_profile(app), "--name", "libpll-gpu-fitted", "-o", fitted],
                       capture_output=True, text=True)
    if f.returncode != 0:
        sys.exit(f"rederive: mmgp fit {runs} failed ({f.returncode}): {f.stderr.strip()}")
    # The report: the fit's table, then the validation of the rest.
    return validate_with(a, "sweep-fitted.json", "app-fitted-rederived.json", "sweep-fitted-rederived.json",
                         "validate-fitted-rederived.txt", head=f.stdout + "\n")


def fit_waits(a, app, platform, profile_file="app-rederived.json"):
    """The waits the profile counts against those mmgp fit fits to the sweep's time-sliced runs of several processes:
    every recorded run the model prices (time-sliced with m >= 2 at every p the platform holds; the others within
    the SMs), fitted with N and C_apu held at the profile's and --waits-per-offload not given, the counted value
    first. Writes DIR/waits-fitted-rederived.csv (the runs) and DIR/waits-fitted-rederived.txt (the count and the
    fit's report); returns the fit's exit status."""
    sms = int(value(platform["apus"]))
    capacity = sms * int(value(platform.get("apu_slots", 1)))
    units = int(value(app["units"]))
    lines = ["m,p,nodes,units,policy,sharing,time_s"]
    for c in json.load(open(os.path.join(a.dir, "sweep.json")))["cases"]:
        sliced = c["sharing"] == "time_sliced" and c["m"] > 1
        if sweep_gpu.policy_of(c) != "edtlp":  # the waits are the blocking runs' (the profile's policy)
            continue
        if (c["p"] <= capacity) if sliced else (c["m"] * c["p"] <= sms):
            lines += [f"{c['m']},{c['p']},1,{units},edtlp,{c['sharing']},{t!r}" for t in c.get("runs", [])]
    runs = os.path.join(a.dir, "waits-fitted-rederived.csv")
    common.write_if_changed(runs, "\n".join(lines) + "\n")
    f = subprocess.run([a.mmgp, "fit", runs, "--platform", os.path.join(a.dir, "platform.json"), "--decomposition",
                        "task", "--N", repr(value(app["N"])), "--fix", f"C_apu={value(app['C_apu'])!r}"],
                       capture_output=True, text=True)
    head = (f"the profile's waits_per_offload ({profile_file}): {value(app.get('waits_per_offload', 1)):.4g}\n"
            f"mmgp fit of {os.path.basename(runs)}, N and C_apu held at the profile's, the waits fitted to its "
            "time-sliced runs of several processes:\n\n")
    common.write_if_changed(os.path.join(a.dir, "waits-fitted-rederived.txt"), head + f.stdout + f.stderr)
    waits = [line for line in f.stdout.splitlines() if line.startswith("waits ")]
    print(waits[0] if waits else f"rederive: mmgp fit {runs}: no waits fitted ({f.returncode})")
    return f.returncode


if __name__ == "__main__":
    sys.exit(main())
