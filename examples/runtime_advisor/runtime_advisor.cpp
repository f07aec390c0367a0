// The project's real off-load runtime (offload/: libpll likelihood kernels off-loaded from HPU threads to
// a pool of A APU threads) scheduled three ways, for 1..16 bootstraps ([R] = paper 000, Fig. 8's experiment):
//
//   edtlp    p = 1 for every off-load: task-level parallelism only ([R] §5.2);
//   mgps     [R] §5.4: every A completed off-loads, U = processes that off-loaded in the window; U <= 4 gives
//            p = floor(A / U) (loop-level parallelism on), U > 4 gives p = 1;
//   advisor  mmgp::advisor::recommend() (libmmgp): the MMGP model's best p for the processes with a bootstrap in
//            progress, the idle APUs and the waiting off-loads, re-estimating the application online from the
//            off-load durations and host gaps the runtime reports. Its prior is a scenario (platform + application
//            profile) of this runtime on this machine, by default prior/scenario-49x1200.json: a copy of
//            validation/offload/{scenario-49x1200,platform,app-49x1200}.json as of commit b5b6339 (mmgp calibrate and
//            mmgp profile on this VM). It explores (tries p = 1 against a table's p > 1, p = 2 against p = 1) once no
//            off-load at that p has completed for --advisor-explore off-loads, so that a wrong prior gets corrected.
//
// B bootstraps run as m = min(B, --max-processes) processes (HPU threads, bootstraps dealt round-robin) sharing the
// pool; every off-load gets min(scheduler's p, idle APUs) APUs. The wall time of each (B, scheduler) is the median
// of --repetitions runs, the schedulers interleaved. Per-unit log-likelihoods are checked to be identical across
// the schedulers (the runtime reduces its A site chunks in site order whatever p an off-load got).
//
//   build/examples/runtime_advisor/runtime_advisor                      # 49.gz, A = 8, 1..16 bootstraps, 3 repetitions
//   build/examples/runtime_advisor/runtime_advisor --max-bootstraps 4 --repetitions 1 --simulate 8:400   # quick
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <mmgp/advisor.hpp>
#include <mmgp/error.hpp>
#include <mmgp/io.hpp>
#include <mmgp/profile.hpp>
#include <mmgp/statistics.hpp>

#include "program_main.hpp"
#include "runtime.hpp"
#include "scheduler.hpp"

#ifndef MMGP_SOURCE_DIR
#define MMGP_SOURCE_DIR "."
#endif

namespace K = mmgp::kernels;

namespace {

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) out.push_back(item);
    return out;
}

