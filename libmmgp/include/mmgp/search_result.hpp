// mmgp/search_result.hpp — what a search is asked and what it answers: its options, the ranked configurations,
// the near-optimal set, the front. The records the reports format (cli/predict_report.cpp, cli/cost.cpp), apart
// from the search that makes them (mmgp/search.hpp).
#pragma once

#include "mmgp/export.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mmgp/error.hpp"
#include "mmgp/model_terms.hpp"
#include "mmgp/objective.hpp"
#include "mmgp/profile.hpp"

MMGP_API_BEGIN
namespace mmgp {

/// A configuration with its prediction.
struct ranked {
    configuration c;
    prediction pred;
};


/// Spaces of at most this many (nodes, m) rows are searched with a lower bound per row kept from the first
/// pass (4 bytes a row), so that the second evaluates only the rows that can matter; larger ones are
/// evaluated twice.
inline constexpr std::int64_t max_marked_rows = std::int64_t{1} << 24;
/// The time-cost fronts keep at most this many points (then every other one is dropped, and the choice they
/// would give is found by evaluating the window's rows instead): memory bounded whatever the space.
inline constexpr std::size_t max_front_points = std::size_t{1} << 15;
/// The largest space search() accepts; keep_all is limited to a tenth of it (its memory).
inline constexpr std::int64_t max_search_configurations = 200000000;

/// Options of one search.
struct search_options {
    /// Keep every feasible configuration in `all`; false keeps only the best and the near-optimal
    /// set, in memory independent of the size of the space (a second evaluation pass).
    bool keep_all = true;
    /// Keep at most this many near-optimal configurations (the fastest); 0 keeps every one.
    /// `near_optimal_count` counts them all either way.
    std::size_t near_optimal_max = 0;
    /// Keep this many fastest configurations in `fastest` (ties in search order); 0: none.
    std::size_t fastest_max = 0;
    /// Called for every feasible configuration, in (nodes, m, p) order, once the best is known
    /// (its second argument), with whether it is in the near-optimal set: lets a caller stream or
    /// summarise the space in constant memory.
    std::function<void(const ranked& each, const ranked& best, bool near_optimal)> visit;
    /// What the choice minimises. A cost objective (node-hours, core-hours) chooses the cheapest
    /// configuration whose time is within `within` of the fastest; the near-optimal set is then the
    /// configurations of that window whose cost is within the tolerance of the chosen one's, and `fastest`
    /// ranks that window by cost.
    objective minimise = objective::time;
    /// A cost objective's window: time <= fastest * (1 + within). In (0, 1].
    double within = 0.05;
    /// The production run's node-hours at most (0: no budget): configurations above it are never chosen,
    /// near-optimal or ranked. Throws budget_error when every configuration costs more.
    double budget_node_hours = 0;
    /// Keep the Pareto front of time against node-hours (core-hours when that is the objective) in `front`.
    bool front = false;

    /// search(s, kind, {false}): the best and the near-optimal set only.
    search_options(bool keep_every = true) : keep_all(keep_every) {}  // NOLINT(google-explicit-constructor)
};

/// The ranges of a set of configurations (the near-optimal set's summary).
struct config_span {
    int m_lo = 0, m_hi = 0, p_lo = 0, p_hi = 0, nodes_lo = 0, nodes_hi = 0;
    void add(const configuration& c, bool first) noexcept;
};

/// search() with a budget below every configuration: `cheapest` is the least node-hours any one costs.
class budget_error : public error {
public:
    budget_error(double budget, double cheapest);
    double budget() const noexcept { return budget_; }
    double cheapest() const noexcept { return cheapest_; }

private:
    double budget_, cheapest_;
};

/// The outcome of a search.
struct search_result {
    std::vector<ranked> all;           ///< every feasible configuration, in (nodes, m, p) order (keep_all)
    /// The choice: the fastest (ties: fewer nodes, then fewer m, then fewer p); under a cost objective the
    /// cheapest within the window (ties: the faster, then search order).
    ranked best;
    ranked quickest;                   ///< the fastest within the budget (the window's reference; `best` for time)
    ranked base;                       ///< the fastest at the fewest nodes searched (parallel efficiency's reference)
    /// The near-optimal set, best first by the objective (ties in search order): time <= best * (1 +
    /// tolerance); under a cost objective, in the window with cost <= best's * (1 + tolerance).
    std::vector<ranked> near_optimal;
    std::int64_t near_optimal_count = 0;  ///< size of the whole near-optimal set
    config_span near_optimal_span;        ///< its ranges of m, p and nodes
    std::vector<ranked> fastest;       ///< the fastest_max first by the objective (rank 1 is `best`)
    std::vector<front_point> front;    ///< the time-cost Pareto front, fastest first (search_options::front)
    bool front_thinned = false;        ///< the front held more than max_front_points: `front` is a subset of it
    std::int64_t feasible = 0;         ///< how many configurations were evaluated
    std::vector<std::string> notes;    ///< where the model took a value from another section (evaluator::notes())
};

/// What an objective chooses on a scenario: the objective and its best configuration.
struct objective_choice {
    objective goal;
    ranked best;
};
}  // namespace mmgp
MMGP_API_END
