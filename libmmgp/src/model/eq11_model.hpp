// The model named "eq11": [H] Eq. 11 verbatim — one process, one unit of work, dedicated hardware, a single
// node; no communication term, no sharing layer, no GPU term (docs/MODEL.md §1). The evaluator (model.cpp)
// takes it as its Model parameter; model/models.cpp lists it by name with its source.
#pragma once

#include <string_view>

#include "model/dedicated.hpp"

namespace mmgp::detail {

struct eq11_model {
    static constexpr model_kind kind = model_kind::eq11;
    static constexpr std::string_view name = "eq11";
    static constexpr std::string_view source =
        "[H] Blagojevic, Feng, Cameron, Nikolopoulos, Modeling Multigrain Parallelism on Heterogeneous Multi-core "
        "Processors, Eq. 11";
    /// Eq. 11 has no cluster communication term: comm_per_phase is 0 and nothing is extrapolated.
    static constexpr bool communication = false;
    /// No layer on top of (a): processes do not share the host, cores are not time-shared, no GPU term.
    static constexpr bool sharing_layers = false;
    /// Why the model refuses several nodes (empty: it does not).
    static constexpr std::string_view single_node = "Eq. 11 is a single-node equation; use --model mmgp";

    /// Layer (a): Eq. 11's terms for m processes (c.m); the communication cost and transfers are not in it.
    static dedicated_terms unit(const platform& pl, const application& app, const configuration& c, double alpha_m,
                                double ocol_m, double /*comm_phase*/, double /*dma_latency*/, double /*dma_s_per_byte*/) noexcept {
        return eq11_terms(pl, app, alpha_m, ocol_m, c.m);
    }
};

}  // namespace mmgp::detail
