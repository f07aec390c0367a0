// mmgp launch PROFILE --launcher KIND [--exec] -- COMMAND ARGS...: the best mapping, as a launch command.
// Rendering lives in libmmgp (mmgp/launch.hpp); this file picks the mapping, prints, or spawns and waits.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <iostream>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "cmd_launch.hpp"
#include "options.hpp"
#include "mmgp/launch.hpp"
#include "mmgp/search.hpp"
#include "process.hpp"
#include "slurm_env.hpp"
#include "mmgp/profile.hpp"  // available_cpus()

namespace mmgp::cli {

void add_launcher_options(CLI::App* sub, launch_options& o, launcher_choice choice) {
    const bool launcher_required = choice == launcher_choice::required;
    auto* launcher = add_checked(sub, "--launcher", o.launcher,
                                 std::string("openmpi (mpirun), mpich (mpiexec), srun (Slurm) or local") +
                                     (launcher_required ? "" : " (default local)"));
    if (launcher_required) launcher->required();
    add_checked(sub, "--units", o.units,
                "Task units to share among the processes ({U} all of them, {units} a local rank's share); default: "
                "the application's units");
    add_checked(sub, "--cores-per-node", o.cores_per_node,
                "Cores per node for the binding fallback (default: the CPUs available here when nodes = 1; with "
                "srun inside a Slurm allocation, the fewest CPUs of its nodes (tune: with --oversubscribe); else "
                "unknown)");
    add_checked(sub, "--launcher-program", o.program, "Launcher executable (default mpirun, mpiexec or srun)");
    sub->add_flag("--oversubscribe", o.oversubscribe,
                  "Allow more processes than cores (mpirun --oversubscribe, srun --overcommit)");
    sub->add_flag("--no-bind", o.no_bind,
                  "Do not bind processes to CPUs (local: no taskset; mpirun --bind-to none, mpiexec -bind-to none, "
                  "srun --cpu-bind=none)");
}

void setup_launch(CLI::App& app, launch_options& o) {
    auto* sub = app.add_subcommand(
        "launch",
        "Launch a program with the predicted best mapping (or the one given by --m/--p/--nodes): prints the "
        "mpirun/mpiexec/srun/local command, or runs it with --exec");
    add_checked(sub, "profile", o.profile, "Scenario file (schema mmgp/1) or a bundled scenario name")->required();
    sub->add_option("command", o.command,
                    "After --: the program and its arguments. Placeholders {m} {p} {nodes} {np} {U}; with the local "
                    "launcher also {rank} and {units} (the rank's share of the task units)")
        ->required();
    add_launcher_options(sub, o, launcher_choice::required);
    add_space_options(sub, o.space);
    add_objective_options(sub, o.goal, budget_option::offered);
    add_checked(sub, "--cuda-devices", o.devices,
                "A GPU mapping (a platform with sharing modes): CUDA_VISIBLE_DEVICES for every process, e.g. 0");
    auto* e = sub->add_flag("--exec", o.exec,
                            "Run the command: forwards SIGINT/SIGTERM to the children, exits with their status");
    auto* j = sub->add_flag("--json", o.json, "Print the mapping and the command as one JSON document");
    e->excludes(j);
}

namespace {

// With srun inside a Slurm allocation and no --cores-per-node: the allocation's CPUs (run/slurm_env.hpp), whose
// fewest a node's steps get; nullopt otherwise.
std::optional<run::allocation_cpus> srun_allocation(launcher_kind kind, const launch_options& o) {
    return kind == launcher_kind::srun && !o.cores_per_node ? run::allocation_from_environment() : std::nullopt;
}

// Starts every process of the plan and waits for them (run::run_together: SIGINT/SIGTERM forwarded); the first
// non-zero status in rank order, 0 when all succeeded.
int spawn_and_wait(const launch_plan& plan) {
    std::vector<run::child> children;
    if (plan.kind == launcher_kind::local)
        for (const auto& lp : plan.processes) {
            run::child c;
            c.argv = lp.argv, c.env = lp.env;
            children.push_back(std::move(c));
        }
    else
        children.emplace_back().argv = plan.argv;
    std::cout.flush();
    std::cerr.flush();
    return run::run_together(children);
}

}  // namespace

launch_plan plan_launch(launcher_kind kind, const configuration& c, std::int64_t units, const launch_options& o,
                        const std::vector<std::string>& command) {
    launch_request rq;
    rq.kind = kind;
    rq.mapping = c;
    rq.units = units;
    rq.program = o.program;
    rq.oversubscribe = o.oversubscribe;
    rq.bind = !o.no_bind;
    rq.allow_run_as_root = kind == launcher_kind::openmpi && geteuid() == 0;
    rq.accelerators = o.accelerators;
    rq.devices = o.devices;
    std::vector<int> cpus = available_cpus();
    if (o.cores_per_node)
        rq.cores_per_node = *o.cores_per_node;
    else if (c.nodes == 1 && kind != launcher_kind::srun)
        rq.cores_per_node = static_cast<int>(cpus.size());
    if (kind == launcher_kind::local && !o.no_bind) {
        if (o.cores_per_node && static_cast<std::size_t>(*o.cores_per_node) < cpus.size())
            cpus.resize(static_cast<std::size_t>(*o.cores_per_node));
        rq.cpus = cpus;
    }
    return render_launch(rq, command);
}

bool units_are_work(const scenario& s, const launch_options& o) {
    return s.app.decomp == decomposition::task || o.units ||
           std::any_of(o.command.begin(), o.command.end(), [](const std::string& w) {
               return w.find("{units}") != std::string::npos || w.find("{U}") != std::string::npos;
           });
}

void check_launcher_options(launcher_kind kind, const launch_options& o) {
    // An option the launcher cannot honour is refused rather than ignored.
    if (kind == launcher_kind::local && !o.program.empty())
        throw usage_error("--launcher-program: expected --launcher openmpi, mpich or srun beside it (the local launcher "
                          "starts the processes itself), found --launcher local");
    if (o.oversubscribe && (kind == launcher_kind::local || kind == launcher_kind::mpich))
        throw usage_error(std::string("--oversubscribe: expected --launcher openmpi or srun beside it (") +
                          (kind == launcher_kind::local ? "the local launcher never refuses to start more processes than cores"
                                                        : "mpiexec runs more processes than cores time-shared without it") +
                          "), found --launcher " + std::string(to_string(kind)));
}

namespace {

// --cuda-devices: a CUDA_VISIBLE_DEVICES list; with `pl`, beside a GPU platform (one with sharing modes).
void check_cuda_devices(const launch_options& o, const platform* pl) {
    if (o.devices.empty()) return;
    const std::string& d = o.devices;  // no empty item: ",", "0,", ",1", "0,,1"
    const bool empty_item = d.front() == ',' || d.back() == ',' || d.find(",,") != std::string::npos;
    if (!pl && (empty_item || d.find_first_not_of("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ,-/") != std::string::npos))
        throw usage_error("--cuda-devices: expected a CUDA_VISIBLE_DEVICES list (indices or UUIDs separated by commas), found \"" +
                          o.devices + "\"");
    // A GPU platform: one whose processes share its accelerators (mps or time_sliced); ["dedicated"] is not one, and
    // the devices would be left out of the launch line in silence.
    if (pl && std::none_of(pl->sharing.begin(), pl->sharing.end(),
                           [](accelerator_sharing m) { return m != accelerator_sharing::dedicated; }))
        throw usage_error("--cuda-devices: expected a GPU platform (one with \"sharing\" modes mps or time_sliced) "
                          "beside it, found " +
                          (pl->name.empty() ? std::string("a platform") : "platform " + pl->name) + " without them");
    // srun's --export splits its list at every comma and keeps quotes as part of the value (Slurm 22.05): a list
    // of devices would reach the processes as its first device alone.
    if (o.devices.find(',') != std::string::npos && o.launcher == "srun")
        throw usage_error("--cuda-devices " + o.devices + ": expected one device with --launcher srun (srun's --export "
                          "splits values at commas; Slurm's --gpus-per-task sets CUDA_VISIBLE_DEVICES itself), found a list");
}

// --json: the chosen mapping, the launcher's command and each local process, as one JSON document.
void launch_json(const scenario& s, const std::string& name, model_kind mk, const search_options& opt, const ranked& best,
                 launcher_kind kind, const launch_plan& plan) {
    nlohmann::json j;
    j["schema"] = "mmgp/1";
    j["kind"] = "launch";
    j["objective"] = std::string(to_string(opt.minimise));
    j["profile"] = name;
    j["file"] = s.file;
    j["model"] = std::string(to_string(mk));
    j["mapping"] = {{"m", best.c.m},
                    {"p", best.c.p},
                    {"nodes", best.c.nodes},
                    {"policy", std::string(to_string(best.c.pol))},
                    {"time_s", best.pred.time_s},
                    {"node_hours", node_hours(best.c, best.pred.time_s)},
                    {"core_hours", core_hours(best.c, best.pred.time_s)}};
    if (best.c.share != accelerator_sharing::dedicated) j["mapping"]["sharing"] = std::string(to_string(best.c.share));
    j["launcher"] = std::string(to_string(kind));
    j["units"] = plan.units;
    j["command"] = shell_command(plan);
    if (kind == launcher_kind::local) {
        j["processes"] = nlohmann::json::array();
        for (const auto& lp : plan.processes) {
            nlohmann::json env = nlohmann::json::object();
            for (const auto& [k, v] : lp.env) env[k] = v;
            j["processes"].push_back(
                {{"rank", lp.rank}, {"units", lp.units}, {"cpus", lp.cpus}, {"argv", lp.argv}, {"env", env}});
        }
    } else {
        j["argv"] = plan.argv;
    }
    j["notes"] = plan.notes;
    std::cout << j.dump() << '\n' << std::flush;
}

}  // namespace

int run_launch(const launch_options& o) {
    launcher_kind kind;
    if (!parse_launcher(o.launcher, kind))
        throw usage_error("--launcher: expected openmpi, mpich, srun or local, found \"" + o.launcher + "\"");
    check_launcher_options(kind, o);
    check_cuda_devices(o, nullptr);  // the list before the scenario is read, the platform after
    (void)parse_model_option(o.space.model);  // a bad option before any file is read
    scenario s = load_with_options(o.profile, o.space);
    const model_kind mk = model_of(o.space, s);
    check_cuda_devices(o, &s.plat);
    // A wavefront's mapping (accelerator- or host-driven, over node counts) is not an (m, p, nodes) the search
    // ranks: its model prices no off-load, and a launch line would be one made up at 0 s.
    if (s.app.has_wavefront)
        throw input_error(s.file, "/application/wavefront",
                          "a scenario with an off-load profile (launch starts the search's best m, p, nodes; mmgp "
                          "predict compares a wavefront's two mappings)",
                          "a wavefront application");
    // Task units are part of the model: the mapping is chosen for the units to be launched.
    if (o.units && s.app.decomp == decomposition::task) s.app.units = *o.units;
    search_options opt(false);
    apply_objective_options(o.goal, s, opt);
    search_result r;
    try {
        r = search(s, mk, opt);
    } catch (const budget_error& e) {
        refuse_budget(e);
    }
    const ranked& best = r.best;
    // No rank is started without a unit of work: refused when the units are the program's work
    // (task decomposition, --units, or a command that names {units} or {U}).
    const std::int64_t units = o.units ? *o.units : s.app.units;
    const std::int64_t ranks = static_cast<std::int64_t>(best.c.m) * best.c.nodes;
    if (units < ranks && units_are_work(s, o)) {
        const std::string need = fmt::format("at least {} units, one for each rank of {}", ranks, label(best.c));
        if (o.units) throw usage_error(fmt::format("--units: expected {}, found \"{}\"", need, units));
        throw input_error(s.file, "/application/units", need + " (--units sets the count)", std::to_string(units));
    }

    launch_options with_platform = o;
    with_platform.accelerators = s.plat.apus;
    // srun inside an allocation: its steps get the allocation's CPUs, which the environment names.
    const std::optional<run::allocation_cpus> allocation = srun_allocation(kind, o);
    if (allocation) with_platform.cores_per_node = allocation->fewest();
    launch_plan plan = plan_launch(kind, best.c, units, with_platform, o.command);
    if (allocation)
        plan.notes.insert(plan.notes.begin(),
                          fmt::format("cores per node: {}, the fewest CPUs of a node of Slurm job {} "
                                      "(SLURM_JOB_CPUS_PER_NODE; --cores-per-node sets them)",
                                      allocation->fewest(), allocation->job_id));

    if (o.exec) return spawn_and_wait(plan);
    const std::string name = s.name.empty() ? s.file : s.name;
    if (o.json) {
        launch_json(s, name, mk, opt, best, kind, plan);
        return 0;
    }
    const bool cluster = s.space.nodes.hi > s.space.nodes.lo;
    // The comments hold the name and notes on one line each (one_line): a line break in a scenario's name would
    // otherwise end the comment and run the rest as a command.
    std::string out = fmt::format("# {}: {} {}, predicted {} (model {}{})\n", one_line(name),
                                  !o.space.narrowed() ? "best" : "chosen", label(best.c),
                                  value_phrase(best, opt.minimise, cluster), to_string(mk),
                                  opt.minimise == objective::time && opt.budget_node_hours <= 0
                                      ? std::string()
                                      : ", objective " + objective_phrase(opt));
    for (const auto& n : plan.notes) out += "# note: " + one_line(n) + "\n";
    out += shell_command(plan);
    std::cout << out << std::flush;
    return 0;
}

}  // namespace mmgp::cli
