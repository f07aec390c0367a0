#!/usr/bin/env python3
"""Regenerates the validation report from measured data (no measuring here):

    validation/report.py                      # the data sets under validation/ (offload/, raxml/, gpu/)
    validation/report.py --dir DIR --kind offload   # one data set (the quick test uses a temporary DIR)

For a data set DIR it writes DIR/platform.json (the calibrated profile described as this machine runs the
program, see README), DIR/cases.json (an mmgp validation file), DIR/report.txt and DIR/report.json
(`mmgp validate`), DIR/summary.json (per input) and the plots DIR/plots/*.svg|png (gnuplot).

offload: predictions use only DIR/platform-calibrated.json (mmgp calibrate) and DIR/app-<input>.json
(mmgp profile). raxml: the application profile of each input is fitted with `mmgp fit` on at most a third
of its configurations (role "fitted"); the others are predicted ("held_back"). gpu: a device check's files
(scripts/gpu-check.sh), the calibrated platform described again by `mmgp calibrate --accelerator cuda --from` and
the measured workload profile, nothing fitted (gpu_set.py).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import gpu_set  # noqa: E402
import raxml_fit  # noqa: E402
from measured import aggregate, offload_platform, quiet_rule, read_runs, source_of  # noqa: E402


def write(path, doc):
    common.write_json(path, doc)


def mmgp_validate(mmgp, cases_path, d):
    # The path relative to the checkout, so that the report names the same file in every clone.
    rel = os.path.relpath(cases_path, common.ROOT)
    mmgp = os.path.abspath(mmgp)
    js = subprocess.run([mmgp, "validate", rel, "--json"], capture_output=True, text=True, check=True,
                        cwd=common.ROOT).stdout
    txt = subprocess.run([mmgp, "validate", rel], capture_output=True, text=True, check=True, cwd=common.ROOT).stdout
    with open(os.path.join(d, "report.txt"), "w") as f:
        f.write(txt)
    doc = json.loads(js)
    common.write_json(os.path.join(d, "report.json"), doc)  # indented: a committed report diffs line by line
    return doc


# Variants that describe the edtlp wake-up by the platform alone: the program's T_offload_idle (which takes
# precedence over the platform's T_wake in the model) is left out of their application files.
PLATFORM_WAKE_VARIANTS = ("platform-wake", "wake-always", "csw-yield", "no-cores")


def build_offload(d, mmgp, g_charge, variant=None, out=None):
    out = out or d
    pl = offload_platform(d, mmgp, variant)
    write(os.path.join(out, "platform.json"), pl)
    rows = read_runs(os.path.join(d, "runs.csv"))
    inputs = sorted({r["input"] for r in rows})
    idle = {}  # input -> the application's own idle-core off-load overhead, when the profile measured it
    for name in inputs:
        app_path = os.path.join(d, f"app-{name}.json")
        app = json.load(open(app_path))
        if variant in PLATFORM_WAKE_VARIANTS:  # the platform's wake-up model, not the program's own measurement
            app.pop("T_offload_idle", None)
            app_path = os.path.join(out, f"app-{name}-platform-wake.json")
            write(app_path, app)
        elif "T_offload_idle" not in app and "offload_overhead_s_per_call" in app.get("measurements", {}):
            # profiles written before mmgp profile wrote the key: the same measurement, under measurements
            idle[name] = app["measurements"]["offload_overhead_s_per_call"]["median"]
        write(os.path.join(out, f"scenario-{name}.json"),
              {"schema": "mmgp/1", "name": f"libpll runtime, {name}", "platform": "platform.json",
               "application": os.path.relpath(app_path, out),
               "search": {"m": [1, 8], "p": [1, 8]}})
    cases = []
    for c in aggregate(rows, ["input", "units", "m", "p", "policy"], quiet_rule(d)):
        k = c["key"]
        override = {"units": int(k["units"]), "g_charge": g_charge}
        if k["input"] in idle:
            override["T_offload_idle"] = idle[k["input"]]
        cases.append({"scenario": f"scenario-{k['input']}.json", "group": f"{k['input']} U={k['units']}",
                      "label": f"{k['input']} U={k['units']} m={k['m']} p={k['p']} {k['policy']}",
                      "application": override,
                      "m": int(k["m"]), "p": int(k["p"]), "policy": k["policy"], "measured_s": c["measured_s"],
                      "censored": c["censored"], **({"runs": c["runs"]} if c["runs"] else {}),
                      "source": source_of(c)})
    cases.sort(key=lambda c: (c["group"], c["policy"], c["m"], c["p"]))
    doc = {"schema": "mmgp/1", "kind": "validation",
           "name": "libpll off-load runtime on this machine: calibrated platform + mmgp profile, nothing fitted",
           "cases": cases}
    path = os.path.join(out, "cases.json")
    write(path, doc)
    return path, inputs


ABLATIONS = {  # name -> (g_charge, platform variant): each undoes one modelling decision of README
    "g-per-apu": ("per_apu", None),
    "no-cores": ("per_extra_apu", "no-cores"),
    "wake-always": ("per_extra_apu", "wake-always"),
    "csw-yield": ("per_extra_apu", "csw-yield"),
    "no-convoy": ("per_extra_apu", "no-convoy"),
    "no-wake-busy": ("per_extra_apu", "no-wake-busy"),
    "platform-wake": ("per_extra_apu", "platform-wake"),
}


def ablations(d, mmgp):
    """The offload report with one decision undone at a time (evidence for each decision)."""
    res = {}
    for name, (gc, variant) in ABLATIONS.items():
        out = os.path.join(d, "ablations", name)
        os.makedirs(out, exist_ok=True)
        path, _ = build_offload(d, mmgp, gc, variant, out)
        if variant == "no-cores":  # dedicated APUs cannot hold m*p > 1 APU per core: keep the platform's bound
            doc = json.load(open(path))
            write(path, doc)
        p = subprocess.run([mmgp, "validate", path, "--json"], capture_output=True, text=True)
        if p.returncode != 0:
            res[name] = {"error": p.stderr.strip()}
            continue
        sm = json.loads(p.stdout)["summary"]
        res[name] = {k: sm[k] for k in ("cases", "mean_abs_err_pct", "max_abs_err_pct", "optimal_hit", "regret_pct")}
    write(os.path.join(d, "ablations.json"), res)
    return res


def summarise(rep, inputs, d):
    """Per input: cases, |error|, optimum hit and regret over its groups."""
    out = {"summary": rep["summary"], "inputs": {}}
    for name in inputs:
        cs = [c for c in rep["cases"] if c["group"].startswith(name + " ")]
        unc = [abs(c["err_pct"]) for c in cs if not c["censored"]]
        gs = [g for g in rep["groups"] if g["group"].startswith(name + " ")]
        n = len(unc)
        mean = sum(unc) / n if n else None
        sd = (sum((e - mean) ** 2 for e in unc) / (n - 1)) ** 0.5 if n > 1 else 0.0
        out["inputs"][name] = {
            "cases": len(cs), "uncensored": n, "censored": len(cs) - n,
            "censored_right": sum(1 for c in cs if c["censored"] and c["predicted_s"] >= c["measured_s"]),
            "mean_abs_err_pct": mean, "max_abs_err_pct": max(unc) if unc else None, "std_abs_err_pct": sd,
            "groups": [{k: g[k] for k in ("group", "predicted_best", "measured_best", "optimal_hit", "regret_pct",
                                          "censored_ranked_last")} for g in gs],
            "optimal_hit": all(g["optimal_hit"] for g in gs), "regret_pct": max((g["regret_pct"] for g in gs), default=None)}
        for role in ("fitted", "held_back"):
            e = [abs(c["err_pct"]) for c in cs if c.get("role") == role and not c["censored"]]
            if e:
                out["inputs"][name][role] = {"cases": len(e), "mean_abs_err_pct": sum(e) / len(e), "max_abs_err_pct": max(e)}
    write(os.path.join(d, "summary.json"), out)
    return out


def gnuplot_svg_png(stem, size, body):
    """Runs the gnuplot commands `body` twice, writing stem.svg and stem.png at `size` ("W,H"); returns the paths."""
    out = []
    for term, ext in ((f"svg size {size} dynamic font 'sans,11'", "svg"), (f"pngcairo size {size} font 'sans,10'", "png")):
        path = f"{stem}.{ext}"
        subprocess.run(["gnuplot"], input=f"\nset terminal {term}\nset output '{path}'\n{body}", text=True, check=True)
        out.append(path)
    return out


def plots(rep, d, title):
    """[H] Fig. 6-8 style: per group, measured and predicted time of every configuration; and one
    predicted-against-measured scatter per data set. SVG and PNG."""
    if shutil.which("gnuplot") is None:
        print("report: gnuplot not found (apt-get install gnuplot-nox): no plots", file=sys.stderr)
        return []
    pd = os.path.join(d, "plots")
    os.makedirs(pd, exist_ok=True)
    made = []
    groups = defaultdict(list)
    for c in rep["cases"]:
        groups[c["group"]].append(c)
    for g, cs in sorted(groups.items()):
        cs.sort(key=lambda c: (c["policy"], c["m"] * c["p"], c["m"]))
        slug = g.replace(" ", "_").replace("=", "")
        dat = os.path.join(pd, f"{slug}.dat")
        with open(dat, "w") as f:
            f.write("# i label measured predicted min max censored policy\n")
            for i, c in enumerate(cs):
                runs = c.get("runs") or [c["measured_s"]]
                lab = f"{c['m']}x{c['p']}{'' if c['policy'] == 'edtlp' else ' os'}"
                f.write(f"{i} \"{lab}\" {c['measured_s']} {c['predicted_s']} {min(runs)} {max(runs)} "
                        f"{1 if c['censored'] else 0} {c['policy']}\n")
        made += gnuplot_svg_png(os.path.join(pd, slug), "1000,420", f"""
