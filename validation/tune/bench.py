#!/usr/bin/env python3
"""The tuner benchmark: mmgp tune against the other ways of finding a mapping, on recorded real sweeps.

    python3 validation/tune/bench.py [--mmgp build/cli/mmgp] [--seeds 100] [--jobs 2]

Every group is one program input swept over its configurations with repetitions (validation/offload/runs.csv:
the libpll off-load runtime, 4 groups; validation/raxml/runs.csv: RAxML, 8 groups; validation/gromacs/runs.csv:
GROMACS, 2 groups), and the simulated groups of SIMULATED (across nodes: skeleton.c under SimGrid SMPI, one
deterministic run per configuration; their new user brings the simulated cluster's platform). Each method replays runs
drawn from the recorded repetitions of the configuration it asks for (a censored repetition costs its bound and
says only "at least the bound"), with one seed per replay:

  mmgp-tune           mmgp tune SCENARIO --replay GROUP.csv (the scenario's application profile is the prior)
  mmgp-tune-no-prior  the same with --no-prior (the application's measured times not used)
  exhaustive          every configuration once, the fastest run chosen
  random              configurations in random order, one run each, until mmgp tune's median machine time
  optuna              Optuna's TPE sampler over the configurations, until mmgp tune's median machine time

mmgp tune is also replayed with --parallel 2 and 4 (runs in flight at once, the recorded times laid out K at a
time): its P(regret <= 3 %), machine time and time to decision against the sequential loop's (medians per group).

Ground truth: the median of every recorded repetition of a configuration (censored ones at their bound).
Writes groups/*.csv (the plain replay format), results.json, report.txt and curve.svg (P(regret <= 3 %)
against machine time spent, as a fraction of exhaustive trial's) beside this file.
"""
import argparse
import concurrent.futures
import csv
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile


def import_optuna():
    """Debian's python3-optuna (scripts/setup.sh installs it); only the benchmark itself needs it, not the
    modules that import this one for its replay functions."""
    try:
        import optuna
        return optuna
    except ImportError:
        if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3"):
            os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)  # the system interpreter has the package
        raise SystemExit("bench: Optuna is missing: apt-get install python3-optuna (scripts/setup.sh)")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "validation"))
import common  # noqa: E402  (validation/common.py: the reports are written atomically)
TOL = 0.03


# Simulated groups: (name, scenario with the prior, the new user's platform). Each is a group CSV written by its
# script (validation/simulate/sweep_nodes_group.py: skeleton.c simulated by SMPI over nodes x m x p, one
# deterministic run per configuration), read back here; its new user brings the simulated cluster's calibrated
# platform (calibrate --simulate), not host.json (this 2-core machine, one node).
SIMULATED = [(f"smpi-{short}-skel-U1", os.path.join(ROOT, "validation", "simulate", f"scenario-skeleton-{cluster}.json"),
              os.path.join(ROOT, "validation", "simulate", platform))
             for short, cluster, platform in (("fattree", "fattree-ib", "fattree-ib-platform.json"),
                                              ("gige", "gige", "gige-ppn8-platform.json"))]
NEW_USER_PLATFORM = {name: platform for name, _, platform in SIMULATED}


def simulated_rows(name):
    """A simulated group's CSV (the replay format) as rows of the runs.csv kind: rep counts per configuration."""
    rows, seen = [], {}
    for r in csv.DictReader(open(os.path.join(HERE, "groups", name + ".csv"))):
        k = (r["m"], r["p"], r["nodes"], r["policy"])
        seen[k] = seen.get(k, -1) + 1
        rows.append({"m": r["m"], "p": r["p"], "nodes": r["nodes"], "policy": r["policy"], "rep": str(seen[k]),
                     "wall_s": r["time_s"], "censored": r["censored"], "bound_s": r["bound_s"]})
    return rows