struct cell {
    std::vector<double> wall, mean_p;
};

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"runtime_advisor: the off-load runtime under edtlp, mgps and the MMGP advisor, 1..B bootstraps"};
    std::string alignment = "/usr/share/doc/examl/testData/49.gz", simulate, schedulers = "edtlp,mgps,advisor";
    std::string scenario = std::string(MMGP_SOURCE_DIR) + "/examples/runtime_advisor/prior/scenario-49x1200.json", csv, policy = "edtlp";
    int apus = 8, max_b = 16, max_m = 8, reps = 3, explore = 32, refresh = 32;
    std::uint64_t seed = 1;
    double timeout = 120;
    app.add_option("--alignment", alignment, "alignment (default examl's 49.gz: 49 taxa x 1200 sites)");
    app.add_option("--simulate", simulate, "TAXA:SITES: simulate an alignment instead");
    app.add_option("--apus", apus, "A: APU threads in the pool (default 8, [R]'s SPEs)");
    app.add_option("--max-bootstraps", max_b, "B runs 1..this (default 16)");
    app.add_option("--max-processes", max_m, "processes (HPU threads) at most, m = min(B, this) (default 8)");
    app.add_option("--repetitions", reps, "runs per (B, scheduler); the table shows the median (default 3)");
    app.add_option("--schedulers", schedulers, "comma-separated: edtlp, mgps, advisor (default all three)");
    app.add_option("--advisor-scenario", scenario, "the advisor's prior (scenario file or bundled name)");
    app.add_option("--advisor-explore", explore,
                   "advisor: try the alternative p once none has completed for this many off-loads (0: never; default 32)");
    app.add_option("--advisor-refresh", refresh, "advisor: re-estimate every this many completed off-loads (default 32)");
    app.add_option("--policy", policy, "host policy while an off-load runs: edtlp (block) or os (spin) (default edtlp)");
    app.add_option("--seed", seed, "random seed (default 1)");
    app.add_option("--timeout", timeout, "watchdog per run, seconds (default 120)");
    app.add_option("--csv", csv, "also write every run as CSV to this file");
    if (const auto status = K::parse_command_line(app, argc, argv, "runtime_advisor")) return *status;
    const std::vector<std::string> names = split(schedulers);
    return K::run_reporting_errors("runtime_advisor", [&] {
        if (apus < 1 || max_b < 1 || max_m < 1 || reps < 1)
            throw mmgp::usage_error("expected --apus, --max-bootstraps, --max-processes, --repetitions >= 1");
        if (explore < 0 || refresh < 0) throw mmgp::usage_error("expected --advisor-explore, --advisor-refresh >= 0");
        if (names.empty()) throw mmgp::usage_error("--schedulers: expected at least one of edtlp, mgps, advisor");
        for (const auto& n : names)
            if (n != "edtlp" && n != "mgps" && n != "advisor")
                throw mmgp::usage_error("--schedulers: expected edtlp, mgps or advisor, found \"" + n + "\"");
        K::config base;
        if (!K::parse_host_policy(policy, base.policy)) throw mmgp::usage_error("--policy: expected edtlp or os, found \"" + policy + "\"");
        if (!simulate.empty()) {
            int t = 0, s = 0;
            char tail = 0;
            if (std::sscanf(simulate.c_str(), "%d:%d%c", &t, &s, &tail) != 2 || t < 3 || s < 1)
                throw mmgp::usage_error("--simulate: expected TAXA:SITES, found \"" + simulate + "\"");
            base.simulate_taxa = t, base.simulate_sites = s;
        } else {
            base.alignment = alignment;
        }
        base.apus = apus;
        base.seed = seed;
        base.timeout_s = timeout;

        // The advisor's prior, with the pool's A (a fresh advisor per run: it learns during the run).
        std::unique_ptr<mmgp::scenario> prior;
        if (std::find(names.begin(), names.end(), "advisor") != names.end()) {
            prior = std::make_unique<mmgp::scenario>(mmgp::load_scenario(scenario));
            prior->plat.apus = apus;
        }
        auto make = [&](const std::string& n) -> std::shared_ptr<K::offload_scheduler> {
            if (n == "edtlp") return K::make_edtlp_scheduler();
            if (n == "mgps") return K::make_mgps_scheduler();
            mmgp::advisor_options o;
            o.refresh_every = refresh;
            o.explore_every = explore;
            return K::make_advisor_scheduler(std::make_shared<mmgp::advisor>(*prior, o));
        };

        char host[256] = "?";
        gethostname(host, sizeof host);
        std::time_t now = std::time(nullptr);
        char date[64];
        std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
        double load[3] = {0, 0, 0};
        if (getloadavg(load, 3) < 0) load[0] = load[1] = load[2] = -1;
        std::printf("# runtime_advisor on %s, %s, %ld cores online, load average %.2f %.2f %.2f at start\n", host, date,
                    sysconf(_SC_NPROCESSORS_ONLN), load[0], load[1], load[2]);
        std::printf("# data: %s; A = %d APU threads; m = min(B, %d) processes; host policy %s; median of %d runs\n",
                    simulate.empty() ? alignment.c_str() : ("simulated " + simulate).c_str(), apus, max_m, policy.c_str(), reps);
        if (prior) {
            mmgp::advisor probe(*prior);
            std::printf("# advisor prior (%s): best p for m active processes:", scenario.c_str());
            for (int m = 1; m <= std::min(probe.max_tasks(), max_m); ++m) std::printf(" m=%d:p=%d", m, probe.recommend(m).p);
            std::printf("; refresh every %d, explore every %d completed off-loads\n", refresh, explore);
        }
        std::fflush(stdout);

        // The CSV: never one of the inputs; replaced whole after each row of runs (a kill leaves the rows so far).
        std::ostringstream out;
        if (!csv.empty()) {
            for (const std::string& input : {scenario, alignment}) {
                std::error_code ec;
                if (std::filesystem::equivalent(csv, input, ec))
                    throw mmgp::usage_error("--csv: expected a file other than the inputs, found " + input);
            }
            out << "bootstraps,m,scheduler,repetition,wall_s,mean_p,offloads,clamped\n";
            mmgp::write_file_atomically(csv, out.str());
        }
        std::map<std::string, double> total;
        std::printf("%10s %3s", "bootstraps", "m");
        for (const auto& n : names) std::printf(" %9s", (n + " s").c_str());
        for (const auto& n : names) std::printf(" %8s", ("p " + n).c_str());
        std::printf("\n");
        bool identical = true;
        for (int B = 1; B <= max_b; ++B) {
            const int m = std::min(B, max_m);
            std::map<std::string, cell> cells;
            std::vector<double> ref;
            for (int r = 0; r < reps; ++r)
                for (std::size_t k = 0; k < names.size(); ++k) {
                    const std::string& n = names[(k + static_cast<std::size_t>(r)) % names.size()];  // rotate the order
                    K::config c = base;
                    c.units = B;
                    c.m = m;
                    c.scheduler = make(n);
                    K::result res = K::run(c);
                    if (ref.empty()) ref = res.unit_loglik;
                    else if (res.unit_loglik != ref) identical = false;
                    cells[n].wall.push_back(res.wall_s);
                    cells[n].mean_p.push_back(res.mean_p());
                    if (!csv.empty())
                        out << B << ',' << m << ',' << n << ',' << r + 1 << ',' << res.wall_s << ',' << res.mean_p() << ','
                            << res.t.offloads << ',' << res.clamped << '\n';
                }
            std::printf("%10d %3d", B, m);
            for (const auto& n : names) {
                const double w = mmgp::median(cells[n].wall);
                total[n] += w;
                std::printf(" %9.4f", w);
            }
            for (const auto& n : names) std::printf(" %8.2f", mmgp::median(cells[n].mean_p));
            std::printf("\n");
            if (!csv.empty()) mmgp::write_file_atomically(csv, out.str());
            std::fflush(stdout);
        }
        std::printf("%10s %3s", "total", "");
        for (const auto& n : names) std::printf(" %9.4f", total[n]);
        std::printf("\n# per-unit log-likelihoods identical across schedulers and repetitions: %s\n", identical ? "yes" : "NO");
        return identical ? 0 : 1;
    });
}
