"""A real Slurm on this machine for the tests: munged, slurmctld and slurmd from Debian's packages (slurm-wlm 22.05,
munge), with a generated key and configuration in a directory of their own: one node with this machine's CPUs,
or (nodes=N) N emulated nodes of one CPU each.

    with SlurmCluster() as slurm:        # starts the daemons, waits until the node is idle
        subprocess.run(["srun", "-n", "2", "hostname"], env=slurm.env)
    # every daemon stopped, the directory removed

    with SlurmCluster(nodes=2) as slurm: # nodes mmgpsl0, mmgpsl1: one slurmd each in a network namespace of its own
        ...                              # (veth pairs to a bridge), with its own host name (UTS namespace), on CPU i

Emulated nodes: each slurmd runs in network namespace mmgpsl<i> (address 10.79.77.<i+1>, the controller on the
bridge at .254) and a UTS namespace where its host name is its node name; it is pinned to CPU i and its tasks
inherit that CPU (TaskPlugin=task/none: slurmd would otherwise bind to the abstract CPU 0 of a one-CPU node).
The namespaces are entered with nsenter, not `ip netns exec`, which would remount /sys and hide the cgroup file
system slurmd needs.

Everything lives under BASE (one fixed directory, so that a run killed at any point is cleaned up by the next:
its daemons are found by their pid files and their command lines, killed, and the directory removed before
anything starts). The daemons run as root in the foreground as children of the test (process groups of their
own) and talk over TCP ports on localhost picked free at start. Needs root and the packages; `missing()` says
what is absent so that a test can skip.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

BASE = "/tmp/mmgp-slurm-test"
DAEMONS = ("munged", "slurmctld", "slurmd")
BINARIES = {"munged": "/usr/sbin/munged", "slurmctld": "/usr/sbin/slurmctld", "slurmd": "/usr/sbin/slurmd",
            "srun": "/usr/bin/srun", "sinfo": "/usr/bin/sinfo"}


NETNS = "mmgpsl"            # namespaces mmgpsl0, mmgpsl1, ...; bridge mmgpslbr
SUBNET = "10.79.77"
MAX_NODES = 8


def missing(nodes=1):
    """What keeps a real Slurm (of `nodes` emulated nodes when > 1) from running here: '' when nothing."""
    if os.geteuid() != 0:
        return "the daemons run as root (the test is not)"
    absent = [n for n, p in BINARIES.items() if not os.access(p, os.X_OK)]
    if absent:
        return "not installed: " + ", ".join(absent) + " (apt-get install slurm-wlm munge; scripts/setup.sh)"
    if not os.path.ismount("/sys/fs/cgroup"):
        # slurmd 22.05 initialises its cgroup plugin whatever the configuration (CgroupPlugin=disabled came later).
        return "slurmd needs a cgroup file system on /sys/fs/cgroup (none mounted here, e.g. a chroot or a container)"
    if nodes > 1:
        if (os.cpu_count() or 1) < nodes:
            return f"{nodes} emulated nodes need {nodes} CPUs"
        absent = [t for t in ("ip", "nsenter", "unshare", "taskset") if not shutil.which(t)]
        if absent:
            return "emulated nodes need " + ", ".join(absent) + " (iproute2, util-linux)"
        probe = f"{NETNS}probe{os.getpid()}"
        made = subprocess.run(["sh", "-c", f"ip netns add {probe} && ip -n {probe} link set lo up"], capture_output=True)
        subprocess.run(["ip", "netns", "del", probe], capture_output=True)
        if made.returncode != 0:
            return "emulated nodes need network namespaces (ip netns fails here, e.g. in a chroot)"
    return ""


def leftover_namespaces():
    """The emulated nodes' network namespaces and bridge still present (names)."""
    out = []
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True) if shutil.which("ip") else None
    if r is not None and r.returncode == 0:
        out += [line.split()[0] for line in r.stdout.split("\n") if line.startswith(NETNS)]
    if os.path.exists(f"/sys/class/net/{NETNS}br"):
        out.append(f"{NETNS}br")
    return out


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ours(pid):
    """True when pid is one of our daemons (its command line names BASE)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return BASE.encode() in f.read()
    except OSError:
        return False


def leftovers():
    """Processes of a fixture still running (pids), found by their command lines."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) != os.getpid() and _ours(int(d)):
            out.append(int(d))
    return out


