#!/usr/bin/env python3
"""`mmgp launch --launcher srun --exec` against a real Slurm (tests/slurm_fixture.py: munged, slurmctld, slurmd on
this machine): the task count, the CPUs per task, the binding, the environment and the placeholders reach the
program, which prints what it received; its exit status comes back; m*p above the node's cores runs unbound, each
task a share of them (inside an allocation, with --oversubscribe, a share of the CPUs its environment names,
as launch --exec and a tune's runs one at a time ask them). Then the fixture itself: it starts within its
30 s wait, leaves no process and no file behind, and a fixture killed mid-test (SIGKILL) is cleaned up by the next.
Also `mmgp tune --launcher srun` inside an allocation (salloc): every run a job step, a step that does not fit
recorded as failed; with --parallel 2, runs in flight at once as job steps on CPUs of their own, a configuration
that needs the whole node never beside another; and outside an allocation, each run its own batch job (sbatch), a
configuration no node holds recorded as failed without a job, a job cancelled from outside recorded as cancelled,
and with --oversubscribe more threads than CPUs in a job whose tasks share the node.
Then two emulated nodes (network and UTS namespaces, one CPU each): launch across both, and tune --parallel 2
inside a two-node allocation, runs in flight on different nodes, a two-node configuration beside no other run.

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
check = sf.Checks()


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


def more_threads_than_cores(slurm):
    """m*p above the node's cores (--cores-per-node): the processes unbound, each task its share of the cores, so
    that Slurm runs the step (--cpus-per-task=p: a new job waits for resources no node has)."""
    n = os.cpu_count()
    argv = [MMGP, "launch", "pbpi-qs20", "--set", "platform.apus=4096", "--launcher", "srun", "--m", "2", "--p", str(n),
            "--nodes", "1", "--cores-per-node", str(n), "--exec", "--", "sh", "-c", REPORT]
    try:
        r = subprocess.run(argv, env=slurm.env, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        check(False, f"m=2 p={n} on {n} cores: the step ran (it waited 60 s for resources)")
        return
    lines = sorted(line for line in r.stdout.split("\n") if line.startswith("rank="))
    check(r.returncode == 0 and len(lines) == 2, f"m=2 p={n} on {n} cores: 2 tasks ran (exit {r.returncode}; {r.stderr.strip()[-300:]})")
    fields = [dict(kv.split("=", 1) for kv in line.split(" ") if "=" in kv) for line in lines]
    for f in fields:
        check(f["cpt"] == str(n // 2) and f["omp"] == str(n),
              f"m=2 p={n} on {n} cores: SLURM_CPUS_PER_TASK={f['cpt']} (want {n // 2}), OMP_NUM_THREADS={f['omp']} (want {n})")
    want = 2 * (n // 2)
    check(bool(fields) and len(set().union(*[cpus_of(f["cpus"]) for f in fields])) == want,
          f"m=2 p={n} on {n} cores: the tasks' threads on {want} cores between them ({[f['cpus'] for f in fields]})")


def oversubscribed_in_allocation(slurm, tmp):
    """Inside a two-CPU allocation with --oversubscribe, m=2 p=2 (more threads than CPUs), as mmgp launch --exec
    runs it and as a tune's runs one at a time: each task asks a CPU (--cpus-per-task=1, unbound; the allocation's
    CPUs from SLURM_JOB_CPUS_PER_NODE), both CPUs between them. Told nothing of the CPUs, each asked p with
    --overcommit, which Slurm allocates once for all the node's tasks (on a larger node: m tasks on p CPUs)."""
    r = subprocess.run(["salloc", "-N", "1", "-n", "2", MMGP, "launch", "pbpi-qs20", "--launcher", "srun", "--m", "2",
                        "--p", "2", "--nodes", "1", "--oversubscribe", "--exec", "--", "sh", "-c", REPORT],
                       env=slurm.env, capture_output=True, text=True, timeout=120)
    lines = sorted(line for line in r.stdout.split("\n") if line.startswith("rank="))
    fields = [dict(kv.split("=", 1) for kv in line.split(" ") if "=" in kv) for line in lines]
    check(r.returncode == 0 and len(fields) == 2 and all(f["cpt"] == "1" and f["omp"] == "2" for f in fields),
          f"launch --oversubscribe inside salloc -n 2: m=2 p=2, a CPU a task, 2 threads each "
          f"(exit {r.returncode}; {[(f['cpt'], f['omp']) for f in fields]}; {r.stderr.strip()[-300:]})")
    check(len(fields) == 2 and len(set().union(*[cpus_of(f["cpus"]) for f in fields])) == 2,
          f"launch --oversubscribe inside salloc -n 2: both CPUs between the tasks ({[f['cpus'] for f in fields]})")
    journal = os.path.join(tmp, f"mmgp-slurm-seq-over-{os.getpid()}.jsonl")
    try:
        r = subprocess.run(["salloc", "-N", "1", "-n", "2", MMGP, "tune", "qs20", "--m", "2", "--p", "2", "--launcher", "srun",
                            "--oversubscribe", "--max-runs", "1", "--max-cost", "none", "--journal", journal,
                            "--json", "--quiet", "--", "sh", "-c", "sleep 0.1"],
                           env=slurm.env, capture_output=True, text=True, timeout=120)
        runs = sf.journal_runs(journal) if os.path.exists(journal) else []
        check(r.returncode == 0 and runs and all(x["outcome"] == "ok" and "--cpus-per-task=1 " in x["command"] and
                                                  "--overcommit" not in x["command"] for x in runs),
              f"tune --oversubscribe inside salloc, one run at a time: m=2 p=2 ran, a CPU a task "
              f"(exit {r.returncode}; {[(x['outcome'], x['command']) for x in runs]}; {r.stderr.strip()[-300:]})")
        chosen_line = json.loads(r.stdout).get("command", "") if r.returncode == 0 else ""
        check("--cpus-per-task=1 " in chosen_line and "--overcommit" not in chosen_line,
              f"tune --oversubscribe inside salloc: the chosen mapping's line as its runs ran ({chosen_line!r})")
    finally:
        if os.path.exists(journal):
            os.remove(journal)


