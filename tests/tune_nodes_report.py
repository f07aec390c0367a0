#!/usr/bin/env python3
"""The `tune-nodes-report` test: validation/tune/nodes_report.txt and its group groups/synthetic-nodes.csv, as
committed, are what validation/tune/bench_nodes.py writes with this mmgp (docs/TUNE.md quotes the report's
table). The command is deterministic (seeded replays, no timing) and takes seconds, so a change to the tuner that
moves its figures fails here until the report is written again (python3 validation/tune/bench_nodes.py) and the
table in docs/TUNE.md follows it.
Usage: tune_nodes_report.py MMGP
"""
import difflib
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TUNE = os.path.join(os.path.dirname(HERE), "validation", "tune")


def main():
    mmgp = sys.argv[1]
    failures = 0
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([sys.executable, os.path.join(TUNE, "bench_nodes.py"), "--mmgp", mmgp, "--out", out],
                       check=True, stdout=subprocess.DEVNULL)
        for name in ("nodes_report.txt", os.path.join("groups", "synthetic-nodes.csv")):
            committed = open(os.path.join(TUNE, name)).read().splitlines()
            written = open(os.path.join(out, name)).read().splitlines()
            if committed != written:
                failures += 1
                print(f"FAIL validation/tune/{name} is not what bench_nodes.py writes now "
                      "(python3 validation/tune/bench_nodes.py, then docs/TUNE.md's table):")
                sys.stdout.writelines(line + "\n" for line in
                                      difflib.unified_diff(committed, written, "committed", "written", lineterm="",
                                                           n=0))
            else:
                print(f"ok   validation/tune/{name}: {len(written)} lines as committed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
