#!/usr/bin/env python3
"""The `validation-interrupt` meson test (no lost data): kills the tiny validation sweeps
(sweep_offload.py --quick, and sweep_raxml.py --quick when RAxML is installed) at random points and checks
that the data set they write is never corrupted.

The off-load sweep first runs to the end once into a directory holding a previous data set (runs.csv, machine.json,
and for the off-load sweep platform-calibrated.json and app-sim8x200.json): every file must then be new and
complete. Then it is killed at random points -- a random delay within that first run's duration, or a random
moment shortly after a random one of its progress lines, so that the short phases (e.g. between the last
measurement and the end) get hit too -- each time over a fresh previous data set: with SIGINT, SIGTERM,
SIGKILL and a SIGINT to its whole process group (what Ctrl-C does), then with more random kills while the
time budget (--budget) lasts. The RAxML sweep, which first spends about a minute counting RAxML's
synchronisations under gdb, is killed (Ctrl-C, SIGTERM, SIGKILL) at random times in its first 8 s only.

After each kill every file must be byte-identical to the previous one or (if the sweep got to the end first)
a complete, parseable new one, never missing, truncated or half-written. After SIGINT/SIGTERM also: the files
are all old or all new (no mixture), the sweep printed exactly one "interrupted" line naming what it kept, no
temporary file is left and no measurement process survives. After SIGKILL stray temporary files are allowed,
but the next sweep into the directory must remove them. Finally a signal is delivered in the middle of
finish_sweep()'s renames: the renames complete and the line says the new files were written; and one is handled
while a finalizer runs (where the interpreter swallows exceptions): the sweep still ends and keeps the old files.
"""
import argparse
import ctypes
import csv
import json
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import common  # validation/common.py, beside this script

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TMP_TAG = ".sweep-tmp."
failures = []
checks = 0
stops = []  # seconds from the signal to the sweep's end, for every sweep that ended by it


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr, flush=True)
    return cond


def become_subreaper():
    """Orphans of a killed sweep (its measurement processes) are re-parented to this process, so that the
    test can see whether any survived, and clean them up."""
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_CHILD_SUBREAPER = 36
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        check(False, "prctl(PR_SET_CHILD_SUBREAPER)")


