#!/usr/bin/env bash
# One device check on a GPU machine (docs/GPU.md), every result packed into at most 8 files in OUTDIR:
#   1. the harness's device check, then its full record (MPS too where the daemon can be started)   harness.json
#   2. mmgp calibrate --accelerator cuda --quick                                                     platform.json
#   3. the GPU workload's application profile, measured sequentially (p = 1)                         app.json
#      and that of its 256-thread compute mode (--compute, with its kernel's slot_time)      (in sweep.json)
#   4. predictions and a launch line on the calibrated platform                                       predict.txt
#   5. with --workload: the workload swept: m in {1,2,4,8} x p in {1,8,32,SMs/m}, time-sliced and under MPS (group
#      "sweep"), and its compute mode with p also SMs, 2 SMs, 4 SMs (group "compute"; m*p may exceed the SMs under
#      MPS), 3 repetitions, every run bounded; predicted with nothing fitted (mmgp validate)  sweep.json, validate.txt
#   6. the libpll bootstrap program on the GPU (validation/sweep_gpu.py --quick: its profile by mmgp profile
#      --accelerator cuda, 24 taxa x 50,000 sites, 4 units; m in {1,2,4,8} x p in {1,32,SMs,2 SMs}, both modes,
#      2 runs each, every run bounded,
#      predicted with nothing fitted; the same program on the CPU cores beside it)               libpll.tar.gz
#   and check.log (the machine, each step, the gpu suite's checks where python3 exists, the CUDA backend's
#   protocol (mmgp-gpu-backend-check), the likelihood kernels against libpll (mmgp-gpu-likelihood), newview's bandwidth against the device's (mmgp-bench-gpu), the
#   calibration's lines).
# Runs from a bundle (scripts/gpu-bundle.sh) on a machine with the NVIDIA driver and none of Debian's packages:
#   scripts/gpu-check.sh OUTDIR [BUNDLE] [--workload] [--libpll-full]          (default BUNDLE: gpu-bundle)
# About 3 minutes on an H200 (the calibration and the checks 45 s, the libpll sweep 140 s).
# --workload: step 5 too (about 4.5 minutes more; recorded twice in validation/gpu/).
# --libpll-full: step 6 sweeps the libpll program over sweep_gpu.py's full grid of p (1, 8, 32, SMs/m, SMs, 2 SMs),
#   3 repetitions, at the reduced form's 24 taxa x 50,000 sites and 4 units, each run's host thread blocking on its
#   grids (edtlp) and, alternated with it, spinning (os) (about 8 minutes in all: give the device 590 s).
# Exit 0: measured; 77: no usable GPU; 1: a step failed (check.log says which).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/gpu-check.sh OUTDIR [BUNDLE] [--workload] [--libpll-full]}; bundle=gpu-bundle; focus=""; with_workload=0
for arg in "${@:2}"; do   # the bundle and the options, wherever they stand
  case $arg in --libpll-full) focus=$arg ;; --workload) with_workload=1 ;;
               -*) echo "gpu-check: unknown option $arg (expected --workload or --libpll-full)" >&2; exit 2 ;;
               *) bundle=$arg ;; esac
done
mkdir -p "$out"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT   # what the check needs but does not bring back
mmgp=$bundle/bin/mmgp; harness=$bundle/bin/mmgp-gpu-harness; workload=$bundle/bin/mmgp-gpu-workload
log=$out/check.log
say() { echo "$*" | tee -a "$log"; }
start=$(date +%s)
say "gpu-check: $(date -u +%FT%TZ) on $(hostname)"
{ nvidia-smi --query-gpu=name,driver_version,compute_mode,memory.total --format=csv 2>&1; uname -a; nproc; } >> "$log"
"$harness" --check 2>> "$log"; rc=$?
if [ "$rc" -eq 77 ]; then say "gpu-check: no usable GPU (see above)"; exit 77; fi
[ "$rc" -eq 0 ] || { say "gpu-check: the harness's device check failed ($rc)"; exit 1; }
status=0
step() { say "gpu-check: $* ($(( $(date +%s) - start )) s)"; }

step "1. harness"
timeout 150 "$harness" --mps auto > "$out/harness.json" 2>> "$log" || { say "gpu-check: harness failed"; status=1; }

step "2. calibrate"
timeout 150 "$mmgp" calibrate --accelerator cuda --quick -o "$out/platform.json" 2>> "$log" ||
  { say "gpu-check: calibrate failed"; status=1; }
