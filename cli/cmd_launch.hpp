// mmgp launch (cmd_launch.cpp): its options and entry points, for main.cpp's command table; the launch plan is
// also what mmgp tune runs (cmd_tune.cpp hands it to run/tune_backend.hpp).
#pragma once

#include "common.hpp"
#include "cost.hpp"

namespace mmgp::cli {

struct launch_options {
    std::string profile, launcher, program;
    space_options_cli space;
    objective_options_cli goal;  ///< --objective, --within, --max-nodes, --budget
    std::optional<std::int64_t> units;  ///< --units (not given: the application's)
    std::optional<int> cores_per_node;
    bool oversubscribe = false, no_bind = false, exec = false, json = false;
    std::vector<std::string> command;
    std::string devices;   ///< --cuda-devices: CUDA_VISIBLE_DEVICES of a GPU mapping
    int accelerators = 0;  ///< not an option: the platform's apus (a GPU node's SMs), for MPS's percentage
};
void setup_launch(CLI::App& app, launch_options& o);
/// --launcher, --units, --cores-per-node, --launcher-program, --oversubscribe and --no-bind: how a mapping is
/// started, for mmgp launch and for each run of mmgp tune (there --launcher may be left out: local).
/// Whether --launcher must be given (launch) or may be left out (tune: local).
enum class launcher_choice { required, local_by_default };
void add_launcher_options(CLI::App* sub, launch_options& o, launcher_choice choice);
int run_launch(const launch_options& o);
/// The launch of `command` with mapping c and `units` task units, as `o` asks (launcher program, binding to the
/// CPUs available here, --cores-per-node, --oversubscribe, --no-bind): what launch and tune run.
launch_plan plan_launch(launcher_kind kind, const configuration& c, std::int64_t units, const launch_options& o,
                        const std::vector<std::string>& command);
/// True when the task units are the program's work, so that no rank may go without one: task decomposition,
/// --units given, or a command that names {units} or {U}.
bool units_are_work(const scenario& s, const launch_options& o);
/// Refuses (usage_error) a launcher option that `kind` cannot honour: --launcher-program with the local launcher,
/// --oversubscribe with the local launcher or mpich.
void check_launcher_options(launcher_kind kind, const launch_options& o);

}  // namespace mmgp::cli