def proc_stat(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return fields[0], int(fields[1])  # state, ppid
    except (OSError, IndexError, ValueError):
        return None, None


def live_children():
    me, out = os.getpid(), []
    for e in os.listdir("/proc"):
        if e.isdigit():
            state, ppid = proc_stat(e)
            if ppid == me and state != "Z":
                out.append(int(e))
    return out


def reap_all():
    """Kills what is left of a sweep (orphans re-parented to this process, also those that get re-parented only
    when their own parent dies, e.g. a program under a killed gdb) and reaps every child."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        live = live_children()
        common.kill_all(live)
        try:
            while os.waitpid(-1, os.WNOHANG)[0] != 0:
                pass
        except ChildProcessError:
            if not live:
                return
        time.sleep(0.01)
    check(False, f"processes left after a sweep could not be reaped: {live_children()}")


def handler_installed(pid):
    """True once the sweep catches SIGTERM (common.begin_sweep() ran)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    except OSError:
        pass
    return False


def tmp_files(d):
    return sorted(os.path.relpath(os.path.join(r, n), d) for r, _, ns in os.walk(d) for n in ns if n.startswith(TMP_TAG))


def read(path):
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


# Keys a complete new file must have (a truncated file does not parse at all).
KEYS = {"machine.json": ("date_utc", "command", "elapsed_s", "load_avg_at_end"),
        "platform-calibrated.json": ("O_offload", "T_csw", "alpha", "apus", "hpu_contexts"),
        "app-sim8x200.json": ("T_hpu", "T_apu", "C_apu", "g", "N")}


class Sweep:
    def __init__(self, script, args, files):
        self.script, self.args, self.files = script, args, files
        self.name = script[:-3]
        self.rows = None  # rows of runs.csv, from the first (complete) run
        self.full = self.progress = None

    def seed(self, d, tag):
        """A previous data set with recognisable contents; returns {name: bytes}."""
        prev = {}
        for f in self.files:
            if f.endswith(".csv"):
                data = f"input,units,m,p,policy,rep,wall_s,censored\r\nprevious-{tag},3,1,1,edtlp,0,1.0,0\r\n".encode()
            else:
                data = (json.dumps({"previous": tag, "file": f}, indent=1) + "\n").encode()
            with open(os.path.join(d, f), "wb") as fh:
                fh.write(data)
            prev[f] = data
        return prev

    def valid_new(self, d, f):
        """A complete file of a finished sweep (not the previous one)."""
        try:
            if f.endswith(".csv"):
                with open(os.path.join(d, f), newline="") as fh:
                    raw = fh.read()
                rows = list(csv.DictReader(raw.splitlines()))
                return (raw.endswith("\r\n") and len(rows) >= 1 and len(rows) == (self.rows or len(rows))
                        and "previous" not in raw
                        and all(None not in r and None not in r.values() and float(r["wall_s"]) > 0 for r in rows))
            with open(os.path.join(d, f)) as fh:
                doc = json.load(fh)
            return isinstance(doc, dict) and "previous" not in doc and all(k in doc for k in KEYS.get(f, ("name",)))
        except (OSError, ValueError, KeyError, TypeError):
            return False

    def start(self, d):
        return subprocess.Popen([sys.executable, os.path.join(HERE, self.script)] + self.args + ["--out", d],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)


def describe(sw, sig, group, point, tag):
    if sig is None:
        return f"{sw.name} to the end ({tag})"
    what = f"{signal.Signals(sig).name}{' to the process group' if group else ''}"
    when = f"after {point[1]:.2f} s" if point[0] == "time" else f"{point[2]:.3f} s after progress line {point[1]}"
    return f"{sw.name} {what} {when} ({tag})"


def trial(sw, d, sig, point, tag, group=False, prev_exists=True):
    """Runs sw into d (holding a previous data set unless prev_exists is False), sends sig (to the sweep, or to
    its process group) at point and checks the outcome. point is ("time", s): s seconds after the sweep's
    interrupt handling is installed, or ("line", k, s): s seconds after the sweep's k-th progress line.
    Returns (seconds from handler installation to exit, number of progress lines)."""
    t = Trial(sw, d, sig, point, tag, group, prev_exists)
    t.run()
    t.inspect()
    t.check_signal_timing()
    t.check_files()
    t.check_end()
    return t.took, t.progress


def progress_lines(out):
    """How many of the sweep's stderr lines so far are progress lines (common.log's, "[HH:MM:SS load ...] ...")."""
    return sum(l.startswith("[") for l in list(out))


class Trial:
    """One trial (see trial()): the sweep run and signalled, then what it printed and left in d, checked."""

    def __init__(self, sw, d, sig, point, tag, group, prev_exists):
        self.sw, self.d, self.sig, self.point, self.group, self.prev_exists = sw, d, sig, point, group, prev_exists
        self.prev = sw.seed(d, tag) if prev_exists else {}
        self.label = describe(sw, sig, group, point, tag)
        self.out = []  # the sweep's stderr lines, read as they come
        self.t_sig = self.seen_at_kill = None
        self.waiting = False  # the reader is waiting for more of the pipe, all it read is in self.out

    def run(self):
        """Starts the sweep, signals it at the point, waits for its end and reaps what is left of it."""
        p = self.sw.start(self.d)
        reader = threading.Thread(target=self._drain, args=(p,), daemon=True)
        reader.start()
        t_wait = time.monotonic() + 60
        while not handler_installed(p.pid) and p.poll() is None and time.monotonic() < t_wait:
            time.sleep(0.002)
        t0 = time.monotonic()
        check(p.poll() is None, f"{self.label}: sweep started")
        if self.sig is not None:
            self._signal(p, t0)
        self.rc = self._wait(p)
        self.took = time.monotonic() - t0
        self.stop = time.monotonic() - self.t_sig if self.t_sig is not None else None
        self.survivors = live_children()
        reap_all()
        reader.join(timeout=10)  # after SIGKILL, a surviving child may hold the pipe until reap_all()
        p.stderr.close()

    def _drain(self, p):
        """Reads the sweep's stderr into self.out, line by line as it comes (unbuffered: what the pipe gave is in
        self.out before the next read), until it closes."""
        fd, rest = p.stderr.fileno(), b""
        while True:
            self.waiting = True
            data = os.read(fd, 65536)
            self.waiting = False
            if not data:
                break
            *lines, rest = (rest + data).split(b"\n")
            self.out.extend(raw.decode(errors="replace") for raw in lines)
        if rest:
            self.out.append(rest.decode(errors="replace"))

    def _caught_up(self, p):
        """Waits (at most 0.5 s) until the reader has taken everything the sweep wrote so far: nothing left in the
        pipe and the reader waiting for more. A line the sweep writes after that comes after the count."""
        fd, t_end = p.stderr.fileno(), time.monotonic() + 0.5
        while time.monotonic() < t_end:
            if not select.select([fd], [], [], 0)[0] and self.waiting:
                return
            time.sleep(0.0005)

    def _signal(self, p, t0):
        """Waits for the point (from t0, or from a progress line) and sends the signal, unless the sweep ended first."""
        point = self.point
        if point[0] == "line":
            while progress_lines(self.out) < point[1] and p.poll() is None:
                time.sleep(0.001)
            t1 = time.monotonic()
            while time.monotonic() - t1 < point[2] and p.poll() is None:
                time.sleep(0.001)
        else:
            while time.monotonic() - t0 < point[1] and p.poll() is None:
                time.sleep(0.002)
        if p.poll() is None:
            self._caught_up(p)  # the lines written before the signal, counted (not those still in the pipe)
            self.seen_at_kill = progress_lines(self.out)
            self.t_sig = time.monotonic()
            (os.killpg if self.group else os.kill)(p.pid, self.sig)

    def _wait(self, p):
        """The sweep's exit status; killed (a failure) when it does not end within 180 s."""
        try:
            return p.wait(timeout=180)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            rc = p.wait()
            check(False, f"{self.label}: sweep did not end within 180 s")
            return rc

    def inspect(self):
        """What the sweep printed and left: its progress and interrupt lines, the old and new files; one line."""
        sw, d, out = self.sw, self.d, self.out
        self.progress = sum(l.startswith("[") for l in out)
        self.mine = [l for l in out if l.startswith(f"{sw.script}: interrupted (")]
        self.state = {f: read(os.path.join(d, f)) for f in sw.files}
        self.old = [f for f in sw.files if self.prev_exists and self.state[f] == self.prev[f]]
        self.new = [f for f in sw.files if self.state[f] is not None and sw.valid_new(d, f)]
        print(f"{self.label}: exit {self.rc} after {self.took:.1f} s"
              + (f" ({self.stop:.3f} s after the signal)" if self.stop is not None else "")
              + f", {len(self.old)} old and {len(self.new)} new of {len(sw.files)} files"
              + (f"; {self.mine[0]}" if self.mine else ""), file=sys.stderr, flush=True)

    def check_signal_timing(self):
        """A signal sent while at least two progress lines (the last one is "done: ...") were still to come found
        the sweep at work: it must have been interrupted, not have finished (a sweep that ignored the signal
        would finish and be judged by check_end()'s branch that accepts a finished sweep); and within 1 s.
        The lines still to come are counted in this run's own output, not the first run's: how many a sweep
        prints varies (the profile check calibrates and profiles again, three more lines, only when the
        sequential run was quiet)."""
        sig, rc, stop, label = self.sig, self.rc, self.stop, self.label
        if sig in (signal.SIGINT, signal.SIGTERM) and self.seen_at_kill is not None \
                and self.seen_at_kill <= self.progress - 2:
            check(rc == -sig, f"{label}: signalled with {self.progress - self.seen_at_kill} progress lines to go, but exit {rc}")
        if sig in (signal.SIGINT, signal.SIGTERM) and stop is not None and rc == -sig:
            stops.append(stop)
            check(stop < 1.0, f"{label}: stopped {stop:.3f} s after the signal, expected < 1 s")

    def check_files(self):
        """Never corrupted: each file is the previous one or a complete new one."""
        state = self.state
        for f in self.sw.files:
            if self.prev_exists:
                check(f in self.old or f in self.new, f"{self.label}: {f} is neither the previous file nor a complete new one "
                                                      f"({'missing' if state[f] is None else f'{len(state[f])} bytes'})")
            else:
                check(state[f] is None or f in self.new, f"{self.label}: {f} was created but is not complete")

    def check_end(self):
        """The checks of how the sweep ended: finished, interrupted (SIGINT, SIGTERM) or killed (SIGKILL)."""
        sig, rc, label = self.sig, self.rc, self.label
        # Finished: exit 0, or the signal came after the sweep had logged its end ("done: ...") while the
        # interpreter was shutting down (no Python handler runs then; every file had been renamed before the line).
        done = any(l.startswith("[") and "] done: " in l for l in self.out)
        if rc == 0 or (sig is not None and done and rc == -sig and not self.mine):
            self.check_finished()
        elif sig in (signal.SIGINT, signal.SIGTERM):
            self.check_interrupted()
        elif sig == signal.SIGKILL:
            check(rc == -signal.SIGKILL, f"{label}: killed (exit {rc})")
        else:
            check(False, f"{label}: unexpected exit {rc}; stderr tail: {self.out[-8:]}")

    def check_finished(self):
        """A finished sweep: every file new, no temporary file left, no interrupt line."""
        sw, d, label = self.sw, self.d, self.label
        check(len(self.new) == len(sw.files), f"{label}: finished but not all files are new: {sorted(set(sw.files) - set(self.new))}")
        check(not tmp_files(d), f"{label}: temporary files left after a finished sweep: {tmp_files(d)}")
        check(not self.mine, f"{label}: a finished sweep printed an interrupt line")

    def check_interrupted(self):
        """A sweep ended by SIGINT/SIGTERM: its one interrupt line, all old or all new files, nothing left over."""
        sw, d, sig, label, mine, new, old = self.sw, self.d, self.sig, self.label, self.mine, self.new, self.old
        name = signal.Signals(sig).name
        check(self.rc == -sig, f"{label}: ends with the signal (exit {self.rc}); stderr tail: {self.out[-8:]}")
        check(len(mine) == 1, f"{label}: exactly one '{sw.script}: interrupted' line, found {len(mine)}: {mine}")
        others = [l for l in self.out if "interrupted (" in l and l not in mine]
        # Only Ctrl-C reaches mmgp itself too; its own guard then reports on its (staged, temporary) file.
        check(not others or (self.group and all(l.startswith("mmgp: interrupted (") and TMP_TAG in l for l in others)),
              f"{label}: other interrupt lines: {others}")
        line = mine[0] if mine else ""
        check(f"interrupted ({name})" in line, f"{label}: the line names {name}: {line!r}")
        if "had been written" in line:  # the signal came during the final renames: all new
            check(len(new) == len(sw.files), f"{label}: says the new files were written, but only {new} are new")
        elif self.prev_exists:
            check(len(old) == len(sw.files), f"{label}: not all previous files kept (old: {old}, new: {new})")
            check(f"kept {', '.join(sw.files)} in {d} as they were" in line, f"{label}: the line names what was kept: {line!r}")
        else:
            check(all(self.state[f] is None for f in sw.files), f"{label}: files created by an interrupted sweep")
            check(f"nothing written to {d} ({', '.join(sw.files)} not created)" in line,
                  f"{label}: the line says nothing was written: {line!r}")
        check(not tmp_files(d), f"{label}: temporary files left: {tmp_files(d)}")
        check(not self.survivors, f"{label}: measurement processes survived the sweep: {self.survivors}")


COMMIT_SCRIPT = r"""
import os, signal, sys, time
sys.path.insert(0, sys.argv[1])
import common
d = sys.argv[2]
common.begin_sweep(d, ["runs.csv", "machine.json"])
replace = os.replace
def replace_then_signal(a, b):  # a SIGTERM right after the first of finish_sweep()'s renames
    replace(a, b)
    os.replace = replace
    os.kill(os.getpid(), signal.SIGTERM)
os.replace = replace_then_signal
common.finish_sweep(d, [{"input": "x", "units": 3, "m": 1, "p": 1, "policy": "edtlp", "rep": 0, "wall_s": "0.5"}],
                    {"date_utc": "now", "command": "test"}, time.time())
"""


def signalled_script(tmp, name, script, when):
    """Runs `script` (signalled while it writes) on a fresh out directory under tmp/name holding the previous
    runs.csv and machine.json; returns the directory, the process and its "interrupted (" lines."""
    d = os.path.join(tmp, name, "out")
    os.makedirs(d)
    for f in ("runs.csv", "machine.json"):
        with open(os.path.join(d, f), "w") as fh:
            fh.write("previous\n")
    p = subprocess.run([sys.executable, "-c", script, HERE, d], capture_output=True, text=True, timeout=60)
    lines = [l for l in p.stderr.splitlines() if "interrupted (" in l]
    print(f"signal {when}: exit {p.returncode}; {lines}", file=sys.stderr)
    return d, p, lines


def commit_trial(tmp):
    """A signal during finish_sweep()'s renames is held until they are all done."""
    d, p, lines = signalled_script(tmp, "commit", COMMIT_SCRIPT, "during the final renames")
    check(p.returncode == -signal.SIGTERM, f"commit: ends with SIGTERM (exit {p.returncode}): {p.stderr[-600:]}")
    check(len(lines) == 1 and f"interrupted (SIGTERM) after the new runs.csv, machine.json had been written to {d}" in lines[0],
          f"commit: one line saying the new files were written: {lines}")
    check(read(os.path.join(d, "runs.csv")) == b"input,units,m,p,policy,rep,wall_s\r\nx,3,1,1,edtlp,0,0.5\r\n",
          "commit: new runs.csv complete")
    try:
        doc = json.load(open(os.path.join(d, "machine.json")))
        check("elapsed_s" in doc, "commit: new machine.json complete")
    except ValueError:
        check(False, "commit: new machine.json parses")
    check(not tmp_files(d), f"commit: temporary files left: {tmp_files(d)}")


FINALIZER_SCRIPT = r"""
import os, signal, sys, time
sys.path.insert(0, sys.argv[1])
import common
d = sys.argv[2]
common.begin_sweep(d, ["runs.csv", "machine.json"])
class Unclosed:
    def __del__(self):  # Python code a finalizer runs, as an unclosed file's close(): a signal handled in it
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):
            pass
Unclosed()
time.sleep(0.2)
common.finish_sweep(d, [{"input": "x", "units": 3, "m": 1, "p": 1, "policy": "edtlp", "rep": 0, "wall_s": "0.5"}],
                    {"date_utc": "now", "command": "test"}, time.time())
"""


def finalizer_trial(tmp):
    """A signal handled while a finalizer runs (where the interpreter swallows exceptions) still ends the sweep,
    which keeps the previous files as its line says."""
    d, p, lines = signalled_script(tmp, "finalizer", FINALIZER_SCRIPT, "during a finalizer")
    check(p.returncode == -signal.SIGTERM, f"finalizer: ends with SIGTERM (exit {p.returncode}): {p.stderr[-600:]}")
    check(len(lines) == 1 and f"interrupted (SIGTERM): kept runs.csv, machine.json in {d} as they were" in lines[0],
          f"finalizer: one line saying the previous files were kept: {lines}")
    for f in ("runs.csv", "machine.json"):
        check(read(os.path.join(d, f)) == b"previous\n", f"finalizer: {f} kept as it was")
    check(not tmp_files(d), f"finalizer: temporary files left: {tmp_files(d)}")


def parse_args():
    """The command line: the build to test, the time budget of the random kills, the random seed."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--budget", type=float, default=45.0,
                    help="seconds after which no further random kills are added to the fixed ones (default 45)")
    ap.add_argument("--seed", type=int, default=None)
    return ap.parse_args()


INT, TERM, KILL = signal.SIGINT, signal.SIGTERM, signal.SIGKILL


def make_sweeps(a):
    """(sweep, the kills every run makes: (signal, to the whole process group?)) per sweep; Ctrl-C = SIGINT to the
    group. Returns (them, the off-load sweep, the RAxML sweep or None where RAxML is not installed)."""
    # --profile-tolerance 0: every run also calibrates and profiles again after its sweep (the profile check), so
    # that kills land in that step too (its first set of files is renamed aside meanwhile).
    offload = Sweep("sweep_offload.py", ["--quick", "--build", a.build, "--profile-tolerance", "0"],
                    ["runs.csv", "machine.json", "platform-calibrated.json", "app-sim8x200.json"])
    sweeps = [(offload, [(INT, False), (TERM, False), (KILL, False), (INT, True)])]
    raxml = None
    if shutil.which("raxmlHPC-PTHREADS-SSE3"):
        # The quick RAxML sweep spends about a minute of CPU counting RAxML's synchronisations under gdb before
        # it measures, too long to run it to the end several times here; it writes through the same
        # finish_sweep(). It is interrupted in its first seconds (gdb and the RAxML it runs must be stopped
        # with it, and the previous files kept).
        raxml = Sweep("sweep_raxml.py", ["--quick"], ["runs.csv", "machine.json"])
    else:
        print("note: raxml not installed, sweep_raxml skipped", file=sys.stderr)
    return sweeps, offload, raxml


class Kills:
    """The random kills: how many so far (each trial's tag "run N") and the random points they come at."""

    def __init__(self, rng):
        self.rng, self.n = rng, 0

    def tag(self):
        """The next kill's tag."""
        self.n += 1
        return f"run {self.n}"

    def kill(self, sw, sig, group, mode):
        """One kill at a random point: a random time within the first run, or a random moment shortly after a
        random progress line (so that short phases, e.g. between the last measurement and the end, get hit)."""
        tag = self.tag()
        point = ("time", self.rng.uniform(0.0, sw.full)) if mode == "time" else \
            ("line", self.rng.randint(1, sw.progress), self.rng.uniform(0.0, 0.03))
        trial(sw, sw.dir, sig, point, tag, group=group)


def first_runs(sweeps, kills, tmp):
    """Every sweep once to the end into its directory, then killed with its fixed signals at random points."""
    rng = kills.rng
    for sw, fixed in sweeps:
        sw.dir = os.path.join(tmp, sw.name, "out")
        os.makedirs(sw.dir)
        sw.full, sw.progress = trial(sw, sw.dir, None, None, "run 0")
        check(sw.progress >= 2, f"{sw.name}: progress lines on stderr ({sw.progress})")
        if sw.progress < 2 or failures:
            continue
        sw.rows = sum(1 for _ in open(os.path.join(sw.dir, "runs.csv"))) - 1
        modes = ["time", "line"] + [rng.choice(["time", "line"]) for _ in fixed[2:]]
        rng.shuffle(modes)
        for (sig, group), mode in zip(fixed, modes):
            kills.kill(sw, sig, group, mode)


def raxml_kills(raxml, sweeps, kills, tmp):
    """The RAxML sweep killed (Ctrl-C, SIGTERM, SIGKILL) at random times in its first 8 s; it joins `sweeps`."""
    raxml.dir = os.path.join(tmp, raxml.name, "out")
    os.makedirs(raxml.dir)
    for sig, group in ((INT, True), (TERM, False), (KILL, False)):
        tag = kills.tag()
        trial(raxml, raxml.dir, sig, ("time", kills.rng.uniform(0.0, 8.0)), tag, group=group)
    sweeps.append((raxml, []))


def budget_kills(offload, kills, budget, t_start):
    """More random kills of the off-load sweep while the time budget lasts."""
    extra = [(INT, False), (TERM, False), (KILL, False), (INT, True)]
    i = 0
    while offload.full is not None and offload.progress >= 2 and not failures:
        if time.monotonic() - t_start + 0.6 * offload.full > budget:
            break
        sig, group = extra[i % len(extra)]
        kills.kill(offload, sig, group, kills.rng.choice(["time", "line"]))
        i += 1


def cleanup_runs(sweeps):
    """The next sweep removes what SIGKILLed ones left; interrupted at once, it leaves nothing behind."""
    for sw, _ in sweeps:
        if getattr(sw, "dir", None) is None:
            continue
        trial(sw, sw.dir, signal.SIGTERM, ("time", 0.0), "cleanup run")
        check(not tmp_files(sw.dir), f"{sw.name}: stray temporary files not removed by the next sweep: {tmp_files(sw.dir)}")


def main():
    a = parse_args()
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1 << 30)
    rng = random.Random(seed)
    print(f"interrupt test: seed {seed} (--seed {seed} repeats the kill points)", file=sys.stderr)
    become_subreaper()
    sweeps, offload, raxml = make_sweeps(a)
    t_start = time.monotonic()
    kills = Kills(rng)
    with tempfile.TemporaryDirectory(prefix="mmgp-interrupt-") as tmp:
        commit_trial(tmp)
        finalizer_trial(tmp)
        first_runs(sweeps, kills, tmp)
        if raxml is not None and not failures:
            raxml_kills(raxml, sweeps, kills, tmp)
        budget_kills(offload, kills, a.budget, t_start)
        cleanup_runs(sweeps)
        # A sweep interrupted in a directory without a previous data set creates none of its files.
        d = os.path.join(tmp, "empty", "out")
        os.makedirs(d)
        trial(sweeps[0][0], d, signal.SIGINT, ("time", rng.uniform(0.0, 1.0)), "no previous data", prev_exists=False)
    # Every sweep stops within 1 s of SIGINT/SIGTERM (checked per kill above).
    if stops:
        print(f"interrupt test: stopped {sorted(stops)[len(stops) // 2]:.3f} s (median) / {max(stops):.3f} s (max) "
              f"after SIGINT/SIGTERM over {len(stops)} kills", file=sys.stderr)
    check(len(stops) >= 3, f"at least 3 SIGINT/SIGTERM kills ended a sweep by the signal, found {len(stops)}")
    print(f"interrupt test: {kills.n} random kills, {checks} checks in {time.monotonic() - t_start:.1f} s", file=sys.stderr)
    common.finish_checks(failures, "sweep interrupt test: OK", f" (seed {seed})")


if __name__ == "__main__":
    main()