def groups():
    """(name, scenario, units, rows) per recorded group, then the simulated ones."""
    out = []
    for program, folder in (("libpll", "offload"), ("raxml", "raxml"), ("gromacs", "gromacs"), ("iqtree", "iqtree"),
                            ("pwx", "pwx")):
        path = os.path.join(ROOT, "validation", folder, "runs.csv")
        if not os.path.exists(path):  # a sweep not recorded yet
            continue
        by = {}
        for r in csv.DictReader(open(path)):
            by.setdefault((r["input"], int(r["units"])), []).append(r)
        for (inp, units), rows in sorted(by.items()):
            scen = os.path.join(ROOT, "validation", folder, f"scenario-{inp}.json")
            out.append((f"{program}-{inp}-U{units}", scen, units, rows))
    for name, scen, _ in SIMULATED:
        if os.path.exists(os.path.join(HERE, "groups", name + ".csv")):
            out.append((name, scen, int(name.rsplit("-U", 1)[1]), simulated_rows(name)))
    return out


def made_up_groups():
    """(name, None, units, rows) of the made-up groups (validation/tune/shape/: no program, no application profile:
    replayed in the new-user setting alone)."""
    path = os.path.join(HERE, "shape", "runs.csv")
    rows = list(csv.DictReader(open(path)))
    return [(f"shape-{rows[0]['input']}-U{rows[0]['units']}", None, int(rows[0]["units"]), rows)]


def nodes_of(r):
    return int(r.get("nodes") or 1)


def write_group(name, units, rows, folder):
    """The replay file of a group's rows (with their sharing mode, on a GPU node)."""
    path = os.path.join(folder, name + ".csv")
    shared = any(r.get("sharing") for r in rows)
    with open(path, "w") as f:
        f.write("m,p,nodes,policy,units,time_s,censored,bound_s" + (",sharing" if shared else "") + "\n")
        for r in sorted(rows, key=lambda r: (int(r["m"]), int(r["p"]), r["policy"], int(r["rep"]))):
            f.write(f"{r['m']},{r['p']},{nodes_of(r)},{r['policy']},{units},{r['wall_s']},{r['censored']},{r['bound_s']}"
                    + (f",{r['sharing']}" if shared else "") + "\n")
    return path


def sharing_args(rows):
    """mmgp tune's words for the sharing mode a GPU group's rows name (one mode a group); none for the others."""
    modes = {r.get("sharing") for r in rows} - {None, ""}
    return ["--set", f'search.sharing=["{modes.pop()}"]'] if len(modes) == 1 else []


def key(m, p, nodes, pol):
    return f"{m}/{p}/{nodes}/{pol}"


def reps_of(rows):
    """Per configuration key: its recorded repetitions as (wall seconds, censored); a censored one at its bound."""
    reps = {}
    for r in rows:
        reps.setdefault(key(r["m"], r["p"], nodes_of(r), r["policy"]), []).append(
            (float(r["bound_s"]) if r["censored"] == "1" else float(r["wall_s"]), r["censored"] == "1"))
    return reps


def nodes_in(k):
    return int(k.split("/")[2])


def truth_of(reps):
    return {k: statistics.median(t for t, _ in v) for k, v in reps.items()}


def exhaustive_cost(truth):
    """Machine seconds of one run of every configuration: the sum of each one's median wall time (censored runs at
    their bound) times its nodes — the denominator of every machine-time fraction, and what mmgp tune prints."""
    return sum(t * nodes_in(k) for k, t in truth.items())


def oracle_cost(truth, tol=TOL):
    """The floor of any method without a model's word: a tuner that knows the best runs it once and stops every
    other configuration at the tolerance above the best's time (a faster one runs to its end)."""
    best = min(truth, key=truth.get)
    return sum((truth[k] if k == best else min(truth[k], (1 + tol) * truth[best])) * nodes_in(k) for k in truth)


def regret(truth, chosen):
    if chosen is None or chosen not in truth:
        return math.inf
    return truth[chosen] / min(truth.values()) - 1


def run_tune(mmgp, scen, csv_path, seed, extra):
    cmd = [mmgp, "tune", scen, "--replay", csv_path, "--seed", str(seed), "--json", "--quiet"] + extra
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"bench: {' '.join(cmd)} failed: {p.stderr.strip()}")
    j = json.loads(p.stdout)
    c = j["chosen"]
    chosen = key(c["m"], c["p"], c["nodes"], c["policy"]) if c else None
    trace = [(s["machine_s"], s["chosen"]) for s in j["trace"]]
    return {"chosen": chosen, "machine_s": j["machine_s"], "runs": j["runs"], "trace": trace, "stop": j["stop"],
            "elapsed_s": j["elapsed_s"]}


