// mmgp calibrate --mpi: runs mmgp-mpi-bench under mpirun for several (nodes, processes per node) distributions and
// returns the profile's "network" value. Extra "nodes" are network namespaces joined by veth pairs to a bridge;
// mpirun starts their processes through a generated plm_rsh_agent script that enters the namespace.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace mmgp::calib {

struct mpi_settings {
    bool quick = false;
    int cores = 1;                 ///< cores usable by MPI processes (one process per core at most)
    bool namespaces = true;        ///< emulate extra nodes with network namespaces (needs root and ip(8))
    std::string bench;             ///< path of mmgp-mpi-bench; empty: find it next to the running executable
    std::function<void(const std::string&)> progress;
};

/// Profile tables {"primitive", "nodes", "ppn", "points": [[bytes, s], ...], "statistics"} from one mmgp-mpi-bench
/// report {"tables": {"allreduce": [[bytes, median, mad, cv], ...], "sendrecv": [...]}, "repetitions": R}.
nlohmann::json tables_from_bench(const nlohmann::json& report, int nodes, int ppn);

/// {"tables": [...], "measurements": {...}}; throws mmgp::failure when MPI cannot run at all.
nlohmann::json measure_network(const mpi_settings& s);

}  // namespace mmgp::calib
