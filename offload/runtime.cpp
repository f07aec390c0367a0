// The off-load runtime's entry points: run() checks the configuration, reads or simulates the data and runs the
// fixed or the pool mode (cpu/runtime_fixed.cpp, cpu/runtime_pool.cpp); run_processes() does the same for m
// processes each owning an accelerator's grids (processes.cpp); host policy names; result::mean_p.
#include "runtime.hpp"

#include <algorithm>
#include <cstddef>
#include <fmt/format.h>
#include <unistd.h>
#include <string>

#include "runtime_internal.hpp"

namespace mmgp::kernels {

const char* to_string(host_policy p) { return p == host_policy::edtlp ? "edtlp" : "os"; }

bool parse_host_policy(const std::string& text, host_policy& out) {
    if (text == "edtlp") out = host_policy::edtlp;
    else if (text == "os") out = host_policy::os;
    else return false;
    return true;
}

void check_config(const config& c, const std::string& accelerator) {
    if (c.m < 1) throw usage_error("m: expected an integer >= 1, found " + std::to_string(c.m));
    if (c.p < 1) throw usage_error("p: expected an integer >= 1, found " + std::to_string(c.p));
    if (c.units < 1) throw usage_error("units: expected an integer >= 1, found " + std::to_string(c.units));
    if (c.rounds < 1 || c.newton < 1) throw usage_error("rounds and newton steps: expected integers >= 1");
    if (!(c.timeout_s > 0)) throw usage_error("timeout: expected a positive number of seconds");
    if (c.apus < 0 || c.apus > 1024) throw usage_error("apus: expected an integer in 0..1024, found " + std::to_string(c.apus));
    if (c.ranks < 1 || c.rank < 0 || c.rank >= c.ranks)
        throw usage_error("rank: expected 0 <= rank < ranks, found rank " + std::to_string(c.rank) + " of " + std::to_string(c.ranks));
    if (accelerator.empty()) {
        if (c.ranks > 1) throw usage_error("ranks: a run that is one rank of several runs on an accelerator's processes only");
        // Every thread is started before the watchdog: a count no machine runs is refused before any starts.
        const long long threads = static_cast<long long>(c.m) * (1 + (c.apus > 0 ? 0LL : static_cast<long long>(c.p))) + c.apus;
        if (threads > max_threads)
            throw usage_error("m, p: expected at most " + std::to_string(max_threads) + " threads (m HPU threads and " +
                              (c.apus > 0 ? std::string("the A APU threads") : std::string("m x p APU threads")) +
                              "), found " + std::to_string(threads));
        return;
    }
    if (c.m > max_processes)
        throw usage_error("m: expected at most " + std::to_string(max_processes) + " processes on " + accelerator +
                          ", found " + std::to_string(c.m));
    if (c.synthetic) throw usage_error("--synthetic: runs on APU threads only (--accelerator cpu), not on " + accelerator);
    if (c.apus > 0)
        throw usage_error("--apus: pool mode shares APU threads inside one process; on " + accelerator +
                          " every process owns its grids (use --p)");
}

namespace {

// What every run needs before its mode starts: the checks of c, and the data (read or simulated) with its model
// and starting tree; res gets the configuration and the data's description.
struct run_inputs {
    alignment aln;
    model mdl;
    tree start;
};

// The likelihood vectors a run on CPU threads keeps (libpll's partitions, DNA under GTR+Γ4): per inner node and site
// 4 states x 4 rates doubles and a 4-byte scaler, for each of `copies` (the m HPU threads' copies of the sites; 0 on
// an accelerator, whose vectors are on the device); the alignment's text beside them. Refused before anything is
// allocated when they would not fit in this machine's memory: a size the options allow (10,000 x 10,000,000) once
// ended in std::bad_alloc or the OOM killer.
void check_fits_in_memory(const std::string& what, std::size_t taxa, std::size_t sites, int copies) {
    const double bytes = static_cast<double>(taxa) * static_cast<double>(sites) * (1.0 + copies * (4 * 4 * 8 + 4));
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    const double memory = pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0;
    if (memory > 0 && bytes > 0.8 * memory)
        throw usage_error(fmt::format("{}: expected an alignment whose {} fit in this machine's memory ({:.1f} GiB at "
                                      "most), found {} taxa x {} sites{} ({:.1f} GiB)",
                                      what, copies > 0 ? "likelihood vectors" : "text and tips", 0.8 * memory / (1 << 30),
                                      taxa, sites, copies > 0 ? fmt::format(" with m={}", copies) : std::string(),
                                      bytes / (1 << 30)));
}

// Every APU of an off-load (p, or the pool's apus) has a site of its own.
void check_one_site_each(const config& c, std::size_t sites) {
    const std::size_t most = static_cast<std::size_t>(c.apus > 0 ? c.apus : c.p);
    if (most > sites)
        throw usage_error(std::string(c.apus > 0 ? "apus" : "p") + ": expected at most " + std::to_string(sites) +
                          " APUs (one site each), found " + std::to_string(most));
}

// A simulated alignment's sizes, checked before it is simulated (host_copies: check_fits_in_memory's copies).
void check_simulated_sizes(const config& c, int host_copies) {
    if (c.simulate_taxa < 3 || c.simulate_sites < 1)
        throw usage_error("--simulate: expected TAXA >= 3 and SITES >= 1, found " + std::to_string(c.simulate_taxa) +
                          ":" + std::to_string(c.simulate_sites));
    check_fits_in_memory("--simulate", static_cast<std::size_t>(c.simulate_taxa), static_cast<std::size_t>(c.simulate_sites),
                         host_copies);
}

// The run's inputs; host_copies: the copies of the likelihood vectors on the host (m on CPU threads, 0 on a device).
run_inputs prepare(const config& c, result& res, int host_copies) {
    res.cfg = c;
    run_inputs in;
    if (c.synthetic) {
        const auto& s = c.synth;
        if (s.offloads < 1 || !(s.host_s >= 0) || !(s.split_s >= 0) || !(s.serial_s >= 0))
            throw usage_error("synthetic program: expected offloads >= 1 and durations >= 0");
        res.data_source = "synthetic";
        return in;
    }
    if (c.alignment.empty()) {
        check_simulated_sizes(c, host_copies);
        in.aln = simulate_alignment(static_cast<std::size_t>(c.simulate_taxa), static_cast<std::size_t>(c.simulate_sites), c.seed);
    } else {
        in.aln = read_alignment(c.alignment);
    }
    if (c.taxa < 0 || c.sites < 0) throw usage_error("taxa/sites: expected integers >= 0");
    in.aln = truncate(in.aln, static_cast<std::size_t>(c.taxa), static_cast<std::size_t>(c.sites));
    if (!c.alignment.empty()) check_fits_in_memory(c.alignment, in.aln.taxa(), in.aln.sites(), host_copies);
    check_one_site_each(c, in.aln.sites());
    in.mdl = default_model(in.aln);
    in.start = random_tree(in.aln.taxa(), c.seed + 7);
    res.taxa = in.aln.taxa();
    res.sites = in.aln.sites();
    res.data_source = in.aln.source;
    return in;
}

}  // namespace

void check_data(const config& c) {
    result res;
    (void)prepare(c, res, 0);
}

result run(const config& c) {
    check_config(c);
    const double setup0 = detail::now();
    result res;
    const run_inputs in = prepare(c, res, std::max(1, c.m));
    if (c.apus > 0) {
        detail::run_pool(c, in.aln, in.mdl, in.start, res, setup0);
        return res;
    }
    detail::run_fixed(c, in.aln, in.mdl, in.start, res, setup0);
    return res;
}

result run_processes(const config& c, const process_accelerator& acc) {
    check_config(c, acc.name);
    const double setup0 = detail::now();
    result res;
    const run_inputs in = prepare(c, res, 0);
    res.accelerator = acc.name;
    detail::run_processes(c, in.aln, in.mdl, in.start, acc, res, setup0);
    return res;
}

double result::mean_p() const {
    if (cfg.apus <= 0) return cfg.p;
    double n = 0, sum = 0;
    for (std::size_t p = 1; p < p_histogram.size(); ++p) {
        n += static_cast<double>(p_histogram[p]);
        sum += static_cast<double>(p * static_cast<std::size_t>(p_histogram[p]));
    }
    return n > 0 ? sum / n : 0.0;
}

}  // namespace mmgp::kernels
