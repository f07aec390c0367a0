// mmgp calibrate --simulate CLUSTER.xml --node NODE.json --nodes LO:HI: a described node on a described cluster.
// The node's parameters are kept; its network tables are simulated by SimGrid's SMPI (calibration/simulate.cpp).
// This file checks the inputs before any simulation and writes the profile; nothing is written on failure.
#include <filesystem>
#include <fmt/format.h>
#include <iostream>

#include "cmd_calibrate.hpp"
#include "mmgp/io.hpp"
#include "mmgp/profile.hpp"
#include "simulate.hpp"

namespace mmgp::cli {

namespace {

/// The node's processes per node: --ppn, else its process limit, else its cores (time-shared), else the larger of
/// its host contexts and accelerators (a Cell's 1-6 MPI processes over 2 PPE contexts and 6 SPEs).
int processes_per_node(const platform& node, const calibrate_options& o) {
    if (o.ppn) return static_cast<int>(*o.ppn);
    if (node.max_processes_per_node) return std::min(node.max_processes_per_node, 1024);
    if (node.cores) return std::min(node.cores, 1024);
    return static_cast<int>(std::min<long long>(std::max<long long>(node.hpu_contexts, node.apus), 1024));
}

void check_simulate_options(const calibrate_options& o) {
    if (o.node.empty()) throw usage_error("--simulate: expected --node NODE.json (the platform profile of one node, or a bundled platform's name)");
    if (o.sim_nodes.empty()) throw usage_error("--simulate: expected --nodes LO:HI (the node counts to simulate)");
    // (--cv-threshold and --time-shared are refused by the option table: --simulate excludes them.)
    if (o.mpi || o.quick || !o.from.empty() || !o.hpu_cpus.empty() || !o.apu_cpus.empty() || o.dedicated ||
        o.max_threads || !o.accelerator.empty())
        throw usage_error("--simulate: measures nothing on this machine; expected none of --mpi, --quick, --from, "
                          "--hpu-cpus, --apu-cpus, --dedicated, --max-threads, --accelerator");
}

}  // namespace

int run_calibrate_simulate(const calibrate_options& o) {
    check_simulate_options(o);
    const int_range nodes = parse_range("--nodes", o.sim_nodes);
    if (nodes.hi > 1024) throw usage_error(fmt::format("--nodes: expected at most 1024 nodes, found {}", nodes.hi));
    if (!o.output.empty()) check_output("-o", o.output, {o.node, o.simulate});
    // A file, or a bundled platform's name ("ps3") when no such file exists.
    const bool bundled = !std::filesystem::exists(o.node) && !bundled_text("platforms/" + o.node).empty();
    const std::string text = bundled ? std::string(bundled_text("platforms/" + o.node)) : read_text_file(o.node);
    const platform node = parse_platform(text, o.node);  // a platform the engine reads, else its one-line error
    calib::simulate_settings s;
    s.cluster = o.simulate;
    s.nodes_lo = static_cast<int>(nodes.lo);
    s.nodes_hi = static_cast<int>(nodes.hi);
    s.ppn_max = processes_per_node(node, o);
    // A table needs two ranks: with none, the profile was written with no table (the node's own dropped) and exit 0.
    if (static_cast<long long>(s.nodes_hi) * s.ppn_max < 2)
        throw usage_error(fmt::format("--nodes and --ppn: expected at least two ranks to simulate (nodes x processes "
                                      "per node >= 2), found {} x {}",
                                      s.nodes_hi, s.ppn_max));
    if (!calib::simulator_built())
        throw usage_error("--simulate: this mmgp was built without SimGrid (apt-get install libsimgrid-dev, or "
                          "scripts/setup.sh, then rebuild); nothing simulated");
    if (!o.quiet) s.progress = [](const std::string& line) { std::cerr << "mmgp calibrate: " << line << std::endl; };
    interrupt_guard guard(o.output);
    nlohmann::json network;
    try {
        network = calib::simulate_network(s);
    } catch (const calib::cluster_error& e) {
        throw usage_error(e.what());  // bad input: one line, exit 2, nothing written
    } catch (const std::exception& e) {
        std::cerr << "mmgp: calibrate --simulate: " << e.what() << " (nothing written)\n";
        return 1;
    }
    const nlohmann::json profile = calib::simulated_platform(nlohmann::json::parse(text), network, s, o.name);
    write_profile(o.output, profile.dump(2) + "\n", profile_kind::platform, "calibrate");
    if (!o.quiet)
        std::cerr << fmt::format("mmgp calibrate: {} tables simulated on {}, {}-{} nodes x 1-{} processes per node{}\n",
                                 network["tables"].size(), o.simulate, s.nodes_lo, s.nodes_hi, s.ppn_max,
                                 o.output.empty() ? "" : ", written to " + o.output);
    return 0;
}

}  // namespace mmgp::cli