set title "{title}: {g} (m x p; 'os' = os policy, else edtlp; open triangles = censored at the bound)"
set ylabel 'wall time (s)'
set xlabel 'configuration (m processes x p APUs)'
set logscale y
set grid ytics
set key top left
set xtics rotate by -60 font ',8'
plot '{dat}' using 1:($7==0?$3:1/0):5:6:xtic(2) with yerrorbars pt 7 ps 0.8 lc rgb '#1f77b4' title 'measured (median of the quiet repetitions; bars: min-max of those runs)', \\
     '' using 1:($7==1?$3:1/0) with points pt 8 ps 1.2 lc rgb '#d62728' title 'censored (bound)', \\
     '' using 1:4 with linespoints pt 6 ps 0.8 lc rgb '#ff7f0e' title 'predicted'
""")
    # Scatter: predicted against measured, with the y = x line and +-5 % / +-15 % bands.
    dat = os.path.join(pd, "scatter.dat")
    with open(dat, "w") as f:
        for c in rep["cases"]:
            f.write(f"{c['measured_s']} {c['predicted_s']} {1 if c['censored'] else 0} {1 if c.get('role') == 'fitted' else 0}\n")
    made += gnuplot_svg_png(os.path.join(pd, "scatter"), "640,600", f"""
set title "{title}: predicted against measured (every case)"
set xlabel 'measured (s)'
set ylabel 'predicted (s)'
set logscale xy
set grid
set key top left
plot x with lines lc rgb 'black' title 'y = x', 1.05*x with lines dt 2 lc rgb 'gray' title '+-5 %', 0.95*x with lines dt 2 lc rgb 'gray' notitle, \\
     1.15*x with lines dt 3 lc rgb '#bbbbbb' title '+-15 %', 0.85*x with lines dt 3 lc rgb '#bbbbbb' notitle, \\
     '{dat}' using ($3==0&&$4==0?$1:1/0):2 with points pt 7 ps 0.7 lc rgb '#1f77b4' title 'predicted', \\
     '{dat}' using ($3==0&&$4==1?$1:1/0):2 with points pt 5 ps 0.7 lc rgb '#2ca02c' title 'fitted', \\
     '{dat}' using ($3==1?$1:1/0):2 with points pt 8 ps 1.0 lc rgb '#d62728' title 'censored (x = bound)'
