// mmgp-offload-run: runs one (m, p, policy, units) configuration of the off-load runtime and prints JSON
// (wall time, timers, off-load counts). Bad input: one line on stderr, exit 2. --accelerator cuda (a build with
// nvcc): m processes on the GPU, p blocks per off-load; exit 77 where no GPU is usable.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string_view>
#include <vector>

#include "program_main.hpp"
#include "runtime.hpp"
#include "model_charge.hpp"
#include "process_profile.hpp"
#if MMGP_WITH_CUDA
#include "cuda/cuda_accelerator.hpp"
#endif

namespace {

// A whole number written in decimal digits alone, into `v`: std::stol and CLI11 alone also take " 3", "+1" and
// "0x3" (as 0), and CLI11 clamps a seed of 26 digits to 2^64 - 1.
template <class T>
bool whole(std::string_view text, T& v) {
    if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) return false;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    return ec == std::errc() && end == text.data() + text.size();
}

// A time written in decimal (digits, a point, an exponent): strtod alone also takes hexadecimal, inf and nan.
bool decimal(const std::string& text, double& v) {
    if (text.empty() || text.find_first_not_of("0123456789.eE+-") != std::string::npos) return false;
    char* end = nullptr;
    v = std::strtod(text.c_str(), &end);
    return end == text.c_str() + text.size() && std::isfinite(v);
}

// The check of a numeric option's text before CLI11 converts it: decimal digits alone (whole numbers), or a
// decimal number (times).
CLI::Validator written_whole() {
    return CLI::Validator([](std::string& t) {
        unsigned long long v = 0;
        if (whole(t, v)) return std::string();
        const bool digits = !t.empty() && t.find_first_not_of("0123456789") == std::string::npos;
        return std::string(digits ? "expected a whole number of at most 18446744073709551615"
                                  : "expected a whole number in decimal digits") +
               ", found \"" + t + "\"";
    }, "UINT");
}
CLI::Validator written_decimal() {
    return CLI::Validator([](std::string& t) {
        double v = 0;
        return decimal(t, v) ? std::string() : "expected a decimal number, found \"" + t + "\"";
    }, "NUMBER");
}

// The result on standard output, flushed and checked: a full disk or a closed output is an error (exit 1), not a
// run whose measurement is lost while it reports success.
void print_result(const std::string& text) {
    errno = 0;
    std::cout << text << std::flush;
    if (!std::cout)
        throw std::runtime_error(std::string("standard output: the result could not be written (") +
                                 (errno ? std::strerror(errno) : "a write error") + ")");
}

bool parse_pair(const std::string& text, long& a, long& b) {
    auto colon = text.find(':');
    if (colon == std::string::npos) return false;
    return whole(std::string_view(text).substr(0, colon), a) && whole(std::string_view(text).substr(colon + 1), b);
}

// --synthetic OFFLOADS:HOST_US:SPLIT_US:SERIAL_US, each part whole (sscanf's %d wrapped 4294967297 to 1 and its %lf
// took 0x10 as 16); each busy-wait at most an hour (3.6e9 us).
bool parse_synthetic(const std::string& text, mmgp::kernels::synthetic_program& out) {
    std::vector<std::string> parts;
    for (std::size_t at = 0;;) {
        const std::size_t colon = text.find(':', at);
        parts.push_back(text.substr(at, colon == std::string::npos ? std::string::npos : colon - at));
        if (colon == std::string::npos) break;
        at = colon + 1;
    }
    int n = 0;
    double us[3] = {0, 0, 0};
    if (parts.size() != 4 || !whole(parts[0], n) || n < 1) return false;
    for (int k = 0; k < 3; ++k)
        if (!decimal(parts[k + 1], us[k]) || us[k] < 0 || us[k] > 3.6e9) return false;
    out = {n, us[0] * 1e-6, us[1] * 1e-6, us[2] * 1e-6};
    return true;
}

// --profile: the program's application profile on the GPU (process_profile.hpp).
struct profile_options {
    bool on = false, quiet = false;
    int repetitions = 3;
    std::string name = "raxml-libpll-cuda", command;
    std::string platform;  // --platform: C_apu less what the model charges an off-load there (model_charge.hpp)
};

