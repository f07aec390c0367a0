// Internal: whether a scenario can be evaluated at every configuration of its search space, beyond what
// check_coverage() (mmgp/profile.hpp, run when a scenario is read) tells; both live in model/coverage.cpp.
#pragma once

#include <string_view>

#include "model/comm.hpp"
#include "mmgp/model_terms.hpp"
#include "mmgp/profile.hpp"

namespace mmgp::detail {

/// What a model needs of a scenario (its Model's traits: model/eq11_model.hpp, model/layered_model.hpp).
struct model_needs {
    std::string_view name;         ///< the model's name, as --model gives it
    std::string_view single_node;  ///< why the model refuses several nodes; empty when it does not
    bool communication = false;    ///< the model has the communication term: every pattern must be costed
};

/// Throws model_error when the model cannot evaluate the scenario: several nodes for a single-node model,
/// dma_bytes without a transfer cost, too many (nodes, m) pairs to check, or a communication pattern that neither a
/// table nor `models` (models_for()) costs at some (nodes, m) of the space.
void check_evaluable(const scenario& s, const model_needs& model, const comm_models& models);

}  // namespace mmgp::detail