def draw(rng, reps, k):
    return reps[k][rng.randrange(len(reps[k]))]


def exhaustive(reps, seed, slowest_first=False):
    """One run of every configuration (its slowest recorded one with `slowest_first`, as variant d replays)."""
    rng = random.Random(f"exhaustive/{seed}")
    spent, best, trace = 0.0, None, []
    for k in reps:
        t, cens = max(reps[k]) if slowest_first else draw(rng, reps, k)
        spent += t * nodes_in(k)
        if not cens and (best is None or t < best[0]):
            best = (t, k)
        trace.append((spent, best[1] if best else None))
    return {"chosen": best[1] if best else None, "machine_s": spent, "runs": len(reps), "trace": trace}


def exact_exhaustive_p(reps, truth, slowest_first):
    """P(the fastest of one run per configuration is within the tolerance of the best), exactly: each configuration's
    run drawn uniformly from its recorded ones (slowest_first: its slowest); ties go to neither."""
    draws = {k: ([max(v)] if slowest_first else v) for k, v in reps.items()}
    best = min(truth.values())
    p = 0.0
    for k, vs in draws.items():
        if truth[k] > best * (1 + TOL) + 1e-12:
            continue
        for t, cens in vs:
            if cens:
                continue
            q = 1.0 / len(vs)
            for j, ws in draws.items():
                if j != k:
                    q *= sum(1 for (u, c) in ws if c or u > t) / len(ws)
            p += q
    return p


def random_search(reps, seed, budget):
    rng = random.Random(f"random/{seed}")
    keys = list(reps)
    order = rng.sample(keys, len(keys))
    spent, best, trace, runs = 0.0, None, [], 0
    while spent < budget:
        k = order[runs % len(order)] if runs < len(order) else rng.choice(keys)
        t, cens = draw(rng, reps, k)
        spent += t * nodes_in(k)
        runs += 1
        if not cens and (best is None or t < best[0]):
            best = (t, k)
        trace.append((spent, best[1] if best else None))
    return {"chosen": best[1] if best else None, "machine_s": spent, "runs": runs, "trace": trace}


def optuna_search(reps, seed, budget):
    optuna = import_optuna()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    rng = random.Random(f"optuna/{seed}")
    keys = sorted(reps)
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed), direction="minimize")
    spent, trace, runs = 0.0, [], 0
    best = None
    while spent < budget:
        trial = study.ask()
        k = trial.suggest_categorical("configuration", keys)
        t, cens = draw(rng, reps, k)
        spent += t * nodes_in(k)
        runs += 1
        study.tell(trial, t)
        if not cens and (best is None or t < best[0]):
            best = (t, k)
        trace.append((spent, best[1] if best else None))
    return {"chosen": best[1] if best else None, "machine_s": spent, "runs": runs, "trace": trace}


def at_budget(r, budget):
    """A search's state when its machine time first reached `budget` (the run that crossed it included)."""
    chosen, spent, runs = None, 0.0, 0
    for spent, chosen in r["trace"]:
        runs += 1
        if spent >= budget:
            break
    return {"chosen": chosen, "machine_s": spent, "runs": runs, "trace": r["trace"]}


def resolution(reps, draws=1000):
    """How well the recorded data itself resolves the best: the fraction of bootstrap resamples of every
    configuration's repetitions whose best (by median) is within the tolerance of the recorded best. A method
    that picks by runs cannot be expected to do better than this where it has no more runs than the data."""
    rng = random.Random("resolution")
    truth = truth_of(reps)
    ok = 0
    for _ in range(draws):
        m = {k: statistics.median(rng.choices([t for t, _ in v], k=len(v))) for k, v in reps.items()}
        ok += regret(truth, min(m, key=m.get)) <= TOL + 1e-12
    return ok / draws


def p90(v):
    v = sorted(v)
    return v[min(len(v) - 1, int(math.ceil(0.9 * len(v))) - 1)]


