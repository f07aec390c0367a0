#!/usr/bin/env python3
"""The gpu suite (meson test gpu): the GPU harness and `mmgp calibrate --accelerator cuda` on a real GPU.

Skips with exit 77, saying why, where no GPU is usable: the harness was not built (no nvcc, -Dcuda=disabled), or
it answers that no device is usable (no device, no driver, a driver too old: CUDA error 35). Never passes
without a GPU. On a GPU: the harness's record is checked against physical ranges, the calibrated profile is read
by mmgp predict on a GPU scenario, and the time-sliced and MPS modes it lists are searched.
"""
import json
import os
import subprocess
import sys
import tempfile

MMGP = os.environ.get("MMGP_BIN", "build/cli/mmgp")
HARNESS = os.environ.get("MMGP_GPU_HARNESS", "")


def skip(why):
    print(f"SKIP gpu: {why}")
    sys.exit(77)


def check(cond, what):
    if not cond:
        print(f"FAIL gpu: {what}")
        sys.exit(1)
    print(f"ok   {what}")


def main():
    if not HARNESS or not os.path.exists(HARNESS):
        skip("this build has no GPU harness (nvcc not found, or -Dcuda=disabled)")
    probe = subprocess.run([HARNESS, "--check"], capture_output=True, text=True, timeout=120)
    if probe.returncode == 77:
        skip("no usable GPU: " + probe.stderr.strip())
    check(probe.returncode == 0, f"the harness's device check exits 0 (found {probe.returncode}: {probe.stderr.strip()})")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "gpu.json")
        env = dict(os.environ, MMGP_GPU_HARNESS=HARNESS)
        run = subprocess.run([MMGP, "calibrate", "--accelerator", "cuda", "--quick", "-o", out], env=env,
                             capture_output=True, text=True, timeout=280)
        sys.stderr.write(run.stderr)
        check(run.returncode == 0, "mmgp calibrate --accelerator cuda --quick exits 0")
        p = json.load(open(out))
        g = p["measurements"]["gpu"]
        sms = g["device"]["sms"]
        check(p["apus"]["value"] == sms and sms >= 1, f"apus is the device's SMs ({sms})")
        check(1e-6 <= p["O_offload"]["value"] <= 1e-3, f"launch + synchronise in [1 us, 1 ms]: {p['O_offload']['value']}")
        check(g["offload"]["enqueue_s"]["median"] < p["O_offload"]["value"], "the enqueue alone is shorter than the round trip")
        waits = g["offload"].get("by_wait", [])
        check(len(waits) == 5 and all(w["spinning_s"] >= w["wait_s"] and w["blocking_s"] >= w["wait_s"] for w in waits)
              and [w[0] for w in p["calibration"]["T_csw_by_wait"]["value"]] == [w["wait_s"] for w in waits],
              f"the round trips of kernels that wait 20-500 us take at least their wait, spinning and blocking, and the "
              f"platform keeps the wake-up against the wait: {[(w['wait_s'], w['spinning_s'], w['blocking_s']) for w in waits]}")
        check(1e8 <= p["dma"]["bandwidth_Bps"] <= 1e12, f"pinned copies in [0.1, 1000] GB/s: {p['dma']['bandwidth_Bps']}")
        check(0 < p["dma"]["latency_s"] <= 1e-3, f"the smallest copy under 1 ms: {p['dma']['latency_s']}")
        check(len(p["sharing"]) >= 1, f"sharing modes measured: {p['sharing']}")
        for mode, key in (("time_sliced", "T_slice_switch_by_procs"), ("mps", "mps_over_alone_by_procs")):
            # 4 and 8 processes at once, where the pair was measured: serialised (the pair took >= 1.5x one alone),
            # n processes take about n times one alone and the switch is positive; overlapping, none is faster than
            # one alone. The platform keeps the curve where the pair gave the mode's key.
            pair = g["sharing"].get(mode) or {}
            if not pair.get("measured"):
                continue
            serial = pair["pair_over_alone"] >= 1.5
            by = g["sharing"].get(mode + "_procs") or []
            check([b.get("procs") for b in by] == [4, 8] and all(
                      b.get("measured") and (b["over_alone"] >= 0.9 * b["procs"] and b["switch_s"] > 0 if serial
                                             else b["over_alone"] >= 0.9) for b in by),
                  f"{mode}: 4 and 8 processes at once measured, {'serialised' if serial else 'overlapping'} as the "
                  f"pair: {[(b.get('procs'), b.get('over_alone'), b.get('switch_s')) for b in by]}")
            if serial == (mode == "time_sliced"):
                curve = p.get("calibration", {}).get(key, {}).get("value", [])
                check([pt[0] for pt in curve] == [2, 4, 8], f"the platform keeps {key}: {curve}")
            if mode == "time_sliced" and serial:  # again with the host threads blocking while they wait
                by = g["sharing"].get("time_sliced_blocking_procs") or []
                check([b.get("procs") for b in by] == [2, 4, 8] and all(
                          b.get("measured") and b.get("blocking") and b["over_alone"] >= 0.9 * b["procs"] and b["switch_s"] > 0
                          for b in by),
                      f"time_sliced, blocking: 2, 4 and 8 processes at once measured, serialised: "
                      f"{[(b.get('procs'), b.get('over_alone'), b.get('switch_s')) for b in by]}")
                curve = p.get("calibration", {}).get("T_slice_switch_blocking_by_procs", {}).get("value", [])
                check([pt[0] for pt in curve] == [2, 4, 8], f"the platform keeps T_slice_switch_blocking_by_procs: {curve}")
        cpus = sorted(os.sched_getaffinity(0))
        check(p["hpu_contexts"]["value"] == len(cpus) and p["calibration"]["apu_cpus"] == [],
              f"every CPU this process may use is a host context ({len(cpus)}), none an accelerator")
        slots = g["blocks"].get("resident_per_sm")
        check(slots is not None and slots >= 1 and p.get("apu_slots", {"value": 1})["value"] == min(slots, 1024),
              f"apu_slots is the reference kernel's occupancy ({slots})")
        check(p["slot_time"][0] == [1.0, 1.0] if slots and slots > 1 else True, "the slot curve starts at [1, 1]")
        backends(g)
        scenario = {"platform": out,
                    "application": {"decomposition": "task", "units": 64, "N": 1000, "T_hpu": 0.5, "T_apu": 50.0,
                                    "C_apu": 0.0, "g": 0.0},
                    "search": {"m": [1, 8]}}
        sp = os.path.join(tmp, "scenario.json")
        json.dump(scenario, open(sp, "w"))
        pred = subprocess.run([MMGP, "predict", sp, "--json"], capture_output=True, text=True, timeout=60)
        check(pred.returncode == 0, "mmgp predict reads the calibrated GPU platform")
        best = json.loads(pred.stdout)["best"]
        check(best.get("sharing") in p["sharing"], f"the best mapping names one of the platform's modes: {best.get('sharing')}")
    workload(sms)
    print("gpu: all checks passed")


