#!/usr/bin/env python3
"""`mmgp calibrate --accelerator cuda` on this machine with a stand-in GPU harness (no GPU needed): the stand-in
prints a harness record an H200 wrote (validation/gpu/harness.json), the host harnesses run here. Checks that every
CPU this process may use is a host context (or the --hpu-cpus list, which may name them all), that no CPU is given
the accelerator role and no CPU off-load harness ran, that the slots and their curve come from the record, that
`--from` recounts an older GPU profile's host contexts, and that bad options are refused (exit 2) before the
harness runs.
Usage: gpu_calibrate_test.py MMGP RECORD
"""
import json
import os
import subprocess
import sys
import tempfile

MMGP, RECORD = sys.argv[1], sys.argv[2]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def main():
    cpus = sorted(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as tmp:
        marker = os.path.join(tmp, "harness-ran")
        stand_in = os.path.join(tmp, "harness.sh")
        with open(stand_in, "w") as f:
            f.write(f"#!/bin/sh\ntouch '{marker}'\ncat '{os.path.abspath(RECORD)}'\n")
        os.chmod(stand_in, 0o755)
        env = dict(os.environ, MMGP_GPU_HARNESS=stand_in)

        def calibrate(*args):
            return subprocess.run([MMGP, "calibrate", "--accelerator", "cuda", "--quick", *args], env=env,
                                  capture_output=True, text=True, timeout=240)

        out = os.path.join(tmp, "gpu.json")
        r = calibrate("-o", out)
        check(r.returncode == 0, "calibrate with the stand-in exits 0" + ("" if r.returncode == 0 else f": {r.stderr[-300:]}"))
        p = json.load(open(out))
        check(p["hpu_contexts"]["value"] == len(cpus), f"hpu_contexts = the {len(cpus)} CPUs this process may use "
                                                       f"(found {p['hpu_contexts']['value']})")
        check(p["calibration"]["hpu_cpus"] == cpus, f"the host contexts are CPUs {cpus}")
        check(p["calibration"]["apu_cpus"] == [], "no CPU plays an accelerator")
        check(not any(k in p["measurements"] for k in ("offload_spin", "gap", "dma")),
              "no CPU off-load, gap or transfer harness ran")
        check("csw_yield" in p["measurements"] and p["T_csw"]["value"] > 0, "T_csw measured on the host")
        check(p["alpha"]["measurements"]["hpu_contexts"] == len(cpus), "alpha measured on every host context")
        check(p["apus"]["value"] == 132 and p["apu_slots"]["value"] == 8, "132 SMs x 8 slots (compute capability 9.0)")
        check(p["slot_time"][0] == [1.0, 1.0] and len(p["slot_time"]) >= 3, "the slot curve from the block sweep")
        sp = os.path.join(tmp, "s.json")
        json.dump({"schema": "mmgp/1", "platform": out, "application": {"decomposition": "task", "units": 8, "N": 50,
                   "T_hpu": 0.01, "T_apu": 0.1, "C_apu": 0, "g": 0}, "search": {"m": [1, 8]}}, open(sp, "w"))
        pred = subprocess.run([MMGP, "predict", sp, "--json"], capture_output=True, text=True)
        check(pred.returncode == 0, "predict reads the calibrated platform")
        best = json.loads(pred.stdout)["best"] if pred.returncode == 0 else {}
        check(best.get("m", 0) * best.get("p", 0) > 132, f"the best mapping's grids exceed the SMs ({best})")

        one = os.path.join(tmp, "one.json")
        r = calibrate("--hpu-cpus", str(cpus[0]), "-o", one)
        check(r.returncode == 0 and json.load(open(one))["hpu_contexts"]["value"] == 1, "--hpu-cpus names one context")
        every = ",".join(map(str, cpus))
        r = calibrate("--hpu-cpus", every, "-o", one)
        check(r.returncode == 0 and json.load(open(one))["hpu_contexts"]["value"] == len(cpus),
              "--hpu-cpus may name every context")

        os.remove(marker)
        for args, what in ((["--hpu-cpus", "x-y"], "a bad --hpu-cpus"), (["--ppn", "2"], "--ppn without --simulate"),
                           (["--nodes", "1:2"], "--nodes without --simulate"), (["--apu-cpus", "0"], "--apu-cpus")):
            r = calibrate(*args, "-o", os.path.join(tmp, "bad.json"))
            check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, f"{what}: exit 2, one line "
                                                                                 f"({r.returncode}: {r.stderr.strip()})")
        check(not os.path.exists(marker), "the refused options were refused before the harness ran")
        check(not os.path.exists(os.path.join(tmp, "bad.json")), "nothing written for refused options")

        # An older GPU profile (2 host contexts on a 16-context machine) described again, nothing measured.
        old = dict(p)
        old["hpu_contexts"] = {"value": 2, "source": "an older calibrate"}
        old["machine"] = dict(p["machine"], num_cpus=16)
        old.pop("apu_slots"), old.pop("slot_time")
        old_path, new_path = os.path.join(tmp, "old.json"), os.path.join(tmp, "new.json")
        json.dump(old, open(old_path, "w"))
        r = subprocess.run([MMGP, "calibrate", "--accelerator", "cuda", "--from", old_path, "-o", new_path],
                           capture_output=True, text=True, env=env)
        check(r.returncode == 0, f"--from exits 0 ({r.stderr.strip()[-200:]})")
        new = json.load(open(new_path))
        check(new["hpu_contexts"]["value"] == 16 and new["apu_slots"]["value"] == 8,
              "--from: every context of the measured machine, the slots again")
        check(not os.path.exists(marker), "--from measures nothing")
    if failures:
        print(f"{len(failures)} failed")
        sys.exit(1)
    print("gpu-calibrate: all checks passed")


if __name__ == "__main__":
    main()
