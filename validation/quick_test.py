#!/usr/bin/env python3
"""The `validation` meson test (about 30-60 s): keeps the measure -> fit -> validate -> plot pipeline honest.

1. Regenerates the committed reports from the committed data (validation/offload, validation/raxml) in a
   temporary copy and checks that the summaries equal the committed summary.json (the report is a pure
   function of the committed measurements and the model).
2. Measures a tiny subset live (simulated 8x200 alignment on the off-load runtime, 6 configurations;
   RAxML on 8 taxa x 300 sites, 3 configurations x B = 1, 2 (5 cases: B=1 m=2 pooled into m=1), with its synchronisations counted) and runs the report on it: the
   pipeline must work end to end and produce the JSON keys and plots. Accuracy is not asserted on the live
   subset (CI machines are loaded); it is asserted on the committed data by step 1.
3. Runs the GPU sweep (sweep_gpu.py --quick, time-sliced, both host policies) with stand-ins for mmgp profile and
   mmgp-offload-run (no GPU here; mmgp itself validates), and checks what it writes: every run with its policy, the
   policies alternated, a case per mapping and policy (the spinning ones in their own group, and predicted again by
   the spinning profile), the GPU's best against the CPU's taken from the blocking runs.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

import common  # validation/common.py, beside this script

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def same(a, b, path=""):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in set(a) | set(b):
            if k not in a or k not in b:
                check(False, f"summary key {path}/{k} present in only one of committed and regenerated")
            else:
                same(a[k], b[k], f"{path}/{k}")
    elif isinstance(a, list) and isinstance(b, list):
        check(len(a) == len(b), f"{path}: list lengths differ")
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}/{i}")
    elif isinstance(a, float) or isinstance(b, float):
        check(a is not None and b is not None and math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9),
              f"{path}: committed {a}, regenerated {b}")
    else:
        check(a == b, f"{path}: committed {a!r}, regenerated {b!r}")


def pure_helpers():
    """The repetition rules of common.py and the stages of validation/tune/work_breakdown.py on known inputs (no
    measuring)."""
    # 90 % interval of the median by order statistics: n = 5 -> (min, max); 9 -> (2nd, 8th); 15 -> (4th, 12th).
    check(common.median_ci([5, 1, 4, 2, 3]) == (1, 5), "median_ci n=5 is (min, max)")
    check(common.median_ci(list(range(9, 0, -1))) == (2, 8), "median_ci n=9 is (2nd, 8th)")
    check(common.median_ci(list(range(1, 16))) == (4, 12), "median_ci n=15 is (4th, 12th)")
    check(common.median_ci([1, 2, 3, 4]) is None, "median_ci n=4 is undefined at 90 %")
    check(not common.median_uncertain([100, 101, 99, 100, 102], 0.10), "a tight median is certain")
    check(common.median_uncertain([100, 300, 99, 100, 102], 0.10), "an outlier at the top keeps (min, max) wide")
    # extra_repetitions: configuration "a" is tight after 5 runs, "b" alternates between two modes (never
    # certain: runs to the cap), "c" had a censored run (never repeated), "d" is not eligible.
    rows = []
    for rep in range(5):
        rows += [{"k": "a", "rep": rep, "wall_s": "1.0", "censored": "0", "external_cpu_share": "0"},
                 {"k": "b", "rep": rep, "wall_s": str(1.0 + 2.0 * (rep % 2)), "censored": "0", "external_cpu_share": "0"},
                 {"k": "c", "rep": rep, "wall_s": str(1.0 + rep), "censored": "1" if rep == 0 else "0",
                  "external_cpu_share": "0"},
                 {"k": "d", "rep": rep, "wall_s": str(1.0 + rep), "censored": "0", "external_cpu_share": "0"}]

    def run_one(last):
        n = int(last["rep"]) + 1
        return dict(last, rep=n, wall_s=str(1.0 + 2.0 * (n % 2)))
    added = common.extra_repetitions(rows, ("k",), run_one, 60.0, 9, 0.10, eligible=lambda r: r["k"] != "d")
    count = {k: sum(1 for r in rows if r["k"] == k) for k in "abcd"}
    check(added == 4 and count == {"a": 5, "b": 9, "c": 5, "d": 5},
          f"extra_repetitions: only the uncertain eligible uncensored one, up to the cap (added {added}, {count})")
    # A non-quiet run does not count for the median, but counts for the cap.
    check(not common.is_quiet({"external_cpu_share": "0.3"}) and common.is_quiet({"external_cpu_share": ""}),
          "is_quiet: other processes below 0.25 core")
    # repeatability.cases on a GPU sweep's runs.csv: a run that failed is left out, a sweep without the policy column
    # is edtlp, the case is the median of the rest.
    import repeatability
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "runs.csv")
        with open(path, "w") as f:
            f.write("m,p,sharing,rep,wall_s,censored,bound_s,failed\n2,132,mps,0,0.058,0,20.0,\n"
                    "2,132,mps,1,0.133,0,20.0,\n2,132,mps,2,0.132,0,20.0,\n2,132,mps,3,0.001,0,20.0,exit 1\n")
        got = {k: c["measured_s"] for k, c in repeatability.cases(path, "gpu").items()}
    check(got == {("mps", "edtlp", "2", "132"): 0.132}, f"repeatability.cases --kind gpu: {got}")
    # work_breakdown.stages_of: a journal's runs by stage, machine seconds (a run's time x its nodes); against a best
    # of 10 s, a configuration at 10.5 s is not "more than 10 % slower", one at 11.5 s is.
    sys.path.insert(0, os.path.join(HERE, "tune"))
    import work_breakdown
    truth = {"1/1/1/edtlp": 10.0, "2/1/1/edtlp": 10.5, "1/2/2/edtlp": 11.5}
    runs = [{"m": 1, "p": 1, "nodes": 1, "policy": "edtlp", "short": True, "outcome": "ok", "wall_s": 1.0, "why": "screen"},
            {"m": 1, "p": 2, "nodes": 2, "policy": "edtlp", "short": True, "outcome": "censored", "wall_s": 1.5,
             "why": "screen"},
            {"m": 1, "p": 1, "nodes": 1, "policy": "edtlp", "short": False, "outcome": "ok", "wall_s": 10.0,
             "why": "explore: the least known configuration"},
            {"m": 1, "p": 2, "nodes": 2, "policy": "edtlp", "short": False, "outcome": "ok", "wall_s": 12.0,
             "why": "explore: the least known configuration"},
            {"m": 2, "p": 1, "nodes": 1, "policy": "edtlp", "short": False, "outcome": "ok", "wall_s": 10.5,
             "why": "explore: the least known configuration"},
            {"m": 1, "p": 1, "nodes": 1, "policy": "edtlp", "short": False, "outcome": "ok", "wall_s": 9.0,
             "why": "repeat the chosen"}]
    with tempfile.TemporaryDirectory() as d:
        journal = os.path.join(d, "journal.jsonl")
        with open(journal, "w") as f:
            f.write(json.dumps({"mmgp_tune": 1}) + "\n")
            f.writelines(json.dumps(r) + "\n" for r in runs)
        got, fastest_runs = work_breakdown.stages_of(journal, truth)
    want = {"screen": 1.0 + 3.0, "screen stopped": 3.0, "explore": 10.0 + 2 * 12.0 + 10.5,
            "explore >10 % slower": 2 * 12.0, "decide": 9.0, "two fastest, full": 10.0 + 10.5 + 9.0}
    check(got == want and fastest_runs == 3, f"work_breakdown.stages_of: {got}, {fastest_runs} against {want}, 3")


STAND_IN_MMGP = """#!/usr/bin/env python3
import json, os, sys
if sys.argv[1:2] == ["profile"]:  # the profile a GPU would measure: a recorded one, its policy as asked
    with open({calls!r}, "a") as f:
        f.write(" ".join(sys.argv[1:]) + "\\n")
    doc = json.load(open({app!r}))
    if "--policy" in sys.argv and sys.argv[sys.argv.index("--policy") + 1] == "os":
        doc["provenance"]["policy"] = "os"
    json.dump(doc, open(sys.argv[sys.argv.index("-o") + 1], "w"))
    sys.exit(0)
