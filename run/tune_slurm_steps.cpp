// The Slurm job-step backend of mmgp tune (--launcher srun --parallel K inside salloc or sbatch): each run is a
// job step on nodes of the allocation mmgp runs in, with CPUs no other step has (srun --exclusive -w NODES).
// Called by the loop (tune_loop.cpp) through tune_backend; runs srun through process_backend (tune_runs.hpp) and
// reads the allocation from the environment (scontrol expands its node list).
#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "slurm_env.hpp"
#include "tune_backend.hpp"
#include "tune_runs.hpp"

namespace mmgp::run {

namespace {

/// The nodes of the Slurm allocation mmgp runs in (SLURM_JOB_ID, SLURM_JOB_NODELIST, SLURM_JOB_CPUS_PER_NODE)
/// and the CPUs its runs hold on each: a run takes `nodes` nodes with m*p free CPUs each, or, when m*p is as
/// many as a node has (or more), whole nodes; so a configuration that needs the whole node never shares it.
class slurm_allocation {
public:
    /// The allocation of this process's environment; nullopt outside one. Throws mmgp::error when the
    /// variables cannot be read.
    static std::optional<slurm_allocation> from_environment() {
        const char* job = std::getenv("SLURM_JOB_ID");
        if (!job || !*job) return std::nullopt;
        slurm_allocation a;
        const std::string job_id = job;
        const char* list = std::getenv("SLURM_JOB_NODELIST");
        const char* cpn = std::getenv("SLURM_JOB_CPUS_PER_NODE");
        if (!list || !cpn)
            throw mmgp::error("--parallel: expected SLURM_JOB_NODELIST and SLURM_JOB_CPUS_PER_NODE inside the Slurm "
                              "job " + job_id + ", found them unset");
        a.cpus_ = parse_cpus_per_node(cpn);
        // The node names: scontrol expands the host list ("node[1-3]").
        for (std::string& name : command_lines("scontrol show hostnames \"$SLURM_JOB_NODELIST\" 2>/dev/null"))
            if (!name.empty()) a.names_.push_back(std::move(name));
        if (a.names_.empty() || a.cpus_.size() != a.names_.size())
            throw mmgp::error(fmt::format("--parallel: expected the nodes of Slurm job {} (scontrol show hostnames {}) "
                                          "and their CPUs (SLURM_JOB_CPUS_PER_NODE) to match, found {} node names and "
                                          "\"{}\"",
                                          job_id, list, a.names_.size(), cpn));
        a.used_.assign(a.cpus_.size(), 0);
        return a;
    }

    /// Nodes for a run (their indices), or empty when it does not fit now.
    std::vector<int> place(int nodes, long long cpus_per_node) const {
        std::vector<int> out;
        for (std::size_t i = 0; i < names_.size() && static_cast<int>(out.size()) < nodes; ++i) {
            const long long need = std::min<long long>(cpus_per_node, cpus_[i]);  // as many or more: the whole node
            if (cpus_[i] - used_[i] >= need) out.push_back(static_cast<int>(i));
        }
        if (static_cast<int>(out.size()) < nodes) out.clear();
        return out;
    }

    /// Takes (sign +1) or gives back (-1) the CPUs of a run on its nodes.
    void hold(const std::vector<int>& where, long long cpus_per_node, int sign) {
        for (int i : where) {
            const auto k = static_cast<std::size_t>(i);
            used_[k] += sign * static_cast<int>(std::min<long long>(cpus_per_node, cpus_[k]));
        }
    }

    /// The fewest CPUs of nodes `where` (of all the allocation's nodes when empty).
    int fewest_cpus(const std::vector<int>& where) const {
        int fewest = 0;
        for (std::size_t i = 0; i < cpus_.size(); ++i)
            if (where.empty() || std::find(where.begin(), where.end(), static_cast<int>(i)) != where.end())
                fewest = fewest == 0 ? cpus_[i] : std::min(fewest, cpus_[i]);
        return fewest;
    }

    /// "node1,node2": the names of nodes `where` (srun -w).
    std::string node_list(const std::vector<int>& where) const {
        std::string s;
        for (int i : where) s += (s.empty() ? "" : ",") + names_[static_cast<std::size_t>(i)];
        return s;
    }

private:
    std::vector<std::string> names_;
    std::vector<int> cpus_, used_;
};

class slurm_step_runs final : public process_backend {
public:
    slurm_step_runs(launch_setup setup, slurm_allocation allocation)
        : setup_(std::move(setup)), allocation_(std::move(allocation)) {}

    // A run whose nodes are busy waits for a run in flight to end; with none in flight, it runs as a plain step.
    run_start start(const run_request& request, nlohmann::json& journal_line) override {
        const configuration& c = request.config;
        const long long cpus = static_cast<long long>(c.m) * c.p;
        const std::vector<int> where = allocation_.place(c.nodes, cpus);
        if (where.empty() && request.in_flight > 0) return {start_verdict::no_room, 0};
        // With --oversubscribe the step knows its nodes' CPUs: past them, each task asks its share (or, where m
        // exceeds them, all of them with --overcommit), as mmgp launch's. Without, srun refuses such a step.
        const std::optional<int> node_cpus =
            setup_.oversubscribe ? std::optional<int>(allocation_.fewest_cpus(where)) : std::nullopt;
        launch_plan plan = setup_.plan(c, request.short_run, node_cpus);
        if (!where.empty()) {
            plan.argv.insert(plan.argv.begin() + 1, {"--exclusive", "-w", allocation_.node_list(where)});
            allocation_.hold(where, cpus, +1);
        }
        journal_line["command"] = journal_command(shell_command(plan));
        journal_line["load1"] = load1();
        const int id = launch({{plan.argv, {}}}, request.bound_s);
        held_[id] = {where, cpus};
        return {start_verdict::started, id};
    }

    void release(int id) override {
        const auto it = held_.find(id);
        if (it == held_.end()) return;
        if (!it->second.where.empty()) allocation_.hold(it->second.where, it->second.cpus, -1);
        held_.erase(it);
    }

private:
    struct holding {
        std::vector<int> where;  // allocation nodes
        long long cpus = 0;      // on each
    };
    launch_setup setup_;
    slurm_allocation allocation_;
    std::map<int, holding> held_;
};

}  // namespace

std::unique_ptr<tune_backend> slurm_steps_backend(launch_setup setup) {
    std::optional<slurm_allocation> allocation = slurm_allocation::from_environment();
    if (!allocation) return nullptr;
    return std::make_unique<slurm_step_runs>(std::move(setup), std::move(*allocation));
}

}  // namespace mmgp::run
