"""RAxML data set of the report: fit the application profile with `mmgp fit` on at most a third of the
configurations of each input, predict the rest (used by report.py)."""
import csv
import json
import os
import shutil
import subprocess

import common
import measured


def choose_fitted(cases, cores):
    """The runs a user can afford, and no more than a third of the input's configurations nor half of its
    uncensored ones (so that uncensored cases are held back): uncensored configurations that fit in the cores
    (m*p <= cores), two different bootstrap counts (so that the start-up per process separates from the work
    per bootstrap), smallest first (configurations with more processes than bootstraps are pooled into m = B
    before, pool_same_processes)."""
    n_unc = sum(1 for c in cases if not c["censored"])
    k = min(len(cases) // 3, max(1, n_unc // 2), 2)
    pool = sorted([c for c in cases if not c["censored"] and int(c["key"]["m"]) * int(c["key"]["p"]) <= cores],
                  key=lambda c: (int(c["key"]["units"]), int(c["key"]["m"]) * int(c["key"]["p"]), int(c["key"]["p"])))
    chosen, units = [], set()
    for c in pool:  # distinct bootstrap counts first
        if c["key"]["units"] not in units and len(chosen) < k:
            chosen.append(c)
            units.add(c["key"]["units"])
    for c in pool:
        if c not in chosen and len(chosen) < k:
            chosen.append(c)
    return chosen


def pool_same_processes(rows):
    """sweep_raxml starts only the processes that have bootstraps: (B, m, p) with m > B runs exactly the commands
    of (B, m = B, p) (same processes, same seeds). Those rows are repetitions of one configuration: they are
    pooled under m = B (each keeps its label in pooled_from_m), so that the report neither counts one
    experiment several times nor calls the noise between its repetitions a missed optimum."""
    out = []
    for r in rows:
        if int(r["m"]) > int(r["units"]):
            r = dict(r, m=r["units"], pooled_from_m=r["m"])
        out.append(r)
    return out


def build_raxml(d, mmgp):
    cal = os.path.join(d, "platform-calibrated.json")
    if not os.path.exists(cal):
        shutil.copy(common.offload_calibration(d), cal)
    pl = measured.offload_platform(d, mmgp, max_threads=16)  # the sweep's bound on m*p
    common.write_json(os.path.join(d, "platform.json"), pl)
    rows = pool_same_processes(measured.read_runs(os.path.join(d, "runs.csv")))
    barriers = json.load(open(os.path.join(d, "machine.json"))).get("barriers", {})
    inputs = sorted({r["input"] for r in rows})
    all_cases = measured.aggregate(rows, ["input", "units", "m", "p", "policy"], measured.quiet_rule(d))
    out = []
    for name in inputs:
        cases = [c for c in all_cases if c["key"]["input"] == name]
        fitted = choose_fitted(cases, int(measured.value(pl["cores"])))
        fit_csv = os.path.join(d, f"fit-{name}.csv")
        with open(fit_csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["m", "p", "units", "time_s", "policy"])
            # One row per chosen configuration: its case time (the median of its quiet runs), the statistic the
            # predictions are compared with. Every repetition as a row would weight a configuration by its number
            # of runs, and the sweeps give more runs to the noisier (bimodal) ones.
            for c in fitted:
                w.writerow([c["key"]["m"], c["key"]["p"], c["key"]["units"], c["measured_s"], "edtlp"])
        app = os.path.join(d, f"app-fitted-{name}.json")
        # N, the synchronisations per bootstrap, and N_start, those of the start-up (parsimony tree, model set-up),
        # are counted in the program (raxml_barriers.py, run by the sweep); RAxML's threads wait by spinning
        # without limit (ibid.), so spin_limit is unbounded.
        if name not in barriers:
            raise SystemExit(f"report: {os.path.join(d, 'machine.json')}: barriers.{name}: expected the sweep's count of "
                             "RAxML's synchronisations, found nothing (re-run validation/sweep_raxml.py)")
        N = barriers[name]["N_per_bootstrap"]
        cmd = [mmgp, "fit", fit_csv, "--platform", os.path.join(d, "platform.json"), "--decomposition", "task",
               "--policy", "edtlp", "--name", f"raxml-{name}", "-o", app, "--N", str(N), "--spin-limit", "unbounded",
               "--N-start", str(barriers[name]["start_up_jobs"])]
        # Parameters the chosen runs cannot determine are held at 0 (mmgp fit needs as many runs as free
        # parameters): one p cannot separate C_apu from T_apu nor show g; on time-shared cores T_hpu and
        # C_apu scale alike (they differ only through alpha(m)), so T_hpu goes first. The start-up per process
        # is fitted when the chosen runs have two bootstrap counts.
        n_runs = len(fitted)
        ps = {c["key"]["p"] for c in fitted}
        units = {c["key"]["units"] for c in fitted}
        hold = []
        if len(ps) < 2:
            hold += ["C_apu", "g"]
        free = 4
        if len(units) >= 2:
            cmd.append("--fit-T-start")
            free += 1
        for name_ in ("T_hpu", "g", "C_apu"):
            if free - len(hold) > n_runs and name_ not in hold:
                hold.append(name_)
        for h in hold:
            cmd += ["--fix", f"{h}=0"]
        rep = subprocess.run(cmd, capture_output=True, text=True)
        if rep.returncode != 0:
            raise RuntimeError(f"mmgp fit {name}: {rep.stderr.strip()}")
        with open(os.path.join(d, f"fit-{name}.txt"), "w") as f:
            f.write("$ " + " ".join(os.path.relpath(x, common.ROOT) if x.startswith("/") else x for x in cmd) + "\n")
            f.write(rep.stdout)
        common.write_json(os.path.join(d, f"scenario-{name}.json"),
                          {"schema": "mmgp/1", "name": f"RAxML {name}", "platform": "platform.json",
                           "application": f"app-fitted-{name}.json", "search": {"m": [1, 16], "p": [1, 16]}})
        fitted_ids = {id(c) for c in fitted}
        for c in cases:
            k = c["key"]
            out.append({"scenario": f"scenario-{name}.json", "group": f"{name} B={k['units']}",
                        "label": f"{name} B={k['units']} m={k['m']} p={k['p']}",
                        "application": {"units": int(k["units"])},
                        "m": int(k["m"]), "p": int(k["p"]), "policy": "edtlp", "measured_s": c["measured_s"],
                        "censored": c["censored"], **({"runs": c["runs"]} if c["runs"] else {}),
                        "role": "fitted" if id(c) in fitted_ids else "held_back",
                        "source": measured.source_of(c)})
    out.sort(key=lambda c: (c["group"], c["m"], c["p"]))
    doc = {"schema": "mmgp/1", "kind": "validation",
           "name": "RAxML (Debian raxmlHPC-PTHREADS-SSE3): profile fitted on <= 1/3 of the configurations per input",
           "cases": out}
    path = os.path.join(d, "cases.json")
    common.write_json(path, doc)
    return path, inputs