os.execv({mmgp!r}, [{mmgp!r}] + sys.argv[1:])
"""
STAND_IN_RUN = """#!/usr/bin/env python3
import json, sys
a = sys.argv[1:]
m, p = int(a[a.index("--m") + 1]), int(a[a.index("--p") + 1])
spin = a[a.index("--policy") + 1] == "os"
gpu = "--accelerator" in a
print(json.dumps({{"wall_s": (2.3 / p ** 0.8 + 0.05 * m) * (0.5 if spin else 1.0) if gpu else 0.3}}))
"""


def gpu_sweep_plumbing(build, tmp):
    """Step 3: sweep_gpu.py's files, with stand-ins where a GPU would answer."""
    bin_dir = os.path.join(tmp, "gpu-bin")
    os.makedirs(bin_dir)
    recorded = os.path.join(HERE, "gpu", "h200-2026-11-30-1", "libpll")
    calls = os.path.join(tmp, "profile-calls.txt")
    for name, text in (("mmgp", STAND_IN_MMGP.format(app=os.path.join(recorded, "app.json"), calls=calls,
                                                     mmgp=os.path.join(build, "cli", "mmgp"))),
                       ("mmgp-offload-run", STAND_IN_RUN.format())):
        with open(os.path.join(bin_dir, name), "w") as f:
            f.write(text.replace("#!/usr/bin/env python3", "#!" + sys.executable, 1))
        os.chmod(os.path.join(bin_dir, name), 0o755)
    out = os.path.join(tmp, "gpu-sweep")
    done = subprocess.run([sys.executable, os.path.join(HERE, "sweep_gpu.py"), "--platform",
                           os.path.join(recorded, "platform.json"), "--quick", "--bin", bin_dir, "--out", out,
                           "--modes", "time_sliced", "--policies", "edtlp,os"], capture_output=True, text=True)
    check(done.returncode == 0, f"gpu sweep with stand-ins: exit 0 ({done.returncode}: {done.stderr[-300:]})")
    if done.returncode != 0:
        return
    import csv
    rows = list(csv.DictReader(open(os.path.join(out, "runs.csv"))))
    check(len(rows) == 64 and [r["policy"] for r in rows[:4]] == ["edtlp", "os", "edtlp", "os"],
          f"gpu sweep: 16 mappings x 2 runs x 2 policies, alternated ({len(rows)} runs)")
    cases = json.load(open(os.path.join(out, "sweep.json")))["cases"]
    spinning = [c for c in cases if c.get("policy") == "os"]
    check(len(cases) == 32 and len(spinning) == 16 and all(c["group"] == "libpll os" for c in spinning)
          and all("policy" not in c and c["group"] == "libpll" for c in cases if c not in spinning),
          "gpu sweep: a case per mapping and policy, the spinning ones in the group 'libpll os'")
    one = [c for c in cases if c["m"] == 2 and c["p"] == 32]
    check(sorted(c["measured_s"] for c in one) == sorted([(2.3 / 32 ** 0.8 + 0.1) * f for f in (0.5, 1.0)]),
          "gpu sweep: each case the median of its own policy's runs")
    report = open(os.path.join(out, "validate.txt")).read()
    check("group libpll:" in report and "group libpll os:" in report, "gpu sweep: validated by group")
    by_own = json.load(open(os.path.join(out, "sweep-os.json")))
    check(by_own["scenario"]["application"] == "app-os.json" and by_own["cases"] == spinning
          and json.load(open(os.path.join(out, "app-os.json")))["provenance"].get("policy") == "os"
          and "policy" not in json.load(open(os.path.join(out, "app.json")))["provenance"]
          and "group libpll os:" in open(os.path.join(out, "validate-os.txt")).read(),
          "gpu sweep: the spinning runs also predicted by the program's spinning profile")
    cpu = json.load(open(os.path.join(out, "cpu.json")))
    blocking_best = min(c["measured_s"] for c in cases if c not in spinning)
    check(cpu["gpu_best"]["wall_s"] == blocking_best, "gpu sweep: the GPU's best against the CPU's is a blocking run")
    profiled = [line.split() for line in open(calls)]
    check(len(profiled) == 2 and profiled[0][profiled[0].index("--policy") + 1] == "edtlp"
          and profiled[1][profiled[1].index("--policy") + 1] == "os", "gpu sweep: profiled blocking, then spinning")
    # The default, blocking alone, into the same folder: one profile, and the spinning files gone.
    os.remove(calls)
    done = subprocess.run([sys.executable, os.path.join(HERE, "sweep_gpu.py"), "--platform",
                           os.path.join(recorded, "platform.json"), "--quick", "--bin", bin_dir, "--out", out,
                           "--modes", "time_sliced"], capture_output=True, text=True)
    check(done.returncode == 0 and len(open(calls).readlines()) == 1
          and not any(os.path.exists(os.path.join(out, f)) for f in ("app-os.json", "sweep-os.json", "validate-os.txt"))
          and all("policy" not in c for c in json.load(open(os.path.join(out, "sweep.json")))["cases"]),
          f"gpu sweep, blocking alone: one profile, no spinning files or cases ({done.returncode})")


