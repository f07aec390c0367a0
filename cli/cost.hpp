// What a decision minimises, on the command line: --objective, --within, --max-nodes, --budget, and the
// time-cost front as a table, JSON and an SVG plot (predict, launch, tune).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mmgp/objective.hpp"
#include "mmgp/search_result.hpp"

namespace mmgp::cli {

struct objective_options_cli {
    std::string objective;          ///< --objective (empty: time)
    std::optional<double> within;   ///< --within (cost objectives; default 0.05)
    std::optional<double> budget;   ///< --budget NODE_HOURS (predict, launch)
    std::optional<long long> max_nodes;  ///< --max-nodes
};

/// Whether a subcommand takes --budget (predict and launch do; tune does not).
enum class budget_option { offered, not_offered };
/// Adds --objective, --within, --max-nodes and, when offered, --budget to a subcommand.
void add_objective_options(CLI::App* sub, objective_options_cli& o, budget_option budget);
/// The objective given (time when none).
objective objective_of(const objective_options_cli& o);
/// Checks what the options can do together (--within needs a cost objective; --max-nodes at least the
/// fewest nodes searched), narrows s.space.nodes to --max-nodes and sets the search's objective, window and
/// budget. Throws usage_error.
void apply_objective_options(const objective_options_cli& o, scenario& s, search_options& opt);

/// usage_error for a search's budget_error: "--budget: expected at least ... node-hours (the cheapest
/// configuration), found ..." (predict and launch).
[[noreturn]] void refuse_budget(const budget_error& e);
/// Two configurations with the same m, p and nodes.
bool same_mapping(const configuration& a, const configuration& b) noexcept;

/// "node-hours (the cheapest within 5 % of the fastest time)" or "time".
std::string objective_phrase(const search_options& opt);
/// "6.58 s, 1.87 node-h" for a configuration: its time, and its cost when the objective is one or the
/// search spans several node counts.
std::string value_phrase(const ranked& x, objective goal, bool cluster);

/// The front as a table of at most 20 rows: both ends, the knee, the chosen point, the rest thinned evenly
/// in log cost; parallel efficiency against `base` (the fastest at the fewest nodes).
std::string front_table(const std::vector<front_point>& front, const ranked& chosen, const ranked& base,
                        objective cost);
/// --json lists at most this many points of the front (thinned as the table is, evenly in log cost).
inline constexpr std::size_t json_front_max = 1000;
/// The front as a JSON array (at most json_front_max points, fastest first), the knee and the chosen flagged.
std::string front_json(const std::vector<front_point>& front, const ranked& chosen, const ranked& base);
/// The front as an SVG document: cost (log) against time (log), the chosen point and the knee marked.
std::string front_svg(const std::vector<front_point>& front, const ranked& chosen, objective cost,
                      const std::string& title);
/// The near-optimal set in at most three lines (summarised when it holds more than it lists).
std::string near_optimal_summary(const search_result& r, double tolerance, objective goal);

}  // namespace mmgp::cli
