#!/usr/bin/env python3
"""`mmgp launch --launcher srun --exec` against a real Slurm (tests/slurm_fixture.py: munged, slurmctld, slurmd on
this machine): the task count, the CPUs per task, the binding, the environment and the placeholders reach the
program, which prints what it received; its exit status comes back. Then the fixture itself: it starts within its
30 s wait, leaves no process and no file behind, and a fixture killed mid-test (SIGKILL) is cleaned up by the next.
Also `mmgp tune --launcher srun` inside an allocation (salloc): every run a job step, a step that does not fit
recorded as failed.

    python3 tests/slurm_test.py MMGP_BINARY        (exit 77: skipped, with the reason, where it cannot run)
"""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import slurm_fixture as sf  # noqa: E402

MMGP = os.path.abspath(sys.argv[1])
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def cpus_of(text):
    """'0-1,3' -> {0, 1, 3}"""
    out = set()
    for part in text.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


REPORT = ("echo rank=$SLURM_PROCID ntasks=$SLURM_NTASKS cpt=$SLURM_CPUS_PER_TASK omp=$OMP_NUM_THREADS "
          "m=$MMGP_M p=$MMGP_P np=$MMGP_NP arg={p}/{m}/{np} cpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)")


def launch(slurm, m, p, program):
    return subprocess.run([MMGP, "launch", "pbpi-qs20", "--launcher", "srun", "--m", str(m), "--p", str(p), "--nodes", "1",
                           "--exec", "--", "sh", "-c", program], env=slurm.env, capture_output=True, text=True, timeout=120)


def main():
    why = sf.missing()
    if why:
        print(f"skipped: {why}")
        return 77
    if (os.cpu_count() or 1) < 2:
        print("skipped: the launch cases need 2 CPUs")
        return 77
    with sf.SlurmCluster() as slurm:
        print(f"fixture: munged, slurmctld and slurmd up, node idle after {slurm.started_s:.2f} s")
        check(slurm.started_s <= 30, f"the fixture starts within 30 s ({slurm.started_s:.2f} s)")
        for m, p in ((2, 1), (1, 2)):
            r = launch(slurm, m, p, REPORT)
            lines = sorted(line for line in r.stdout.split("\n") if line.startswith("rank="))
            check(r.returncode == 0 and len(lines) == m,
                  f"m={m} p={p}: {m} task(s) ran (exit {r.returncode}; {r.stderr.strip()[-300:]})")
            fields = [dict(kv.split("=", 1) for kv in line.split(" ") if "=" in kv) for line in lines]
            check(sorted(f["rank"] for f in fields) == [str(i) for i in range(m)], f"m={m} p={p}: ranks 0..{m - 1}")
            for f in fields:
                check(f["ntasks"] == str(m) and f["cpt"] == str(p), f"m={m} p={p}: SLURM_NTASKS={f['ntasks']}, SLURM_CPUS_PER_TASK={f['cpt']}")
                check(f["omp"] == str(p) and f["m"] == str(m) and f["p"] == str(p) and f["np"] == str(m),
                      f"m={m} p={p}: OMP_NUM_THREADS={f['omp']} MMGP_M={f['m']} MMGP_P={f['p']} MMGP_NP={f['np']}")
                check(f["arg"] == f"{p}/{m}/{m}", f"m={m} p={p}: placeholders {{p}}/{{m}}/{{np}} -> {f['arg']}")
            sets = [cpus_of(f["cpus"]) for f in fields]
            check(all(len(s) == p for s in sets) and len(set().union(*sets)) == m * p,
                  f"m={m} p={p}: each task bound to {p} core(s) of its own ({[f['cpus'] for f in fields]})")
        r = launch(slurm, 1, 1, "exit 3")
        check(r.returncode == 3, f"a task's exit status comes back through srun and mmgp ({r.returncode})")

        # mmgp tune inside an allocation of the 2 CPUs: every run a job step (srun); the program sleeps
        # 0.05 m + 0.1 / p s, so m=1 p=2 is best; m=2 p=2 does not fit the allocation: srun refuses the step,
        # the run is recorded as failed and never chosen.
        journal = os.path.join(os.path.dirname(sf.BASE), f"mmgp-slurm-tune-{os.getpid()}.jsonl")
        try:
            r = subprocess.run(["salloc", "-N", "1", "-n", "2", MMGP, "tune", "qs20", "--m", "1:2", "--p", "1:2",
                                "--launcher", "srun", "--max-runs", "16", "--journal", journal, "--json", "--quiet", "--",
                                "sh", "-c", 'sleep $(awk "BEGIN{print 0.05*{m}+0.1/{p}}")'],
                               env=slurm.env, capture_output=True, text=True, timeout=240)
            check(r.returncode == 0, f"tune inside salloc: exit 0 ({r.stderr.strip()[-300:]})")
            if r.returncode == 0:
                j = json.loads(r.stdout)
                chosen = (j["chosen"]["m"], j["chosen"]["p"]) if j["chosen"] else None
                check(chosen == (1, 2), f"tune inside salloc: chooses m=1 p=2 ({chosen}, stop: {j['stop']})")
                runs = [json.loads(line) for line in open(journal).read().split("\n")[1:] if line.strip()]
                check(all(x["command"].startswith("srun ") for x in runs), "tune inside salloc: every run is an srun job step")
                big = [x for x in runs if (x["m"], x["p"]) == (2, 2)]
                check(all(x["outcome"] == "failed" for x in big), f"tune inside salloc: m=2 p=2 (4 CPUs in 2) recorded as failed ({[x['outcome'] for x in big]})")
        finally:
            if os.path.exists(journal):
                os.remove(journal)
    check(not sf.leftovers(), f"no fixture process left after stop ({sf.leftovers()})")
    check(not os.path.exists(sf.BASE), f"no fixture file left after stop ({sf.BASE})")

    # A fixture killed mid-test (SIGKILL: no clean-up of its own) leaves daemons behind; the next one removes them.
    child = subprocess.Popen([sys.executable, "-c",
                              "import sys, time; sys.path.insert(0, %r); import slurm_fixture as sf; "
                              "s = sf.SlurmCluster().start(); print('up', flush=True); time.sleep(600)"
                              % os.path.dirname(os.path.abspath(__file__))], stdout=subprocess.PIPE, text=True)
    up = child.stdout.readline().strip() == "up"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    check(up and len(sf.leftovers()) >= 3, f"a fixture killed by SIGKILL leaves its daemons ({len(sf.leftovers())} processes)")
    t0 = time.monotonic()
    with sf.SlurmCluster() as slurm:
        check(slurm.idle(), f"the next fixture starts clean after the kill ({time.monotonic() - t0:.2f} s)")
        r = subprocess.run(["srun", "-n", "1", "true"], env=slurm.env, capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, f"and runs a job ({r.stderr.strip()[-200:]})")
    check(not sf.leftovers() and not os.path.exists(sf.BASE), "nothing left after it either")
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        sf.clean()  # whatever happened above, no daemon outlives the test
