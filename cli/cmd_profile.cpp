// mmgp profile: measures the application profile (T_hpu, T_apu, C_apu, N, g per unit) of the libpll bootstrap
// program by running it sequentially on the off-load runtime (calibration/kernels), and writes it atomically.
#include <fmt/format.h>
#include <iostream>

#include "app_profile.hpp"
#include "common.hpp"

namespace mmgp::cli {

void setup_profile(CLI::App& app, profile_options& o) {
    auto* sub = app.add_subcommand(
        "profile",
        "Measure an application profile (schema mmgp/1): run the libpll bootstrap program sequentially (1 HPU "
        "thread, 1 APU) with timers around host, off-loaded and non-splittable regions, and with 2 APUs for g");
    auto* al = sub->add_option("--alignment", o.alignment,
                               "DNA alignment, PHYLIP or FASTA, gzip or not (default "
                               "/usr/share/doc/examl/testData/49.gz, shipped by Debian's examl)");
    auto* si = sub->add_option("--simulate", o.simulate, "TAXA:SITES: simulate DNA along a random tree (GTR+G4, seeded) instead");
    al->excludes(si);
    sub->add_option("--taxa", o.taxa, "Keep only the first TAXA taxa (default all)");
    sub->add_option("--sites", o.sites, "Keep only the first SITES sites (default all)");
    sub->add_option("--units", o.units, "Task units (bootstraps) of the application and of each profiling run (default 16)");
    sub->add_option("--repetitions", o.repetitions, "Sequential runs; the profile holds their median (default 5)");
    sub->add_option("--rounds", o.rounds, "Branch-smoothing rounds over all edges per unit (default 1)");
    sub->add_option("--newton", o.newton, "Newton steps per branch at most (default 4)");
    sub->add_option("--seed", o.seed, "Random seed for resampling, branch lengths, topology, simulation (default 1)");
    sub->add_option("--name", o.name, "Application name in the profile (default raxml-libpll)");
    sub->add_option("-o,--output", o.output, "Write the profile here, atomically; default: standard output");
    sub->add_flag("-q,--quiet", o.quiet, "No progress lines on standard error");
}

namespace {

long positive(const std::string& option, const std::string& text, long lo, long hi) {
    std::size_t k = 0;
    long v = 0;
    try {
        v = std::stol(text, &k);
    } catch (...) {
        k = 0;
    }
    if (k == 0 || k != text.size() || v < lo || v > hi)
        throw usage_error(fmt::format("{}: expected an integer in [{}, {}], found \"{}\"", option, lo, hi, text));
    return v;
}

}  // namespace

int run_profile(const profile_options& o) {
    namespace K = mmgp::kernels;
    K::profile_request rq;
    K::config& c = rq.base;
    if (o.units < 1 || o.units > 1000000) throw usage_error(fmt::format("--units: expected an integer in [1, 1000000], found {}", o.units));
    if (o.repetitions < 1 || o.repetitions > 1000)
        throw usage_error(fmt::format("--repetitions: expected an integer in [1, 1000], found {}", o.repetitions));
    if (o.rounds < 1 || o.rounds > 100) throw usage_error(fmt::format("--rounds: expected an integer in [1, 100], found {}", o.rounds));
    if (o.newton < 1 || o.newton > 100) throw usage_error(fmt::format("--newton: expected an integer in [1, 100], found {}", o.newton));
    if (o.taxa < 0 || (o.taxa > 0 && o.taxa < 3))
        throw usage_error(fmt::format("--taxa: expected an integer >= 3, found {}", o.taxa));
    if (o.sites < 0 || o.sites == 1)  // g needs a run with 2 APUs, one site range each
        throw usage_error(fmt::format("--sites: expected an integer >= 2, found {}", o.sites));
    c.units = o.units;
    c.rounds = o.rounds;
    c.newton = o.newton;
    c.seed = o.seed;
    c.taxa = o.taxa;
    c.sites = o.sites;
    std::string cmd = "mmgp profile";
    if (!o.simulate.empty()) {
        auto colon = o.simulate.find(':');
        if (colon == std::string::npos)
            throw usage_error(fmt::format("--simulate: expected TAXA:SITES, found \"{}\"", o.simulate));
        c.simulate_taxa = static_cast<int>(positive("--simulate TAXA", o.simulate.substr(0, colon), 3, 10000));
        c.simulate_sites = static_cast<int>(positive("--simulate SITES", o.simulate.substr(colon + 1), 2, 10000000));
        cmd += " --simulate " + o.simulate;
    } else {
        c.alignment = o.alignment.empty() ? std::string("/usr/share/doc/examl/testData/49.gz") : o.alignment;
        cmd += " --alignment " + c.alignment;
    }
    if (o.taxa) cmd += fmt::format(" --taxa {}", o.taxa);
    if (o.sites) cmd += fmt::format(" --sites {}", o.sites);
    cmd += fmt::format(" --units {} --repetitions {} --rounds {} --newton {} --seed {}", o.units, o.repetitions, o.rounds,
                       o.newton, o.seed);
    rq.repetitions = o.repetitions;
    rq.name = o.name;
    rq.command = cmd;
    if (!o.output.empty()) check_output("-o", o.output, {c.alignment});  // before measuring
    if (!o.quiet) rq.progress = [](const std::string& line) { std::cerr << "mmgp profile: " << line << std::endl; };
    interrupt_guard guard(o.output);  // an interrupt stops at once and says which file it left alone
    K::profile_report rep;
    try {
        rep = K::measure_profile(rq);
    } catch (const K::input_error& e) {
        throw usage_error(e.what());
    }
    if (o.output.empty()) {
        std::cout << rep.json;
        return 0;
    }
    write_file_atomically(o.output, rep.json);
    const auto& r = rep.runs.front();
    std::cout << fmt::format("mmgp profile: {} ({} taxa x {} sites), {} units, {} repetitions, {:.1f} s\n", r.data_source,
                             r.taxa, r.sites, o.units, o.repetitions, rep.elapsed_s);
    auto line = [](const char* name, const K::statistic& s, const char* unit) {
        return fmt::format("  {:<6} {:>12.6g} {}  (mad {:.3g}, cv {:.3f}, n={})\n", name, s.median, unit, s.mad, s.cv,
                           s.repetitions);
    };
    std::cout << line("N", rep.N, "off-loads per unit") << line("T_hpu", rep.T_hpu, "s per unit")
              << line("T_apu", rep.T_apu, "s per unit") << line("C_apu", rep.C_apu, "s per unit")
              << line("g", rep.g, "s per off-load per APU")
              << fmt::format("  wall   {:.4g} s (p=1), {:.4g} s (p=2)\nwrote {}\n", rep.wall1.median, rep.wall2.median,
                             o.output);
    return 0;
}

}  // namespace mmgp::cli