[ -f "$out/platform.json" ] || { say "gpu-check: no platform: stopping"; exit 1; }
sms=$(grep -o '"sms": *[0-9]*' "$out/platform.json" | head -1 | grep -o '[0-9]*$')
sharing=$(tr -d '\n ' < "$out/platform.json" | grep -o '"sharing":\[[^]]*\]' | head -1)
say "gpu-check: $sms SMs, $sharing"
# The platform's calibration.KEY value (what the model does not read), or nothing.
calibration_value() {
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("calibration", {}).get(sys.argv[2], {}).get("value"))' \
    "$out/platform.json" "$1" 2>/dev/null
}
wake=$(calibration_value T_csw_by_wait)
say "gpu-check: the blocked thread's wake-up against its wait [s, s]: ${wake:-not measured}"
for key in T_slice_switch_by_procs T_slice_switch_blocking_by_procs mps_over_alone_by_procs; do
  by=$(calibration_value "$key")
  say "gpu-check: $key [processes, value]: ${by:-not measured}"
done
if command -v python3 >/dev/null; then
  MMGP_BIN=$mmgp MMGP_GPU_HARNESS=$harness timeout 200 python3 tests/gpu_test.py >> "$log" 2>&1 ||
    { say "gpu-check: gpu_test.py failed"; status=1; }
else
  say "gpu-check: no python3 here: tests/gpu_test.py not run"
fi
if [ -x "$bundle/bin/mmgp-gpu-backend-check" ]; then
  say "gpu-check: the CUDA backend's protocol (calibration/gpu/backend_check.cu)"
  timeout 60 "$bundle/bin/mmgp-gpu-backend-check" >> "$log" 2>&1 || { say "gpu-check: mmgp-gpu-backend-check failed"; status=1; }
fi
if [ -x "$bundle/bin/mmgp-gpu-likelihood" ]; then
  say "gpu-check: the likelihood kernels against libpll"
  timeout 120 "$bundle/bin/mmgp-gpu-likelihood" >> "$log" 2>&1 || { say "gpu-check: mmgp-gpu-likelihood failed"; status=1; }
else
  say "gpu-check: no mmgp-gpu-likelihood in the bundle (a build without libpll): the kernels not checked"
fi

if [ -x "$bundle/bin/mmgp-bench-gpu" ]; then
  say "gpu-check: newview against the device memory's bandwidth (tests/bench/bench_gpu_newview.cpp)"
  timeout 120 "$bundle/bin/mmgp-bench-gpu" 2>&1 | tee -a "$log" || { say "gpu-check: mmgp-bench-gpu failed"; status=1; }
fi

step "3. the workload's profile"
wl=(--units 8 --offloads 50 --host-us 200 --kernel-us 2000)
timeout 60 "$workload" --profile "${wl[@]}" > "$out/app.json" 2>> "$log" || { say "gpu-check: profile failed"; status=1; }
wlc=(--compute --units 8 --offloads 50 --host-us 200 --kernel-us 1000)
app_compute=$(timeout 60 "$workload" --profile "${wlc[@]}" 2>> "$log") || { say "gpu-check: compute profile failed"; status=1; }
compute_scenario="{\"schema\": \"mmgp/1\", \"platform\": \"platform.json\", \"application\": ${app_compute:-null}}"

step "4. predict"
here=$(cd "$out" && pwd)
printf '{"schema": "mmgp/1", "name": "gpu-workload", "platform": "%s/platform.json", "application": "%s/app.json", "search": {"m": [1, 8]}}\n' "$here" "$here" > "$work/scenario.json"
{ "$mmgp" predict "$work/scenario.json"; "$mmgp" predict "$work/scenario.json" --set 'search.sharing=["time_sliced"]' --top 5;
  "$mmgp" launch "$work/scenario.json" --launcher local --cuda-devices 0 -- ./program {p};
  echo "== the compute mode's profile"; echo "$app_compute"; } > "$out/predict.txt" 2>&1 ||
  { say "gpu-check: predict failed"; status=1; }

