// One calibration harness as a program of its own (MMGP_HARNESS is offload, gap, csw, alpha, dma or spin).
// Prints a Google-Benchmark-like JSON report: {"context": {...machine...}, "benchmarks": [...], "fit": {...}}.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <unistd.h>

#include "calibrate.hpp"
#include "mmgp/io.hpp"

#ifndef MMGP_HARNESS
#error "define MMGP_HARNESS"
#endif

int main(int argc, char** argv) {
    using namespace mmgp::calib;
    const std::string which = MMGP_HARNESS;
    CLI::App app{"MMGP calibration harness '" + which + "': measures one platform parameter, prints JSON"};
    bool quick = false;
    int reps = 0;
    double cv = 0.10;
    std::string hpu, apu, out;
    std::string mode = which == "spin" ? "all" : "both";
    app.add_flag("--quick", quick, "Fewer repetitions and sizes (a few seconds)");
    app.add_option("--repetitions", reps, "Repetitions (default: the harness's own)");
    app.add_option("--cv-threshold", cv, "Coefficient of variation above which a value is noisy (default 0.10)");
    app.add_option("--hpu-cpus", hpu, "CPU list of the host contexts, e.g. 0 or 0-7");
    app.add_option("--apu-cpus", apu, "CPU list of the accelerator cores, e.g. 1-7");
    app.add_option("-o,--output", out, "Write the JSON here instead of stdout");
    if (which == "offload") app.add_option("--mode", mode, "spin, futex or both (default both)");
    if (which == "csw") app.add_option("--mode", mode, "yield, futex or both (default both)");
    if (which == "spin")
        app.add_option("--mode", mode,
                       "pause (spin-wait iteration), slice (scheduler time slice), wake (hand-back on oversubscribed "
                       "cores) or all (default all)");
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << app.get_name() << ": " << e.what() << '\n';
        return 2;
    }
    harness_options o;
    topology topo = detect_topology();
    try {
        if (reps < 0 || reps > 10000) throw std::invalid_argument("--repetitions: expected 0..10000");
        if (!(cv > 0 && cv < 10)) throw std::invalid_argument("--cv-threshold: expected a number in (0, 10)");
        o.r = resolve_roles(topo, hpu, apu);
        if (which == "offload" && mode != "spin" && mode != "futex" && mode != "both")
            throw std::invalid_argument("--mode: expected spin, futex or both, found \"" + mode + "\"");
        if (which == "csw" && mode != "yield" && mode != "futex" && mode != "both")
            throw std::invalid_argument("--mode: expected yield, futex or both, found \"" + mode + "\"");
        if (which == "spin" && mode != "pause" && mode != "slice" && mode != "wake" && mode != "all")
            throw std::invalid_argument("--mode: expected pause, slice, wake or all, found \"" + mode + "\"");
    } catch (const std::invalid_argument& e) {
        std::cerr << "mmgp-harness-" << which << ": " << e.what() << '\n';
        return 2;
    }
    o.quick = quick;
    o.repetitions = reps;
    o.cv_threshold = cv;
    o.retry_budget_s = quick ? 3 : 15;
    if (isatty(2)) o.progress = [&](const std::string& s) { std::cerr << which << ": " << s << '\n'; };
    nlohmann::json doc;
    doc["context"] = machine_info(topo);
    doc["context"]["hpu_cpus"] = o.r.hpu;
    doc["context"]["apu_cpus"] = o.r.apu;
    doc["context"]["executable"] = argv[0];
    doc["context"]["quick"] = quick;
    nlohmann::json& b = doc["benchmarks"] = nlohmann::json::array();
    try {
        if (which == "offload") {
            if (mode != "futex") b.push_back(to_json(run_offload(o, wait_mode::spin)));
            if (mode != "spin") b.push_back(to_json(run_offload(o, wait_mode::futex)));
        } else if (which == "gap") {
            b.push_back(to_json(run_gap(o)));
        } else if (which == "csw") {
            if (mode != "futex") b.push_back(to_json(run_csw(o, csw_mode::yield)));
            if (mode != "yield") b.push_back(to_json(run_csw(o, csw_mode::futex)));
        } else if (which == "alpha") {
            alpha_result a = run_alpha(o);
            for (const auto& m : a.per_m) b.push_back(to_json(m));
            doc["fit"] = alpha_json(a);
        } else if (which == "dma") {
            dma_result d = run_dma(o);
            for (const auto& m : d.per_size) b.push_back(to_json(m));
            doc["fit"] = dma_json(d);
        } else if (which == "spin") {
            if (mode == "all" || mode == "pause") b.push_back(to_json(run_spin_pause(o)));
            if (mode == "all" || mode == "slice") b.push_back(slice_json(run_sched_slice(o)));
            if (mode == "all" || mode == "wake") b.push_back(to_json(run_wake_busy(o)));
        }
    } catch (const std::exception& e) {
        std::cerr << "mmgp-harness-" << which << ": " << e.what() << '\n';
        return 1;
    }
    std::string text = doc.dump(2) + "\n";
    if (out.empty()) {
        std::cout << text;
        return 0;
    }
    try {
        mmgp::write_file_atomically(out, text);
    } catch (const std::exception& e) {
        std::cerr << "mmgp-harness-" << which << ": " << e.what() << '\n';
        return 1;
    }
    return 0;
}
