// mmgp/search.hpp — enumerate every feasible mapping, rank them, find the near-optimal set.
//
//   mmgp::scenario s = mmgp::load_scenario("pbpi-qs20");
//   mmgp::search_result r = mmgp::search(s, mmgp::model_kind::mmgp);
//   r.best.c.m; r.best.time_s; r.near_optimal.size();
#pragma once

#include "mmgp/export.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "mmgp/model.hpp"

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
    /// (its second argument): lets a caller stream or summarise the space in constant memory.
    std::function<void(const ranked& each, const ranked& best)> visit;

    /// search(s, kind, {false}): the best and the near-optimal set only.
    search_options(bool keep_every = true) : keep_all(keep_every) {}  // NOLINT(google-explicit-constructor)
};

/// The outcome of a search.
struct search_result {
    std::vector<ranked> all;           ///< every feasible configuration, in (nodes, m, p) order (keep_all)
    ranked best;                       ///< the fastest (ties: fewer nodes, then fewer m, then fewer p)
    std::vector<ranked> near_optimal;  ///< time <= best * (1 + tolerance), fastest first (ties in search order)
    std::int64_t near_optimal_count = 0;  ///< size of the whole near-optimal set
    std::vector<ranked> fastest;       ///< the fastest_max fastest, fastest first (rank 1 is `best`)
    std::int64_t feasible = 0;         ///< how many configurations were evaluated
    std::vector<std::string> notes;    ///< where the model took a value from another section (evaluator::notes())
};

/// Searches the scenario's space (s.space) with the given model. Throws input_error when the
/// space holds no feasible configuration, holds more than max_search_configurations (a tenth
/// of it with keep_all), or a predicted time is not finite (naming the configuration).
search_result search(const scenario& s, model_kind kind, const search_options& opt = {});

/// Number of configurations search() would evaluate (without evaluating them).
std::int64_t count_feasible(const scenario& s) noexcept;

}  // namespace mmgp
MMGP_API_END