if [ "$with_workload" = 0 ]; then step "5. the workload's sweep: left out (without --workload)"; else
step "5. sweep"
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
cases=""
slots=$(tr -d '\n ' < "$out/platform.json" | grep -o '"apu_slots":{[^}]*}' | grep -o '"value":[0-9]*' | grep -o '[0-9]*$')
cap=$(( sms * ${slots:-1} ))
one_case() {  # mode m p group: 3 bounded runs, one case
  local mode=$1 m=$2 p=$3 group=$4 reps="" t runs extra=() scen=""
  [ "$group" = compute ] && extra=(--compute) && scen=", \"scenario\": $compute_scenario"
  local w=("${wl[@]}"); [ "$group" = compute ] && w=("${wlc[@]}")
  for rep in 1 2 3; do
    t=$(MMGP_SHARING=$mode timeout 30 "$workload" --m "$m" --p "$p" "${w[@]}" 2>> "$log" | awk '/^time_s/ {print $2}')
    [ -n "$t" ] || { say "gpu-check: run m=$m p=$p $mode $group failed"; continue; }
    reps="$reps $t"
  done
  [ -n "$reps" ] || return
  runs=$(echo $reps | tr ' ' ',')
  t=$(echo $reps | tr ' ' '\n' | median)
  cases="$cases${cases:+,}
    {\"m\": $m, \"p\": $p, \"sharing\": \"$mode\", \"group\": \"$group\", \"measured_s\": $t, \"runs\": [$runs], \"source\": \"mmgp-gpu-workload${extra:+ --compute}, 3 runs\"$scen}"
}
sweep_mode() {  # $1: time_sliced or mps
  local mode=$1 m p
  for m in 1 2 4 8; do
    for p in 1 8 32 $(( sms / m )); do
      [ "$p" -ge 1 ] && [ "$p" -le "$sms" ] || continue
      [ "$mode" = mps ] && [ $(( m * p )) -gt "$sms" ] && continue
      one_case "$mode" "$m" "$p" sweep
    done
    [ -n "$app_compute" ] || continue
    for p in $(printf '%s\n' 1 8 32 $(( sms / m )) "$sms" $(( 2 * sms )) $(( 4 * sms )) | sort -nu); do
      [ "$p" -ge 1 ] && [ "$p" -le "$cap" ] || continue
      [ "$mode" = mps ] && [ $(( m * p )) -gt "$cap" ] && continue
      one_case "$mode" "$m" "$p" compute
    done
  done
}
case $sharing in *time_sliced*) sweep_mode time_sliced ;; esac
case $sharing in
  *mps*)
    if [ "$(id -u)" -eq 0 ] && nvidia-cuda-mps-control -d >> "$log" 2>&1; then
      sleep 1; sweep_mode mps; echo quit | nvidia-cuda-mps-control >> "$log" 2>&1; sleep 1
    else say "gpu-check: the MPS daemon could not be started: MPS not swept"; fi ;;
esac
printf '{"schema": "mmgp/1", "kind": "validation", "name": "gpu-workload sweep", "scenario": {"schema": "mmgp/1", "name": "gpu-workload", "platform": "platform.json", "application": "app.json"}, "group": "sweep", "cases": [%s\n]}\n' "$cases" > "$out/sweep.json"
"$mmgp" validate "$out/sweep.json" > "$out/validate.txt" 2>&1 || { say "gpu-check: validate failed"; status=1; }
tail -3 "$out/validate.txt" | tee -a "$log"
fi

step "6. the libpll bootstrap program on the GPU"
if [ -x "$bundle/bin/mmgp-offload-run" ] && command -v python3 >/dev/null; then
  # Its own budget (no mapping started past 180 s, 420 s with --libpll-full: with steps 1-5's 60-70 s and the timeout's
  # 90 s beyond it, the check ends by itself within the device's 590 s), the timeout beyond it; a SIGTERM lets it stop the MPS daemon
  # and keep its runs, and the daemon is told to quit here too in case it could not.
  grid=(--quick); budget=180
  [ "$focus" = --libpll-full ] && grid=(--simulate 24:50000 --units 4 --repetitions 3 --policies edtlp,os) && budget=420
  timeout -k 10 $(( budget + 80 )) python3 validation/sweep_gpu.py --platform "$out/platform.json" "${grid[@]}" \
      --bin "$bundle/bin" --out "$work/libpll" --bound 20 --budget $budget >> "$log" 2>&1 ||
    { say "gpu-check: sweep_gpu.py failed"; status=1; }
  [ "$(id -u)" -eq 0 ] && echo quit | nvidia-cuda-mps-control > /dev/null 2>&1
  tail -3 "$work/libpll/validate.txt" 2>/dev/null | tee -a "$log"
  [ -f "$work/libpll/validate-os.txt" ] && tail -2 "$work/libpll/validate-os.txt" | tee -a "$log"
  [ -d "$work/libpll" ] && tar czf "$out/libpll.tar.gz" -C "$work" libpll
else
  say "gpu-check: no mmgp-offload-run in the bundle (a build without libpll) or no python3: the libpll sweep not run"
fi
say "gpu-check: done in $(( $(date +%s) - start )) s, status $status"
exit $status
