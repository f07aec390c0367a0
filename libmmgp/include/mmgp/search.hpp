// mmgp/search.hpp — enumerate every feasible mapping, rank them, find the near-optimal set.
//
//   mmgp::scenario s = mmgp::load_scenario("pbpi-qs20");
//   mmgp::search_result r = mmgp::search(s, mmgp::model_kind::mmgp);
//   r.best.c.m; r.best.time_s; r.near_optimal.size();
#pragma once

#include "mmgp/export.hpp"

#include <cstdint>
#include <vector>

#include "mmgp/model.hpp"

MMGP_API_BEGIN
namespace mmgp {

/// A configuration with its prediction.
struct ranked {
    configuration c;
    prediction pred;
};

/// Options of one search.
struct search_options {
    /// Keep every feasible configuration in `all` (the CLI lists them); false keeps only the
    /// best and the near-optimal set, which is what a scheduler needs at Roadrunner scale.
    bool keep_all = true;
};

/// The outcome of a search.
struct search_result {
    std::vector<ranked> all;           ///< every feasible configuration, in (nodes, m, p) order
    ranked best;                       ///< the fastest (ties: fewer nodes, then fewer m, then fewer p)
    std::vector<ranked> near_optimal;  ///< time <= best * (1 + tolerance), fastest first
    std::int64_t feasible = 0;         ///< how many configurations were evaluated
};

/// Searches the scenario's space (s.space) with the given model. A configuration is feasible
/// when m*p <= apus, nodes <= platform nodes and m <= max_processes_per_node (if set).
/// Throws input_error when the space holds no feasible configuration.
search_result search(const scenario& s, model_kind kind, const search_options& opt = {});

/// Number of configurations search() would evaluate (without evaluating them).
std::int64_t count_feasible(const scenario& s) noexcept;

}  // namespace mmgp
MMGP_API_END
