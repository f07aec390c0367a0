// Internal: whether a scenario can be evaluated at every configuration of its search space, beyond what
// check_coverage() (mmgp/profile.hpp, run when a scenario is read) tells; both live in model/coverage.cpp.
#pragma once

#include "model/comm.hpp"
#include "mmgp/model_terms.hpp"
#include "mmgp/profile.hpp"

namespace mmgp::detail {

/// Throws model_error when the model `kind` cannot evaluate the scenario: eq11 asked for several nodes, dma_bytes
/// without a transfer cost, too many (nodes, m) pairs to check, or a communication pattern that neither a table nor
/// `models` (models_for()) costs at some (nodes, m) of the space.
void check_evaluable(const scenario& s, model_kind kind, const comm_models& models);

}  // namespace mmgp::detail