def sanitized(build):
    """True when the build directory was configured with a sanitizer (meson's b_sanitize)."""
    try:
        opts = json.load(open(os.path.join(build, "meson-info", "intro-buildoptions.json")))
    except (OSError, ValueError):
        return False
    return any(o.get("name") == "b_sanitize" and o.get("value") not in ("none", "", None) for o in opts)


def main():
    pure_helpers()
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    a = ap.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="mmgp-validation-") as tmp:
        # 1. committed data -> same report
        for kind, data in (("offload", "runs.csv"), ("raxml", "runs.csv"), ("gpu", "sweep.json")):
            src = os.path.join(HERE, kind)
            if not os.path.exists(os.path.join(src, data)):
                print(f"note: no committed {kind} data", file=sys.stderr)
                continue
            dst = os.path.join(tmp, "committed", kind)
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("plots"))
            subprocess.run([py, os.path.join(HERE, "report.py"), "--build", a.build, "--dir", dst, "--kind", kind,
                            "--no-plots"], check=True, stdout=subprocess.DEVNULL)
            committed = json.load(open(os.path.join(src, "summary.json")))
            regenerated = json.load(open(os.path.join(dst, "summary.json")))
            same(committed, regenerated, kind)
        # 2. live tiny subset
        off = os.path.join(tmp, "live", "offload")
        # --profile-tolerance 0: the profile check always calibrates and profiles again after the sweep
        subprocess.run([py, os.path.join(HERE, "sweep_offload.py"), "--quick", "--build", a.build, "--out", off,
                        "--profile-tolerance", "0"], check=True, stderr=subprocess.DEVNULL)
        pc = json.load(open(os.path.join(off, "machine.json"))).get("profile_check", {})
        check("used" in pc and ("after_sweep" in pc or "note" in pc),
              f"live offload: profile_check compared and re-profiled (or said why not): {pc}")
        for f in ("machine.json", "platform-calibrated.json", "app-sim8x200.json", "runs.csv"):
            check(os.path.exists(os.path.join(off, f)), f"live offload: {f} written")
        subprocess.run([py, os.path.join(HERE, "report.py"), "--build", a.build, "--dir", off, "--kind", "offload"],
                       check=True, stdout=subprocess.DEVNULL)
        rep = json.load(open(os.path.join(off, "report.json")))
        for k in ("cases", "mean_abs_err_pct", "max_abs_err_pct", "std_abs_err_pct", "optimal_hit", "regret_pct",
                  "censored", "censored_right", "censored_ranked_last", "fitted", "held_back"):
            check(k in rep["summary"], f"live offload: summary key {k}")
        check(rep["summary"]["cases"] == 6, "live offload: 6 cases")
        for c in rep["cases"]:
            check(c["predicted_s"] > 0 and c["measured_s"] > 0, f"live offload: {c['label']} has times")
        if shutil.which("gnuplot"):
            for f in ("scatter.svg", "scatter.png", "sim8x200_U3.svg", "sim8x200_U3.png"):
                check(os.path.getsize(os.path.join(off, "plots", f)) > 1000, f"live offload: plot {f}")
        if sanitized(a.build):
            # The platform costs come from sanitizer-instrumented harnesses (slower than this machine), RAxML is
            # Debian's uninstrumented binary: fitting one against the other is meaningless, and mmgp fit refuses
            # runs faster than the platform's known costs.
            print("note: sanitized build, live RAxML subset skipped", file=sys.stderr)
        elif shutil.which("raxmlHPC-PTHREADS-SSE3"):
            rx = os.path.join(tmp, "live", "raxml")
            subprocess.run([py, os.path.join(HERE, "sweep_raxml.py"), "--quick", "--out", rx], check=True,
                           stderr=subprocess.DEVNULL)
            shutil.copy(os.path.join(off, "platform-calibrated.json"), rx)
            subprocess.run([py, os.path.join(HERE, "report.py"), "--build", a.build, "--dir", rx, "--kind", "raxml"],
                           check=True, stdout=subprocess.DEVNULL)
            rep = json.load(open(os.path.join(rx, "report.json")))
            # (m, p) = (1, 2), (1, 3), (2, 2) at B = 1 and 2; at B = 1, m = 2 starts the one process of m = 1,
            # so its runs are pooled into (1, 2): 5 cases, and the pooled case says so.
            check(rep["summary"]["cases"] == 5, "live raxml: 5 cases (3 configurations x B = 1, 2, less the pooled one)")
            pooled = [c for c in rep["cases"] if "pooled with the runs labelled m=2" in c["source"]]
            check(len(pooled) == 1 and pooled[0]["label"].endswith("B=1 m=1 p=2"),
                  "live raxml: B=1 m=2 p=2 pooled into B=1 m=1 p=2")
            bar = json.load(open(os.path.join(rx, "machine.json"))).get("barriers", {}).get("8x1200", {})
            check(bar.get("N_per_bootstrap", 0) > 0 and bar.get("start_up_jobs", -1) >= 0,
                  "live raxml: synchronisations per bootstrap counted (machine.json barriers)")
            check(any(c["role"] == "fitted" for c in rep["cases"]), "live raxml: a fitted case")
            check(sum(c["role"] == "fitted" for c in rep["cases"]) <= len(rep["cases"]) // 3, "live raxml: <= 1/3 fitted")
        else:
            print("note: raxml not installed, RAxML subset skipped", file=sys.stderr)
        # 3. the GPU sweep's files
        gpu_sweep_plumbing(a.build, tmp)
    common.finish_checks(failures, "validation pipeline: OK")


if __name__ == "__main__":
    main()