// --accelerator cuda: the run on the GPU's processes, printed as run() prints, or with --profile the program's
// application profile; 77 where no GPU is usable.
int run_on_cuda(const mmgp::kernels::config& c, const profile_options& po) {
    namespace K = mmgp::kernels;
    K::check_config(c, "cuda");  // bad options are bad input in any build, on any machine
    if (po.repetitions < 1 || po.repetitions > 1000)
        throw mmgp::usage_error("--repetitions: expected an integer in [1, 1000], found " + std::to_string(po.repetitions));
    K::process_profile_request rq;
    rq.policy = c.policy;  // --profile --policy os: a profile for runs whose host spins
    if (!po.platform.empty()) {  // read and tried before the device: bad input is exit 2 on any machine
        rq.offload_charge = K::model_offload_charge(mmgp::load_platform(po.platform),
                                                    c.policy == K::host_policy::os ? mmgp::policy::os : mmgp::policy::edtlp);
        try {
            (void)rq.offload_charge(1000, 1);
        } catch (const mmgp::input_error& e) {
            // The charge is priced as a scenario of this platform alone: what it lacks is the platform file's, at
            // its own pointer (once ": /platform/dma: ... (the application declares dma_bytes)", no file named).
            const std::string at = e.location().rfind("/platform", 0) == 0 ? e.location().substr(9) : e.location();
            if (at == "/dma")
                throw mmgp::input_error(po.platform, at,
                                        "a transfer cost {\"latency_s\", \"bandwidth_Bps\"} (the profile's off-loads copy "
                                        "their data: --platform must price the copies)",
                                        e.found());
            throw mmgp::input_error(po.platform, at, e.expected(), e.found());
        }
        rq.charge_platform = po.platform;
    }
#if MMGP_WITH_CUDA
    namespace O = mmgp::offload;
    const O::cuda_facts facts = O::probe_cuda();
    if (facts.devices == 0) {
        // Bad data is bad input here too (once "no usable GPU", 77, for a missing alignment). With a device, the run
        // reads its data once and refuses it the same way.
        K::check_data(c);
        std::cerr << "mmgp-offload-run: --accelerator cuda: " << facts.why << '\n';
        return 77;
    }
    if (!po.on) {
        print_result(K::to_json(K::run_processes(c, O::cuda_accelerator(facts, c.policy))) + "\n");
        return 0;
    }
    rq.base = c;
    rq.repetitions = po.repetitions;
    rq.sms = facts.sms;
    rq.name = po.name;
    rq.command = po.command;
    if (!po.quiet) rq.progress = [](const std::string& line) { std::cerr << "mmgp-offload-run: profile: " << line << std::endl; };
    const K::process_profile_report rep = K::measure_process_profile(
        rq, O::cuda_accelerator(facts, rq.policy, true), O::cuda_accelerator(facts, rq.policy, false));
    print_result(rep.json);
    return 0;
#else
    (void)c;
    throw mmgp::usage_error("--accelerator cuda: this mmgp-offload-run was built without CUDA (nvcc not found, or -Dcuda=disabled)");
#endif
}

// --from-launcher: this process is one rank of a mapping mmgp launch (or mmgp tune) started: the ranks and the units
// of the whole mapping from MMGP_NP and MMGP_UNITS_TOTAL, its rank from MMGP_RANK (--launcher local), else from the
// MPI launcher's or Slurm's variable; one process here (m = 1).
void from_launcher(mmgp::kernels::config& c) {
    auto integer = [](const char* name, long lo) {  // decimal digits alone, as the options (strtol took " 2", "+2")
        const char* v = std::getenv(name);
        long x = 0;
        if (!v || !whole(std::string_view(v), x) || x < lo || x > 1000000)
            throw mmgp::usage_error(std::string("--from-launcher: expected ") + name + " (set by mmgp launch) to be an integer >= " +
                                    std::to_string(lo) + ", found " + (v ? "\"" + std::string(v) + "\"" : std::string("none")));
        return static_cast<int>(x);
    };
    const char* rank = "MMGP_RANK";  // the first of these that is set
    for (const char* name : {"MMGP_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"})
        if (std::getenv(name)) {
            rank = name;
            break;
        }
    c.rank = integer(rank, 0);
    c.ranks = integer("MMGP_NP", 1);
    c.units = integer("MMGP_UNITS_TOTAL", 1);
    c.m = 1;
}

// --profile and the options that go with it.
void add_profile_options(CLI::App& app, profile_options& po) {
    app.add_flag("--profile", po.on,
                 "with --accelerator cuda: measure the program's application profile on the GPU (one process at p = 1, "
                 "untimed and timed by CUDA events; its own slot curve at SMs, 2 SMs, 4 SMs) and print it; its host "
                 "waits by --policy (edtlp blocks, os spins), and the profile is for runs of that policy");
    // Each needs --profile: alone it would be taken and do nothing.
    app.add_option("--repetitions", po.repetitions, "--profile: sequential runs (default 3)")
        ->check(written_whole())
        ->needs("--profile");
    app.add_option("--name", po.name, "--profile: the application's name (default raxml-libpll-cuda)")->needs("--profile");
    app.add_flag("--quiet", po.quiet, "--profile: no progress lines on standard error")->needs("--profile");
    app.add_option("--platform", po.platform,
                   "--profile: the platform (calibrated) the profile is for: C_apu less what the model charges an "
                   "off-load there (O_offload + T_csw, blocking only, + the transfer) instead of the empty grid's round trip measured "
                   "in the process, so that the model gives back the profile's own runs on it")
        ->needs("--profile");
}