SLEEP = 'sleep $(awk "BEGIN{print 0.05*{m}+0.1/{p}}")'


def parallel_cases(slurm):
    """mmgp tune --parallel 2 through Slurm: job steps in an allocation, then batch jobs outside one."""
    tmp = os.path.dirname(sf.BASE)
    parallel_steps(slurm, tmp)
    parallel_whole_node(slurm, tmp)
    parallel_steps_oversubscribed(slurm, tmp)
    parallel_batch_jobs(slurm, tmp)
    parallel_batch_oversubscribed(slurm, tmp)


def parallel_batch_oversubscribed(slurm, tmp):
    """4. Outside an allocation with --oversubscribe: m=2 p=n on an n-CPU node runs as a batch job whose tasks
    ask a share of the node each (--cpus-per-task=n/2, job and step alike): asking p each, the job fit no node and
    failed."""
    n = os.cpu_count()
    journal = os.path.join(tmp, f"mmgp-slurm-par4-{os.getpid()}.jsonl")
    try:
        r = subprocess.run([MMGP, "tune", "qs20", "--set", "platform.apus=4096", "--m", "2", "--p", str(n),
                            "--launcher", "srun", "--oversubscribe", "--parallel", "2", "--max-cost", "none",
                            "--max-runs", "2", "--journal", journal, "--json", "--quiet", "--", "sh", "-c", SLEEP],
                           env=slurm.env, capture_output=True, text=True, timeout=120)
        check(r.returncode == 0, f"tune --oversubscribe with sbatch: exit 0 ({r.stderr.strip()[-300:]})")
        if r.returncode == 0:
            big = [x for x in sf.journal_runs(journal) if (x["m"], x["p"]) == (2, n)]
            share = f"--cpus-per-task={max(1, n // 2)}"
            check(big and all(x["outcome"] == "ok" and x["command"].count(share) == 2 for x in big),
                  f"tune --oversubscribe with sbatch: m=2 p={n} on {n} CPUs ran, job and step asking {share} "
                  f"({[(x['outcome'], x['command']) for x in big]})")
    finally:
        if os.path.exists(journal):
            os.remove(journal)


