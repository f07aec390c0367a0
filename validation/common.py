"""Shared helpers of the validation sweeps and the report (standard library only)."""
import argparse
import atexit
import csv
import datetime
import json
import math
import os
import platform
import re
import resource
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load1():
    """1-minute load average (what the sweeps record with every run)."""
    return os.getloadavg()[0]


class ExternalCpu:
    """CPU time other processes used while a measured run was going on: busy time of the whole machine
    (/proc/stat) minus the CPU time of the waited-for children (getrusage). Reported as a share of one core
    over the run's wall time (0 = nothing else ran)."""

    def __init__(self):
        self.busy0 = self._busy()
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.child0 = ru.ru_utime + ru.ru_stime

    @staticmethod
    def _busy():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        # user nice system idle iowait irq softirq steal ...: everything but idle and iowait
        return (sum(v[:8]) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")

    def share(self, wall):
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        ext = (self._busy() - self.busy0) - (ru.ru_utime + ru.ru_stime - self.child0)
        return max(0.0, ext) / wall if wall > 0 else 0.0


def wait_bounded(procs, bound, t0):
    """Waits for every process of `procs` (each started with start_new_session=True) and returns (wall_s, expired):
    the wall time from t0 (time.monotonic()) to the last exit, reaped by blocking waits, and whether the bound
    (seconds from t0) was reached, in which case a timer thread killed the process groups still running.
    (Popen.wait with a timeout polls with sleeps of up to 50 ms, which would round every run up to the next poll.)"""
    expired = threading.Event()

    def stop():
        expired.set()
        for pr in procs:
            if pr.returncode is None:  # not reaped yet (a reaped leader's pid may belong to someone else)
                try:
                    os.killpg(pr.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    timer = threading.Timer(max(bound - (time.monotonic() - t0), 0.001), stop)
    timer.start()
    try:
        for pr in procs:
            pr.wait()
        wall = time.monotonic() - t0
    finally:
        timer.cancel()
    return wall, expired.is_set()


def offload_calibration(data_dir):
    """The platform calibration of the offload sweep beside data set data_dir (DIR/../offload): what the RAxML
    data set's predictions use."""
    return os.path.join(os.path.dirname(os.path.normpath(data_dir)), "offload", "platform-calibrated.json")


def machine_info(argv):
    """Machine and run description written next to every measured data set."""
    info = {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "host": platform.node(),
        "kernel": platform.release(),
        "cpus_online": os.cpu_count(),
        "load_avg_at_start": list(os.getloadavg()),
        "command": " ".join(shlex.quote(a) for a in argv),
    }
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu_model"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        info["git_commit"] = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                                            text=True, check=False).stdout.strip()
        # Tracked files changed since that commit (the code that measured may not be the commit's).
        info["git_uncommitted"] = subprocess.run(["git", "-C", ROOT, "diff", "--name-only", "HEAD"], capture_output=True,
                                                 text=True, check=False).stdout.split()
    except OSError:
        pass
    return info


def run_json(cmd, timeout=None):
    """Runs cmd, returns its stdout parsed as JSON (raises on failure)."""
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[:400]}")
    return json.loads(p.stdout)


def live_tune_start(doc, live, workdir, more_arguments=None):
    """The start of a live tune script (validation/tune/live_*.py): its arguments (--build, --reps, and those
    `more_arguments(parser)` adds) parsed, the directory `workdir` made, the journal and platform of an earlier run
    in `live` removed (`live` and `workdir` may be functions of the arguments); returns (arguments, the mmgp binary
    of --build)."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--reps", type=int, default=3)
    if more_arguments:
        more_arguments(ap)
    a = ap.parse_args()
    live = live(a) if callable(live) else live
    workdir = workdir(a) if callable(workdir) else workdir
    mmgp = os.path.join(a.build, "cli", "mmgp")
    os.makedirs(workdir, exist_ok=True)
    for f in ("journal.jsonl", "platform.json"):
        if os.path.exists(os.path.join(live, f)):
            os.remove(os.path.join(live, f))
    return a, mmgp


def log(msg):
    # One write of the whole line: print() writes the text and the newline separately, and an interrupt's own
    # line (written by the signal handler) could land between the two.
    sys.stderr.write(f"[{time.strftime('%H:%M:%S')} load {load1():.2f}] {msg}\n")
    sys.stderr.flush()


def median(xs):
    """The median of xs (any iterable of numbers): the middle value, or (a + b) / 2 of the two middle ones, as
    libmmgp's mmgp::median takes it. The validation scripts' one median."""
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


QUIET_SHARE = 0.25  # a repetition is quiet when other processes used less than this share of one core meanwhile


def is_quiet(row):
    """A runs.csv row measured on a quiet machine (rows without external_cpu_share count as quiet)."""
    v = row.get("external_cpu_share")
    return v in (None, "") or float(v) < QUIET_SHARE


def median_ci(xs, level=0.90):
    """Distribution-free confidence interval of the median at `level` (order statistics with binomial ranks):
    (lo, hi), or None when there are too few values for the level (fewer than 5 at 90 %)."""
    s = sorted(xs)
    n = len(s)
    tail, cum, k = (1.0 - level) / 2.0, 0.0, 0
    for j in range(n):
        cum += math.comb(n, j) / 2.0 ** n
        if cum > tail:
            break
        k = j + 1
    return (s[k - 1], s[n - k]) if k else None


def median_uncertain(xs, rel):
    """True while the 90 % interval of the median of xs is wider than +-rel of the median (or not yet defined)."""
    ci = median_ci(xs)
    return ci is None or ci[1] - ci[0] > 2.0 * rel * median(xs)


def extra_repetitions(rows, keys, run_one, budget_s, max_reps, rel=0.10, eligible=lambda row: True):
    """Adds repetitions where the median is still uncertain: in passes over the configurations (rows grouped by
    `keys`) that are eligible, have no censored run and fewer than max_reps runs, one more run of each whose
    quiet runs' median has a 90 % interval wider than +-rel (median_ci), until none is left or budget_s is spent.
    run_one(last_row) measures the configuration of last_row once more and returns the new row, which is
    appended to rows. Returns the number of runs added. Oversubscribed spinning threads make some
    configurations bimodal: a median of 5 runs then lands in either mode, more runs pin it down."""
    t_end = time.monotonic() + budget_s
    added = 0
    while time.monotonic() < t_end:
        groups = {}
        for r in rows:
            groups.setdefault(tuple(r[k] for k in keys), []).append(r)
        pending = [rs[-1] for rs in groups.values()
                   if eligible(rs[-1]) and len(rs) < max_reps and not any(int(r["censored"]) for r in rs)
                   and median_uncertain([float(r["wall_s"]) for r in rs if is_quiet(r)], rel)]
        if not pending:
            break
        for last in pending:
            if time.monotonic() >= t_end:
                break
            rows.append(run_one(last))
            added += 1
    return added


def add_extra_repetition_args(ap, seconds, cap):
    """The options of the extra-repetition step (extra_repetitions) of a sweep's argument parser."""
    ap.add_argument("--extra-seconds", type=float, default=None,
                    help=f"time for extra repetitions of configurations whose median is uncertain (default {seconds:.0f}; "
                         "quick: 0)")
    ap.add_argument("--max-repetitions", type=int, default=cap, help=f"cap on repetitions per configuration (default {cap})")
    ap.add_argument("--target-ci", type=float, default=0.10,
                    help="extra repetitions until the median's 90 %% interval is within +- this fraction (default 0.10)")


def extra_repetitions_step(a, seconds, rows, keys, run_one, info, reps, eligible=lambda row: True, which=""):
    """A sweep's extra-repetition step with its parsed options (add_extra_repetition_args; --extra-seconds
    defaults to `seconds`, 0 with --quick): runs extra_repetitions and records the rule and the count in info."""
    budget = a.extra_seconds if a.extra_seconds is not None else (0.0 if a.quick else seconds)
    if budget <= 0:
        return
    added = extra_repetitions(rows, keys, run_one, budget, a.max_repetitions, a.target_ci, eligible)
    info["extra_repetitions"] = {
        "rule": f"after {reps} repetitions, passes of one more run of each uncensored configuration{which} whose quiet "
                f"runs' median has a 90 % interval (order statistics) wider than +-{100 * a.target_ci:.0f} % of it, up "
                f"to {a.max_repetitions} runs, within {budget:.0f} s",
        "added": added}
    log(f"{added} extra repetitions where the median was uncertain")


# ---- No lost data ---------------------------------------------------------------------------
# Every file written here goes to a temporary file in the same directory (named .sweep-tmp.<pid>.*), is
# fsync'ed and then renamed over the old one. A sweep's data set (runs.csv, machine.json and the profiles
# mmgp calibrate / mmgp profile measure for it) is staged under temporary names while the sweep runs and
# renamed into place only by finish_sweep(), all together, so an interrupted sweep leaves the previous data
# set as it was: SIGINT, SIGTERM and SIGHUP stop the measurement processes, remove the temporary files,
# print one line naming what was kept and end the process with the signal. A SIGKILL cannot be caught: the
# old files are intact then too (nothing is renamed before the end), and the stray temporary files are
# removed by the next sweep into the same directory.

TMP_TAG = ".sweep-tmp."
_STALE = re.compile(r"^\.sweep-tmp\.([0-9]+)\.")
_UMASK = os.umask(0o022)
os.umask(_UMASK)


class _Interrupted(BaseException):
    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


class _State:
    def __init__(self):
        self.prog = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "sweep"
        self.out_dir = None
        self.files = []         # final paths of the data set (for the message)
        self.existed = {}       # final path -> existed when the sweep started
        self.staged = {}        # final path -> staged (temporary) path
        self.dirs = set()       # directories that may hold our temporary files
        self.committing = False
        self.committed = False
        self.pending = None     # a signal that came during the commit
        self.handling = False


_S = _State()


def _tmp_prefix():
    return f"{TMP_TAG}{os.getpid()}."


def _write_tmp(path, write, newline=None):
    """Writes a complete, fsync'ed temporary file next to path with write(f); returns its name."""
    d, base = os.path.split(os.path.abspath(path))
    _S.dirs.add(d)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=_tmp_prefix(), suffix="." + base)
    try:
        with os.fdopen(fd, "w", newline=newline) as f:
            write(f)
            f.flush()
            os.fchmod(f.fileno(), 0o666 & ~_UMASK)
            os.fsync(f.fileno())
    except BaseException:
        _unlink(tmp)
        raise
    return tmp


