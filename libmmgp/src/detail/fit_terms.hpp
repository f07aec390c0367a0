// Internal: the application fit's linear view of the model, shared by mmgp fit and mmgp tune.
#pragma once

#include <array>
#include <cstdint>

#include "mmgp/model.hpp"

namespace mmgp::detail {

/// Indices of the terms: time = base + x . (T_hpu, T_apu, C_apu, N*g, N, T_start).
enum fit_term : std::size_t { term_T_hpu, term_T_apu, term_C_apu, term_Ng, term_N, term_T_start, term_base };
inline constexpr std::size_t fit_term_count = 6;

/// The model's coefficients of configuration c with `units` task units on platform `pl`, the platform held
/// fixed: the model evaluated on unit applications built from `shape` (its decomposition, scaling, spin limit,
/// N_start, gap charge, O_col, communication and transfers; its six fitted fields are replaced). The last entry
/// (term_base) is what no parameter scales, e.g. the start-up's N_start switches and convoys. Throws
/// input_error (the platform's tables not covering c).
std::array<double, fit_term_count + 1> fit_coefficients(const platform& pl, const application& shape,
                                                        const configuration& c, std::int64_t units);

}  // namespace mmgp::detail
