#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages only), then configures and builds MMGP in ./build.
# Usage: scripts/setup.sh            (as root, or as a user with sudo)
# Environment: BUILD_DIR (default build), MMGP_BUILDTYPE (default release), MMGP_SKIP_APT=1 to skip apt-get.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
BUILDTYPE=${MMGP_BUILDTYPE:-release}

# Packages the build and tests need; each one is a Debian 12 package.
PKGS=(g++ pkg-config meson ninja-build
      nlohmann-json3-dev libeigen3-dev libcli11-dev libfmt-dev doctest-dev libbenchmark-dev libhwloc-dev
      openmpi-bin libopenmpi-dev
      libpll-dev zlib1g-dev raxml examl gdb
      gnuplot-nox python3
      python3-optuna   # validation/tune/ (the benchmark against Optuna's TPE)
      gromacs          # validation/sweep_gromacs.py (a molecular dynamics code swept as ranks x threads)
      iqtree           # validation/sweep_iqtree.py, validation/tune/live_iqtree.py (IQ-TREE 2, MPI ranks x threads)
      quantum-espresso quantum-espresso-data libopenblas0-openmp  # validation/sweep_pwx.py (pw.x, MPI ranks x BLAS threads)
      slurm-wlm munge  # tests/slurm_test.py (a real Slurm started by the test: munged, slurmctld, slurmd)
      libsimgrid-dev   # calibrate --simulate: SimGrid's SMPI plays a cluster this machine does not have
      iproute2)        # calibrate --mpi, validation/sweep_mpi.py: nodes emulated by network namespaces (ip, tc)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ] && [ "${MMGP_SKIP_APT:-0}" != 1 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  echo "setup: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  meson setup "$BUILD_DIR" --buildtype="$BUILDTYPE" >/dev/null
fi
ninja -C "$BUILD_DIR" --quiet
echo "setup: built $BUILD_DIR/cli/mmgp" >&2
