// mmgp calibrate --simulate: a described node (a platform profile) on a described cluster (a SimGrid platform
// file). Runs mmgp-mpi-bench, built against SimGrid's SMPI, under smpirun for nodes LO..HI (powers of two and HI)
// x processes per node 1..the node's cores, and returns the node's profile with the simulated network tables.
// Calls go down only: this file runs the simulator's programs and builds JSON; the CLI reads and writes the files.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "mmgp/error.hpp"

namespace mmgp::calib {

struct simulate_settings {
    std::string cluster;   ///< the SimGrid platform file (XML)
    int nodes_lo = 1, nodes_hi = 1;
    int ppn_max = 1;       ///< processes per node: 1..ppn_max
    std::string bench;     ///< mmgp-mpi-bench-smpi; empty: found next to the running executable
    std::string hosts_tool;  ///< mmgp-simgrid-hosts; empty: likewise
    std::function<void(const std::string&)> progress;
};

/// The cluster file cannot be read by SimGrid, or has too few hosts: the message names the file.
struct cluster_error : mmgp::error {
    using mmgp::error::error;
};

/// One simulated host: its name and cores, in the platform file's order.
struct sim_host {
    std::string name;
    int cores = 1;
};

/// The hosts of `cluster` (throws cluster_error with SimGrid's message when it cannot read the file).
std::vector<sim_host> cluster_hosts(const std::string& cluster, const std::string& hosts_tool);

/// The node counts simulated: powers of two from lo, and hi.
std::vector<int> simulated_node_counts(int lo, int hi);

/// The profile's "network" value: {"tables", "measurements", "notes"}, like calibrate --mpi's.
nlohmann::json simulate_network(const simulate_settings& s);

/// `node` (a platform profile) with `network` as its tables and nodes = hi; its name and description say so.
nlohmann::json simulated_platform(nlohmann::json node, const nlohmann::json& network, const simulate_settings& s,
                                  const std::string& name);

/// Whether this build has the simulator's programs (SimGrid found at build time).
bool simulator_built();

}  // namespace mmgp::calib
