#!/usr/bin/env bash
# Packs a build's GPU-relevant programs into a folder that runs on a GPU machine without Debian's packages:
#   scripts/gpu-bundle.sh [BUILD] [OUTDIR]        (default: build gpu-bundle)
# OUTDIR/libexec holds mmgp, libmmgp, the GPU harness and its backend's check, the GPU workload, and where libpll is installed the likelihood
# kernels' check, the off-load runtime (mmgp-offload-run, --accelerator cuda) and the newview benchmark; OUTDIR/lib the shared libraries `ldd` lists, except the
# C library's own (libc, libm, libpthread, libdl, librt, ld-linux) and the driver's (libcuda, libnvidia-*), which
# come from the GPU machine; OUTDIR/bin holds wrappers that set LD_LIBRARY_PATH for these programs alone, so the
# machine's own tools keep their libraries. The harness links the CUDA runtime statically and finds the driver at
# run time. Carry OUTDIR to the device (it is ignored by git) and run scripts/gpu-check.sh there.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}; out=${2:-gpu-bundle}
harness=$build/calibration/gpu/mmgp-gpu-harness
workload=$build/offload/cuda/mmgp-gpu-workload
[ -x "$build/cli/mmgp" ] || { echo "gpu-bundle: $build/cli/mmgp is not built (scripts/setup.sh)" >&2; exit 2; }
[ -x "$harness" ] || { echo "gpu-bundle: $harness is not built (needs nvcc: meson configure $build -Dcuda=enabled)" >&2; exit 2; }
rm -rf "$out.tmp" && mkdir -p "$out.tmp/libexec" "$out.tmp/lib" "$out.tmp/bin"
cp "$build/cli/mmgp" "$harness" "$workload" "$out.tmp/libexec/"
backend_check=$build/calibration/gpu/mmgp-gpu-backend-check   # built with the harness
[ -x "$backend_check" ] && cp "$backend_check" "$out.tmp/libexec/"
likelihood=$build/offload/cuda/mmgp-gpu-likelihood   # built where libpll is installed
[ -x "$likelihood" ] && cp "$likelihood" "$out.tmp/libexec/"
offload_run=$build/offload/mmgp-offload-run           # the same
[ -x "$offload_run" ] && cp "$offload_run" "$out.tmp/libexec/"
bench_gpu=$build/tests/mmgp-bench-gpu                 # the same: newview against the device memory's bandwidth
[ -x "$bench_gpu" ] && cp "$bench_gpu" "$out.tmp/libexec/"
cp -L "$build"/libmmgp.so* "$out.tmp/lib/" 2>/dev/null || true
skip='^(libc|libm|libpthread|libdl|librt|ld-linux.*|libcuda|libnvidia-.*)\.so'
for bin in "$out.tmp"/libexec/*; do
  ldd "$bin" | awk '/=> \//{print $3}' | while read -r lib; do
    name=$(basename "$lib")
    [[ $name =~ $skip ]] && continue
    [ -e "$out.tmp/lib/$name" ] || cp -L "$lib" "$out.tmp/lib/$name"
  done
done
for prog in $(ls "$out.tmp/libexec"); do
  cat > "$out.tmp/bin/$prog" <<WRAP
#!/bin/sh
here=\$(cd "\$(dirname "\$0")/.." && pwd)
LD_LIBRARY_PATH="\$here/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" MMGP_GPU_HARNESS="\$here/bin/mmgp-gpu-harness" MMGP_OFFLOAD_RUN="\$here/bin/mmgp-offload-run" exec "\$here/libexec/$prog" "\$@"
WRAP
  chmod +x "$out.tmp/bin/$prog"
done
rm -rf "$out" && mv "$out.tmp" "$out"
echo "gpu-bundle: $out ($(du -sh "$out" | cut -f1)): $(ls "$out/lib" | tr '\n' ' ')"