def clean():
    """Kills whatever a previous fixture left running and removes its directory."""
    for _ in range(50):
        pids = leftovers()
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.1)
    for name in leftover_namespaces():
        kind = ["link", "del"] if name.endswith("br") else ["netns", "del"]
        subprocess.run(["ip"] + kind + [name], capture_output=True)
    shutil.rmtree(BASE, ignore_errors=True)


def skip_reason(needs_two_cpus):
    """Why a Slurm test cannot run here ('' when it can): missing() and, for `needs_two_cpus` (what needs them),
    fewer than 2 CPUs."""
    why = missing()
    if not why and (os.cpu_count() or 1) < 2:
        why = f"{needs_two_cpus} need 2 CPUs"
    return why


class Checks:
    """check(cond, what) prints ok/FAIL per check; status() is the test's exit status."""

    def __init__(self):
        self.failures = []

    def __call__(self, cond, what):
        print(("ok   " if cond else "FAIL ") + what, flush=True)
        if not cond:
            self.failures.append(what)

    def status(self):
        if self.failures:
            print(f"{len(self.failures)} check(s) failed", file=sys.stderr)
            return 1
        return 0


def journal_runs(path):
    """The runs of an mmgp tune journal (its lines after the header, but a --retry-failed session's marks)."""
    with open(path) as f:
        lines = [json.loads(line) for line in f.read().split("\n")[1:] if line.strip()]
    return [x for x in lines if "mark" not in x]


def overlap(x, y):
    """True when two journaled runs of a tune --parallel were in flight at the same time."""
    return x["start_s"] < y["end_s"] and y["start_s"] < x["end_s"]


