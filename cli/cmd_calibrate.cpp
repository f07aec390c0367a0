// mmgp calibrate: measure this machine with the calibration harnesses and write a platform profile.
// The harnesses, fitting and the atomic write live in calibration/; this file only wires options and output.
#include <fmt/format.h>
#include <iostream>

#include "calibrate.hpp"
#include "common.hpp"
#include "options.hpp"
#include "mmgp/profile.hpp"

namespace mmgp::cli {

void setup_calibrate(CLI::App& app, calibrate_options& o) {
    auto* sub = app.add_subcommand(
        "calibrate", "Measure this machine (off-load round trip, context switch, host contention alpha, data "
                     "transfer) and write a platform profile");
    sub->add_flag("--quick", o.quick, "Fewer repetitions and sizes (under 20 s instead of under 2 minutes)");
    sub->add_flag("--mpi", o.mpi, "Also measure MPI allreduce and send/recv tables with OpenMPI (as root: extra nodes emulated by network namespaces)");
    sub->add_flag("-q,--quiet", o.quiet, "No progress lines and no summary on standard error");
    add_checked(sub, "-o,--output", o.output, "Write the profile here (atomically); default: standard output");
    add_checked(sub, "--hpu-cpus", o.hpu_cpus, "CPU list of the host (HPU) contexts, e.g. 0 or 0-7 (default: the "
                                              "first cores/8 cores, at least one)");
    add_checked(sub, "--apu-cpus", o.apu_cpus, "CPU list of the accelerator (APU) cores, e.g. 1-7 (default: one context "
                                              "of every other core)");
    add_checked(sub, "--cv-threshold", o.cv_threshold,
                    "Coefficient of variation above which a parameter is repeated, then flagged (default 0.10)");
    add_checked(sub, "--name", o.name, "Profile name (default host-HOSTNAME)");
    sub->add_flag("--time-shared", o.time_shared,
                  "Describe HPU and APU threads as unpinned software threads time-sharing the cores (writes cores, "
                  "T_wake, spin_pause, sched_slice; hpu_contexts = cores, apus = --max-threads)");
    add_checked(sub, "--max-threads", o.max_threads,
                    "With --time-shared: the bound on m*p written as apus (default 4 x cores)");
}

int run_calibrate(const calibrate_options& o) {
    if (o.output == "-") throw usage_error("-o: expected a file name; omit -o to print the profile");
    if (o.max_threads && !o.time_shared) throw usage_error("--max-threads: only with --time-shared");
    if (!o.output.empty()) check_output("-o", o.output);  // fail before measuring, not after
    calib::calibrate_settings s;
    s.quick = o.quick;
    s.mpi = o.mpi;
    s.hpu_cpus = o.hpu_cpus;
    s.apu_cpus = o.apu_cpus;
    s.cv_threshold = o.cv_threshold;
    s.name = o.name;
    s.time_shared = o.time_shared;
    s.max_threads = o.max_threads ? static_cast<int>(*o.max_threads) : 0;
    try {  // bad CPU lists are usage errors: check them before measuring anything
        calib::resolve_roles(calib::detect_topology(), o.hpu_cpus, o.apu_cpus);
    } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
    }
    // Progress on stderr whatever it is (terminal, log file, pipe): one line per harness.
    if (!o.quiet) s.progress = [](const std::string& line) { std::cerr << "mmgp calibrate: " << line << std::endl; };
    // An interrupt from here on stops at once and says which file it left alone.
    interrupt_guard guard(o.output);
    nlohmann::json profile;
    try {
        profile = calib::calibrate_platform(s);
    } catch (const std::exception& e) {
        std::cerr << "mmgp: calibrate: a harness failed: " << e.what() << " (nothing written)\n";
        return 1;
    }
    const std::string text = profile.dump(2) + "\n";
    // The profile must be one the engine reads: check it before it replaces anything.
    try {
        nlohmann::json sc = {{"schema", "mmgp/1"}, {"platform", profile}, {"application", "pbpi"}};
        (void)parse_scenario(sc.dump(), "<calibrated profile>");
    } catch (const mmgp::error& e) {
        std::cerr << "mmgp: calibrate: internal error, the measured profile does not validate: " << e.what()
                  << " (nothing written)\n";
        return 1;
    }
    if (o.output.empty())
        std::cout << text << std::flush;
    else
        write_file_atomically(o.output, text);  // a failure here is an mmgp::error: exit 2, nothing written
    if (!o.quiet) {
        auto v = [&](const char* k) { return profile[k]["value"].get<double>(); };
        std::cerr << fmt::format("mmgp calibrate: O_offload {} (min {}), T_csw {}, {} HPU context(s), {} APU(s){}\n",
                                 human_time(v("O_offload")), human_time(profile["O_offload"]["min"].get<double>()),
                                 human_time(v("T_csw")), profile["hpu_contexts"]["value"].get<int>(),
                                 profile["apus"]["value"].get<int>(),
                                 o.output.empty() ? "" : ", written to " + o.output);
        const auto& ms = profile["measurements"];
        const auto& sl = ms["sched_slice"];
        std::cerr << fmt::format("mmgp calibrate: spin-wait iteration {}, scheduler slice {}{}\n",
                                 human_time(ms["spin_pause"]["median"].get<double>()),
                                 sl.value("measurable", false) ? human_time(sl["median"].get<double>())
                                                               : std::string("unmeasurable"),
                                 o.time_shared ? fmt::format(", time-shared: {} cores, T_wake {}",
                                                             profile["cores"]["value"].get<int>(),
                                                             human_time(profile["T_wake"]["value"].get<double>()))
                                               : std::string());
    }
    return 0;
}

}  // namespace mmgp::cli
