"""Shared helpers of the validation sweeps and the report (standard library only)."""
import csv
import datetime
import json
import os
import platform
import resource
import shlex
import subprocess
import sys
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
    except OSError:
        pass
    return info


def run_json(cmd, timeout=None):
    """Runs cmd, returns its stdout parsed as JSON (raises on failure)."""
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[:400]}")
    return json.loads(p.stdout)


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')} load {load1():.2f}] {msg}", file=sys.stderr, flush=True)


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def write_json(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")
    os.replace(tmp, path)


def finish_sweep(out_dir, rows, info, t0):
    """Writes a sweep's runs.csv and machine.json (with elapsed time and the final load) into out_dir."""
    with open(os.path.join(out_dir, "runs.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    info["elapsed_s"] = round(time.time() - t0, 1)
    info["load_avg_at_end"] = list(os.getloadavg())
    write_json(os.path.join(out_dir, "machine.json"), info)
    log(f"done: {len(rows)} runs in {info['elapsed_s']} s -> {out_dir}")
