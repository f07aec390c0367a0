#include "calibrate.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

#include "mpi_driver.hpp"

namespace mmgp::calib {

roles resolve_roles(const topology& t, const std::string& hpu, const std::string& apu) {
    roles r = default_roles(t);
    if (!hpu.empty()) {
        try {
            r.hpu = parse_cpu_list(hpu, t);
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(std::string("--hpu-cpus: ") + e.what());
        }
        if (apu.empty()) {  // the APUs are then one context of every core without an HPU context
            r.apu.clear();
            for (const auto& c : t.cores) {
                bool host = false;
                for (int pu : c) host = host || std::find(r.hpu.begin(), r.hpu.end(), pu) != r.hpu.end();
                if (!host) r.apu.push_back(c.front());
            }
        }
    }
    if (!apu.empty()) {
        try {
            r.apu = parse_cpu_list(apu, t);
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(std::string("--apu-cpus: ") + e.what());
        }
    }
    if (r.apu.empty()) throw std::invalid_argument("--hpu-cpus: leaves no core for an APU; give --apu-cpus");
    if (!hpu.empty() || !apu.empty())
        for (int c : r.apu)
            if (std::find(r.hpu.begin(), r.hpu.end(), c) != r.hpu.end())
                throw std::invalid_argument(fmt::format("--apu-cpus: CPU {} is also an HPU context", c));
    return r;
}

nlohmann::json alpha_json(const alpha_result& a) {
    nlohmann::json table = nlohmann::json::object();
    table["1"] = 1.0;
    nlohmann::json per = nlohmann::json::array();
    for (const auto& m : a.per_m) {
        table[std::to_string(m.extra["m"].get<int>())] = m.value;
        per.push_back(to_json(m));
    }
    int reps = a.per_m.empty() ? 0 : a.per_m.front().repetitions;
    nlohmann::json meas = {{"harness", "alpha"},
                           {"kernel", "double-precision matrix multiply (i-k-j), one per thread"},
                           {"sizes", a.sizes},
                           {"hpu_contexts", a.H},
                           {"definition", "alpha(m) = wall time of m threads / (max(1, m/H) x time of one thread alone): "
                                          "contention only, time sharing excluded"},
                           {"table", table},
                           {"fitted_m", a.fitted_m},
                           {"alone_s", a.t1},
                           {"per_m", per}};
    nlohmann::json j;
    if (a.linear) {
        j["linear"] = {{"intercept", {{"value", a.fit.intercept}, {"spread", a.fit.se_intercept}, {"repetitions", reps},
                                      {"harness", "alpha/linear-fit"}, {"unit", "factor"}}},
                       {"slope", {{"value", a.fit.slope}, {"spread", a.fit.se_slope}, {"repetitions", reps},
                                  {"harness", "alpha/linear-fit"}, {"unit", "factor per thread per context"}}}};
        meas["fit"] = {{"form", "alpha(m) = intercept + slope * m / H for m >= 2, alpha(1) = 1"}, {"r2", a.fit.r2}};
    } else {
        j["constant"] = {{"value", a.constant}, {"repetitions", reps}, {"harness", "alpha/median"}, {"unit", "factor"}};
        meas["fit"] = {{"form", "constant: median of the measured alpha(m), m >= 2 (a linear fit had a negative slope "
                                "or too few points)"}};
    }
    j["measurements"] = meas;
    return j;
}

nlohmann::json dma_json(const dma_result& d) {
    nlohmann::json pts = nlohmann::json::array(), per = nlohmann::json::array();
    int reps = 0;
    bool flagged = false;
    for (const auto& m : d.per_size) {
        pts.push_back({m.extra["bytes"], m.value});
        per.push_back(to_json(m));
        reps = m.repetitions;
        flagged = flagged || m.flagged;
    }
    const auto& small = d.per_size.front();
    const auto& large = d.per_size.back();
    nlohmann::json j;
    j["latency_s"] = {{"value", d.fit.latency_s}, {"unit", "s"}, {"median", small.value}, {"spread", small.obs.mad},
                      {"mad", small.obs.mad}, {"cv", small.reps.cv}, {"min", small.obs.min}, {"repetitions", reps},
                      {"harness", "dma/fit"}};
    j["bandwidth_Bps"] = {{"value", d.fit.bandwidth_Bps},
                          {"unit", "B/s"},
                          {"median", large.extra["bandwidth_Bps"]},
                          {"spread", large.value > 0 ? d.fit.bandwidth_Bps * large.obs.mad / large.value : 0.0},
                          {"cv", large.reps.cv},
                          {"repetitions", reps},
                          {"harness", "dma/fit"}};
    j["measurements"] = {{"harness", "dma"},
                         {"mechanism", "the APU core memcpy()s a buffer the HPU core has just written into its own buffer; "
                                       "time measured on the APU side"},
                         {"fit", "t(bytes) = latency + bytes / bandwidth, least squares weighted by 1/t^2"},
                         {"r2", d.fit.r2},
                         {"points", pts},
                         {"per_size", per}};
    return j;
}

nlohmann::json calibrate_platform(const calibrate_settings& s) {
    using clk = std::chrono::steady_clock;
    auto start = clk::now();
    topology topo = detect_topology();
    harness_options o;
    o.r = resolve_roles(topo, s.hpu_cpus, s.apu_cpus);
    o.quick = s.quick;
    o.cv_threshold = s.cv_threshold;
    o.progress = s.progress;
    const double budget = s.quick ? 1.5 : 8.0;  // per harness, for repeating noisy measurements
    o.retry_budget_s = budget;
    auto step = [&](int i, const char* what) {
        if (s.progress) s.progress(fmt::format("[{}/{}] {} ({:.1f} s)", i, s.mpi ? 7 : 6, what,
                                               std::chrono::duration<double>(clk::now() - start).count()));
    };
    nlohmann::json machine = machine_info(topo);

    step(1, "off-load round trip");
    measurement off_spin = run_offload(o, wait_mode::spin);
    measurement off_futex = run_offload(o, wait_mode::futex);
    step(2, "gap between back-to-back off-loads");
    measurement gap = run_gap(o);
    step(3, "context switch");
    measurement csw_yield = run_csw(o, csw_mode::yield);
    measurement csw_futex = run_csw(o, csw_mode::futex);
    step(4, "host contention alpha");
    alpha_result alpha = run_alpha(o);
    step(5, "data transfer");
    dma_result dma = run_dma(o);
    nlohmann::json network;
    if (s.mpi) {
        step(6, "MPI allreduce and send/recv");
        mpi_settings ms;
        ms.quick = s.quick;
        ms.cores = static_cast<int>(topo.cores.size());
        ms.progress = s.progress;
        network = measure_network(ms);
    }
    step(s.mpi ? 7 : 6, "fitting");

    std::string host = machine.value("host_name", "host");
    nlohmann::json p;
    p["schema"] = "mmgp/1";
    p["kind"] = "platform";
    p["name"] = s.name.empty() ? "host-" + host : s.name;
    p["description"] = fmt::format("Measured by mmgp calibrate{} on {} ({}): HPU = CPU(s) {}, APU = CPU(s) {}, "
                                   "host-thread accelerator backend.",
                                   s.quick ? " --quick" : "", host, machine.value("cpu_model", "?"),
                                   fmt::join(o.r.hpu, ","), fmt::join(o.r.apu, ","));
    p["hpu_contexts"] = {{"value", static_cast<int>(o.r.hpu.size())},
                         {"source", fmt::format("{}: hardware contexts given the HPU role (CPUs {})", topo.source,
                                                fmt::join(o.r.hpu, ","))}};
    p["apus"] = {{"value", static_cast<int>(o.r.apu.size())},
                 {"source", fmt::format("{}: cores given the APU role, one context each (CPUs {})", topo.source,
                                        fmt::join(o.r.apu, ","))}};
    p["nodes"] = {{"value", 1}, {"source", "one machine measured"}};
    p["O_offload"] = to_param(off_spin);
    p["O_offload"]["source"] = "offload harness, spinning cache-line mailbox, 4-byte payload (the blocking futex "
                               "variant is under measurements.offload_futex)";
    p["T_csw"] = to_param(csw_yield);
    p["T_csw"]["source"] = "csw harness: two threads pinned to one HPU context handing off with sched_yield() "
                           "(futex hand-off under measurements.csw_futex)";
    p["alpha"] = alpha_json(alpha);
    p["dma"] = dma_json(dma);
    if (!network.is_null()) p["network"] = network;
    p["machine"] = machine;
    double took = std::chrono::duration<double>(clk::now() - start).count();
    p["calibration"] = {{"tool", "mmgp calibrate"},
                        {"mode", s.quick ? "quick" : "full"},
                        {"duration_s", took},
                        {"hpu_cpus", o.r.hpu},
                        {"apu_cpus", o.r.apu},
                        {"backend", "host-thread"},
                        {"cv_threshold", s.cv_threshold}};
    p["measurements"] = {{"offload_spin", to_json(off_spin)}, {"offload_futex", to_json(off_futex)},
                         {"gap", to_json(gap)},               {"csw_yield", to_json(csw_yield)},
                         {"csw_futex", to_json(csw_futex)}};
    nlohmann::json notes = nlohmann::json::array();
    notes.push_back("g (gap) is an application parameter in mmgp/1; its measured value is under measurements.gap.");
    std::vector<const measurement*> all = {&off_spin, &off_futex, &gap, &csw_yield, &csw_futex};
    for (const auto& m : alpha.per_m) all.push_back(&m);
    for (const auto& m : dma.per_size) all.push_back(&m);
    for (const auto* m : all)
        if (m->flagged) notes.push_back(m->name + ": " + m->warning);
    p["notes"] = notes;
    return p;
}

}  // namespace mmgp::calib
