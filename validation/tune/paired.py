#!/usr/bin/env python3
"""Two settings of mmgp tune compared on the same replays: per group, P(regret <= 3 %) and median machine time of
each over the same seeds, and the paired difference of P with its standard error.

    python3 validation/tune/paired.py --a "--constant noise.dof=4 --constant fit.min_configurations=5" --b "" \\
        --setting prior --seeds 1000

--setting prior replays each group with its scenario (the application profile as the prior); a, b or c with the
new user's platform on that variant (bench.py's VARIANTS). Seeds start at 1 (the benchmark's). Prints a table;
a difference is beyond the noise of the comparison when it exceeds twice its standard error.
"""
import argparse
import concurrent.futures
import math
import os
import shlex
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mmgp", default=os.path.join(bench.ROOT, "build", "cli", "mmgp"))
    ap.add_argument("--a", default="", help="mmgp tune's extra words for setting A")
    ap.add_argument("--b", default="", help="mmgp tune's extra words for setting B")
    ap.add_argument("--setting", default="prior", choices=["prior"] + list(bench.VARIANTS))
    ap.add_argument("--seeds", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    pool = concurrent.futures.ThreadPoolExecutor(args.jobs)
    seeds = list(range(1, args.seeds + 1))
    print(f"# python3 validation/tune/paired.py --a {shlex.quote(args.a)} --b {shlex.quote(args.b)} "
          f"--setting {args.setting} --seeds {args.seeds}")
    print(f"{'group':<22} {'P a':>5} {'P b':>5} {'b - a':>6} {'se':>5} {'time a':>7} {'time b':>7}")
    beyond = []
    with tempfile.TemporaryDirectory() as folder:
        for group in bench.groups():
            name = group[0]
            path, _, truth, exh, profile, base = bench.setting_replay(group, args.setting, folder)
            out = {}
            for which, words in (("a", args.a), ("b", args.b)):
                extra = base + shlex.split(words)
                out[which] = list(pool.map(lambda sd: bench.run_tune(args.mmgp, profile, path, sd, extra), seeds))
            ok = {w: [bench.regret(truth, r["chosen"]) <= bench.TOL + 1e-12 for r in out[w]] for w in out}
            d = [int(b) - int(a) for a, b in zip(ok["a"], ok["b"])]
            mean_d = statistics.mean(d)
            se = statistics.stdev(d) / math.sqrt(len(d)) if len(d) > 1 else 0.0
            t = {w: statistics.median(r["machine_s"] for r in out[w]) / exh for w in out}
            print(f"{name:<22} {statistics.mean(ok['a']):>5.3f} {statistics.mean(ok['b']):>5.3f} {mean_d:>+6.3f} "
                  f"{se:>5.3f} {100 * t['a']:>6.1f}% {100 * t['b']:>6.1f}%", flush=True)
            if abs(mean_d) > 2 * se:
                beyond.append(f"{name} ({mean_d:+.3f})")
    print("differences of P beyond twice their standard error: " + (", ".join(beyond) if beyond else "none"))


if __name__ == "__main__":
    main()
