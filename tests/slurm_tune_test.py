#!/usr/bin/env python3
"""mmgp tune --parallel 2 on a real program through a real Slurm (tests/slurm_fixture.py): the libpll off-load
runtime (mmgp-offload-run: phylogenetic likelihood kernels on a real alignment, or a simulated one where the
examl test data is not installed), one process per task with p APU threads and its share of the bootstraps,
inside a two-CPU allocation. Every run a job step of its own; a configuration that needs both CPUs never beside
another run; m=2 p=2 (four CPUs) refused by srun and recorded as failed; the choice the fastest measured.

    python3 tests/slurm_tune_test.py MMGP_BINARY OFFLOAD_RUN   (exit 77: skipped, with the reason, where it cannot run)
"""
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import slurm_fixture as sf  # noqa: E402

MMGP = os.path.abspath(sys.argv[1])
RUNNER = os.path.abspath(sys.argv[2])
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALIGNMENT = "/usr/share/doc/examl/testData/49.gz"  # Debian's examl (scripts/setup.sh installs it)
check = sf.Checks()


def main():
    why = sf.skip_reason("two runs in flight")
    if why:
        print(f"skipped: {why}")
        return 77
    data = ["--alignment", ALIGNMENT] if os.path.exists(ALIGNMENT) else ["--simulate", "49:1200"]
    # Each task: its share of the {U} bootstraps (SLURM_PROCID of {np} tasks), p APU threads.
    prog = (f"exec {RUNNER} {' '.join(data)} --units $(( ({{U}} + {{np}} - 1 - SLURM_PROCID) / {{np}} )) "
            "--m 1 --p {p} --policy edtlp > /dev/null")
    scenario = os.path.join(ROOT, "validation", "offload", "scenario-49x1200.json")
    journal = os.path.join(os.path.dirname(sf.BASE), f"mmgp-slurm-real-{os.getpid()}.jsonl")
    try:
        with sf.SlurmCluster() as slurm:
            r = subprocess.run(["salloc", "-N", "1", "-n", "2", MMGP, "tune", scenario, "--units", "16", "--m", "1:2",
                                "--p", "1:2", "--launcher", "srun", "--parallel", "2", "--max-runs", "20", "--max-cost", "none",
                                "--journal", journal, "--json", "--quiet", "--", "sh", "-c", prog],
                               env=slurm.env, capture_output=True, text=True, timeout=280)
            check(r.returncode == 0, f"tune --parallel 2 of the off-load runtime inside salloc: exit 0 ({r.stderr.strip()[-300:]})")
            if r.returncode != 0:
                print(f"the fixture's daemons: {slurm.logs()}")  # what Slurm said (a daemon down, a step refused)
                try:
                    print("the journal's runs:", *[f"  {x}" for x in sf.journal_runs(journal)], sep="\n")
                except (OSError, ValueError) as e:  # none written, or a line cut short
                    print(f"the journal: {e}")
                return 1
            j, runs = json.loads(r.stdout), sf.journal_runs(journal)
            print(f"stop: {j['stop']}; {j['runs']} runs, {j['machine_s']:.2f} machine s, decided after {j['elapsed_s']:.2f} s")
            for x in runs:
                print(f"  run {x['run']:>2} m={x['m']} p={x['p']} {x['start_s']:6.2f}..{x['end_s']:6.2f} s "
                      f"{x['wall_s']:.3f} s {x['outcome']}")
            check(all(x["command"].startswith("srun --exclusive -w ") for x in runs), "every run a job step of its own")
            whole = [x for x in runs if x["m"] * x["p"] == 2]
            bad = [(x["run"], y["run"]) for x in whole for y in runs if y is not x and sf.overlap(x, y)]
            check(not bad, f"the {len(whole)} runs needing both CPUs never beside another ({bad})")
            big = [x["outcome"] for x in runs if (x["m"], x["p"]) == (2, 2)]
            check(all(o == "failed" for o in big), f"m=2 p=2 (4 CPUs in 2) recorded as failed ({big})")
            ok = {}
            for x in runs:
                if x["outcome"] == "ok":
                    ok.setdefault((x["m"], x["p"]), []).append(x["wall_s"])
            med = {k: statistics.median(v) for k, v in ok.items() if len(v) >= 2}
            chosen = (j["chosen"]["m"], j["chosen"]["p"]) if j["chosen"] else None
            check(chosen in med and med[chosen] <= 1.05 * min(med.values()),
                  f"the choice {chosen} is the fastest measured (medians: {({k: round(v, 3) for k, v in med.items()})})")
        check(not sf.leftovers() and not os.path.exists(sf.BASE), "nothing of the fixture left")
    finally:
        if os.path.exists(journal):
            os.remove(journal)
    return check.status()


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        sf.clean()
