// mmgp-offload-run: runs one (m, p, policy, units) configuration of the off-load runtime and prints JSON
// (wall time, timers, off-load counts). Bad input: one line on stderr, exit 2. --accelerator cuda (a build with
// nvcc): m processes on the GPU, p blocks per off-load; exit 77 where no GPU is usable.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "program_main.hpp"
#include "runtime.hpp"
#if MMGP_WITH_CUDA
#include "cuda/cuda_accelerator.hpp"
#endif

namespace {

bool parse_pair(const std::string& text, long& a, long& b) {
    auto colon = text.find(':');
    if (colon == std::string::npos) return false;
    try {
        std::size_t i = 0, k = 0;
        a = std::stol(text.substr(0, colon), &i);
        b = std::stol(text.substr(colon + 1), &k);
        return i == colon && k == text.size() - colon - 1;
    } catch (...) {
        return false;
    }
}

// --accelerator cuda: the run on the GPU's processes, printed as run() prints; 77 where no GPU is usable.
int run_on_cuda(const mmgp::kernels::config& c) {
    mmgp::kernels::check_config(c, "cuda");  // bad options are bad input in any build, on any machine
#if MMGP_WITH_CUDA
    const mmgp::offload::cuda_facts facts = mmgp::offload::probe_cuda();
    if (facts.devices == 0) {
        std::cerr << "mmgp-offload-run: --accelerator cuda: " << facts.why << '\n';
        return 77;
    }
    std::cout << mmgp::kernels::to_json(mmgp::kernels::run_processes(c, mmgp::offload::cuda_accelerator(facts, c.policy))) << '\n';
    return 0;
#else
    (void)c;
    throw mmgp::usage_error("--accelerator cuda: this mmgp-offload-run was built without CUDA (nvcc not found, or -Dcuda=disabled)");
#endif
}

}  // namespace

int main(int argc, char** argv) {
    namespace K = mmgp::kernels;
    CLI::App app{"mmgp-offload-run: run the libpll off-load runtime at one (m, p, policy) and print JSON"};
    K::config c;
    std::string policy = "edtlp", simulate, synthetic, scheduler, advisor_scenario, accelerator = "cpu";
    app.add_option("--accelerator", accelerator,
                   "cpu (APU threads, default) or cuda (m processes on the GPU, each off-load a grid of p blocks)");
    app.add_option("--m", c.m, "HPU threads (with --accelerator cuda: processes; default 1)");
    app.add_option("--p", c.p, "APUs per HPU thread (with --accelerator cuda: blocks per off-load; default 1)");
    app.add_option("--policy", policy, "edtlp (block on every off-load) or os (spin-wait)");
    app.add_option("--units", c.units, "bootstrap units (default 4)");
    app.add_option("--apus", c.apus,
                   "pool mode: A APU threads shared by the m HPU threads, p chosen per off-load by --scheduler (--p ignored)");
    app.add_option("--scheduler", scheduler, "pool mode: edtlp (p = 1), mgps ([R] U <= 4 rule) or advisor (default edtlp)");
    app.add_option("--advisor-scenario", advisor_scenario, "--scheduler advisor: the advisor's scenario (file or bundled name)");
    auto* al = app.add_option("--alignment", c.alignment, "PHYLIP or FASTA DNA alignment (gz or not)");
    auto* si = app.add_option("--simulate", simulate, "TAXA:SITES, simulate an alignment instead (default 24:2000)");
    al->excludes(si);
    app.add_option("--taxa", c.taxa, "keep the first TAXA taxa (0: all)");
    app.add_option("--sites", c.sites, "keep the first SITES sites (0: all)");
    app.add_option("--rounds", c.rounds, "smoothing rounds over all edges per unit (default 1)");
    app.add_option("--newton", c.newton, "Newton steps per branch at most (default 4)");
    app.add_option("--seed", c.seed, "random seed (default 1)");
    app.add_option("--timeout", c.timeout_s, "watchdog, seconds (default 120)");
    app.add_option("--synthetic", synthetic,
                   "OFFLOADS:HOST_US:SPLIT_US:SERIAL_US run the synthetic program (busy-waits) instead");
    if (const auto status = K::parse_command_line(app, argc, argv, "mmgp-offload-run")) return *status;
    return K::run_reporting_errors("mmgp-offload-run", [&] {
        if (!K::parse_host_policy(policy, c.policy))
            throw mmgp::usage_error("--policy: expected edtlp or os, found \"" + policy + "\"");
        if (!simulate.empty()) {
            long t = 0, s = 0;
            if (!parse_pair(simulate, t, s) || t < 3 || s < 1 || t > 100000 || s > 100000000)
                throw mmgp::usage_error("--simulate: expected TAXA:SITES with TAXA >= 3 and SITES >= 1, found \"" + simulate + "\"");
            c.simulate_taxa = static_cast<int>(t);
            c.simulate_sites = static_cast<int>(s);
        }
        if (!synthetic.empty()) {
            int n = 0;
            double h = 0, sp = 0, se = 0;
            char tail = 0;
            if (std::sscanf(synthetic.c_str(), "%d:%lf:%lf:%lf%c", &n, &h, &sp, &se, &tail) != 4 || n < 1 || h < 0 ||
                sp < 0 || se < 0)
                throw mmgp::usage_error("--synthetic: expected OFFLOADS:HOST_US:SPLIT_US:SERIAL_US, found \"" + synthetic + "\"");
            c.synthetic = true;
            c.synth = {n, h * 1e-6, sp * 1e-6, se * 1e-6};
        }
        if (!scheduler.empty() && c.apus <= 0) throw mmgp::usage_error("--scheduler: expected --apus A (pool mode) as well");
        if (!advisor_scenario.empty() && scheduler != "advisor")
            throw mmgp::usage_error("--advisor-scenario: expected --scheduler advisor as well");
        if (accelerator == "cuda") return run_on_cuda(c);
        if (accelerator != "cpu") throw mmgp::usage_error("--accelerator: expected cpu or cuda, found \"" + accelerator + "\"");
        if (c.apus > 0) c.scheduler = K::make_scheduler(scheduler.empty() ? "edtlp" : scheduler, advisor_scenario);
        K::result r = K::run(c);
        std::cout << K::to_json(r) << '\n';
        return 0;
    });
}
