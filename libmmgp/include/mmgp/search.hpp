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
#include "mmgp/search_result.hpp"  // its options and its outcome

MMGP_API_BEGIN
namespace mmgp {

/// Searches the scenario's space (s.space) with the given model. Throws input_error when the
/// space holds no feasible configuration, holds more than max_search_configurations (a tenth
/// of it with keep_all), or a predicted time is not finite (naming the configuration); budget_error when
/// opt.budget_node_hours is below every configuration.
search_result search(const scenario& s, model_kind kind, const search_options& opt = {});

/// Number of configurations search() would evaluate (without evaluating them).
std::int64_t count_feasible(const scenario& s) noexcept;

/// The choices of the objectives other than opt.minimise (time, node-hours, core-hours; the same window and
/// budget), in that order: a search each.
std::vector<objective_choice> other_objectives(const scenario& s, model_kind kind, const search_options& opt);

}  // namespace mmgp
MMGP_API_END
