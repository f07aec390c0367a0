// mmgp calibrate (cmd_calibrate.cpp, with --simulate in cmd_calibrate_simulate.cpp and --accelerator cuda in
// cmd_calibrate_gpu.cpp): its options and entry points, for main.cpp's command table.
#pragma once

#include "common.hpp"

namespace mmgp::cli {

struct calibrate_options {
    bool quick = false, mpi = false, time_shared = false, dedicated = false, quiet = false;
    std::string output, hpu_cpus, apu_cpus, name;
    std::string from;  ///< --from: re-describe this calibrated profile instead of measuring
    double cv_threshold = 0.10;
    std::optional<long long> max_threads;  ///< --max-threads
    std::string simulate, node, sim_nodes;  ///< --simulate CLUSTER.xml --node NODE.json --nodes LO:HI
    std::optional<long long> ppn;           ///< --ppn: processes per node simulated, 1..N
    std::string accelerator;                ///< --accelerator cuda[:DEVICE]: a GPU node
};
void setup_calibrate(CLI::App& app, calibrate_options& o);
int run_calibrate(const calibrate_options& o);
int run_calibrate_simulate(const calibrate_options& o);  ///< --simulate (cmd_calibrate_simulate.cpp)
int run_calibrate_gpu(const calibrate_options& o);       ///< --accelerator cuda (cmd_calibrate_gpu.cpp)
/// --from: the OSU tables a profile names by a relative path (network.tables[].osu, relative to the profile's own
/// folder) named again relative to the folder of `output` (the working directory when it is printed), so that the
/// profile written there reads the same files (once written into another folder, it named files not there).
void rebase_osu_paths(nlohmann::json& p, const std::string& from, const std::string& output);

}  // namespace mmgp::cli
