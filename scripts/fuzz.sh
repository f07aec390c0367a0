#!/usr/bin/env bash
# Fuzzes the profile parser/validator and the measurement/validation readers with libFuzzer.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 120)
#        FUZZ_RUNS=N FUZZ_SEED=S scripts/fuzz.sh   (a fixed number of inputs from a fixed seed: what CI runs,
#                                                   so that CI is deterministic)
# Builds build-fuzz/ with clang (ASan + UBSan + libFuzzer), runs each target on a copy of the seed
# corpus in tests/fuzz/corpus/, and exits non-zero on any crash, leak, hang or sanitizer report.
# Findings land in build-fuzz/findings/; turn each into a file in tests/fuzz/regressions/ (the unit
# tests replay those).
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-120}
PKGS=(clang-14 libclang-rt-14-dev)
missing=()
for p in "${PKGS[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p"); done
if [ "${#missing[@]}" -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ! -f build-fuzz/build.ninja ]; then
  # -O1 with line tables only (OSS-Fuzz's flags): the same checks as -O2 -g, in less compiler time.
  CC=clang-14 CXX=clang++-14 meson setup build-fuzz -Dfuzz=true -Dcuda=disabled -Db_sanitize=address,undefined -Db_lundef=false \
    --buildtype=debugoptimized -Doptimization=1 -Dcpp_args=-gline-tables-only >/dev/null
fi
ninja -C build-fuzz --quiet tests/fuzz_profile tests/fuzz_runs
mkdir -p build-fuzz/findings
# One target per CPU at a time (libFuzzer runs one process of one thread): on 2 CPUs both targets run together,
# each to its own fixed input count or time limit, as alone.
targets=(profile runs)
jobs=$(nproc 2>/dev/null || echo 1)
fuzz_one() {
  local t=$1 work=build-fuzz/corpus-$1
  mkdir -p "$work"
  cp -n tests/fuzz/corpus/$t/* "$work"/ 2>/dev/null || true
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
    build-fuzz/tests/fuzz_$t ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} ${FUZZ_SEED:+-seed=$FUZZ_SEED} -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
      -print_final_stats=1 -artifact_prefix=build-fuzz/findings/$t- "$work" 2>build-fuzz/fuzz-$t.log
}
status=0
declare -A pid=() rc=()
for t in "${targets[@]}"; do
  echo "fuzz: $t for ${SECS}s"
  rc[$t]=0
  if [ "$jobs" -ge 2 ]; then fuzz_one "$t" & pid[$t]=$!; else fuzz_one "$t" || rc[$t]=$?; fi
done
for t in "${!pid[@]}"; do wait "${pid[$t]}" || rc[$t]=$?; done
for t in "${targets[@]}"; do
  echo "fuzz: $t: exit ${rc[$t]}"
  grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)" build-fuzz/fuzz-$t.log || true
  if [ "${rc[$t]}" -ne 0 ]; then status=1; tail -40 build-fuzz/fuzz-$t.log; fi
done
[ "$status" -eq 0 ] && echo "fuzz: no findings" || echo "fuzz: FINDINGS in build-fuzz/findings/"
exit "$status"
