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
import signal
import subprocess
import sys
import tempfile
import time

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
        # An OSU table named beside the older profile, the new one written into another folder: named from there
        # (once refused, blaming the input's records).
        os.makedirs(os.path.join(tmp, "other"), exist_ok=True)
        open(os.path.join(tmp, "lat.txt"), "w").write("# Size Avg Latency(us)\n4 1.5\n8 1.7\n")
        with_osu = dict(old, network={"tables": [{"primitive": "allreduce", "nodes": 1, "ppn": 2, "osu": "lat.txt"}]})
        json.dump(with_osu, open(os.path.join(tmp, "osu.json"), "w"))
        moved = os.path.join(tmp, "other", "moved.json")
        r = subprocess.run([MMGP, "calibrate", "--accelerator", "cuda", "--from", os.path.join(tmp, "osu.json"), "-o", moved],
                           capture_output=True, text=True, env=env)
        check(r.returncode == 0 and json.load(open(moved))["network"]["tables"][0]["osu"] == "../lat.txt",
              f"--from into another folder: the OSU table named from there ({r.returncode}: {r.stderr.strip()[-200:]})")

        # A record that shows no time slicing (a daemon already running): the switch the older profile kept is
        # dropped, not refused beside "mps" alone (once: "internal error", exit 1).
        stale = json.load(open(new_path))
        stale["measurements"]["gpu"]["sharing"]["time_sliced"]["measured"] = False
        json.dump(stale, open(old_path, "w"))
        if os.path.exists(new_path):
            os.remove(new_path)
        r = subprocess.run([MMGP, "calibrate", "--accelerator", "cuda", "--from", old_path, "-o", new_path],
                           capture_output=True, text=True, env=env)
        redone = json.load(open(new_path)) if os.path.exists(new_path) else {}
        check(r.returncode == 0 and redone.get("sharing") == ["mps"] and "T_slice_switch" not in redone,
              f"--from: no time slicing in the record, no switch in the profile ({r.returncode}: {r.stderr.strip()[-200:]})")
        # Records that give a platform the engine refuses: the input's fault, one line naming it, exit 2.
        for copies in ("host_to_device", "device_to_host"):
            stale["measurements"]["gpu"]["copies"][copies][-1] = [1e15, 1e-294]
        json.dump(stale, open(old_path, "w"))
        if os.path.exists(new_path):
            os.remove(new_path)
        r = subprocess.run([MMGP, "calibrate", "--accelerator", "cuda", "--from", old_path, "-o", new_path],
                           capture_output=True, text=True, env=env)
        check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "old.json: /measurements/gpu:" in r.stderr
              and not os.path.exists(new_path),
              f"--from: records that overflow the bandwidth: exit 2, one line, nothing written ({r.returncode}: "
              f"{r.stderr.strip()})")
    bad_harnesses()
    if failures:
        print(f"{len(failures)} failed")
        sys.exit(1)
    print("gpu-calibrate: all checks passed")


def stand_in(d, name, body):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, 0o755)
    return path


def bad_harnesses():
    """Harnesses that misbehave: one line, nothing written, never the JSON library's words or an int cast."""
    record = json.load(open(RECORD))
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "gpu.json")
        with open(out, "w") as f:
            f.write("previous\n")

        def calibrate(harness, *args, timeout=240):
            env = dict(os.environ, MMGP_GPU_HARNESS=harness)
            return subprocess.run([MMGP, "calibrate", "--accelerator", "cuda", "--quick", "--quiet",
                                   *(args or ("-o", out))], env=env, capture_output=True, text=True, timeout=timeout)

        def kept():
            return open(out).read() == "previous\n"

        def edited(where, value):
            r = json.loads(json.dumps(record))
            node = r
            for k in where[:-1]:
                node = node[k] if not isinstance(node, list) else node[int(k)]
            node[where[-1]] = value
            path = os.path.join(tmp, "record.json")
            json.dump(r, open(path, "w"))
            return stand_in(tmp, "edited.sh", f"cat '{path}'")

        for where, value, pointer in ((["device", "sms"], 0.5, "/measurements/gpu/device/sms"),
                                      (["device", "sms"], 3e9, "/measurements/gpu/device/sms"),
                                      (["device", "sms"], 131.9, "/measurements/gpu/device/sms"),
                                      (["offload", "launch_sync_s", "repetitions"], 1e20,
                                       "/measurements/gpu/offload/launch_sync_s/repetitions"),
                                      (["offload", "launch_sync_s", "median"], 1e300,
                                       "/measurements/gpu/offload/launch_sync_s/median"),
                                      (["mailbox", "answered"], "yes", "/measurements/gpu")):
            r = calibrate(edited(where, value))
            check(r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1 and pointer in r.stderr and
                  "internal error" not in r.stderr and "json.exception" not in r.stderr and kept(),
                  f"a record with {'/'.join(where)} = {value}: one line naming {pointer}, nothing written "
                  f"({r.returncode}: {r.stderr.strip()[-200:]})")
        quoted = os.path.join(tmp, "it's here")
        os.mkdir(quoted)
        r = calibrate(stand_in(quoted, "harness.sh", f"cat '{os.path.abspath(RECORD)}'"), "-o", os.path.join(tmp, "q.json"))
        check(r.returncode == 0, f"a harness path with a quote runs ({r.stderr.strip()[-200:]})")
        r = calibrate(stand_in(tmp, "flood.sh", "head -c 100000000 /dev/zero"))
        check(r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1 and "more than 16 MiB" in r.stderr and kept(),
              f"a harness printing 100 MB is stopped at 16 MiB, nothing written ({r.stderr.strip()[-200:]})")
        r = calibrate("")
        check(r.returncode == 2 and "MMGP_GPU_HARNESS: expected the path" in r.stderr and kept(),
              f"MMGP_GPU_HARNESS='' is named, not taken for a build without the harness ({r.stderr.strip()})")
        pidfile = os.path.join(tmp, "pid")
        slow = stand_in(tmp, "slow.sh", f"echo $$ > '{pidfile}'\nsleep 60")
        env = dict(os.environ, MMGP_GPU_HARNESS=slow)
        for sig in (signal.SIGINT, signal.SIGTERM):
            if os.path.exists(pidfile):
                os.remove(pidfile)
            proc = subprocess.Popen([MMGP, "calibrate", "--accelerator", "cuda", "--quick", "-o", out], env=env,
                                    stderr=subprocess.PIPE, text=True)
            for _ in range(100):
                if os.path.exists(pidfile) and open(pidfile).read().strip():
                    break
                time.sleep(0.05)
            proc.send_signal(sig)
            err = proc.communicate(timeout=30)[1]
            harness_pid = int(open(pidfile).read())
            try:
                os.kill(harness_pid, 0)
                alive = True
            except ProcessLookupError:
                alive = False
            check(proc.returncode in (128 + sig, -sig) and "interrupted" in err and kept() and not alive,
                  f"{signal.Signals(sig).name} while the harness runs: exit {128 + sig}, 'interrupted', the previous "
                  f"file kept, the harness stopped ({proc.returncode}: {err.strip()[-200:]})")


if __name__ == "__main__":
    main()