""")
    return made


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", action="append", help="data set directory (default validation/offload and validation/raxml)")
    ap.add_argument("--kind", choices=["offload", "raxml", "gpu"], help="with --dir: the kind of data set")
    ap.add_argument("--build", default=os.path.join(common.ROOT, "build"))
    ap.add_argument("--g-charge", default="per_extra_apu", choices=["per_apu", "per_extra_apu"],
                    help="how the libpll runtime's g is charged (default per_extra_apu: g is mmgp profile's slope per extra APU)")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--ablations", action="store_true", help="offload: also report with each modelling decision undone")
    a = ap.parse_args()
    mmgp = os.path.join(a.build, "cli", "mmgp")
    sets = []
    if a.dir:
        sets = [(x, a.kind or os.path.basename(os.path.normpath(x))) for x in a.dir]
    else:
        for k, data in (("offload", "runs.csv"), ("raxml", "runs.csv"), ("gpu", "sweep.json")):
            x = os.path.join(common.ROOT, "validation", k)
            if os.path.exists(os.path.join(x, data)):
                sets.append((x, k))
    for d, kind in sets:
        if kind == "offload":
            path, inputs = build_offload(d, mmgp, a.g_charge)
            title = "libpll off-load runtime"
        elif kind == "gpu":
            path, inputs = gpu_set.build_gpu(d, mmgp)
            title = "GPU workload (H200)"
        else:
            path, inputs = raxml_fit.build_raxml(d, mmgp)
            title = "RAxML (Debian)"
        rep = mmgp_validate(mmgp, path, d)
        s = summarise(rep, inputs, d)
        if not a.no_plots:
            plots(rep, d, title)
        if a.ablations and kind == "offload":
            for name, v in ablations(d, mmgp).items():
                print(f"ablation {name}: {v}")
        print(f"== {kind}: {d}")
        sm = rep["summary"]
        print(f"all: {sm['cases']} cases ({sm['censored']} censored, {sm['censored_right']} of them predicted >= bound, "
              f"ranked last: {sm['censored_ranked_last']}), |error| mean {sm['mean_abs_err_pct']:.2f} % max "
              f"{sm['max_abs_err_pct']:.2f} % sd {sm['std_abs_err_pct']:.2f} %, optimum hit {sm['optimal_hit']}, "
              f"worst regret {sm['regret_pct']:.2f} %")
        if sm.get("with_ci"):
            print(f"  measured medians' own 90 % interval: +-{sm['mean_ci_halfwidth_pct']:.2f} % on average over "
                  f"{sm['with_ci']} cases with 5 runs or more; the prediction lies inside it for {sm['within_ci']}")
        for name, v in s["inputs"].items():
            print(f"  {name}: {v['cases']} cases ({v['censored']} censored), mean {v['mean_abs_err_pct']:.2f} % max "
                  f"{v['max_abs_err_pct']:.2f} %, optimum hit {v['optimal_hit']}, regret {v['regret_pct']:.2f} %"
                  + "".join(f", {r}: mean {v[r]['mean_abs_err_pct']:.2f} % max {v[r]['max_abs_err_pct']:.2f} % over {v[r]['cases']}"
                            for r in ("fitted", "held_back") if r in v))


if __name__ == "__main__":
    main()
