// The Slurm allocation this process runs in, as its environment says it: the CPUs of its nodes. Read by the job-step
// backend of mmgp tune (tune_slurm_steps.cpp: SLURM_JOB_CPUS_PER_NODE).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace mmgp::run {

/// "2(x3),1" -> {2, 2, 2, 1} (SLURM_JOB_CPUS_PER_NODE's form); empty on a malformed text.
std::vector<int> parse_cpus_per_node(const std::string& text);

}  // namespace mmgp::run