def _unlink(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _fsync_dir(d):
    try:
        fd = os.open(d, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass


def atomic_write(path, write, newline=None):
    """Writes path atomically: write(f) fills a temporary file in the same directory, which is then renamed."""
    tmp = _write_tmp(path, write, newline)
    try:
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise
    _fsync_dir(os.path.dirname(os.path.abspath(path)))


def write_if_changed(path, text):
    """Atomically writes text to path unless path already holds exactly that (then the file is not touched)."""
    try:
        with open(path, newline="") as f:
            if f.read() == text:
                return
    except OSError:
        pass
    atomic_write(path, lambda f: f.write(text), newline="")


def write_json(path, doc):
    def write(f):
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")
    atomic_write(path, write)


def finish_checks(failures, ok_line, detail=""):
    """Ends a test script (quick_test.py, interrupt_test.py): with failures, says how many (and `detail`) on
    stderr and exits 1; else prints `ok_line`."""
    if failures:
        print(f"{len(failures)} failure(s){detail}", file=sys.stderr)
        sys.exit(1)
    print(ok_line)


def _descendants():
    """Pids of this process's descendants (from /proc): the measurement processes and what they started."""
    kids = {}
    for e in os.listdir("/proc"):
        if e.isdigit():
            try:
                with open(f"/proc/{e}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[0] != "Z":
                kids.setdefault(int(fields[1]), []).append(int(e))
    out, todo = [], [os.getpid()]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def kill_all(pids):
    """SIGKILLs every process of `pids` (one that is gone already is passed over)."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _stop_children():
    """SIGKILLs the measurement processes and their descendants (also those started in a session of their own,
    e.g. raxml, and programs run under gdb) and waits until they are gone or zombies, so that none of them
    writes anything afterwards."""
    pids = _descendants()
    kill_all(pids)
    deadline = time.monotonic() + 10.0
    for pid in pids:
        while time.monotonic() < deadline:
            try:
                with open(f"/proc/{pid}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                        break
            except (OSError, IndexError):
                break
            time.sleep(0.005)


def _remove_tmp():
    """Removes this process's temporary and staged files (including the temporary files of mmgp run on a
    staged name, which begin with the staged name)."""
    prefix = _tmp_prefix()
    for d in _S.dirs:
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for n in names:
            if n.startswith(prefix):
                _unlink(os.path.join(d, n))


def _remove_stale(d):
    """Removes temporary files that a sweep killed with SIGKILL left behind (their process no longer exists)."""
    try:
        names = os.listdir(d)
    except OSError:
        return
    for n in names:
        m = _STALE.match(n)
        if m and int(m.group(1)) != os.getpid() and not os.path.exists(f"/proc/{m.group(1)}"):
            _unlink(os.path.join(d, n))


def _signame(signum):
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _names(paths):
    return ", ".join(os.path.relpath(p, _S.out_dir) for p in paths)


def _interrupt_message(signum):
    head = f"{_S.prog}: interrupted ({_signame(signum)})"
    if _S.committed:
        return f"{head} after the new {_names(_S.files)} had been written to {_S.out_dir}"
    kept = [p for p in _S.files if _S.existed[p]]
    new = [p for p in _S.files if not _S.existed[p]]
    msg = f"{head}: kept {_names(kept)} in {_S.out_dir} as they were" if kept else \
        f"{head}: nothing written to {_S.out_dir}"
    if new:
        msg += f" ({_names(new)} not created)"
    return msg


def _on_signal(signum, frame):
    if _S.committing:
        _S.pending = signum  # handled right after the renames
        return
    if _S.handling:
        return
    _S.handling = True
    if not _S.committed:
        _stop_children()
        _remove_tmp()
    print(_interrupt_message(signum), file=sys.stderr, flush=True)
    raise _Interrupted(signum)  # unwinds (temporary directories are removed), then _excepthook ends the process


def _end_with(signum):
    """Ends the process with the signal, as the shell expects."""
    sys.stdout.flush()
    sys.stderr.flush()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)


def _excepthook(kind, value, tb):
    if isinstance(value, _Interrupted):
        _end_with(value.signum)
    sys.__excepthook__(kind, value, tb)


def _unraisable(u):
    """An _Interrupted raised while a finalizer ran (the close() of a file nobody closed, Popen.__del__) is
    swallowed by the interpreter: the sweep would go on and write its data set after saying it kept the old one.
    The handler has already stopped the measurement processes and removed the temporary files: the process ends
    here, without unwinding the rest of the stack."""
    if isinstance(u.exc_value, _Interrupted):
        _end_with(u.exc_value.signum)
    sys.__unraisablehook__(u)


def begin_sweep(out_dir, files):
    """Call once at the start of a sweep: files are the names (relative to out_dir) of the data set it writes
    (what an interrupt keeps). Installs the interrupt handling described above."""
    _S.out_dir = os.path.abspath(out_dir)
    _S.files = [os.path.join(_S.out_dir, f) for f in files]
    _S.existed = {p: os.path.exists(p) for p in _S.files}
    _S.dirs.add(_S.out_dir)
    subdirs = [e.path for e in os.scandir(_S.out_dir) if e.is_dir()] if os.path.isdir(_S.out_dir) else []
    for d in sorted({os.path.dirname(p) for p in _S.files} | {_S.out_dir} | set(subdirs)):
        _remove_stale(d)
    sys.excepthook = _excepthook
    sys.unraisablehook = _unraisable
    atexit.register(_remove_tmp)
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, _on_signal)


def staging(cmd, path):
    """cmd with the output file path replaced by a staged temporary name in the same directory; finish_sweep()
    renames it to path (if the command created it) together with the rest of the data set."""
    path = os.path.abspath(path)
    d, base = os.path.split(path)
    _S.dirs.add(d)
    staged = os.path.join(d, f"{_tmp_prefix()}staged.{base}")
    _S.staged[path] = staged
    return [staged if os.path.abspath(a) == path else a for a in cmd]


def staged_files():
    """final path -> staged (temporary) path of every file staging() has named so far."""
    return dict(_S.staged)


def _commit(pairs):
    """Renames (temporary, final) pairs; a signal that comes meanwhile is handled after the last rename."""
    _S.committing = True
    try:
        for tmp, final in pairs:
            os.replace(tmp, final)
        for d in {os.path.dirname(f) for _, f in pairs}:
            _fsync_dir(d)
        _S.committed = True
    finally:
        _S.committing = False
    if _S.pending is not None:
        _on_signal(_S.pending, None)


def finish_sweep(out_dir, rows, info, t0):
    """Writes a sweep's runs.csv and machine.json (with elapsed time and the final load) into out_dir, and
    renames them and the staged profiles into place together."""
    def write_csv(f):
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    info["elapsed_s"] = round(time.time() - t0, 1)
    info["load_avg_at_end"] = list(os.getloadavg())

    def write_info(f):
        json.dump(info, f, indent=1, sort_keys=False)
        f.write("\n")
    pairs = [(staged, final) for final, staged in _S.staged.items() if os.path.exists(staged)]
    for name, write, newline in (("runs.csv", write_csv, ""), ("machine.json", write_info, None)):
        final = os.path.join(out_dir, name)
        pairs.append((_write_tmp(final, write, newline), final))
    _commit(pairs)
    log(f"done: {len(rows)} runs in {info['elapsed_s']} s -> {out_dir}")