class SlurmCluster:
    def __init__(self, timeout=30.0, nodes=1):
        if not 1 <= nodes <= MAX_NODES:
            raise ValueError(f"nodes: 1..{MAX_NODES}")
        self.timeout = timeout
        self.nodes = nodes
        self.procs = {}
        self.env = None
        self.started_s = None

    def _write(self, name, text, mode=0o644):
        path = os.path.join(BASE, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, mode)
        return path

    def start(self):
        t0 = time.monotonic()
        clean()
        os.makedirs(os.path.join(BASE, "state"))
        os.makedirs(os.path.join(BASE, "spool"))
        os.chmod(BASE, 0o755)
        key = os.path.join(BASE, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        sock = os.path.join(BASE, "munge.socket")
        host = socket.gethostname()
        if self.nodes == 1:
            node = subprocess.run([BINARIES["slurmd"], "-C"], capture_output=True, text=True, check=True).stdout.split("\n")[0]
            nodes = [node.replace(f"NodeName={host} ", f"NodeName={host} NodeAddr=127.0.0.1 ", 1) + " State=UNKNOWN"]
            ctld_addr, task_plugin = "127.0.0.1", "task/affinity"
        else:
            self._namespaces()
            nodes = [f"NodeName={NETNS}{i} NodeAddr={SUBNET}.{i + 1} CPUs=1 State=UNKNOWN" for i in range(self.nodes)]
            ctld_addr, task_plugin = f"{SUBNET}.254", "task/none"
        conf = self._write("slurm.conf", "\n".join([
            "ClusterName=mmgptest",
            f"SlurmctldHost={host}({ctld_addr})",  # an address: the host name need not resolve
            "SlurmUser=root", "SlurmdUser=root",
            f"SlurmctldPort={_free_port()}", f"SlurmdPort={_free_port()}",
            "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={sock}",
            f"StateSaveLocation={BASE}/state", f"SlurmdSpoolDir={BASE}/spool" + ("/%n" if self.nodes > 1 else ""),
            f"SlurmctldPidFile={BASE}/slurmctld.pid", f"SlurmdPidFile={BASE}/slurmd-%n.pid",
            f"SlurmctldLogFile={BASE}/slurmctld.log", f"SlurmdLogFile={BASE}/slurmd-%n.log",
            "ProctrackType=proctrack/linuxproc", f"TaskPlugin={task_plugin}",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
            "SchedulerType=sched/backfill", "ReturnToService=2", "MpiDefault=none",
            # Batch jobs scheduled at once (the default delays them up to 3 s, backfill every 30 s): test speed.
            "SchedulerParameters=batch_sched_delay=0,bf_interval=1",
            "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
            "SlurmctldTimeout=30", "SlurmdTimeout=30", "InactiveLimit=0", "KillWait=2",
            *nodes,
            "PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO",
            ""]))
        self.env = dict(os.environ, SLURM_CONF=conf)
        for k in [k for k in self.env if k.startswith(("SLURM_", "SBATCH_", "SALLOC_", "SRUN_")) and k != "SLURM_CONF"]:
            del self.env[k]  # the fixture's own allocation, not the caller's
        log = open(os.path.join(BASE, "daemons.log"), "ab")
        self.procs["munged"] = subprocess.Popen(
            [BINARIES["munged"], "-F", "--force", f"--socket={sock}", f"--key-file={key}",
             f"--pid-file={BASE}/munged.pid", f"--log-file={BASE}/munged.log", f"--seed-file={BASE}/munged.seed"],
            stdout=log, stderr=log, start_new_session=True)
        self._wait(lambda: os.path.exists(sock), "munged's socket")
        self.procs["slurmctld"] = subprocess.Popen([BINARIES["slurmctld"], "-D", "-i", "-f", conf], env=self.env,
                                                   stdout=log, stderr=log, start_new_session=True)
        if self.nodes == 1:
            self.procs["slurmd"] = subprocess.Popen([BINARIES["slurmd"], "-D", "-f", conf], env=self.env,
                                                    stdout=log, stderr=log, start_new_session=True)
        for i in range(self.nodes if self.nodes > 1 else 0):
            name = f"{NETNS}{i}"
            self.procs[f"slurmd-{name}"] = subprocess.Popen(
                ["nsenter", f"--net=/var/run/netns/{name}", "unshare", "--uts", "sh", "-c",
                 f"hostname {name} && exec taskset -c {i} {BINARIES['slurmd']} -D -f {conf} -N {name}"],
                env=self.env, stdout=log, stderr=log, start_new_session=True)
        self._wait(self.idle, "the node to be idle")
        self.started_s = time.monotonic() - t0
        return self

    def idle(self):
        r = subprocess.run([BINARIES["sinfo"], "-h", "-o", "%T %D"], env=self.env, capture_output=True, text=True)
        return r.returncode == 0 and r.stdout.strip() == f"idle {self.nodes}"

    def _namespaces(self):
        """The emulated nodes' network: namespaces joined by veth pairs to a bridge in this namespace."""
        def ip(cmd):
            subprocess.run(["sh", "-c", cmd], check=True, capture_output=True)
        ip(f"ip link add {NETNS}br type bridge && ip addr add {SUBNET}.254/24 dev {NETNS}br && ip link set {NETNS}br up")
        for i in range(self.nodes):
            ns = f"{NETNS}{i}"
            ip(f"ip netns add {ns} && ip link add {NETNS}v{i} type veth peer name eth0 netns {ns} && "
               f"ip link set {NETNS}v{i} master {NETNS}br up && ip -n {ns} addr add {SUBNET}.{i + 1}/24 dev eth0 && "
               f"ip -n {ns} link set eth0 up && ip -n {ns} link set lo up")
            os.makedirs(os.path.join(BASE, "spool", ns), exist_ok=True)

    def _wait(self, ready, what):
        end = time.monotonic() + self.timeout
        while time.monotonic() < end:
            for name, p in self.procs.items():
                if p.poll() is not None:
                    raise RuntimeError(f"{name} exited ({p.returncode}) while waiting for {what}: {self.logs()}")
            if ready():
                return
            time.sleep(0.2)
        raise RuntimeError(f"no {what} after {self.timeout:.0f} s: {self.logs()}")

    def logs(self):
        out = []
        names = ["daemons.log", "slurmctld.log", "munged.log"] + sorted(f for f in os.listdir(BASE) if f.startswith("slurmd-")) \
            if os.path.isdir(BASE) else []
        for name in names:
            try:
                with open(os.path.join(BASE, name), errors="replace") as f:
                    out.append(f"--- {name}\n" + "".join(f.readlines()[-15:]))
            except OSError:
                pass
        return "\n".join(out)

    def stop(self):
        for name in sorted(self.procs, key=lambda n: -DAEMONS.index(n.split("-")[0])):
            p = self.procs.get(name)
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
        self.procs = {}
        clean()

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc):
        self.stop()
        return False