def summary(results, truth, exh_cost):
    rg = [regret(truth, r["chosen"]) for r in results]
    return {
        "p_within_3pct": sum(x <= TOL + 1e-12 for x in rg) / len(rg),
        "median_regret": statistics.median(rg),
        "p90_regret": p90(rg),
        "median_time_fraction": statistics.median(r["machine_s"] for r in results) / exh_cost,
        "median_runs": statistics.median(r["runs"] for r in results),
    }


def curve(results, truth, exh_cost, fractions):
    out = []
    for f in fractions:
        ok = 0
        for r in results:
            chosen = None
            for spent, c in r["trace"]:
                if spent <= f * exh_cost:
                    chosen = c
            ok += regret(truth, chosen) <= TOL + 1e-12
        out.append(ok / len(results))
    return out


VARIANTS = {"a": "as recorded", "b": "deviations / 10", "c": "two best 0.5 % apart", "d": "slowest run first"}


def variant_rows(rows, variant):
    """A group's recorded runs in one of the new-user variants: (a) as recorded; (b) each finished run's deviation
    from its configuration's median shrunk to a tenth (a censored run keeps its bound): a quiet machine or a steady
    program; (c) the second-best configuration's runs scaled so that its median is 0.5 % above the best's (when it
    is further): a near tie; (d) as recorded, replayed with each configuration's first run its slowest recorded one
    (mmgp tune --replay-first slowest): an adversarial first impression."""
    if variant in ("a", "d"):
        return rows
    truth = truth_of(reps_of(rows))
    out = [dict(r) for r in rows]
    if variant == "b":
        for r in out:
            if r["censored"] != "1":
                med = truth[key(r["m"], r["p"], nodes_of(r), r["policy"])]
                r["wall_s"] = f"{med + (float(r['wall_s']) - med) / 10:.6g}"
        return out
    best, second = sorted(truth, key=truth.get)[:2]
    factor = 1.005 * truth[best] / truth[second]
    if factor < 1:
        for r in out:
            if key(r["m"], r["p"], nodes_of(r), r["policy"]) == second:
                r["wall_s"] = f"{float(r['wall_s']) * factor:.6g}"
                if r["bound_s"]:
                    r["bound_s"] = f"{float(r['bound_s']) * factor:.6g}"
    return out


def new_user_args(platform, rows, units):
    """mmgp tune's words for a user who brings only a platform calibrated here: the space is the group's."""
    ms = [int(r["m"]) for r in rows]
    ps = [int(r["p"]) for r in rows]
    ns = [nodes_of(r) for r in rows]
    args = ["--m", f"{min(ms)}:{max(ms)}", "--p", f"{min(ps)}:{max(ps)}", "--nodes", f"{min(ns)}:{max(ns)}",
            "--units", str(units)]
    if len({r["policy"] for r in rows}) > 1:
        args += ["--policy", "both"]
    elif rows:
        args += ["--policy", rows[0]["policy"]]
    return platform, args


def setting_replay(group, setting, folder, platform=None):
    """A group replayed in one setting: "prior" (its scenario, the application profile as the prior) or a new-user
    variant of VARIANTS (only a platform: the group's own in NEW_USER_PLATFORM, else `platform`, else host.json).
    Writes the replayed rows into `folder`; returns (path, reps, truth, exhaustive cost, profile, mmgp tune's
    words)."""
    name, scen, units, rows = group
    vrows = rows if setting == "prior" else variant_rows(rows, setting)
    path = write_group(f"{name}-{setting}", units, vrows, folder)
    reps = reps_of(vrows)
    truth = truth_of(reps)
    if setting == "prior":
        profile, extra = scen, []
    else:
        profile, extra = new_user_args(NEW_USER_PLATFORM.get(name, platform or os.path.join(HERE, "host.json")),
                                       vrows, units)
        if setting == "d":
            extra += ["--replay-first", "slowest"]
    return path, reps, truth, exhaustive_cost(truth), profile, extra + sharing_args(vrows)


