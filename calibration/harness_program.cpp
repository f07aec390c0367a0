// The body of every calibration harness program (harness_main.cpp, built once per harness: offload, gap, csw,
// alpha, dma or spin), compiled once for all six. Prints a Google-Benchmark-like JSON report: {"context": {...machine...}, "benchmarks": [...], "fit": {...}}.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <unistd.h>

#include "calibrate.hpp"
#include "harness_program.hpp"
#include "mmgp/error.hpp"
#include "mmgp/io.hpp"
#include "process.hpp"

namespace {

using namespace mmgp::calib;

// The command line of a harness program.
struct harness_args {
    bool quick = false;
    int reps = 0;
    double cv = 0.10;
    std::string hpu, apu, out;
    std::string mode;
};

void add_options(CLI::App& app, harness_args& a, const std::string& which) {
    app.add_flag("--quick", a.quick, "Fewer repetitions and sizes (a few seconds)");
    app.add_option("--repetitions", a.reps, "Repetitions (default: the harness's own)");
    app.add_option("--cv-threshold", a.cv, "Coefficient of variation above which a value is noisy (default 0.10)");
    app.add_option("--hpu-cpus", a.hpu, "CPU list of the host contexts, e.g. 0 or 0-7");
    app.add_option("--apu-cpus", a.apu, "CPU list of the accelerator cores, e.g. 1-7");
    app.add_option("-o,--output", a.out, "Write the JSON here instead of stdout");
    if (which == "offload") app.add_option("--mode", a.mode, "spin, futex or both (default both)");
    if (which == "csw") app.add_option("--mode", a.mode, "yield, futex or both (default both)");
    if (which == "spin")
        app.add_option("--mode", a.mode,
                       "pause (spin-wait iteration), slice (scheduler time slice), wake (hand-back on oversubscribed "
                       "cores) or all (default all)");
}

// The options' ranges, the CPU roles and the harness's --mode; throws std::invalid_argument.
harness_options checked_options(const topology& topo, const harness_args& a, const std::string& which) {
    harness_options o;
    if (a.reps < 0 || a.reps > 10000) throw std::invalid_argument("--repetitions: expected 0..10000");
    if (!(a.cv > 0 && a.cv < 10)) throw std::invalid_argument("--cv-threshold: expected a number in (0, 10)");
    o.r = resolve_roles(topo, a.hpu, a.apu);
    const std::string& mode = a.mode;
    if (which == "offload" && mode != "spin" && mode != "futex" && mode != "both")
        throw std::invalid_argument("--mode: expected spin, futex or both, found \"" + mode + "\"");
    if (which == "csw" && mode != "yield" && mode != "futex" && mode != "both")
        throw std::invalid_argument("--mode: expected yield, futex or both, found \"" + mode + "\"");
    if (which == "spin" && mode != "pause" && mode != "slice" && mode != "wake" && mode != "all")
        throw std::invalid_argument("--mode: expected pause, slice, wake or all, found \"" + mode + "\"");
    return o;
}

// Runs the harness `which` in its --mode; appends its records to doc["benchmarks"] (and its fit to doc["fit"]).
void run_harness(const std::string& which, const std::string& mode, const harness_options& o, nlohmann::json& doc) {
    nlohmann::json& b = doc["benchmarks"] = nlohmann::json::array();
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
}

// The machine and the options the measurements were taken with.
nlohmann::json context_json(const topology& topo, const harness_options& o, const char* executable, bool quick) {
    nlohmann::json c = machine_info(topo);
    c["hpu_cpus"] = o.r.hpu;
    c["apu_cpus"] = o.r.apu;
    c["executable"] = executable;
    c["quick"] = quick;
    return c;
}

// The harness's one line for what ended it, and the exit status of that (run/process.hpp).
int failed(const std::string& which, const std::exception& e) {
    std::cerr << "mmgp-harness-" << which << ": " << e.what() << '\n';
    return mmgp::run::exit_status_of(e);
}

// The report on stdout, or atomically into `out`; the exit status.
int write_report(const nlohmann::json& doc, const std::string& out, const std::string& which) {
    std::string text = doc.dump(2) + "\n";
    if (out.empty()) {
        std::cout << text;
        return 0;
    }
    try {
        mmgp::write_file_atomically(out, text);
    } catch (const std::exception& e) {
        return failed(which, e);  // an output that cannot be written is bad input: 2
    }
    return 0;
}

}  // namespace

int mmgp::calib::harness_program(const std::string& which, int argc, char** argv) {
    CLI::App app{"MMGP calibration harness '" + which + "': measures one platform parameter, prints JSON"};
    harness_args a;
    a.mode = which == "spin" ? "all" : "both";
    add_options(app, a, which);
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
        o = checked_options(topo, a, which);
    } catch (const std::invalid_argument& e) {  // bad options are bad input
        return failed(which, mmgp::error(e.what()));
    }
    o.quick = a.quick;
    o.repetitions = a.reps;
    o.cv_threshold = a.cv;
    o.retry_budget_s = a.quick ? 3 : 15;
    if (isatty(2)) o.progress = [which](const std::string& s) { std::cerr << which << ": " << s << '\n'; };
    nlohmann::json doc;
    doc["context"] = context_json(topo, o, argv[0], a.quick);
    try {
        run_harness(which, a.mode, o, doc);
    } catch (const std::exception& e) {
        return failed(which, e);
    }
    return write_report(doc, a.out, which);
}
