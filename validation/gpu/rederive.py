#!/usr/bin/env python3
"""A recorded GPU profile's T_apu and C_apu derived again from its own measurements by the rule mmgp profile
--accelerator cuda now follows, and the recorded sweep predicted with them: how a change of that rule reads on runs
already taken, without a device.

    python3 validation/gpu/rederive.py validation/gpu/libpll/rerun-321081a [--mmgp build/cli/mmgp]

The rule (offload/process_profile.cpp, offload_split()): of what the off-loads cost beyond their split work, per
unit, the part that falls as 1/p through its value at p = 1 (measurements.C_apu_p1_s) and at p = S
(measurements.C_apu_s less the split grids' floor, measurements.split_floor_s) moves to T_apu: b = (c1 - cS) /
(1 - 1/S), 0 when not positive or cS < 0, at most S cS; T_apu + b and C_apu - b/S per repetition, their medians
taken. Writes DIR/app-rederived.json, DIR/sweep-rederived.json (the sweep's cases, the scenario naming
app-rederived.json) and DIR/validate-rederived.txt (mmgp validate of it), each by temporary file and rename.
Standard library only.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402  (validation/common.py: the files written atomically)


def offload_split(c1, cs, sms):
    """The part of the off-loads' cost beyond their split work that divides by p (offload_split() in C++)."""
    if sms <= 1 or not cs >= 0:
        return 0.0
    b = (c1 - cs) / (1.0 - 1.0 / sms)
    return min(b, sms * cs) if b > 0 else 0.0


def value(x):
    return x["value"] if isinstance(x, dict) else x


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--mmgp", default=os.path.join(common.ROOT, "build", "cli", "mmgp"))
    a = ap.parse_args()
    app = json.load(open(os.path.join(a.dir, "app.json")))
    sms = int(value(json.load(open(os.path.join(a.dir, "platform.json")))["apus"]))
    m = app["measurements"]
    if not m.get("C_apu_p1_s") or not m.get("C_apu_s"):
        sys.exit(f"rederive: {a.dir}/app.json: measurements.C_apu_p1_s and C_apu_s expected (a profile measured at p = S)")
    floors = m.get("split_floor_s") or [0.0] * len(m["C_apu_s"])
    moved = [offload_split(c1, cs - f, sms) for c1, cs, f in zip(m["C_apu_p1_s"], m["C_apu_s"], floors)]
    t_apu = [t + b for t, b in zip(m["T_apu_s"], moved)]
    c_apu = [c - b / sms for c, b in zip(m["C_apu_s"], moved)]
    note = (f" (derived again by validation/gpu/rederive.py: plus the off-loads' part that divides by p, "
            f"{statistics.median(moved):.6g} s per unit, through C_apu at p = 1 and at p = {sms})")
    app["T_apu"]["value"] = statistics.median(t_apu)
    app["T_apu"]["source"] = app["T_apu"].get("source", "") + note
    app["C_apu"]["value"] = max(0.0, statistics.median(c_apu))
    app["C_apu"]["source"] = app["C_apu"].get("source", "") + note.replace("plus", "less")
    m["offload_split_s"] = moved
    common.write_json(os.path.join(a.dir, "app-rederived.json"), app)
    sweep = json.load(open(os.path.join(a.dir, "sweep.json")))
    sweep["scenario"] = dict(sweep["scenario"], application="app-rederived.json")
    sweep["name"] = sweep.get("name", "sweep") + ", the profile derived again (validation/gpu/rederive.py)"
    common.write_json(os.path.join(a.dir, "sweep-rederived.json"), sweep)
    v = subprocess.run([a.mmgp, "validate", os.path.join(a.dir, "sweep-rederived.json")], capture_output=True, text=True)
    common.write_if_changed(os.path.join(a.dir, "validate-rederived.txt"), v.stdout + v.stderr)
    print((v.stdout + v.stderr).strip().splitlines()[-1])
    return v.returncode


if __name__ == "__main__":
    sys.exit(main())