def new_user(pool, mmgp, platform, name, units, rows, seeds, folder):
    """Per variant: exhaustive trial's P, the oracle floor and mmgp tune in the new-user setting."""
    out = {}
    for v in VARIANTS:
        path, reps, truth, exh_cost, scen, extra = setting_replay((name, None, units, rows), v, folder, platform)
        tuned = list(pool.map(lambda sd: run_tune(mmgp, scen, path, sd, extra), range(1, seeds + 1)))
        exh = [exhaustive(reps, sd, v == "d") for sd in range(1, seeds + 1)]
        out[v] = {"exhaustive_p": exact_exhaustive_p(reps, truth, v == "d"),
                  "exhaustive_fraction": statistics.median(r["machine_s"] for r in exh) / exh_cost,
                  "oracle_fraction": oracle_cost(truth) / exh_cost,
                  "resolution": resolution(reps),
                  "tune": summary(tuned, truth, exh_cost)}
    return out


PARALLEL = [1, 2, 4]
METHODS = ["mmgp-tune", "mmgp-tune-no-prior", "exhaustive", "random", "optuna"]
COLORS = {"mmgp-tune": "#c22", "mmgp-tune-no-prior": "#e90", "exhaustive": "#555", "random": "#39c", "optuna": "#2a2"}


