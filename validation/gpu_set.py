"""The GPU data set (validation/gpu/, report.py --kind gpu): a device check's files (scripts/gpu-check.sh) predicted
with nothing fitted. Called by report.py; runs mmgp, measures nothing.

The directory holds what the device wrote, unedited: platform-calibrated.json (mmgp calibrate --accelerator cuda),
app.json (mmgp-gpu-workload --profile), sweep.json (the measured runs), harness.json and check.log; PROVENANCE.json
names the device, the date and the commit. This module writes platform.json (the calibrated platform described
again by `mmgp calibrate --accelerator cuda --from`: host contexts recounted, the harness's record read again) and
cases.json (sweep.json's cases on that platform, each with its provenance).
"""
import json
import os
import subprocess

import common


def build_gpu(d, mmgp):
    platform = os.path.join(d, "platform.json")
    subprocess.run([os.path.abspath(mmgp), "calibrate", "--accelerator", "cuda", "--from",
                    os.path.join(d, "platform-calibrated.json"), "-o", platform, "--quiet"], check=True)
    with open(os.path.join(d, "sweep.json")) as f:
        sweep = json.load(f)
    with open(os.path.join(d, "PROVENANCE.json")) as f:
        prov = json.load(f)
    cases = []
    for c in sweep["cases"]:  # groups "gpu-workload sweep" (the spin kernel) and "gpu-workload compute"
        case = dict(c)
        case["group"] = "gpu-workload " + c.get("group", sweep.get("group", "sweep"))
        case["label"] = f"{case['group']} m={c['m']} p={c['p']} {c['sharing']}"
        case["source"] = f"{c['source']}, {prov['date']}"
        cases.append(case)
    doc = {"schema": "mmgp/1", "kind": "validation",
           "name": f"GPU workload on {prov['device']}: calibrated platform + measured profile, nothing fitted",
           "scenario": {"schema": "mmgp/1", "name": "gpu-workload", "platform": "platform.json",
                        "application": "app.json"},
           "provenance": prov, "cases": cases}
    path = os.path.join(d, "cases.json")
    common.write_json(path, doc)
    return path, ["gpu-workload"]
