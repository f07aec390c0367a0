// The Slurm allocation this process runs in, as its environment says it: the CPUs of its nodes. Read by the job-step
// backend of mmgp tune (tune_slurm_steps.cpp: SLURM_JOB_CPUS_PER_NODE), the local backend's srun runs
// (tune_local.cpp), mmgp launch --launcher srun and the tune's launch line of its choice (cli/cmd_launch.cpp
// and cli/tune_report.cpp), which are told a node's CPUs from it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace mmgp::run {

/// "2(x3),1" -> {2, 2, 2, 1} (SLURM_JOB_CPUS_PER_NODE's form: counts of digits alone, at most 2^20 nodes in all);
/// empty on a malformed text.
std::vector<int> parse_cpus_per_node(const std::string& text);

/// Inside a Slurm allocation (SLURM_JOB_ID set): its job id and the CPUs of each of its nodes.
struct allocation_cpus {
    std::string job_id;
    std::vector<int> cpus;  ///< per node, in the node list's order
    int fewest() const;     ///< the fewest CPUs of any node (0 when `cpus` is empty)
};

/// The allocation of this process's environment: nullopt outside one (SLURM_JOB_ID unset or empty), or where
/// SLURM_JOB_CPUS_PER_NODE is unset or not Slurm's form.
std::optional<allocation_cpus> allocation_from_environment();

/// What a tune's srun runs are told of a node's CPUs where no --cores-per-node is given: with --oversubscribe inside
/// an allocation, the fewest of its nodes' (so that each task asks its share, unbound); none otherwise (a
/// configuration past them then fails). The local backend's runs and the result's launch line alike.
std::optional<int> tune_srun_node_cpus(bool srun, bool oversubscribe);

}  // namespace mmgp::run