def backends(g):
    """The round trip and the copies through the calibration's seam (the CUDA backends timed by the CPU harnesses'
    loops): measured, answered, and in the same physical ranges as the harness's own loops."""
    b = g.get("backend_harnesses") or {}
    launch, mailbox = b.get("cuda/launch", {}), b.get("cuda/mailbox", {})
    check("error" not in launch and "offload" in launch, f"the launch backend measured: {launch.get('error', '')}")
    t = launch["offload"]["median"]
    check(1e-6 <= t <= 1e-3, f"its launch round trip in [1 us, 1 ms]: {t}")
    own = g["offload"]["launch_sync_s"]["median"]
    check(own / 3 <= t <= 3 * own, f"within 3x of the harness's own launch + synchronise ({own}): {t}")
    bw = launch["dma"]["bandwidth_Bps"]
    check(1e8 <= bw <= 1e12, f"its copies (pageable host memory) in [0.1, 1000] GB/s: {bw}")
    if g["mailbox"].get("answered"):
        check("error" not in mailbox and "offload" in mailbox, f"the mailbox backend measured: {mailbox.get('error', '')}")
        check(1e-7 <= mailbox["offload"]["median"] <= 1e-3, f"its round trip in [100 ns, 1 ms]: {mailbox['offload']['median']}")
    else:
        print("note gpu: the harness's own mailbox never answered here; the mailbox backend says: " + json.dumps(mailbox))


def workload(sms):
    """The GPU workload's compute mode (256-thread FMA blocks, grids beyond the SMs): its profile carries the kernel's
    slot curve, and a run of 2 processes with grids of 2 x SMs blocks each finishes."""
    prog = os.environ.get("MMGP_GPU_WORKLOAD") or os.path.join(os.path.dirname(HARNESS), "mmgp-gpu-workload")
    if not os.path.exists(prog):
        check("MMGP_GPU_WORKLOAD" not in os.environ, f"the GPU workload the build names exists: {prog}")
        print("note: no mmgp-gpu-workload beside the harness: its compute mode not checked")
        return
    small = ["--units", "2", "--offloads", "5", "--kernel-us", "500"]
    prof = subprocess.run([prog, "--profile", "--compute", *small], capture_output=True, text=True, timeout=60)
    check(prof.returncode == 0, f"mmgp-gpu-workload --profile --compute exits 0 ({prof.stderr.strip()[-200:]})")
    curve = json.loads(prof.stdout).get("slot_time", [])
    check(len(curve) == 3 and curve[0] == [1, 1] and 0.9 <= curve[1][1] <= 2.2 and curve[1][1] <= curve[2][1] * 1.05 <= 4.4,
          f"the compute kernel's slot curve at 1, 2, 4 blocks per SM: {curve}")
    run = subprocess.run([prog, "--compute", "--m", "2", "--p", str(2 * sms), *small], capture_output=True, text=True,
                         timeout=60)
    check(run.returncode == 0 and run.stdout.startswith("time_s "), f"2 processes with grids of {2 * sms} blocks run "
                                                                     f"({run.stdout.strip()} {run.stderr.strip()[-200:]})")


if __name__ == "__main__":
    main()