def svg(report, fractions):
    names = list(report)
    cols, w, h, pad = 4, 230, 170, 34
    rows = (len(names) + cols - 1) // cols
    W, H = cols * w + 20, rows * h + 60
    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="10">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         '<text x="10" y="16" font-size="12">P(regret &lt;= 3 %) against machine time spent (fraction of exhaustive '
         'trial\'s, log scale)</text>']
    lx = 10
    for m in METHODS:
        s.append(f'<rect x="{lx}" y="24" width="10" height="3" fill="{COLORS[m]}"/><text x="{lx + 14}" y="30">{m}</text>')
        lx += 130
    lo, hi = math.log(fractions[0]), math.log(fractions[-1])
    for i, name in enumerate(names):
        x0, y0 = (i % cols) * w + 10, (i // cols) * h + 44
        px = lambda f: x0 + pad + (math.log(f) - lo) / (hi - lo) * (w - pad - 8)
        py = lambda p: y0 + h - pad - p * (h - pad - 14)
        s.append(f'<text x="{x0 + pad}" y="{y0 + 10}">{name}</text>')
        s.append(f'<rect x="{px(fractions[0]):.1f}" y="{py(1):.1f}" width="{px(fractions[-1]) - px(fractions[0]):.1f}" '
                 f'height="{py(0) - py(1):.1f}" fill="none" stroke="#888"/>')
        s.append(f'<line x1="{px(fractions[0]):.1f}" y1="{py(0.9):.1f}" x2="{px(fractions[-1]):.1f}" y2="{py(0.9):.1f}" '
                 'stroke="#bbb" stroke-dasharray="3"/>')
        for f in (0.01, 0.1, 1.0):
            if fractions[0] <= f <= fractions[-1]:
                s.append(f'<text x="{px(f):.1f}" y="{py(0) + 12:.1f}" text-anchor="middle">{f:g}</text>')
        for p in (0, 0.5, 1):
            s.append(f'<text x="{px(fractions[0]) - 3:.1f}" y="{py(p) + 3:.1f}" text-anchor="end">{p:g}</text>')
        for m in METHODS:
            c = report[name]["curves"].get(m)
            if not c:
                continue
            pts = " ".join(f"{px(f):.1f},{py(p):.1f}" for f, p in zip(fractions, c))
            s.append(f'<polyline points="{pts}" fill="none" stroke="{COLORS[m]}" stroke-width="1.5"/>')
    s.append("</svg>")
    return "\n".join(s) + "\n"


def new_user_lines(report, seeds):
    lines = ["new user: mmgp tune with only a platform calibrated on this machine (validation/tune/host.json, no",
             "application profile; a simulated group: its cluster's calibrate --simulate platform), on three variants",
             "of every group: (a) as recorded, (b) run-to-run deviations shrunk to a tenth, (c) the two best",
             "configurations 0.5 % apart, (d) as recorded, each configuration's first replayed run its slowest",
             "(exhaustive trial's too). exh P: exhaustive trial's P<=3%, exact over every draw of one run per",
             "configuration; oracle: the",
             "machine time of a tuner that knows the best and only confirms it (every other configuration stopped at",
             "3 % above the best's time), a fraction of exhaustive trial's; P<=3%, time, runs: mmgp tune's;",
             "target: P >= min(resol, max(0.9, exh P)) and time <= max(50 % (20 % from 20 configurations), 1.25 x",
             "oracle); a miss is marked P, time or both",
             f"{'group':<22} {'n':>3} {'variant':<23} {'resol':>5} {'exh P':>5} {'oracle':>7} {'P<=3%':>6} {'time':>7} {'runs':>5} miss"]
    over, met, rows = [], 0, 0
    for name, g in report.items():
        for v, label in VARIANTS.items():
            x = g["new_user"][v]
            t = x["tune"]
            miss = target_miss(g["configurations"], x)
            rows += 1
            met += not miss
            lines.append(f"{name:<22} {g['configurations']:>3} {v + ' ' + label:<23} {x['resolution']:>5.2f} "
                         f"{x['exhaustive_p']:>5.2f} {100 * x['oracle_fraction']:>6.1f}% {t['p_within_3pct']:>6.2f} "
                         f"{100 * t['median_time_fraction']:>6.1f}% {t['median_runs']:>5g} {miss}".rstrip())
            if x["exhaustive_p"] >= 0.9 and t["median_time_fraction"] > x["exhaustive_fraction"]:
                over.append(f"{name} ({v})")
    lines.append(f"new user: median machine time above exhaustive trial's own (its median over the same seeds) where that "
                 f"reaches P >= 0.9: "
                 f"{len(over)} of {rows}" + (f" ({', '.join(over)})" if over else ""))
    lines.append(f"new user: rows meeting both targets: {met} of {rows}")
    lines.append("")
    return lines


def target_miss(configurations, x):
    """Which of the new user's targets a row misses: P (P<=3% below min(resolution, max(0.9, exhaustive trial's P)),
    with 1e-9 of slack for rounding) and time (median machine time above max(50 %, or 20 % from 20
    configurations, 1.25 x the oracle floor))."""
    t = x["tune"]
    p_target = min(x["resolution"], max(0.9, x["exhaustive_p"]))
    time_target = max(0.5 if configurations < 20 else 0.2, 1.25 * x["oracle_fraction"])
    miss = []
    if t["p_within_3pct"] < p_target - 1e-9:
        miss.append("P")
    if t["median_time_fraction"] > time_target:
        miss.append("time")
    return "+".join(miss)


def replay_options(description, seeds):
    """The options every command that replays mmgp tune on recorded groups takes: the binary, the seeds (replays
    per setting, `seeds` by default) and the replays run at once (this module, constants.py, bench_work.py)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--mmgp", default=os.path.join(ROOT, "build", "cli", "mmgp"))
    ap.add_argument("--seeds", type=int, default=seeds)
    ap.add_argument("--jobs", type=int, default=2)
    return ap


def parse_args():
    """The command line (the module's docstring above says what it runs)."""
    ap = replay_options(__doc__.split("\n")[0], 100)
    ap.add_argument("--groups", default="", help="comma-separated group names (default: all)")
    ap.add_argument("--platform", default=os.path.join(HERE, "host.json"),
                    help="the new user's platform profile (default: host.json beside this file)")
    ap.add_argument("--calibrate", action="store_true",
                    help="calibrate this machine first (mmgp calibrate --quick), writing the --platform file")
    return ap.parse_args()


def replay_methods(pool, args, scen, path, reps, exh_cost):
    """Every method replayed on one group, --seeds times: (results per method of METHODS, mmgp tune's results per
    K of PARALLEL, the whole runs of random search and Optuna, mmgp tune's median machine time)."""
    seeds = range(1, args.seeds + 1)
    res = {}
    for method, extra in (("mmgp-tune", []), ("mmgp-tune-no-prior", ["--no-prior"])):
        res[method] = list(pool.map(lambda sd: run_tune(args.mmgp, scen, path, sd, extra), seeds))
    par = {k: list(pool.map(lambda sd: run_tune(args.mmgp, scen, path, sd, ["--parallel", str(k)]), seeds))
           for k in PARALLEL[1:]}
    par[1] = res["mmgp-tune"]
    budget = statistics.median(r["machine_s"] for r in res["mmgp-tune"])
    res["exhaustive"] = [exhaustive(reps, sd) for sd in seeds]
    # Random search and Optuna run up to exhaustive trial's machine time (their whole curve); the table
    # gives their state at mmgp tune's median machine time.
    full = {"random": [random_search(reps, sd, exh_cost) for sd in seeds],
            "optuna": list(pool.map(lambda sd: optuna_search(reps, sd, exh_cost), seeds))}
    for m in full:
        res[m] = [at_budget(r, budget) for r in full[m]]
    return res, par, full, budget


def parallel_summary(par, truth, exh_cost):
    """Runs in flight: P, and the medians of machine time and time to decision relative to K = 1."""
    return {str(k): {"p_within_3pct": summary(par[k], truth, exh_cost)["p_within_3pct"],
                     "machine_ratio": statistics.median(r["machine_s"] for r in par[k]) /
                                      statistics.median(r["machine_s"] for r in par[1]),
                     "decision_ratio": statistics.median(r["elapsed_s"] for r in par[k]) /
                                       statistics.median(r["elapsed_s"] for r in par[1]),
                     "median_runs": statistics.median(r["runs"] for r in par[k])} for k in PARALLEL}


def bench_group(pool, args, name, scen, units, rows, gdir, fractions):
    """One recorded group: its replay CSV written into gdir, every method replayed on it; its report entry."""
    path = write_group(name, units, rows, gdir)
    reps = reps_of(rows)
    truth = truth_of(reps)
    exh_cost = exhaustive_cost(truth)
    res, par, full, budget = replay_methods(pool, args, scen, path, reps, exh_cost)
    tuned = res["mmgp-tune"]
    return {
        "configurations": len(reps),
        "best": min(truth, key=truth.get),
        "best_s": min(truth.values()),
        "exhaustive_s": exh_cost,
        "budget_s": budget,
        "methods": {m: summary(res[m], truth, exh_cost) for m in METHODS},
        "curves": {m: curve(full.get(m, res[m]), truth, exh_cost, fractions) for m in METHODS},
        "resolution": resolution(reps),
        "parallel": parallel_summary(par, truth, exh_cost),
        "stops": {s: sum(r["stop"] == s for r in tuned) for s in {r["stop"] for r in tuned}},
        # How far its "confident" can be trusted: of the replays that stopped confident, the share within 3 %.
        "confident_right": [sum(regret(truth, r["chosen"]) <= TOL + 1e-12 for r in tuned if r["stop"] == "confident"),
                            sum(r["stop"] == "confident" for r in tuned)],
    }


def method_lines(args, profiled):
    """The report's header and its table of every method per group."""
    lines = [f"# mmgp tune against other tuners: {args.seeds} seeded replays per group and method "
             f"(python3 validation/tune/bench.py --seeds {args.seeds})",
             "# P<=3%: fraction of replays whose choice is within 3 % of the best (pooled medians); regret median and 90th "
             "percentile; time: median machine time / exhaustive trial's expected machine time; runs: median",
             "# random and optuna: their state when their machine time reached mmgp tune's median in the group",
             "# resolution: P(<=3 %) of the best of a bootstrap resample of every recorded repetition (how well the",
             "#   recorded data itself tells the best within 3 %)", ""]
    hdr = f"{'group':<22} {'n':>3} {'method':<19} {'P<=3%':>6} {'med regret':>10} {'p90 regret':>10} {'time':>7} {'runs':>5}"
    lines.append(hdr)
    for name, g in profiled.items():
        lines.append(f"{name:<22} {g['configurations']:>3} {'(resolution)':<19} {g['resolution']:>6.2f}")
        for m in METHODS:
            v = g["methods"][m]
            fmt = lambda x: "inf" if math.isinf(x) else f"{100 * x:.1f} %"
            lines.append(f"{name:<22} {g['configurations']:>3} {m:<19} {v['p_within_3pct']:>6.2f} {fmt(v['median_regret']):>10} "
                         f"{fmt(v['p90_regret']):>10} {100 * v['median_time_fraction']:>6.1f}% {v['median_runs']:>5g}")
        lines.append("")
    return lines


def parallel_lines(profiled):
    """The report's table of runs in flight (mmgp tune --parallel K) per group."""
    lines = ["runs in flight (mmgp tune --parallel K on the replays): P<=3%, and median machine time and median time to",
             "decision as fractions of the sequential loop's (K = 1); runs: median, cancelled ones included"]
    lines.append(f"{'group':<22} " + " ".join(f"{'K=' + str(k) + ' P':>7} {'machine':>7} {'decide':>6} {'runs':>5}" for k in PARALLEL))
    for name, g in profiled.items():
        lines.append(f"{name:<22} " + " ".join(
            f"{g['parallel'][str(k)]['p_within_3pct']:>7.2f} {100 * g['parallel'][str(k)]['machine_ratio']:>6.0f}% "
            f"{100 * g['parallel'][str(k)]['decision_ratio']:>5.0f}% {g['parallel'][str(k)]['median_runs']:>5g}" for k in PARALLEL))
    lines.append("")
    return lines


def overall_lines(args, profiled):
    """The report's last lines: the mean P over all groups, and how often mmgp tune's "confident" was right."""
    allp = {m: statistics.mean(g["methods"][m]["p_within_3pct"] for g in profiled.values()) for m in METHODS}
    lines = ["all groups, mean P<=3%: " + ", ".join(f"{m} {allp[m]:.3f}" for m in METHODS)]
    right = sum(g["confident_right"][0] for g in profiled.values())
    conf = sum(g["confident_right"][1] for g in profiled.values())
    lines.append(f"mmgp-tune stopped confident in {conf} of {args.seeds * len(profiled)} replays; {right} of them "
                 f"({right / max(conf, 1):.3f}) within 3 % of the best (the confidence asked for: 0.95)")
    return lines


def main():
    args = parse_args()
    import_optuna()
    if args.calibrate:
        subprocess.run([args.mmgp, "calibrate", "--quick", "-o", args.platform], check=True)
    vdir = tempfile.mkdtemp(prefix="mmgp-bench-")
    gdir = os.path.join(HERE, "groups")
    os.makedirs(gdir, exist_ok=True)
    fractions = [10 ** (-2.5 + 0.05 * i) for i in range(51)]  # 0.003 .. 1
    report = {}
    todo = groups()
    if args.groups:
        todo = [g for g in todo if g[0] in args.groups.split(",")]
    pool = concurrent.futures.ThreadPoolExecutor(args.jobs)
    for name, scen, units, rows in todo:
        report[name] = bench_group(pool, args, name, scen, units, rows, gdir, fractions)
        report[name]["new_user"] = new_user(pool, args.mmgp, args.platform, name, units, rows, args.seeds, vdir)
        print(name, json.dumps({m: round(v["p_within_3pct"], 2) for m, v in report[name]["methods"].items()}),
              file=sys.stderr, flush=True)
    for name, _, units, rows in made_up_groups():  # the new-user setting alone: no application profile
        if args.groups and name not in args.groups.split(","):
            continue
        report[name] = {"configurations": len(reps_of(rows)),
                        "new_user": new_user(pool, args.mmgp, args.platform, name, units, rows, args.seeds, vdir)}
        print(name, file=sys.stderr, flush=True)
    profiled = {name: g for name, g in report.items() if "methods" in g}
    lines = method_lines(args, profiled) + parallel_lines(profiled) + new_user_lines(report, args.seeds) \
        + overall_lines(args, profiled)
    doc = {"seeds": args.seeds, "fractions": fractions, "groups": report}
    common.write_if_changed(os.path.join(HERE, "report.txt"), "\n".join(lines) + "\n")
    common.write_if_changed(os.path.join(HERE, "results.json"), json.dumps(doc, indent=1, sort_keys=True))
    common.write_if_changed(os.path.join(HERE, "curve.svg"), svg(profiled, fractions))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
