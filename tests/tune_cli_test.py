#!/usr/bin/env python3
"""mmgp tune end to end: replay of the plain CSV format, and a live program under the journal's promises —
killed at random points and resumed with nothing lost, a second tune on a journal refused, a torn last line
skipped, a failing program recorded and never used as a time, a run past its bound killed and recorded as
censored.

    python3 tests/tune_cli_test.py MMGP_BINARY
"""
import fcntl
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

MMGP = os.path.abspath(sys.argv[1])
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(args, **kw):
    return subprocess.run([MMGP] + args, capture_output=True, text=True, **kw)


def journal_lines(path):
    """A journal's lines after its header: its runs and any retry marks."""
    lines = [l for l in open(path).read().split("\n") if l.strip()]
    return [json.loads(l) for l in lines[1:]]


def journal_runs(path):
    """A journal's runs (its lines after the header but the marks a --retry-failed session writes)."""
    return [x for x in journal_lines(path) if "mark" not in x]


# A program whose time depends on the mapping: the best is m=2 p=2 (sleep seconds = f(m, p)).
PROGRAM = ["sh", "-c", "sleep $(awk 'BEGIN{printf \"%.3f\", 0.02 + 0.03*({m}-2)*({m}-2) + 0.02*({p}-2)*({p}-2)}')"]
SPACE = ["--m", "1:4", "--p", "1:3"]


def live(journal, max_runs=14):
    return [MMGP, "tune", "qs20", *SPACE, "--launcher", "local", "--no-bind", "--journal", journal,
            "--max-runs", str(max_runs), "--", *PROGRAM]


