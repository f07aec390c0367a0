#!/usr/bin/env python3
"""Counts RAxML's parallel regions (the N of the model: off-loads, here thread jobs) per bootstrap.

RAxML's PTHREADS build runs every parallel region ("job") the same way: the master publishes a job number,
the worker threads busy-wait for it to change (a load, a compare and a jump: no `pause`, no yield, no
futex — `strace -f -c` shows no futex call in a whole run), execute the job, and set their barrier flag,
which the master busy-waits on. So N, the number of synchronisations per bootstrap, is the number of times
a worker leaves that wait loop. Debian's binaries are stripped, so the loop is found by its machine code:

    8b 05 XX XX XX XX     mov    job(%rip),%eax     ; the published job number
    44 39 f8              cmp    %r15d,%eax         ; == the last one seen?
    74 f5                 je     (back to the mov)  ; spin

and gdb counts how often the instruction after it runs (a breakpoint with a large ignore count) in a run
with -T 2 (one worker). Two runs, with B = 1 and B = 2 bootstraps, give the jobs per bootstrap and the
jobs of the start-up (parsing, parsimony starting tree, model optimisation).

    validation/raxml_barriers.py ALIGNMENT.phy          # prints JSON

Needs gdb (scripts/setup.sh installs it). Verified on raxml 8.2.12+dfsg-8+b2 (raxmlHPC-PTHREADS-SSE3,
sha256 4c692d18...): the loop is at file offset 0x12e80.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

BINARY = "raxmlHPC-PTHREADS-SSE3"
# mov job(%rip),%eax ; cmp %r15d,%eax ; je -11
LOOP = re.compile(rb"\x8b\x05....\x44\x39\xf8\x74\xf5", re.DOTALL)


class BarrierError(Exception):
    pass


def text_section(path):
    """(file offset, virtual address, bytes) of the ELF .text section (64-bit little-endian only)."""
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise BarrierError(f"{path}: expected a 64-bit little-endian ELF file")
    import struct
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    def sh(i):
        return struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
    strtab = sh(shstrndx)
    names = data[strtab[4]:strtab[4] + strtab[5]]
    for i in range(shnum):
        name_off, _, _, addr, off, size = sh(i)[:6]
        name = names[name_off:names.index(b"\0", name_off)]
        if name == b".text":
            return off, addr, data[off:off + size]
    raise BarrierError(f"{path}: no .text section")


def loop_exit_address(path):
    """Virtual address (relative to the load base of a PIE) of the instruction after the workers' wait loop."""
    off, addr, text = text_section(path)
    hits = [m.start() for m in LOOP.finditer(text)]
    if len(hits) != 1:
        raise BarrierError(f"{path}: expected exactly one worker wait loop (mov/cmp %r15d/je -11) in .text, found {len(hits)}; "
                           "this RAxML build is not one this counter knows")
    return addr + hits[0] + 11


GDB_SCRIPT = r"""
import gdb
gdb.execute("set pagination off")
gdb.execute("starti", to_string=True)
base = None
for line in gdb.execute("info proc mappings", to_string=True).splitlines():
    parts = line.split()
    if len(parts) >= 5 and parts[-1].endswith("/{name}"):
        base = int(parts[0], 16)
        break
if base is None:
    raise gdb.GdbError("no mapping of {name}")
bp = gdb.Breakpoint("*" + hex(base + {rel}))
bp.ignore_count = 1 << 30
gdb.execute("continue", to_string=True)
print("MMGP_HITS", bp.hit_count)
"""


def count_jobs(aln, bootstraps, binary=None):
    """Jobs executed by the one worker of a -T 2 run with `bootstraps` bootstraps."""
    binary = binary or shutil.which(BINARY)
    if binary is None:
        raise BarrierError(f"{BINARY} not found (apt-get install raxml)")
    if shutil.which("gdb") is None:
        raise BarrierError("gdb not found (scripts/setup.sh installs it)")
    rel = loop_exit_address(binary)
    with tempfile.TemporaryDirectory() as wd:
        script = os.path.join(wd, "count.py")
        with open(script, "w") as f:
            f.write(GDB_SCRIPT.replace("{name}", os.path.basename(binary)).replace("{rel}", str(rel)))
        cmd = ["gdb", "-nx", "-batch", "-ex", f"source {script}", "--args", binary, "-T", "2", "-m", "GTRCAT",
               "-s", os.path.abspath(aln), "-n", "count", "-w", wd, "-p", "12345", "-x", "54321", "-N", str(bootstraps)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        m = re.search(r"MMGP_HITS (\d+)", p.stdout)
        if not m or "exited normally" not in p.stdout + p.stderr:
            tail = (p.stdout + p.stderr).strip().splitlines()[-3:]
            raise BarrierError(f"gdb run of {binary} failed: {' | '.join(tail)}")
        return int(m.group(1)), rel


def barriers(aln):
    """N per bootstrap and the start-up's jobs, from runs with B = 1 and B = 2."""
    h1, rel = count_jobs(aln, 1)
    h2, _ = count_jobs(aln, 2)
    per = h2 - h1
    if per <= 0:
        raise BarrierError(f"{aln}: B = 2 ran {h2} jobs, B = 1 {h1}: expected more with more bootstraps")
    return {"jobs_B1": h1, "jobs_B2": h2, "N_per_bootstrap": per, "start_up_jobs": h1 - per,
            "binary": shutil.which(BINARY), "loop_exit": hex(rel),
            "method": "gdb breakpoint (ignore count) after the worker's job wait loop, -T 2 (one worker), "
                      "B = 1 and B = 2, seeds -p 12345 -x 54321 (validation/raxml_barriers.py)"}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    try:
        print(json.dumps(barriers(sys.argv[1]), indent=1))
    except BarrierError as e:
        sys.exit(f"raxml_barriers: {e}")


if __name__ == "__main__":
    main()