def parallel_steps(slurm, tmp):
    """1. Two one-CPU runs at once in a two-CPU allocation: job steps on CPUs of their own."""
    journal = os.path.join(tmp, f"mmgp-slurm-par1-{os.getpid()}.jsonl")
    cpus_file = journal + ".cpus"
    try:
        prog = f"echo $SLURM_STEP_ID $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status) >> {cpus_file}; sleep 0.3"
        # No cost cap: with one configuration it would stop at the first result and cancel the other run, which on a
        # loaded machine had not started its program yet (nothing to show of its CPUs).
        r = subprocess.run(["salloc", "-N", "1", "-n", "2", MMGP, "tune", "qs20", "--m", "1", "--p", "1", "--launcher", "srun",
                            "--parallel", "2", "--max-runs", "6", "--max-cost", "none", "--journal", journal, "--json",
                            "--quiet", "--", "sh", "-c", prog],
                           env=slurm.env, capture_output=True, text=True, timeout=240)
        check(r.returncode == 0, f"tune --parallel 2 inside salloc: exit 0 ({r.stderr.strip()[-300:]})")
        if r.returncode == 0:
            j, runs = json.loads(r.stdout), sf.journal_runs(journal)
            pairs = [(x, y) for i, x in enumerate(runs) for y in runs[i + 1:] if sf.overlap(x, y)]
            check(len(pairs) >= 1, f"tune --parallel 2: runs in flight at once ({len(pairs)} overlapping pairs of {len(runs)} runs)")
            check(all(x["command"].startswith("srun --exclusive -w ") for x in runs),
                  "tune --parallel 2: every run a job step with CPUs of its own (srun --exclusive -w NODE)")
            check(j["elapsed_s"] < j["machine_s"], f"tune --parallel 2: decided after {j['elapsed_s']:.2f} s, "
                                                   f"below its {j['machine_s']:.2f} machine s")
            seen = [line.split() for line in open(cpus_file).read().split("\n") if line.strip()]
            by_step = {}
            for step, cpus in seen:
                by_step[step] = cpus_of(cpus)
            steps = {x["run"]: x for x in runs}
            check(all(len(c) == 1 for c in by_step.values()), f"tune --parallel 2: each step bound to one CPU ({by_step})")
            # Steps are numbered in the order srun created them; runs in flight at once got different CPUs.
            check(len(set().union(*by_step.values())) == 2 if by_step else False,
                  f"tune --parallel 2: the two CPUs of the allocation both used ({by_step})")
            check(len(steps) == len(runs), "tune --parallel 2: every run journaled once")
    finally:
        for f in (journal, cpus_file):
            if os.path.exists(f):
                os.remove(f)


def parallel_whole_node(slurm, tmp):
    """2. The whole-node configurations never beside another run; the best chosen; the step that does not fit failed."""
    journal = os.path.join(tmp, f"mmgp-slurm-par2-{os.getpid()}.jsonl")
    try:
        r = subprocess.run(["salloc", "-N", "1", "-n", "2", MMGP, "tune", "qs20", "--m", "1:2", "--p", "1:2", "--launcher", "srun",
                            "--parallel", "2", "--max-runs", "16", "--journal", journal, "--json", "--quiet", "--",
                            "sh", "-c", SLEEP], env=slurm.env, capture_output=True, text=True, timeout=240)
        check(r.returncode == 0, f"tune --parallel 2, m and p in 1..2: exit 0 ({r.stderr.strip()[-300:]})")
        if r.returncode == 0:
            j, runs = json.loads(r.stdout), sf.journal_runs(journal)
            chosen = (j["chosen"]["m"], j["chosen"]["p"]) if j["chosen"] else None
            check(chosen == (1, 2), f"tune --parallel 2: chooses m=1 p=2 ({chosen}, stop: {j['stop']})")
            whole = [x for x in runs if x["m"] * x["p"] >= 2 and x["outcome"] != "failed"]
            bad = [(x["run"], y["run"]) for x in whole for y in runs if y is not x and sf.overlap(x, y)]
            check(whole and not bad, f"tune --parallel 2: {len(whole)} runs needing both CPUs, none beside another ({bad})")
            big = [x for x in runs if (x["m"], x["p"]) == (2, 2)]
            check(all(x["outcome"] == "failed" for x in big), f"tune --parallel 2: m=2 p=2 recorded as failed ({[x['outcome'] for x in big]})")
    finally:
        if os.path.exists(journal):
            os.remove(journal)


