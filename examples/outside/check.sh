#!/bin/sh
# Installs MMGP from BUILD_DIR into a temporary --destdir, builds examples/outside against it with
# pkg-config (C and C++), and runs the programs.   Usage: examples/outside/check.sh [BUILD_DIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
dest=$(mktemp -d "${TMPDIR:-/tmp}/mmgp-install-XXXXXX")
trap 'rm -rf "$dest"' EXIT
meson install -C "$build" --no-rebuild --destdir "$dest" --quiet >/dev/null
pc=$(find "$dest" -name mmgp.pc | head -n 1)
[ -n "$pc" ] || { echo "check.sh: mmgp.pc was not installed" >&2; exit 1; }
libdir=$(dirname "$(dirname "$pc")")
export PKG_CONFIG_PATH="$(dirname "$pc")" PKG_CONFIG_SYSROOT_DIR="$dest"
mkdir "$dest/src"
cp "$here/Makefile" "$here"/*.c "$here"/*.cpp "$dest/src/"
make -s -C "$dest/src"
export LD_LIBRARY_PATH="$libdir"
"$dest/src/advisor_c" raxml-qs20
"$dest/src/predict_launch" pbpi-qs20
"$dest/src/scheduler_sim" 4 200
echo "check.sh: built and ran C and C++ programs against the installed library ($(pkg-config --modversion mmgp))"
