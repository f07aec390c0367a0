// mmgp profile: measures the application profile (T_hpu, T_apu, C_apu, N, g per unit) of the libpll bootstrap
// program by running it sequentially on the off-load runtime (offload/), and writes it atomically. On a GPU
// (--accelerator cuda) it runs mmgp-offload-run --accelerator cuda --profile, which links CUDA (mmgp does not), and
// writes what that measured once the engine reads it.
#include <algorithm>
#include <charconv>
#include <fmt/format.h>

#include <iostream>

#include <mmgp/launch.hpp>   // shell_quote()
#include <mmgp/profile.hpp>  // parse_application()

#include "app_profile.hpp"
#include "cmd_profile.hpp"
#include "options.hpp"
#include "process.hpp"  // run/: shell()

namespace mmgp::cli {

void setup_profile(CLI::App& app, profile_options& o) {
    auto* sub = app.add_subcommand(
        "profile",
        "Measure an application profile (schema mmgp/1): run the libpll bootstrap program sequentially (1 HPU "
        "thread, 1 APU) with timers around host, off-loaded and non-splittable regions, and with 2 APUs for g");
    auto* al = add_checked(sub, "--alignment", o.alignment,
                               "DNA alignment, PHYLIP or FASTA, gzip or not (default "
                               "/usr/share/doc/examl/testData/49.gz, shipped by Debian's examl)");
    auto* si = add_checked(sub, "--simulate", o.simulate, "TAXA:SITES: simulate DNA along a random tree (GTR+G4, seeded) instead");
    add_checked(sub, "--accelerator", o.accelerator,
                "cpu (APU threads, default) or cuda: the program's off-loads as GPU grids, measured by mmgp-offload-run "
                "(the kernels' device time, the program's own slot curve at SMs, 2 SMs and 4 SMs blocks)");
    add_checked(sub, "--platform", o.platform,
                "with --accelerator cuda: the calibrated platform the profile is for. C_apu is then the off-loads' cost "
                "less what the model charges each on it (O_offload + T_csw, blocking only, + the transfer), so that the model gives "
                "back the profile's own runs there; without it, less the empty grid's round trip measured in the process");
    add_checked(sub, "--policy", o.policy,
                "with --accelerator cuda: how the profile's runs wait for their grids, edtlp (the host thread blocks, "
                "default) or os (it spins); the profile is for runs of that policy (C_apu holds what their waits cost "
                "beyond the model's charge)");
    al->excludes(si);
    add_checked(sub, "--taxa", o.taxa, "Keep only the first TAXA taxa (default all)");
    add_checked(sub, "--sites", o.sites, "Keep only the first SITES sites (default all)");
    add_checked(sub, "--units", o.units, "Task units (bootstraps) of the application and of each profiling run (default 16)");
    add_checked(sub, "--repetitions", o.repetitions, "Sequential runs; the profile holds their median (default 5)");
    add_checked(sub, "--rounds", o.rounds, "Branch-smoothing rounds over all edges per unit (default 1)");
    add_checked(sub, "--newton", o.newton, "Newton steps per branch at most (default 4)");
    add_checked(sub, "--seed", o.seed, "Random seed for resampling, branch lengths, topology, simulation (default 1)");
    add_checked(sub, "--name", o.name, "Application name in the profile (default raxml-libpll)");
    add_checked(sub, "-o,--output", o.output, "Write the profile here, atomically; default: standard output");
    sub->add_flag("-q,--quiet", o.quiet, "No progress lines on standard error");
}

namespace {

// Decimal digits alone: std::stol also takes " +8" (and the provenance then held it as given).
long positive(const std::string& option, const std::string& text, long lo, long hi) {
    long v = 0;
    const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (!digits || ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi)
        throw usage_error(fmt::format("{}: expected an integer in [{}, {}], found \"{}\"", option, lo, hi, text));
    return v;
}

}  // namespace

// --accelerator cuda: mmgp-offload-run measures (it links CUDA, mmgp does not); its profile is written once the
// engine reads it. `workload`: the options that name the program and its data, as given.
int run_profile_cuda(const profile_options& o, const std::string& alignment, const std::string& workload) {
    const std::string tool = helper_program("MMGP_OFFLOAD_RUN", "mmgp-offload-run", "mmgp-offload-run");
    if (tool.empty()) throw usage_error("--accelerator cuda: mmgp-offload-run was not found beside mmgp (or by MMGP_OFFLOAD_RUN)");
    if (!o.output.empty()) check_output("-o", o.output, {alignment, o.platform});
    interrupt_guard guard(o.output);
    const std::string name = o.name.empty() ? "raxml-libpll-cuda" : o.name;
    const std::string platform = o.platform.empty() ? "" : " --platform " + shell_quote(o.platform);
    // --policy os only where asked: a blocking profile's command line (its provenance) as before.
    const std::string cmd = fmt::format("{} --accelerator cuda --profile{}{}{} --name {}{}", shell_quote(tool), workload,
                                        platform, o.policy == "os" ? " --policy os" : "", shell_quote(name),
                                        o.quiet ? " --quiet" : "");
    std::string out;
    const int rc = run::shell(cmd, &out, 16 << 20);
    if (mmgp::interrupt_pending()) mmgp::finish_interrupt();
    if (rc == 2) return 2;  // its bad-input line is above, alone
    if (rc == run::output_too_long) {
        std::cerr << "mmgp: profile: mmgp-offload-run printed more than 16 MiB (a profile is a few kB): stopped it; nothing written\n";
        return 1;
    }
    if (rc == 77) {
        std::cerr << "mmgp: profile: no usable GPU (mmgp-offload-run's reason is above); nothing written\n";
        return 1;
    }
    if (rc != 0) {
        std::cerr << "mmgp: profile: mmgp-offload-run --accelerator cuda --profile failed ("
                  << (rc < 0 ? std::string("it could not start, or a signal ended it") : "status " + std::to_string(rc))
                  << "); nothing written\n";
        return 1;
    }
    try {
        (void)parse_application(out, "mmgp-offload-run's profile");  // a document the engine reads
    } catch (const mmgp::error& e) {
        std::cerr << "mmgp: profile: mmgp-offload-run wrote no profile the engine reads (" << e.what() << "); nothing written\n";
        return 1;
    }
    write_profile(o.output, out, profile_kind::application, "profile");
    // Said of a profile written (not before a refusal, nor after a failure, when there is none).
    if (o.platform.empty() && !o.quiet)
        hold_note("no --platform: C_apu leaves out the empty grid's round trip as measured here, which the model does "
                  "not charge (it charges the platform's O_offload, + T_csw when blocking); give the calibrated platform "
                  "to profile for it");
    if (!o.output.empty()) std::cout << "mmgp profile: measured by " << tool << " on the GPU; wrote " << o.output << '\n';
    return 0;
}

int run_profile(const profile_options& o) {
    namespace K = mmgp::kernels;
    K::profile_request rq;
    K::config& c = rq.base;
    // --units, --repetitions, --rounds, --newton, --taxa, --sites: ranges checked by the option table (options.cpp)
    c.units = o.units;
    c.rounds = o.rounds;
    c.newton = o.newton;
    c.seed = o.seed;
    c.taxa = o.taxa.value_or(0);  // 0: all
    c.sites = o.sites.value_or(0);
    std::string cmd = "mmgp profile", data;  // data: --alignment=FILE or --simulate=T:S, quoted for the shell
    if (!o.simulate.empty()) {
        auto colon = o.simulate.find(':');
        if (colon == std::string::npos)
            throw usage_error(fmt::format("--simulate: expected TAXA:SITES, found \"{}\"", o.simulate));
        c.simulate_taxa = static_cast<int>(positive("--simulate TAXA", o.simulate.substr(0, colon), 3, 10000));
        c.simulate_sites = static_cast<int>(positive("--simulate SITES", o.simulate.substr(colon + 1), 2, 10000000));
        cmd += " --simulate " + o.simulate;
        data = " --simulate=" + shell_quote(o.simulate);
    } else {
        c.alignment = o.alignment.empty() ? std::string("/usr/share/doc/examl/testData/49.gz") : o.alignment;
        cmd += " --alignment " + c.alignment;
        data = " --alignment=" + shell_quote(c.alignment);
    }
    // The rest of the workload, the same words in the provenance and on mmgp-offload-run's command line.
    std::string rest;
    if (o.taxa) rest += fmt::format(" --taxa {}", *o.taxa);
    if (o.sites) rest += fmt::format(" --sites {}", *o.sites);
    rest += fmt::format(" --units {} --repetitions {} --rounds {} --newton {} --seed {}", o.units, o.repetitions, o.rounds,
                        o.newton, o.seed);
    cmd += rest;
    if (o.accelerator == "cuda") return run_profile_cuda(o, c.alignment, data + rest);
    if (!o.platform.empty()) throw usage_error("--platform: expected --accelerator cuda as well (the CPU profile reads no platform)");
    if (o.policy != "edtlp")
        throw usage_error("--policy: expected --accelerator cuda as well (the CPU profile keeps the blocked thread's "
                          "wake-up apart, as T_offload_idle, and serves both policies)");
    rq.repetitions = o.repetitions;
    rq.name = o.name.empty() ? "raxml-libpll" : o.name;
    rq.command = cmd;
    if (!o.output.empty()) check_output("-o", o.output, {c.alignment});  // before measuring
    if (!o.quiet) rq.progress = [](const std::string& line) { std::cerr << "mmgp profile: " << line << std::endl; };
    interrupt_guard guard(o.output);  // an interrupt stops at once and says which file it left alone
    const K::profile_report rep = K::measure_profile(rq);  // bad input: mmgp::input_error or usage_error, exit 2
    write_profile(o.output, rep.json, profile_kind::application, "profile");
    const auto unpinned = std::count_if(rep.runs.begin(), rep.runs.end(),
                                        [](const K::result& x) { return x.cfg.pin_team && !x.pinned; });
    if (unpinned > 0)
        hold_warning(fmt::format("{} run(s) with 2 APUs could not be pinned to a core each (fewer than 2 CPUs allowed, "
                                 "or the affinity refused): g measures the threads sharing a core, not the gap "
                                 "(measurements.g_p2_pinned)",
                                 unpinned));
    if (o.output.empty()) return 0;
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