with tempfile.TemporaryDirectory() as tmp:
    # 1. Replay accepts the plain format (m, p, time_s; nothing else), and is reproducible with --seed.
    csv = os.path.join(tmp, "runs.csv")
    with open(csv, "w") as f:
        f.write("m,p,time_s\n")
        rng = random.Random(1)
        for m in (1, 2, 4):
            for p in (1, 2):
                for _ in range(3):
                    f.write(f"{m},{p},{(1.0 / m + 0.3 * m + 0.1 * p) * (1 + 0.02 * rng.random()):.4f}\n")
    r1 = run(["tune", "qs20", "--replay", csv, "--seed", "3", "--json", "--quiet"])
    r2 = run(["tune", "qs20", "--replay", csv, "--seed", "3", "--json", "--quiet"])
    check(r1.returncode == 0, f"replay of the plain CSV: exit 0 ({r1.stderr.strip()[:200]})")
    if r1.returncode == 0:
        j = json.loads(r1.stdout)
        # true times 1/m + 0.3m + 0.1p: m=2 p=1 (1.2) is the best
        check(j["chosen"] is not None and (j["chosen"]["m"], j["chosen"]["p"]) == (2, 1),
              f"replay chooses the best configuration m=2 p=1 (chose {j['chosen']})")
        check(len(j["configurations"]) == 6, "replay: the space is the file's configurations (6)")
        check(r1.stdout == r2.stdout, "replay with the same --seed gives the same result")

    # 2. A live tune, killed at random points, resumed until it finishes: no run lost, none repeated.
    jpath = os.path.join(tmp, "journal.jsonl")
    rng = random.Random(7)
    kills, seen = 0, 0
    p = subprocess.Popen(live(jpath), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for attempt in range(12):
        try:
            out, err = p.communicate(timeout=rng.uniform(0.05, 0.6))
            break
        except subprocess.TimeoutExpired:
            p.send_signal(random.Random(attempt).choice([signal.SIGKILL, signal.SIGINT, signal.SIGTERM]))
            p.communicate()
            kills += 1
            if not os.path.exists(jpath):
                # Killed before the new tune wrote its header (a slow start, as in a sanitizer build): there is
                # nothing to resume, and nothing may have been lost; the user runs the same command again.
                check(seen == 0, f"kill {kills}: no journal yet, so none lost ({seen} runs recorded before)")
                p = subprocess.Popen(live(jpath), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                continue
            runs = journal_runs(jpath)
            check(len(runs) >= seen, f"kill {kills}: the journal keeps its {seen} earlier runs ({len(runs)} now)")
            check([r["run"] for r in runs] == list(range(1, len(runs) + 1)), f"kill {kills}: runs numbered 1..n, none repeated")
            seen = len(runs)
            p = subprocess.Popen([MMGP, "tune", "--resume", jpath], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    else:
        out, err = p.communicate()
    check(p.returncode == 0, f"the resumed tune finishes (exit {p.returncode}: {err.strip()[-200:]})")
    check(kills >= 1, f"the loop was killed at least once ({kills})")
    runs = journal_runs(jpath)
    check(len(runs) >= seen and len(runs) <= 14, f"runs kept across {kills} kills: {len(runs)} (budget 14)")
    check(all(r["outcome"] in ("ok", "censored") for r in runs), "every run recorded with its outcome")
    check("m=2 p=2" in out, "the live tune chooses m=2 p=2 (" + next((l for l in out.split("\n") if l.startswith("chosen")), "?") + ")")
    check("launch: " in out, "the result gives the launch line")

    # 2b. A new tune crashed (SIGKILL) in its first milliseconds: no journal, or one whose first line is its whole
    # header — never an empty file that the corrected command would call existing and --resume could not read.
    cpath = os.path.join(tmp, "crash.jsonl")
    shapes = set()
    for attempt in range(20):
        if os.path.exists(cpath):
            os.remove(cpath)
        p = subprocess.Popen(live(cpath), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(random.Random(100 + attempt).uniform(0.0, 0.04))
        p.send_signal(signal.SIGKILL)
        p.communicate()
        if not os.path.exists(cpath):
            shapes.add("none")
            continue
        text = open(cpath).read()
        first = text.split("\n", 1)[0]
        ok = bool(first) and text.count("\n") >= 1 and "mmgp_tune" in json.loads(first)
        shapes.add("header")
        check(ok, f"crash {attempt}: the journal left starts with its whole header ({text[:80]!r})")
    print(f"crashed new tunes left: {sorted(shapes)}")

    # 2c. A tune killed with SIGKILL (which it cannot catch) takes its run in flight with it: its guard kills the
    # run's process group. Once the program went on running, on the machine being tuned.
    gpath, pidfile = os.path.join(tmp, "guard.jsonl"), os.path.join(tmp, "guarded.pid")
    p = subprocess.Popen([MMGP, "tune", "qs20", "--m", "1:2", "--p", "1", "--launcher", "local", "--no-bind",
                          "--journal", gpath, "--max-runs", "2", "--", "sh", "-c", f"echo $$ > {pidfile}; exec sleep 60"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t_end = time.monotonic() + 30
    while not (os.path.exists(pidfile) and open(pidfile).read().strip()) and time.monotonic() < t_end:
        time.sleep(0.01)
    prog = int(open(pidfile).read()) if os.path.exists(pidfile) else 0
    p.send_signal(signal.SIGKILL)
    p.communicate(timeout=30)  # its pipes close: neither the run nor the guard holds them

    def gone(pid):
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            return True
    t_end = time.monotonic() + 5
    while prog and not gone(prog) and time.monotonic() < t_end:
        time.sleep(0.01)
    check(prog > 0 and gone(prog), f"a tune killed with SIGKILL: its run's program (pid {prog}) ends with it")
    if prog and not gone(prog):
        os.kill(prog, signal.SIGKILL)

    # 3. A second tune on a journal in use is refused (the lock), after a grace of 2 s for a lock released a
    # moment later (a tune killed a moment ago: a child it forked holds the lock until its exec).
    jl = os.path.join(tmp, "held.jsonl")
    slow = subprocess.Popen([MMGP, "tune", "qs20", *SPACE, "--launcher", "local", "--no-bind", "--journal", jl, "--max-runs", "3",
                             "--", "sh", "-c", "sleep 30"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t_end = time.monotonic() + 20
    while not os.path.exists(jl) and time.monotonic() < t_end:
        time.sleep(0.05)
    second = run(["tune", "--resume", jl])
    check(second.returncode == 2 and "locked by another" in second.stderr, f"a second tune on the journal: exit 2, 'locked' ({second.returncode}: {second.stderr.strip()})")
    slow.send_signal(signal.SIGINT)
    slow.communicate(timeout=30)
    j2 = os.path.join(tmp, "locked.jsonl")
    first = subprocess.Popen(live(j2, 40), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    first.send_signal(signal.SIGINT)
    out, err = first.communicate()
    check(first.returncode == 128 + signal.SIGINT or first.returncode == -signal.SIGINT, f"SIGINT stops the tune by the signal ({first.returncode})")
    check("--resume" in err, "the interrupt says how to continue")
    j3 = os.path.join(tmp, "released.jsonl")
    shutil.copy(j2, j3)
    holder = open(j3)
    fcntl.flock(holder, fcntl.LOCK_EX)
    t0 = time.monotonic()
    held = run(["tune", "--resume", j3])
    waited = time.monotonic() - t0
    check(held.returncode == 2 and "locked by another" in held.stderr and waited >= 1.9,
          f"a journal locked throughout: exit 2, 'locked', after the grace ({held.returncode}, {waited:.2f} s)")
    threading.Timer(0.5, holder.close).start()  # closing the file releases its lock
    released = run(["tune", "--resume", j3, "--quiet"], timeout=120)
    check(released.returncode == 0, f"a lock released 0.5 s into the resume's wait: it goes on (exit {released.returncode}: {released.stderr.strip()[-200:]})")

    # 4. A torn last line (an interrupted write) is reported and skipped; the earlier runs are kept.
    before = journal_runs(j2)
    with open(j2, "a") as f:
        f.write('{"run": 99, "m": 2, "p"')
    r = run(["tune", "--resume", j2])
    check(r.returncode == 0 and "torn" in r.stderr, f"torn last line: reported and skipped (exit {r.returncode})")
    after = journal_runs(j2)
    check(after[:len(before)] == before, "torn last line: every earlier run kept")

    # 5. A bad line before the end is bad input: one line, exit 2.
    bad = os.path.join(tmp, "bad.jsonl")
    lines = open(j2).read().split("\n")
    lines[1] = "not json"
    open(bad, "w").write("\n".join(lines))
    r = run(["tune", "--resume", bad])
    check(r.returncode == 2 and r.stderr.count("\n") == 1 and "line 2" in r.stderr, f"a bad middle line: one line naming it, exit 2 ({r.stderr.strip()})")

    # 6. A failing program is recorded and never used as a time.
    j3 = os.path.join(tmp, "fail.jsonl")
    r = subprocess.run([MMGP, "tune", "qs20", "--m", "1:2", "--p", "1", "--journal", j3, "--no-bind", "--",
                        "sh", "-c", "test {m} -eq 1 && exit 3; sleep 0.05"], capture_output=True, text=True)
    runs = journal_runs(j3)
    failed = [x for x in runs if x["outcome"] == "failed"]
    check(len(failed) >= 1 and all(x["exit"] == 3 and x["m"] == 1 for x in failed), "a failing run: recorded as failed with its exit status")
    check(r.returncode == 0 and "chosen: m=2 p=1" in r.stdout, "a failing configuration is never chosen")

    # 6b. A program that cannot run at all: its first three runs fail alike and none succeeds: exit 2, one line,
    # the journal kept with those runs; a program that does not exist is refused before any run, no journal.
    j4 = os.path.join(tmp, "never.jsonl")
    r = run(["tune", "qs20", "--m", "1:4", "--p", "1", "--journal", j4, "--no-bind", "--quiet", "--", "sh", "-c", "exit 7"])
    runs = journal_runs(j4)
    check(r.returncode == 2 and r.stderr.count("\n") == 1 and "exit status 7 and none succeeded" in r.stderr and
          len(runs) == 3 and all(x["outcome"] == "failed" and x["exit"] == 7 for x in runs),
          f"a program that never runs: exit 2 after three failed runs, journal kept ({r.returncode}: {r.stderr.strip()})")
    # 6c. --resume: the journal's values get the command line's checks; an option beside --resume is refused.
    lines = open(j3).read().splitlines()
    header, first = json.loads(lines[0]), json.loads(lines[1])
    def variant(name, head, runs):
        path = os.path.join(tmp, name)
        open(path, "w").write("\n".join(json.dumps(x) for x in [head] + runs) + "\n")
        return path
    bad_tol = dict(header, options=dict(header["options"], tolerance=5))
    for path, what, frag in [
            (variant("tol.jsonl", bad_tol, [first]), "a tolerance of 5", "/options/tolerance: expected a number in (0, 1]"),
            (variant("m.jsonl", header, [dict(first, m=1.5)]), "m = 1.5", "/m: expected an integer >= 1"),
            (variant("pol.jsonl", header, [dict(first, policy="fifo")]), "an unknown policy", "/policy: expected edtlp or os"),
            (variant("dup.jsonl", header, [first, first]), "a run line twice", "expected each run recorded once"),
            (variant("wall.jsonl", header, [dict(first, wall_s=1e308)]), "a wall time of 1e308 s", "/wall_s: expected a wall time"),
            (variant("costhead.jsonl", dict(header, options=dict(header["options"], max_cost="-5")), [first]),
             "a cost cap of -5 (once named at /options/constants)", "line 1, /options/max_cost: --max-cost: expected"),
            (variant("parhead.jsonl", dict(header, options=dict(header["options"], parallel=2)), [first]),
             "--parallel 2 with the local launcher (once named by no file)", "line 1, /options/parallel: --parallel: expected"),
            (variant("ok0.jsonl", header, [dict(first, outcome="ok", censored=False, exit=0, wall_s=0)]),
             "a finished run of 0 s (once counted as failed)", "/wall_s: expected a finished run's wall time"),
            (variant("ok3.jsonl", header, [dict(first, outcome="ok", censored=False, exit=3)]),
             "a finished run that exited 3", "/exit: expected 0, a finished run's exit status"),
            (variant("const.jsonl", dict(header, options=dict(header["options"], constants=["noise.sd=5"])), [first]),
             "a noise constant of 5", '--constant noise.sd: expected a number in [0.0001, 2], found "5"')]:
        before = open(path).read()
        r = run(["tune", "--resume", path])
        check(r.returncode == 2 and r.stderr.count("\n") == 1 and frag in r.stderr and open(path).read() == before,
              f"--resume with {what}: refused, one line, journal unchanged ({r.stderr.strip()})")
    # The tuner's constants: kept in the header, and a resumed tune goes on with them.
    j4 = os.path.join(tmp, "constants.jsonl")
    r = run(["tune", "qs20", "--m", "1:2", "--p", "1", "--journal", j4, "--no-bind", "--max-runs", "2",
             "--constant", "noise.dof=2", "--constant", "fit.min_configurations=3", "--set", "platform.T_csw=3e-6",
             "--", "sh", "-c", "sleep 0.0{m}"])
    head = json.loads(open(j4).readline()) if os.path.exists(j4) else {}
    check(r.returncode == 0 and head.get("options", {}).get("constants") == ["noise.dof=2", "fit.min_configurations=3"],
          f"--constant (and --set) before --: kept in the journal's header ({head.get('options', {}).get('constants')}, {r.stderr.strip()[-200:]})")
    no_constants = dict(header, options={k: v for k, v in header["options"].items() if k != "constants"})
    r = run(["tune", "--resume", variant("old.jsonl", no_constants, [first]), "--max-runs", "2"][:3])
    check(r.returncode == 0, f"a journal from before --constant resumes with the defaults ({r.stderr.strip()[-200:]})")
    # The cost cap and the uses: bad values refused in one line; the cap and the expected regret in the result.
    for args, frag in [(["--max-cost", "cheap"], "--max-cost: expected exhaustive, none or a positive number"),
                       (["--max-cost", "-5"], "--max-cost: expected exhaustive, none or a positive number"),
                       (["--uses", "3", "--objective", "node-hours"], "--uses: expected with --objective time")]:
        r = run(["tune", "qs20", "--replay", csv] + args + ["--json", "--quiet"])
        check(r.returncode == 2 and r.stderr.count("\n") == 1 and frag in r.stderr and not r.stdout,
              f"tune {' '.join(args)}: refused, one line ({r.stderr.strip()})")
    r = run(["tune", "qs20", "--replay", csv, "--seed", "3", "--max-cost", "none", "--uses", "1", "--json", "--quiet"])
    j = json.loads(r.stdout) if r.returncode == 0 else {}
    check(j.get("stop") == "one more run would cost more than it is expected to save" and j.get("uses") == 1 and
          j.get("cap_s") is None and j.get("expected_regret", -1) >= 0,
          f"--uses 1: stops when one more run costs more than it saves ({j.get('stop')}, {r.stderr.strip()[:200]})")
    r = run(["tune", "qs20", "--replay", csv, "--seed", "3", "--json", "--quiet"])
    j = json.loads(r.stdout) if r.returncode == 0 else {}
    check(j.get("cap_s") is not None and j["machine_s"] <= j["cap_s"] * 1.5,
          f"the default cap: the estimate of running every configuration once ({j.get('cap_s')}, {j.get('machine_s')})")
    r = run(["tune", "--resume", j3, "--max-runs", "9"])
    check(r.returncode == 2 and "found --max-runs" in r.stderr, f"--resume with another option: refused ({r.stderr.strip()})")

    # 6c'. A failure that follows the configuration is named (after the second such failure); --retry-failed on
    # --resume runs the failed configurations again.
    j7 = os.path.join(tmp, "ranks.jsonl")
    r = run(["tune", "qs20", "--m", "1:4", "--p", "1:2", "--journal", j7, "--no-bind", "--max-runs", "8", "--",
             "sh", "-c", "sleep 0.05; test {m} -eq 1"])
    failed = sum('"outcome":"failed"' in line for line in open(j7)) if os.path.exists(j7) else 0
    # p is named too where, after some failed run, the failures so far all had p > 1 and the runs that ran p = 1: the
    # order the tune chose (times on a loaded machine reorder it) decides, so the journal's order says which.
    runs7 = journal_runs(j7) if os.path.exists(j7) else []
    p_named = any(len(f) >= 2 and all(x["p"] > 1 for x in f) and ran and all(x["p"] == 1 for x in ran)
                  for f, ran in (([x for x in runs7[:k] if x["outcome"] == "failed"],
                                  [x for x in runs7[:k] if x["outcome"] in ("ok", "censored")])
                                 for k in range(1, len(runs7) + 1) if runs7[k - 1]["outcome"] == "failed"))
    check(r.returncode == 0 and r.stderr.count("failed runs all have m > 1") == 1 and
          r.stderr.count("failed runs all have p > 1") == int(p_named) and failed >= 2,
          f"failures only with m > 1: named once, p {'named once' if p_named else 'never'} as the runs' order has it "
          f"({failed} failed; {r.stderr.strip()[-400:]})")
    r = run(["tune", "--resume", j7, "--retry-failed", "--quiet"])
    again = sum('"outcome":"failed"' in line for line in open(j7)) if os.path.exists(j7) else 0
    check(r.returncode == 0 and again > failed, f"--resume --retry-failed runs the failed configurations again "
          f"({failed} -> {again} failed runs)")
    r = run(["tune", "qs20", "--retry-failed", "--", "true"])
    check(r.returncode == 2 and "--retry-failed: expected with --resume" in r.stderr, "--retry-failed alone: refused")
    # A plain --resume after a --retry-failed one sets the retried failures aside as that one did (once counted
    # again: the fixed configuration, the fastest, was out again and another chosen).
    j8, fixed = os.path.join(tmp, "fixed.jsonl"), os.path.join(tmp, "fixed")
    prog = (f"if [ {{m}} -eq 2 ] && [ ! -e {fixed} ]; then exit 5; fi; "
            "if [ {m} -eq 2 ]; then sleep 0.05; else sleep 0.3; fi")
    r = run(["tune", "qs20", "--m", "1:4", "--p", "1", "--no-bind", "--journal", j8, "--quiet", "--json", "--",
             "sh", "-c", prog])
    first = (json.loads(r.stdout).get("chosen") or {}).get("m") if r.returncode == 0 else None
    open(fixed, "w").close()
    r = run(["tune", "--resume", j8, "--retry-failed", "--quiet", "--json"])
    retried = (json.loads(r.stdout).get("chosen") or {}).get("m") if r.returncode == 0 else None
    r = run(["tune", "--resume", j8, "--quiet", "--json"])
    plain = (json.loads(r.stdout).get("chosen") or {}).get("m") if r.returncode == 0 else None
    marked = sum('"retries_failed_before"' in line for line in open(j8)) if os.path.exists(j8) else 0
    check(first != 2 and retried == 2 and plain == 2 and marked >= 1,
          f"--resume after --resume --retry-failed: the same choice (m={first}, then {retried}, then {plain}; "
          f"{marked} lines marked; {r.stderr.strip()[-200:]})")

    # A --retry-failed session interrupted in its first run (none recorded) leaves its mark: a plain --resume
    # then runs the failed configuration again, as the retry session would have (without the mark it counted the
    # failure again and never ran that configuration).
    j9, fixed9, started9 = (os.path.join(tmp, n) for n in ("mark.jsonl", "fixed9", "started9"))
    prog9 = (f"if [ {{m}} -eq 2 ] && [ ! -e {fixed9} ]; then exit 5; fi; "
             f"if [ {{m}} -eq 2 ] && [ ! -e {started9} ]; then touch {started9}; sleep 30; fi; sleep 0.05")
    r = run(["tune", "qs20", "--m", "1:4", "--p", "1", "--no-bind", "--journal", j9, "--max-runs", "4", "--quiet",
             "--", "sh", "-c", prog9])
    before = journal_runs(j9) if os.path.exists(j9) else []
    open(fixed9, "w").close()
    retry = subprocess.Popen([MMGP, "tune", "--resume", j9, "--retry-failed", "--quiet"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 30
    while not os.path.exists(started9) and time.time() < deadline and retry.poll() is None:
        time.sleep(0.05)
    retry.send_signal(signal.SIGINT)
    retry.communicate(timeout=30)
    lines9 = journal_lines(j9)
    marks = [x for x in lines9 if "mark" in x]
    r = run(["tune", "--resume", j9, "--quiet", "--json"], timeout=60)
    after = journal_runs(j9)
    m2 = [x["outcome"] for x in after if x["m"] == 2]
    check(len(before) == 4 and [x["outcome"] for x in before if x["m"] == 2] == ["failed"] and
          retry.returncode in (128 + signal.SIGINT, -signal.SIGINT) and len([x for x in lines9 if "run" in x]) == 4 and
          [x.get("retries_failed_before") for x in marks] == [5] and r.returncode == 0 and m2 == ["failed", "ok"],
          f"--retry-failed interrupted before its first run ended: its mark (retries_failed_before 5) sets the failure "
          f"aside for a plain --resume, which runs m=2 again (exit {retry.returncode}, marks {marks}, m=2 runs {m2}; "
          f"{r.stderr.strip()[-200:]})")

    # 6d. The program's own output stays out of mmgp's stdout: --json is one document.
    j6 = os.path.join(tmp, "chatty.jsonl")
    r = run(["tune", "qs20", "--m", "1:2", "--p", "1", "--journal", j6, "--no-bind", "--quiet", "--json", "--max-runs", "3",
             "--", "echo", "program output"])
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        doc = None
    runs = [json.loads(line) for line in open(j6).read().splitlines()[1:]] if os.path.exists(j6) else []
    logged = [open(x["log"]).read() if os.path.exists(x.get("log", "")) else "" for x in runs]
    check(r.returncode == 0 and doc is not None and doc.get("kind") == "tune" and "program output" not in r.stderr
          and runs and all("program output" in text for text in logged)
          and all(os.path.dirname(x["log"]) == j6 + ".logs" for x in runs),
          "a program that prints: its output in one log per run beside the journal (named by its journal line), "
          "not on stderr; --json one document")

    # --plot never over the program, a file its command names, or a run's log (once: the program overwritten, exit 0).
    prog = os.path.join(tmp, "prog.sh")
    with open(prog, "w") as f:
        f.write("#!/bin/sh\nexit 0\n")
    os.chmod(prog, 0o755)
    data = os.path.join(tmp, "in.txt")
    with open(data, "w") as f:
        f.write("input\n")
    new_tune = ["tune", "qs20", "--m", "1:2", "--p", "1", "--journal", os.path.join(tmp, "plot.jsonl")]
    logged_plot = os.path.join(j6 + ".logs", "plot.svg")
    for plot, args in ((prog, new_tune + ["--plot", prog, "--", prog]),
                       (data, new_tune + ["--plot", data, "--", "sh", "-c", "true", data]),
                       (logged_plot, ["tune", "--resume", j6, "--plot", logged_plot])):
        before = open(plot).read() if os.path.exists(plot) else None
        r = run(args)
        after = open(plot).read() if os.path.exists(plot) else None
        check(r.returncode == 2 and r.stderr.count("\n") == 1 and after == before,
              f"--plot {os.path.basename(plot)} over what the tune runs or logs: refused, the file intact ({r.stderr.strip()})")

    # A command of 900 kB: the journal keeps it once and stays readable by its own --resume (once 19 MB, refused).
    jb = os.path.join(tmp, "big.jsonl")
    r = run(["tune", "qs20", "--m", "1:4", "--p", "1:3", "--journal", jb, "--quiet", "--no-bind", "--", "sh", "-c", "true"]
            + ["x" * 100000] * 9)
    size = os.path.getsize(jb) if os.path.exists(jb) else 0
    resumed = run(["tune", "--resume", jb, "--quiet"])
    check(r.returncode == 0 and 0 < size < 2 * 900000 and resumed.returncode == 0,
          f"a 900 kB command: journal {size} bytes, resumable ({r.returncode}, {resumed.returncode}: {resumed.stderr.strip()[-200:]})")
    r = run(["tune", "qs20", "--m", "1:4", "--p", "1:3", "--journal", os.path.join(tmp, "big2.jsonl"), "--quiet", "--",
             "sh", "-c", "true"] + ["y" * 100000] * 11)
    check(r.returncode == 2 and "at most 1 MiB" in r.stderr and not os.path.exists(os.path.join(tmp, "big2.jsonl")),
          f"a command over 1 MiB: refused before any run, no journal ({r.stderr.strip()})")

    # On a GPU platform the runs are launched as mmgp launch launches the mode (once OMP_NUM_THREADS=p, no
    # MMGP_SHARING): one host thread, the sharing mode, under MPS the clients' percentage; --set chooses the mode.
    gpu = os.path.join(tmp, "gpu.json")
    json.dump({"schema": "mmgp/1", "kind": "platform", "name": "gpu", "hpu_contexts": 16, "apus": 132,
               "O_offload": 9e-6, "T_csw": 1e-6, "alpha": 1.0, "sharing": ["mps", "time_sliced"],
               "T_slice_switch": 1e-4}, open(gpu, "w"))
    for mode, pct in (("mps", "51"), ("time_sliced", "")):
        jg = os.path.join(tmp, f"gpu-{mode}.jsonl")
        # --bound-factor 1000: these runs of a few milliseconds are not stopped at 3x the first one's time when the
        # machine is loaded (a run stopped before any of its processes wrote leaves nothing to check).
        r = run(["tune", gpu, "--set", f'search.sharing=["{mode}"]', "--m", "1:2", "--p", "66:67", "--launcher", "local",
                 "--journal", jg, "--max-runs", "2", "--bound-factor", "1000", "--quiet", "--",
                 "sh", "-c", "echo $MMGP_SHARING/$CUDA_MPS_ACTIVE_THREAD_PERCENTAGE/$OMP_NUM_THREADS"])
        runs = journal_runs(jg)
        # Every line a run's processes wrote is the environment expected for its p. (A run of these millisecond
        # processes can be stopped at its bound before all m of them wrote: at least one line per run.)
        logs = [open(x["log"]).read().split() for x in runs if os.path.exists(x.get("log", ""))]
        want = [f"{mode}/{'51' if x['p'] == 67 else '50'}/1" if mode == "mps" else f"{mode}//1" for x in runs]
        # The launch block: from "launch: " to the blank line after it (the local launcher's lines are several).
        launch = r.stdout[r.stdout.find("launch: "):] if "launch: " in r.stdout else ""
        launch = launch.split("\n\n")[0]
        check(r.returncode == 0 and len(logs) == len(runs) == len(want) and
              all(lines and all(line == w for line in lines) for lines, w in zip(logs, want)) and
              f"MMGP_SHARING={mode}" in launch and
              "OMP_NUM_THREADS=1 " in launch and (f"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=" in launch) == (mode == "mps"),
              f"a GPU platform's runs under {mode}: the environment of mmgp launch ({logs} vs {want}; {launch[:300]})")

    j5 = os.path.join(tmp, "missing.jsonl")
    r = run(["tune", "qs20", "--m", "1:2", "--p", "1", "--journal", j5, "--no-bind", "--", "./no-such-program-here"])
    check(r.returncode == 2 and not os.path.exists(j5) and "no such file" in r.stderr,
          f"a program that does not exist: refused before any run, no journal ({r.stderr.strip()})")

    # 7. A run past its bound is killed (its process group) and recorded as censored.
    j4 = os.path.join(tmp, "slow.jsonl")
    t0 = time.time()
    r = subprocess.run([MMGP, "tune", "qs20", "--m", "1", "--p", "1", "--journal", j4, "--timeout", "0.3", "--max-runs", "1",
                        "--no-bind", "--", "sh", "-c", "sleep 5; sleep 5"], capture_output=True, text=True)
    runs = journal_runs(j4)
    check(time.time() - t0 < 4 and len(runs) == 1 and runs[0]["outcome"] == "censored" and runs[0]["wall_s"] == 0.3,
          f"a run past its bound: killed at 0.3 s, censored ({runs})")

    # 8. An existing journal is not overwritten without --resume.
    r = run(["tune", "qs20", "--journal", j4, "--", "true"])
    check(r.returncode == 2 and "--resume" in r.stderr, f"an existing journal: refused, exit 2 ({r.stderr.strip()})")

    # 9. Runs in flight in replay (--parallel 2): every run journaled once as it ends, cancelled ones included;
    # the time to decision (runs laid out two at a time) below the machine time; the same choice as one at a time.
    j5 = os.path.join(tmp, "par.jsonl")
    r = run(["tune", "qs20", "--replay", csv, "--seed", "3", "--parallel", "2", "--journal", j5, "--json", "--quiet"])
    check(r.returncode == 0, f"replay --parallel 2: exit 0 ({r.stderr.strip()[:200]})")
    if r.returncode == 0:
        j, seq = json.loads(r.stdout), json.loads(r1.stdout)
        runs = journal_runs(j5)
        check(sorted(x["run"] for x in runs) == list(range(1, len(runs) + 1)) and len(runs) == j["runs"],
              f"replay --parallel 2: runs 1..{j['runs']} journaled once each ({[x['run'] for x in runs]})")
        check(all(x["outcome"] in ("ok", "censored", "cancelled") and "end_s" in x for x in runs),
              "replay --parallel 2: each run with its outcome and the moment it ended")
        check([x["end_s"] for x in runs] == sorted(x["end_s"] for x in runs),
              "replay --parallel 2: journaled in the order they ended")
        check(j["parallel"] == 2 and j["elapsed_s"] < j["machine_s"],
              f"replay --parallel 2: decided after {j['elapsed_s']:.2f} s, below the {j['machine_s']:.2f} machine s")
        pick = lambda x: (x["chosen"]["m"], x["chosen"]["p"]) if x["chosen"] else None
        check(pick(j) == pick(seq), f"replay --parallel 2: the same choice as one at a time ({pick(j)}, {pick(seq)})")

    # 10. --parallel needs a launcher that can hold runs apart (Slurm): refused before anything is written.
    j6 = os.path.join(tmp, "par-local.jsonl")
    r = run(["tune", "qs20", "--parallel", "2", "--launcher", "local", "--journal", j6, "--", "true"])
    check(r.returncode == 2 and "--parallel" in r.stderr and not os.path.exists(j6),
          f"--parallel 2 with the local launcher: refused, exit 2, no journal ({r.stderr.strip()})")

    # 11. --parallel with srun but no allocation and no Slurm to submit to: refused before anything is written.
    j7 = os.path.join(tmp, "par-noslurm.jsonl")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env["SLURM_CONF"] = os.path.join(tmp, "empty-slurm.conf")  # empty: sinfo fails at once (missing: retries 60 s)
    open(env["SLURM_CONF"], "w").close()
    r = run(["tune", "qs20", "--parallel", "2", "--launcher", "srun", "--journal", j7, "--", "true"], env=env)
    check(r.returncode == 2 and "expected a Slurm allocation" in r.stderr and not os.path.exists(j7)
          and not os.path.exists(j7 + ".jobs"),
          f"--parallel 2 --launcher srun without Slurm: refused, exit 2, nothing written ({r.stderr.strip()[:160]})")

    # 12. Short runs (--work): {work} takes the short and the full value; the journal says which runs were short,
    # the choice has full runs of its own, and --resume gives the short runs back as short.
    prog = os.path.join(tmp, "steps.sh")
    with open(prog, "w") as f:  # $3 steps, each 5 ms x a factor of the mapping (m=1 p=2 the fastest)
        f.write("#!/bin/sh\nd=$(awk \"BEGIN{printf \\\"%.4f\\\", 0.005 * (1 + ($1 - 1) * 0.5 + ($2 - 2) * ($2 - 2) * 3)}\")\n"
                "i=0; while [ $i -lt $3 ]; do i=$((i+1)); echo \"step $i\"; sleep $d; done\n")
    os.chmod(prog, 0o755)
    j8 = os.path.join(tmp, "work.jsonl")
    r = run(["tune", "qs20", "--m", "1:2", "--p", "1:3", "--launcher", "local", "--no-bind", "--journal", j8,
             "--work", "4:40", "--json", "--", prog, "{m}", "{p}", "{work}"])
    runs = journal_runs(j8) if os.path.exists(j8) else []
    doc = json.loads(r.stdout) if r.returncode == 0 else {}
    shorts = [x for x in runs if x.get("short")]
    check(r.returncode == 0 and len(shorts) >= 6 and all(" 4\n" in x["command"] or x["command"].rstrip().endswith(" 4")
                                                          or " 4 &" in x["command"] or " 4 <&3 " in x["command"]
                                                          for x in shorts),
          f"--work 4:40: every configuration screened by a short run with {{work}} = 4 ({len(shorts)} short of {len(runs)})")
    chosen = doc.get("chosen") or {}
    full_of_chosen = [x for x in runs if not x.get("short") and x["outcome"] == "ok" and
                      (x["m"], x["p"]) == (chosen.get("m"), chosen.get("p"))]
    check(len(full_of_chosen) >= 1 and (chosen.get("m"), chosen.get("p")) == (1, 2),
          f"--work: m=1 p=2 chosen, with full runs of its own ({chosen}, {len(full_of_chosen)} full)")
    check(doc.get("short_runs", {}).get("short_runs") == len(shorts) and "[run 1]" in r.stderr and " short: " in r.stderr,
          "--work: the result counts the short runs; the progress lines mark them")
    check("{work}" not in doc.get("command", "{work}") and " 40" in doc.get("command", ""),
          f"--work: the chosen's launch line runs the full work ({doc.get('command', '')[:120]!r})")
    r = run(["tune", "--resume", j8, "--json", "--quiet"])
    doc2 = json.loads(r.stdout) if r.returncode == 0 else {}
    check(r.returncode == 0 and doc2.get("short_runs", {}).get("short_runs") == len(shorts),
          f"--resume: the journal's short runs are given back as short ({r.stderr.strip()[-160:]})")

    # 13. Progress lines: a full run whose count's rate projects it clearly past its bound (here --timeout 2 s;
    # the slow mappings take about 3 s, m=1 p=2 about 1.1 s; at 1.6 s a loaded machine's m=1 p=2 was stopped too)
    # is stopped then, censored at the time it ran, its timeline and projection journalled.
    j9 = os.path.join(tmp, "progress.jsonl")
    r = run(["tune", "qs20", "--m", "1:2", "--p", "1:3", "--launcher", "local", "--no-bind", "--journal", j9,
             "--progress-regex", "step (\\d+)", "--progress-total", "120", "--timeout", "2", "--quiet", "--", prog, "{m}",
             "{p}", "120"])
    runs = journal_runs(j9) if os.path.exists(j9) else []
    stopped = [x for x in runs if x.get("progress_stop")]
    check(r.returncode == 0 and len(stopped) >= 1 and
          all(x["outcome"] == "censored" and x["wall_s"] < x["bound_s"] and x["projected_s"] > x["bound_s"] and
              len(x["progress"]) >= 3 for x in stopped),
          f"--progress-regex: {len(stopped)} run(s) stopped before their bound by their projection "
          f"({[(x['m'], x['p'], x['wall_s'], x['bound_s'], round(x.get('projected_s', 0), 2)) for x in stopped]})")
    check("chosen: m=1 p=2" in r.stdout, "--progress-regex: m=1 p=2 chosen")

    # 13b. Progress lines replayed: a recorded timeline is read as the live watcher reads a log, one point per
    # look (every 0.2 s). A run whose last lines arrived in one burst as it ended (held in a buffer) is not
    # stopped by them: at a look they are one point, and this one comes after the run has ended.
    def timeline(points):
        return ";".join(f"{t:.3f}:{c}" for t, c in points)
    steady = timeline([(0.4 + c / 1000, c) for c in range(0, 10001, 100)])  # 10.4 s
    burst = timeline([(0.4 + c / 500, c) for c in range(0, 1501, 100)] + [(18.422, c) for c in range(1600, 9801, 100)]
                     + [(18.427, 9900), (18.429, 10000)])
    # A third configuration prints 100 steps every 10 s after a start-up of 10.05 s: it would take 1,010 s, and is
    # stopped once three points say so (its third line, at a look, 30.2 s), well before its bound.
    slow = timeline([(10.05 + c / 10, c) for c in range(0, 10001, 100)])

    def progress_file(name, rows):
        """A runs file of `rows` (m, p, time_s, timeline), each recorded three times."""
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write("m,p,nodes,time_s,progress\n" + "".join(f"{m},{p},1,{t},{tl}\n" for m, p, t, tl in rows) * 3)
        return path

    progress_file("progress.csv", [(1, 1, 10.4, steady), (1, 2, 18.43, burst), (2, 1, 1010.0, slow)])
    j11 = os.path.join(tmp, "replay-progress.jsonl")
    r = run(["tune", "qs20", "--replay", os.path.join(tmp, "progress.csv"), "--progress-total", "10000",
             "--journal", j11, "--json", "--quiet"])
    runs = journal_runs(j11) if os.path.exists(j11) else []
    bursty = [x for x in runs if x["p"] == 2]
    check(r.returncode == 0 and bursty and all(x["outcome"] == "ok" and abs(x["wall_s"] - 18.43) < 1e-6 and
                                               not x.get("progress_stop") for x in bursty) and
          any(x.get("bound_s", 0) > 0 for x in bursty),
          f"--replay --progress-total: a burst of lines as a bounded run ends does not stop it "
          f"({[(x['outcome'], x['wall_s'], x.get('bound_s')) for x in bursty]}; {r.stderr.strip()[-200:]})")
    slowest = [x for x in runs if x["m"] == 2]
    check(slowest and all(x.get("progress_stop") and x["outcome"] == "censored" and abs(x["wall_s"] - 30.2) < 1e-6
                          and x["wall_s"] < x["bound_s"] and x["projected_s"] > x["bound_s"] for x in slowest),
          f"--replay --progress-total: a run too slow to leave the warm-up is stopped at the look its third line "
          f"is read ({[(x['outcome'], x['wall_s'], x.get('bound_s'), x.get('projected_s')) for x in slowest]})")

    # 13c. --constant progress.chosen_z: a rival is judged against the chosen's time, not its bound. m=1 p=3 runs
    # steadily twice as long as m=1 p=1 (20.8 s against 10.4 s, within the bound factor's 3x): by default
    # every run of it ends; with the constant, once m=1 p=1 has run, a run of it is stopped as soon as its
    # projection is clearly past 1.03 x m=1 p=1's time: censored early (the configuration may run again), its time
    # at least the low end of its projection, above 1.03 x 10.4 s, never past its own bound.
    rival = timeline([(0.8 + c * 20 / 10000, c) for c in range(0, 10001, 100)])  # 20.8 s
    progress_file("progress-rival.csv", [(1, 1, 10.4, steady), (1, 3, 20.8, rival)])
    for label, more in (("default", []), ("progress.chosen_z", ["--constant", "progress.chosen_z=1.645"])):
        jr = os.path.join(tmp, f"replay-rival-{label}.jsonl")
        r = run(["tune", "qs20", "--m", "1:1", "--p", "1:3", "--replay", os.path.join(tmp, "progress-rival.csv"),
                 "--progress-total", "10000", "--replay-first", "slowest", "--journal", jr, "--json", "--quiet"] + more)
        rivals = [x for x in (journal_runs(jr) if os.path.exists(jr) else []) if x["p"] == 3]
        after = [x for x in rivals if x["run"] > 1] if rivals and rivals[0]["run"] == 1 else rivals
        if not more:
            check(r.returncode == 0 and rivals and all(x["outcome"] == "ok" and not x.get("progress_stop") for x in rivals),
                  f"--replay --progress-total: a rival twice as slow ends by default "
                  f"({[(x['outcome'], x['wall_s']) for x in rivals]}; {r.stderr.strip()[-200:]})")
            continue
        check(r.returncode == 0 and after and all(
                  x["outcome"] == "censored" and x.get("progress_stop") and x.get("early_bound") and
                  x["wall_s"] < 20.8 and 1.03 * 10.4 < x["at_least_s"] < x["projected_s"] and
                  x["at_least_s"] <= x["bound_s"] for x in after),
              f"--constant progress.chosen_z: a rival's run after the chosen's is stopped early by its projection "
              f"({[(x['run'], x['outcome'], x['wall_s'], x.get('at_least_s'), x.get('projected_s'), x.get('bound_s')) for x in rivals]}; "
              f"{r.stderr.strip()[-200:]})")
        # The tuner counts it at that low end: running each configuration once is m=1 p=1's 10.4 s and the
        # stopped m=1 p=3 at its at_least_s (not at its bound).
        doc = json.loads(r.stdout) if r.returncode == 0 else {}
        check(after and doc.get("exhaustive_stopped") == 1 and
              abs(doc.get("exhaustive_s_estimate", 0) - (10.4 + max(x["at_least_s"] for x in after))) < 1e-6,
              f"--constant progress.chosen_z: a run stopped early counts at its at_least_s "
              f"({doc.get('exhaustive_s_estimate')}, {[x.get('at_least_s') for x in after]})")
        r = run(["tune", "--resume", jr, "--json", "--quiet"])
        check(r.returncode == 0 and json.loads(r.stdout).get("chosen", {}).get("p") == 1,
              f"--resume: a journal with runs stopped early by their progress is read back ({r.stderr.strip()[-200:]})")
    # Under a cost objective the chosen is the cheapest within --within of the fastest: m=1 p=1 (15.4 s, 15.4
    # core-seconds) against m=1 p=3 (10.4 s, 31.2): slower, but not to be stopped against the fastest's time.
    cheap = timeline([(0.4 + c * 15 / 10000, c) for c in range(0, 10001, 100)])  # 15.4 s
    progress_file("progress-cost.csv", [(1, 3, 10.4, steady), (1, 1, 15.4, cheap)])
    jr = os.path.join(tmp, "replay-cost.jsonl")
    r = run(["tune", "qs20", "--m", "1:1", "--p", "1:3", "--replay", os.path.join(tmp, "progress-cost.csv"),
             "--progress-total", "10000", "--objective", "core-hours", "--within", "0.6", "--max-cost", "none",
             "--constant", "progress.chosen_z=1.645", "--journal", jr, "--json", "--quiet"])
    cheap_runs = [x for x in (journal_runs(jr) if os.path.exists(jr) else []) if x["p"] == 1]
    check(r.returncode == 0 and json.loads(r.stdout).get("chosen", {}).get("p") == 1 and cheap_runs and
          not any(x.get("progress_stop") for x in cheap_runs),
          f"--constant progress.chosen_z under --objective core-hours: the cheaper, slower m=1 p=1 runs to its end and "
          f"is chosen ({[(x['outcome'], x['wall_s']) for x in cheap_runs]}; {r.stderr.strip()[-200:]})")

    # 14. A GPU node: the recorded runs name their sharing mode; the replay draws the rows of the tune's mode (the
    # platform's first, MPS, or the one --set search.sharing names), the journal names it on every run line, and a
    # line or a file of another mode is refused.
    gpu = os.path.join(tmp, "gpu.json")
    with open(gpu, "w") as f:
        f.write('{"schema": "mmgp/1", "kind": "platform", "name": "gpu", "hpu_contexts": 16, "apus": 8, '
                '"O_offload": 1e-5, "T_csw": 0, "alpha": 1, "sharing": ["mps", "time_sliced"], "T_slice_switch": 5e-5}\n')
    shared = os.path.join(tmp, "shared.csv")
    with open(shared, "w") as f:  # under MPS m=2 p=2 is best, time-sliced m=1 p=2
        f.write("m,p,time_s,sharing\n")
        for m, p, mps, sliced in [(1, 1, 8.0, 8.0), (1, 2, 4.4, 4.0), (2, 1, 4.5, 7.0), (2, 2, 2.0, 6.0)]:
            for k in range(3):
                f.write(f"{m},{p},{mps * (1 + 0.01 * k)},mps\n{m},{p},{sliced * (1 + 0.01 * k)},time_sliced\n")
    j10 = os.path.join(tmp, "gpu.jsonl")
    r = run(["tune", gpu, "--replay", shared, "--journal", j10, "--json", "--quiet"])
    doc = json.loads(r.stdout) if r.returncode == 0 else {}
    runs = journal_runs(j10) if os.path.exists(j10) else []
    check(r.returncode == 0 and (doc.get("chosen") or {}).get("m") == 2 and (doc.get("chosen") or {}).get("p") == 2 and
          runs and all(x.get("sharing") == "mps" for x in runs),
          f"sharing column: the replay draws the MPS rows, each journal line says mps ({r.stderr.strip()[-200:]})")
    r = run(["tune", gpu, "--replay", shared, "--set", 'search.sharing=["time_sliced"]', "--json", "--quiet"])
    doc = json.loads(r.stdout) if r.returncode == 0 else {}
    check(r.returncode == 0 and (doc.get("chosen") or {}).get("m") == 1 and (doc.get("chosen") or {}).get("p") == 2,
          f"sharing column: --set search.sharing draws the time-sliced rows ({r.stderr.strip()[-200:]})")
    only = os.path.join(tmp, "sliced.csv")
    with open(only, "w") as f:
        f.write("m,p,time_s,sharing\n1,1,8.0,time_sliced\n1,2,4.0,time_sliced\n")
    r = run(["tune", gpu, "--replay", only, "--quiet"])
    check(r.returncode == 2 and r.stderr.count("\n") == 1 and
          "column sharing: expected rows of the tune's sharing mode mps" in r.stderr and "time_sliced only" in r.stderr,
          f"sharing column: a file without the tune's mode is refused ({r.stderr.strip()})")
    lines = open(j10).read().splitlines() if os.path.exists(j10) else ["{}", "{}"]
    # A new user's first runs on a GPU node: the platform's word by default, kept in the journal's header; a journal
    # from before that default (no such key) resumes exploring by how little is known alone, as it began.
    head10 = json.loads(lines[0])
    whys = [x.get("why", "") for x in runs]
    check(head10.get("options", {}).get("explore_platform_on_gpu") is True and
          any("per machine second the platform alone expects" in w for w in whys),
          f"GPU node: explores by the platform by default, and the journal says so ({whys[:3]})")
    old10 = dict(head10, options=dict({k: v for k, v in head10.get("options", {}).items() if k != "explore_platform_on_gpu"},
                                      max_runs=2))
    j12 = os.path.join(tmp, "gpu-old.jsonl")
    with open(j12, "w") as f:
        f.write(json.dumps(old10) + "\n" + lines[1] + "\n")
    r = run(["tune", "--resume", j12, "--quiet"])
    resumed = journal_runs(j12) if os.path.exists(j12) else []
    check(r.returncode == 0 and len(resumed) == 2 and
          resumed[1].get("why", "").startswith("explore: the least known configuration"),
          f"GPU node: a journal from before the default resumes with least known first "
          f"({[x.get('why') for x in resumed]}, {r.stderr.strip()[-200:]})")
    edited = json.loads(lines[1])
    edited["sharing"] = "time_sliced"
    j11 = os.path.join(tmp, "gpu-edited.jsonl")
    with open(j11, "w") as f:
        f.write(lines[0] + "\n" + json.dumps(edited) + "\n")
    r = run(["tune", "--resume", j11, "--quiet"])
    check(r.returncode == 2 and "line 2, /sharing: expected the tune's sharing mode, \"mps\"" in r.stderr,
          f"--resume: a run line of another sharing mode is refused ({r.stderr.strip()})")

    # 16. --resume from another directory: the journal's run logs stay beside it, and a relative --plot is the
    # caller's (once: written over the journal, named from the tune's directory; the logs in a new sub/sub/).
    tune_dir, caller_dir = os.path.join(tmp, "elsewhere", "sub"), os.path.join(tmp, "elsewhere")
    os.makedirs(tune_dir)
    r = run(["tune", "qs20", "--m", "1:3", "--p", "1:2", "--no-bind", "--journal", "j.jsonl", "--max-runs", "2",
             "--quiet", "--", "sh", "-c", "sleep 0.0{m}"], cwd=tune_dir)
    jpath = os.path.join(tune_dir, "j.jsonl")
    with open(jpath) as f:
        lines = f.read().split("\n")
    header = json.loads(lines[0])
    header["options"]["max_runs"] = 3
    with open(jpath, "w") as f:
        f.write("\n".join([json.dumps(header)] + lines[1:]))
    r = run(["tune", "--resume", os.path.join("sub", "j.jsonl"), "--plot", "j.jsonl", "--quiet"], cwd=caller_dir)
    try:
        runs = journal_runs(jpath)
    except ValueError:  # not a journal any more
        runs = []
    logs = [x.get("log", "") for x in runs]
    with open(jpath) as f:
        first = f.read(1)
    check(r.returncode == 0 and first == "{" and os.path.exists(os.path.join(caller_dir, "j.jsonl")) and len(runs) == 3
          and all(os.path.exists(os.path.join(tune_dir, x)) and x.startswith("j.jsonl.logs/") for x in logs),
          f"--resume sub/j.jsonl --plot j.jsonl from the parent: the plot in the caller's directory, the journal intact, "
          f"the logs beside it ({r.returncode}, {logs}, {r.stderr.strip()[-200:]})")

    # 17. --work: a configuration whose short run fails is not run again (once: its short run retried for ever);
    # a replay without a configuration's short rows is refused (once: refused at every ask, for ever).
    prog = os.path.join(tmp, "fails22.sh")
    with open(prog, "w") as f:
        f.write("#!/bin/sh\n[ \"$1$2\" = 22 ] && exit 1\nsleep 0.0$1\n")
    os.chmod(prog, 0o755)
    j17 = os.path.join(tmp, "work-fail.jsonl")
    r = run(["tune", "qs20", "--m", "1:2", "--p", "1:2", "--no-bind", "--journal", j17, "--max-runs", "15",
             "--work", "10:100", "--quiet", "--json", "--", prog, "{m}", "{p}", "{work}"], timeout=120)
    runs = journal_runs(j17) if os.path.exists(j17) else []
    tries22 = [x for x in runs if (x["m"], x["p"]) == (2, 2)]
    chosen = (json.loads(r.stdout).get("chosen") or {}) if r.returncode == 0 else {}
    check(r.returncode == 0 and len(tries22) == 1 and tries22[0]["outcome"] == "failed" and chosen.get("m") is not None
          and (chosen["m"], chosen["p"]) != (2, 2),
          f"--work: m=2 p=2 fails its short run once and is not run again; another is chosen "
          f"({r.returncode}, {len(tries22)} tries, {chosen}, {r.stderr.strip()[-200:]})")
    w = os.path.join(tmp, "work-missing.csv")
    with open(w, "w") as f:
        f.write("m,p,work,time_s\n1,1,10,0.025\n1,1,100,0.25\n1,2,10,0.02\n1,2,100,0.2\n2,2,100,0.11\n")
    try:
        r = run(["tune", "qs20", "--replay", w, "--work", "10:100", "--max-runs", "200", "--quiet"], timeout=60)
    except subprocess.TimeoutExpired:
        r = subprocess.CompletedProcess([], 124, "", "timed out\n")
    check(r.returncode == 2 and r.stderr.count("\n") == 1 and "m=2 p=2 nodes=1 with none at 10" in r.stderr,
          f"--replay --work: a configuration without short rows is refused ({r.stderr.strip()})")

    # 18. A stop at --max-cost SECONDS names that cap (once "running every configuration once", the default's).
    capped = os.path.join(tmp, "capped.csv")
    with open(capped, "w") as f:
        f.write("m,p,time_s\n1,1,0.5\n1,2,0.6\n2,1,0.7\n2,2,1.1\n1,1,0.52\n1,2,0.61\n2,1,0.69\n2,2,1.05\n")
    r = run(["tune", "qs20", "--replay", capped, "--max-cost", "1", "--json", "--quiet"])
    stop = json.loads(r.stdout).get("stop") if r.returncode == 0 else None
    check(stop == "cost cap reached (--max-cost 1 s)", f"--max-cost 1: the stop names that cap ({stop!r})")
    # The cap in seconds holds before anything is chosen too (runs stopped at their bound choose nothing; once
    # such a replay spent 4 s of 3).
    cens = os.path.join(tmp, "cens2.csv")
    with open(cens, "w") as f:
        f.write("m,p,time_s,censored,bound_s\n1,1,2.0,1,2.0\n2,1,1.0,0,\n1,2,1.0,0,\n2,2,2.0,1,2.0\n"
                "4,1,2.0,1,2.0\n4,2,2.0,1,2.0\n")
    for seed in ("1", "2", "3", "4"):
        r = run(["tune", "qs20", "--replay", cens, "--max-cost", "3", "--seed", seed, "--json", "--quiet"])
        # Nothing chosen is exit status 1, the report printed all the same.
        spent = json.loads(r.stdout).get("machine_s") if r.returncode in (0, 1) and r.stdout.startswith("{") else None
        check(spent is not None and spent <= 3 + 1e-9,
              f"--max-cost 3, seed {seed}: at most 3 machine seconds spent ({spent}; {r.stderr.strip()[-160:]})")
    # Nothing chosen when only short runs finished: the report says so (once it counted them as finished runs).
    wcens = os.path.join(tmp, "wcens.csv")
    with open(wcens, "w") as f:
        f.write("m,p,work,time_s,censored,bound_s\n1,1,10,0.1,0,\n1,1,100,5.0,1,5.0\n1,2,10,0.12,0,\n"
                "1,2,100,5.0,1,5.0\n2,1,10,0.11,0,\n2,1,100,5.0,1,5.0\n")
    r = run(["tune", "qs20", "--replay", wcens, "--work", "10:100", "--quiet", "--json"])
    check(r.returncode == 1 and "no configuration finished a full run (short runs screen" in r.stderr,
          f"nothing chosen after short runs only: named as such ({r.stderr.strip()[-200:]})")
    # A failed run tells nothing of what a run costs: the cap waits for a run that took a time (once the tune
    # stopped after a 10 ms failure, nothing chosen, each other mapping a 0.13 s run).
    j10 = os.path.join(tmp, "capfail.jsonl")
    r = run(["tune", "qs20", "--m", "1:4", "--p", "1", "--no-bind", "--max-cost", "1", "--journal", j10, "--quiet",
             "--json", "--", "sh", "-c", "if [ {m} -eq 1 ]; then exit 3; fi; sleep 0.1"])
    chosen = (json.loads(r.stdout).get("chosen") or {}) if r.stdout.startswith("{") else {}
    check(r.returncode == 0 and chosen.get("m", 1) != 1,
          f"--max-cost 1 after a failed first run: a mapping is chosen ({chosen}; {r.stderr.strip()[-200:]})")
    # A replay resumed from its journal's first runs draws what the whole replay drew (--replay-first slowest:
    # once a configuration run before the interruption was drawn at its slowest again).
    reps = os.path.join(tmp, "reps-slowest.csv")
    with open(reps, "w") as f:
        f.write("m,p,time_s\n" + "".join(f"{m},{p},{t}\n" for m, p, ts in
                                         ((1, 1, (4.0, 4.4, 5.2)), (1, 2, (2.6, 2.2, 3.1)), (2, 1, (2.4, 2.5, 3.3)),
                                          (2, 2, (1.5, 1.9, 1.4)), (4, 1, (1.6, 2.0, 1.45)), (4, 2, (1.2, 1.7, 1.3)))
                                         for t in ts))
    whole, part = os.path.join(tmp, "slowest-whole.jsonl"), os.path.join(tmp, "slowest-part.jsonl")
    r = run(["tune", "qs20", "--replay", reps, "--replay-first", "slowest", "--max-cost", "none", "--journal", whole,
             "--json", "--quiet"])
    lines = open(whole).read().splitlines() if os.path.exists(whole) else []
    drawn = lambda ls: [(x["m"], x["p"], x["wall_s"], x["outcome"]) for x in map(json.loads, ls[1:])]
    with open(part, "w") as f:
        f.write("\n".join(lines[:5]) + "\n")
    r2 = run(["tune", "--resume", part, "--json", "--quiet"])
    resumed = open(part).read().splitlines()
    check(r.returncode == 0 and r2.returncode == 0 and len(lines) > 6 and drawn(resumed) == drawn(lines),
          f"--replay-first slowest, resumed after 4 runs: the whole replay's draws ({drawn(lines)} against "
          f"{drawn(resumed)}; {r2.stderr.strip()[-160:]})")
    # On a GPU node --json names the sharing mode of the chosen and of every configuration (once only the text did).
    gpu_runs = os.path.join(tmp, "gpu-runs.csv")
    with open(gpu_runs, "w") as f:
        f.write("m,p,time_s,sharing\n1,66,0.50,mps\n1,66,0.51,mps\n2,66,0.30,mps\n2,66,0.31,mps\n"
                "1,66,0.52,time_sliced\n2,66,0.60,time_sliced\n")
    gpu132 = os.path.join(tmp, "gpu132.json")
    json.dump({"schema": "mmgp/1", "kind": "platform", "name": "gpu", "hpu_contexts": 16, "apus": 132,
               "O_offload": 9e-6, "T_csw": 1e-6, "alpha": 1.0, "sharing": ["mps", "time_sliced"],
               "T_slice_switch": 1e-4}, open(gpu132, "w"))
    r = run(["tune", gpu132, "--replay", gpu_runs, "--json", "--quiet"])
    doc = json.loads(r.stdout) if r.returncode == 0 else {}
    check((doc.get("chosen") or {}).get("sharing") == "mps" and doc.get("configurations")
          and all(x.get("sharing") == "mps" for x in doc["configurations"]),
          f"GPU node --json: the chosen and every configuration name their sharing mode ({r.stderr.strip()[-160:]})")
    r = subprocess.run([MMGP, "validate", os.path.join(ROOT, "validation", "gpu", "h200-2026-11-30-1", "libpll", "sweep.json"),
                        "--json"], capture_output=True, text=True)
    cases = json.loads(r.stdout).get("cases", []) if r.returncode == 0 else []
    check(cases and all(c.get("sharing") in ("mps", "time_sliced") for c in cases),
          f"validate --json on a GPU node: every case names its sharing mode ({r.stderr.strip()[-160:]})")
    # Under the cost cap the repeat that confirms the chosen gives way to a configuration not run yet that may still
    # win (TUNE.md step 6): here m=2 p=1 (40 ms, 31 % faster than the chosen m=2 p=2) was priced out by it.
    capfile = os.path.join(tmp, "cap-repeat.csv")
    with open(capfile, "w") as f:
        f.write("m,p,time_s\n1,1,0.1073\n3,3,0.1081\n1,3,0.1046\n3,1,0.1128\n1,2,0.0841\n3,2,0.0912\n2,2,0.0579\n"
                "2,3,0.0875\n2,1,0.0400\n")
    r = run(["tune", "qs20", "--replay", capfile, "--json", "--quiet"])
    chosen = (json.loads(r.stdout).get("chosen") or {}) if r.returncode == 0 else {}
    check((chosen.get("m"), chosen.get("p")) == (2, 1),
          f"the cap's room kept for a configuration not run yet, the confirming repeat too ({chosen}, {r.stderr.strip()[-160:]})")
    # A negative zero is zero (once printed "within -0 %").
    r = subprocess.run([MMGP, "predict", "pbpi-qs20", "--tolerance", "-0"], capture_output=True, text=True)
    check(r.returncode == 0 and "within 0 %" in r.stdout and "-0" not in r.stdout,
          "--tolerance -0 is 0 (no '-0' printed)")

if failures:
    print(f"{len(failures)} check(s) failed", file=sys.stderr)
    sys.exit(1)
