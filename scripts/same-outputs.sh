#!/usr/bin/env bash
# Regenerates what a restructuring must leave byte-identical and says whether anything changed:
#   every bundled scenario's prediction (text, JSON, CSV, uncertainty; both models; every objective), launch
#   lines, validate's reports, every --help, mmgp tune replayed on five recorded groups in four forms,
#   the validation reports (validation/report.py), the tuner benchmark (validation/tune/bench.py),
#   the bad-input catalogue (docs/BAD_INPUT.md) and the unit-test case count.
# Usage: scripts/same-outputs.sh [BUILD] [--write REF | --check REF]
#   --write REF  records the predictions in REF (run it on the parent commit);
#   --check REF  compares with REF; the committed reports are compared with git.
# Exit 0 when nothing changed, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}; mode=${2:-}; ref=${3:-}
mmgp=$build/cli/mmgp
ninja -C "$build" --quiet || exit 1
out=$(mktemp)
{
  for s in pbpi-qs20 raxml-qs20 pbpi-roadrunner sweep3d-roadrunner; do
    for args in "" "--json" "--csv" "--uncertainty" "--model eq11 --nodes 1" "--objective node-hours --json" \
                "--objective core-hours" "--max-nodes 64 --budget 5000 --json"; do
      echo "predict $s $args: $({ $mmgp predict $s $args 2>&1; echo "exit $?"; } | sha256sum | cut -c1-16)"
    done
    for l in openmpi srun local; do
      echo "launch $s $l: $({ $mmgp launch $s --launcher $l -- prog {m} {p} {np} 2>&1; echo "exit $?"; } | sha256sum | cut -c1-16)"
    done
  done
  h() { { "$@" 2>&1; echo "exit $?"; } | sed "s|$mmgp|MMGP|g" | sha256sum | cut -c1-16; }
  for s in pbpi-qs20 sweep3d-roadrunner; do echo "predict $s --uncertainty --json: $(h $mmgp predict $s --uncertainty --json)"; done
  for s in pbpi-qs20 raxml-qs20; do echo "launch --json $s: $(h $mmgp launch $s --json --launcher openmpi -- prog {m} {p})"; done
  echo "validate: $(h $mmgp validate edtlp-table1) $(h $mmgp validate edtlp-table1 --json)"
  for c in "" predict launch tune fit validate profile calibrate; do echo "help $c: $(h $mmgp $c --help)"; done
  # The tuner, replayed as a new user (the platform alone): text, JSON, runs in flight, the slowest run first.
  for g in validation/tune/groups/{raxml-16x1200-U4,libpll-24x600-U5,gromacs-water3nm-U1000,pwx-si64-U1}.csv \
           validation/tune/shape/runs.csv; do
    for args in "--seed 1" "--seed 2 --json" "--seed 3 --parallel 3" "--seed 4 --replay-first slowest --verbose"; do
      echo "tune $g $args: $(h $mmgp tune validation/tune/host.json --replay $g $args)"
    done
  done
  echo "unit cases: $("$build/tests/mmgp-tests" --count 2>&1 | grep -o 'filters: [0-9]*' | head -1)"
} > "$out"
status=0
if [ "$mode" = --write ]; then cp "$out" "$ref"
elif [ "$mode" = --check ]; then
  if cmp -s "$out" "$ref"; then echo "predictions: identical"; else echo "predictions: CHANGED"; diff "$ref" "$out" | head -20; status=1; fi
fi
rm -f "$out"
python3 validation/report.py --build "$build" >/dev/null || status=1
python3 validation/tune/bench.py --mmgp "$mmgp" >/dev/null 2>&1 || status=1
python3 tests/bad_input.py "$mmgp" docs/BAD_INPUT.md --write-docs >/dev/null || status=1
changed=$(git status --porcelain -- validation docs)
if [ -n "$changed" ]; then echo "reports: CHANGED"; echo "$changed"; status=1; else echo "reports: identical"; fi
exit $status