// The command line as one string (the profile's provenance).
std::string command_line(int argc, char** argv) {
    std::string out;
    for (int i = 0; i < argc; ++i) out += (i ? " " : "") + std::string(argv[i]);
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    namespace K = mmgp::kernels;
    CLI::App app{"mmgp-offload-run: run the libpll off-load runtime at one (m, p, policy) and print JSON"};
    K::config c;
    std::string policy = "edtlp", simulate, synthetic, scheduler, advisor_scenario, accelerator = "cpu";
    app.add_option("--accelerator", accelerator,
                   "cpu (APU threads, default) or cuda (m processes on the GPU, each off-load a grid of p blocks)");
    app.add_option("--m", c.m, "HPU threads (with --accelerator cuda: processes; default 1)")->check(written_whole());
    app.add_option("--p", c.p, "APUs per HPU thread (with --accelerator cuda: blocks per off-load; default 1)")->check(written_whole());
    app.add_option("--policy", policy, "edtlp (block on every off-load) or os (spin-wait)");
    app.add_option("--units", c.units, "bootstrap units (default 4)")->check(written_whole());
    app.add_option("--apus", c.apus,
                   "pool mode: A APU threads shared by the m HPU threads, p chosen per off-load by --scheduler (--p ignored)")
        ->check(written_whole());
    app.add_option("--scheduler", scheduler, "pool mode: edtlp (p = 1), mgps ([R] U <= 4 rule) or advisor (default edtlp)");
    app.add_option("--advisor-scenario", advisor_scenario, "--scheduler advisor: the advisor's scenario (file or bundled name)");
    auto* al = app.add_option("--alignment", c.alignment, "PHYLIP or FASTA DNA alignment (gz or not)");
    auto* si = app.add_option("--simulate", simulate, "TAXA:SITES, simulate an alignment instead (default 24:2000)");
    al->excludes(si);
    auto* tx = app.add_option("--taxa", c.taxa, "keep the first TAXA taxa (0: all)")->check(written_whole());
    auto* st = app.add_option("--sites", c.sites, "keep the first SITES sites (0: all)")->check(written_whole());
    auto* rd = app.add_option("--rounds", c.rounds, "smoothing rounds over all edges per unit (default 1)")->check(written_whole());
    auto* nw = app.add_option("--newton", c.newton, "Newton steps per branch at most (default 4)")->check(written_whole());
    // The seed's digits alone (CLI11 would wrap -1 to 2^64 - 1); the watchdog finite (1e400 would never fire).
    app.add_option("--seed", c.seed, "random seed (default 1)")->check(written_whole());
    app.add_option("--timeout", c.timeout_s, "watchdog, seconds (default 120)")
        ->check(written_decimal())
        ->check(CLI::Range(1e-3, 1e6).description("in [0.001, 1000000] seconds"));
    profile_options po;
    po.command = command_line(argc, argv);
    add_profile_options(app, po);
    bool launched = false;
    auto* fl = app.add_flag("--from-launcher", launched,
                            "with --accelerator cuda: this process is one rank of a mapping mmgp launch started (MMGP_RANK, "
                            "MMGP_NP, MMGP_UNITS_TOTAL): it runs that rank's share of the units in one process");
    auto* sy = app.add_option("--synthetic", synthetic,
                              "OFFLOADS:HOST_US:SPLIT_US:SERIAL_US run the synthetic program (busy-waits) instead");
    // The synthetic program reads no alignment: the data options would be taken and do nothing.
    for (CLI::Option* data : {al, si, tx, st, rd, nw}) sy->excludes(data);
    fl->excludes("--m");
    fl->excludes("--units");
    fl->excludes("--profile");
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
            if (!parse_synthetic(synthetic, c.synth))
                throw mmgp::usage_error("--synthetic: expected OFFLOADS:HOST_US:SPLIT_US:SERIAL_US (a whole count >= 1 "
                                        "and times of 0 to 3.6e9 microseconds, in decimal), found \"" + synthetic + "\"");
            c.synthetic = true;
        }
        if (!scheduler.empty() && c.apus <= 0) throw mmgp::usage_error("--scheduler: expected --apus A (pool mode) as well");
        if (!advisor_scenario.empty() && scheduler != "advisor")
            throw mmgp::usage_error("--advisor-scenario: expected --scheduler advisor as well");
        if (launched && accelerator != "cuda") throw mmgp::usage_error("--from-launcher: expected --accelerator cuda as well");
        if (launched) from_launcher(c);
        if (accelerator == "cuda") return run_on_cuda(c, po);
        if (po.on) throw mmgp::usage_error("--profile: expected --accelerator cuda as well (on CPU threads: mmgp profile)");
        if (accelerator != "cpu") throw mmgp::usage_error("--accelerator: expected cpu or cuda, found \"" + accelerator + "\"");
        if (c.apus > 0) c.scheduler = K::make_scheduler(scheduler.empty() ? "edtlp" : scheduler, advisor_scenario);
        K::result r = K::run(c);
        print_result(K::to_json(r) + "\n");
        return 0;
    });
}