def parallel_steps_oversubscribed(slurm, tmp):
    """2b. Inside a two-CPU allocation with --oversubscribe: m=2 p=2, more threads than CPUs, runs as a step whose
    tasks ask a CPU each (--cpus-per-task=1, unbound), both CPUs between them. Told nothing of the CPUs, the step
    asked p each with --overcommit, which Slurm allocates once for all the node's tasks (on a larger node: m tasks
    on p CPUs, the rest idle)."""
    journal = os.path.join(tmp, f"mmgp-slurm-par2b-{os.getpid()}.jsonl")
    cpus_file = journal + ".cpus"
    try:
        prog = f"echo $SLURM_STEP_ID $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status) >> {cpus_file}; sleep 0.2"
        r = subprocess.run(["salloc", "-N", "1", "-n", "2", MMGP, "tune", "qs20", "--m", "2", "--p", "2", "--launcher", "srun",
                            "--oversubscribe", "--parallel", "2", "--max-runs", "2", "--max-cost", "none", "--journal", journal,
                            "--json", "--quiet", "--", "sh", "-c", prog],
                           env=slurm.env, capture_output=True, text=True, timeout=120)
        check(r.returncode == 0, f"tune --oversubscribe inside salloc: exit 0 ({r.stderr.strip()[-300:]})")
        if r.returncode == 0:
            runs = sf.journal_runs(journal)
            check(runs and all(x["outcome"] == "ok" and "--cpus-per-task=1 " in x["command"] and "--overcommit" not in x["command"]
                               for x in runs),
                  f"tune --oversubscribe inside salloc: m=2 p=2 ran, a CPU a task "
                  f"({[(x['outcome'], x['command']) for x in runs]})")
            by_step = {}
            for step, cpus in (line.split() for line in open(cpus_file).read().split("\n") if line.strip()):
                by_step.setdefault(step, set()).update(cpus_of(cpus))
            check(by_step and all(len(c) == 2 for c in by_step.values()),
                  f"tune --oversubscribe inside salloc: each step's 2 tasks over both CPUs ({by_step})")
    finally:
        for f in (journal, cpus_file):
            if os.path.exists(f):
                os.remove(f)


def parallel_batch_jobs(slurm, tmp):
    """3. Outside an allocation: each run its own batch job. m=2 p=2 fits no node: failed, no job. The first run of
    m=2 p=1 cancels its own job (as an operator's scancel would): recorded as cancelled, and run again later."""
    journal = os.path.join(tmp, f"mmgp-slurm-par3-{os.getpid()}.jsonl")
    marker = journal + ".cancelled-once"
    try:
        prog = (f"if [ {{m}} = 2 ] && [ {{p}} = 1 ] && mkdir {marker} 2>/dev/null; then scancel $SLURM_JOB_ID; sleep 30; fi; "
                + SLEEP)
        r = subprocess.run([MMGP, "tune", "qs20", "--m", "1:2", "--p", "1:2", "--launcher", "srun", "--parallel", "2", "--max-cost", "none",
                            "--max-runs", "16", "--journal", journal, "--json", "--quiet", "--", "sh", "-c", prog],
                           env=slurm.env, capture_output=True, text=True, timeout=240)
        check(r.returncode == 0, f"tune --parallel 2 with sbatch: exit 0 ({r.stderr.strip()[-300:]})")
        if r.returncode == 0:
            j, runs = json.loads(r.stdout), sf.journal_runs(journal)
            chosen = (j["chosen"]["m"], j["chosen"]["p"]) if j["chosen"] else None
            check(chosen == (1, 2), f"tune with sbatch: chooses m=1 p=2 ({chosen}, stop: {j['stop']})")
            ran = [x for x in runs if (x["m"], x["p"]) != (2, 2)]
            check(all(x["command"].startswith("stdbuf -o0 sbatch --wait ") for x in ran),
                  f"tune with sbatch: every run a batch job ({sorted(set(x['outcome'] for x in runs))})")
            big = [x for x in runs if (x["m"], x["p"]) == (2, 2)]
            check(big and all(x["outcome"] == "failed" and x["command"].startswith("(none") for x in big),
                  f"tune with sbatch: m=2 p=2 failed without a job ({[(x['outcome'], x['command'][:40]) for x in big]})")
            # Journal lines are in the order runs finish: with two runs in flight, a run of m=2 p=1 started after
            # the cancelling one (the marker already made) can finish first, while scancel's job winds down.
            m2 = [x["outcome"] for x in runs if (x["m"], x["p"]) == (2, 1)]
            check(m2.count("cancelled") == 1 and "ok" in m2[m2.index("cancelled") + 1:],
                  f"tune with sbatch: the job cancelled from outside recorded as cancelled, the configuration run again "
                  f"({[(x['outcome'], x.get('job_state')) for x in runs if (x['m'], x['p']) == (2, 1)]})")
            check(not os.path.exists(journal + ".jobs"), "tune with sbatch: no job file left")
        for _ in range(150):  # a job cancelled at the decision stays COMPLETING while Slurm cleans up
            q = subprocess.run(["squeue", "-h"], env=slurm.env, capture_output=True, text=True)
            if q.returncode != 0 or not q.stdout.strip():
                break
            time.sleep(0.1)
        check(q.returncode == 0 and not q.stdout.strip(), f"tune with sbatch: no job left in the queue ({q.stdout.strip()})")
    finally:
        for f in (journal, marker):
            if os.path.isdir(f):
                os.rmdir(f)
            elif os.path.exists(f):
                os.remove(f)


