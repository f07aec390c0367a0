#!/usr/bin/env bash
# One device check on a GPU machine (docs/GPU.md): the harness's device check, mmgp calibrate --accelerator cuda
# (quick), the gpu test checks and predictions on the calibrated platform; every result packed into at most 8
# files in OUTDIR. Runs from a bundle (scripts/gpu-bundle.sh) on a machine with the NVIDIA driver and none of
# Debian's packages:
#   scripts/gpu-check.sh OUTDIR [BUNDLE]          (default BUNDLE: gpu-bundle)
# Exit 0: measured; 77: no usable GPU; 1: a step failed (the files say which).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/gpu-check.sh OUTDIR [BUNDLE]}; bundle=${2:-gpu-bundle}
mkdir -p "$out"
mmgp=$bundle/bin/mmgp; harness=$bundle/bin/mmgp-gpu-harness
log=$out/check.log
say() { echo "$*" | tee -a "$log"; }
start=$(date +%s)
say "gpu-check: $(date -u +%FT%TZ) on $(hostname)"
{ nvidia-smi --query-gpu=name,driver_version,compute_mode,memory.total --format=csv 2>&1; uname -a; nproc; } >> "$log"
"$harness" --check 2>> "$log"; rc=$?
if [ "$rc" -eq 77 ]; then say "gpu-check: no usable GPU (see above)"; exit 77; fi
[ "$rc" -eq 0 ] || { say "gpu-check: the harness's device check failed ($rc)"; exit 1; }
status=0
# The full harness record (with MPS when it can be started: root and nvidia-cuda-mps-control).
timeout 150 "$harness" --mps auto > "$out/harness.json" 2>> "$log" || { say "gpu-check: harness failed"; status=1; }
# The calibrated platform (the host harnesses quick; the GPU harness again, quick).
timeout 150 "$mmgp" calibrate --accelerator cuda --quick -o "$out/platform.json" 2> "$out/calibrate.log" ||
  { say "gpu-check: calibrate failed"; status=1; }
if [ -f "$out/platform.json" ]; then
  # The gpu suite's checks, where python3 exists on the machine.
  if command -v python3 >/dev/null; then
    MMGP_BIN=$mmgp MMGP_GPU_HARNESS=$harness timeout 200 python3 tests/gpu_test.py >> "$log" 2>&1 ||
      { say "gpu-check: gpu_test.py failed"; status=1; }
  else
    say "gpu-check: no python3 here: tests/gpu_test.py not run"
  fi
  # Predictions on the calibrated platform for a task program of 64 units (the scenario is in the log).
  scen=$out/scenario.json
  printf '{"platform": "platform.json", "application": {"decomposition": "task", "units": 64, "N": 1000, "T_hpu": 0.5, "T_apu": 50.0, "C_apu": 0.0, "g": 0.0}, "search": {"m": [1, 8]}}\n' > "$scen"
  { "$mmgp" predict "$scen"; "$mmgp" predict "$scen" --set 'search.sharing=["time_sliced"]' --top 5;
    "$mmgp" launch "$scen" --launcher local --cuda-devices 0 -- ./program {p}; } > "$out/predict.txt" 2>&1 ||
    { say "gpu-check: predict failed"; status=1; }
fi
say "gpu-check: done in $(( $(date +%s) - start )) s, status $status"
exit $status