def two_node_cases():
    why = sf.missing(nodes=2)
    if why:
        print(f"skipped (two emulated nodes): {why}")
        return
    with sf.SlurmCluster(nodes=2) as slurm:
        check(slurm.started_s <= 30, f"two emulated nodes: up and idle after {slurm.started_s:.2f} s")
        r = subprocess.run([MMGP, "launch", "pbpi-qs20", "--set", "platform.nodes=2", "--launcher", "srun", "--m", "1",
                            "--p", "1", "--nodes", "2", "--exec", "--", "sh", "-c",
                            "echo node=$(hostname) id=$SLURM_NODEID np={np}"],
                           env=slurm.env, capture_output=True, text=True, timeout=120)
        lines = sorted(line for line in r.stdout.split("\n") if line.startswith("node="))
        check(r.returncode == 0 and lines == [f"node={sf.NETNS}0 id=0 np=2", f"node={sf.NETNS}1 id=1 np=2"],
              f"launch --nodes 2: one task on each node ({lines}; {r.stderr.strip()[-200:]})")

        journal = os.path.join(os.path.dirname(sf.BASE), f"mmgp-slurm-2n-{os.getpid()}.jsonl")

        def tune(nodes, program):
            if os.path.exists(journal):
                os.remove(journal)
            r = subprocess.run(["salloc", "-N", "2", MMGP, "tune", "pbpi-qs20", "--set", "platform.nodes=2", "--m", "1",
                                "--p", "1", "--nodes", nodes, "--launcher", "srun", "--parallel", "2", "--max-runs", "12", "--max-cost", "none",
                                "--journal", journal, "--json", "--quiet", "--", "sh", "-c", program],
                               env=slurm.env, capture_output=True, text=True, timeout=240)
            check(r.returncode == 0, f"tune --parallel 2 on two nodes, nodes {nodes}: exit 0 ({r.stderr.strip()[-300:]})")
            if r.returncode != 0:
                return None, []
            runs = sf.journal_runs(journal)
            for x in runs:
                x["where"] = x["command"].split(" -w ")[1].split(" ")[0]
            return json.loads(r.stdout), runs

        try:
            # One one-node configuration: its runs two at once, each on a node of its own.
            j, runs = tune("1", "sleep 0.3")
            pairs = [(x["where"], y["where"]) for i, x in enumerate(runs) for y in runs[i + 1:] if sf.overlap(x, y)]
            check(pairs and all(a != b for a, b in pairs), f"tune on two nodes: runs in flight at once on different nodes ({pairs})")
            # One and two nodes, sleeping 0.05 + 0.15 nodes: one node is the best (against the prior's strong
            # scaling); the two-node runs take both nodes and run beside no other run.
            j, runs = tune("1:2", 'sleep $(awk "BEGIN{print 0.05+0.15*{nodes}}")')
            if j:
                chosen = j["chosen"]["nodes"] if j["chosen"] else None
                check(chosen == 1, f"tune on two nodes: chooses nodes=1 ({chosen}, stop: {j['stop']})")
                two = [x for x in runs if x["nodes"] == 2]
                check(two and all(x["where"] == f"{sf.NETNS}0,{sf.NETNS}1" for x in two) and
                      not [1 for x in two for y in runs if y is not x and sf.overlap(x, y)],
                      f"tune on two nodes: the {len(two)} two-node runs on both nodes, beside no other run")
        finally:
            if os.path.exists(journal):
                os.remove(journal)
    check(not sf.leftovers() and not sf.leftover_namespaces() and not os.path.exists(sf.BASE),
          f"two emulated nodes: no process, namespace or file left ({sf.leftovers()}, {sf.leftover_namespaces()})")


def main():
    why = sf.skip_reason("the launch cases")
    if why:
        print(f"skipped: {why}")
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
        more_threads_than_cores(slurm)
        oversubscribed_in_allocation(slurm, os.path.dirname(sf.BASE))

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
                runs = sf.journal_runs(journal)
                check(all(x["command"].startswith("srun ") for x in runs), "tune inside salloc: every run is an srun job step")
                big = [x for x in runs if (x["m"], x["p"]) == (2, 2)]
                check(all(x["outcome"] == "failed" for x in big), f"tune inside salloc: m=2 p=2 (4 CPUs in 2) recorded as failed ({[x['outcome'] for x in big]})")
        finally:
            if os.path.exists(journal):
                os.remove(journal)
        parallel_cases(slurm)
    check(not sf.leftovers(), f"no fixture process left after stop ({sf.leftovers()})")
    check(not os.path.exists(sf.BASE), f"no fixture file left after stop ({sf.BASE})")

    two_node_cases()

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
    return check.status()


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        sf.clean()  # whatever happened above, no daemon outlives the test
