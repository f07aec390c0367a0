// The model named "mmgp", the default: [H] Eq. 11 extended by [C] Eq. 1–6 (the work split over nodes, task
// units, transfers) and the communication term [C] §4.4, then the layers on top: host sharing (§3), time-shared
// cores (§4) and the GPU's terms (§7: the time-sliced switch, block slots). The evaluator (model.cpp) takes it
// as its Model parameter; model/models.cpp lists it by name with its source.
#pragma once

#include <string_view>

#include "model/dedicated.hpp"

namespace mmgp::detail {

struct layered_model {
    static constexpr model_kind kind = model_kind::mmgp;
    static constexpr std::string_view name = "mmgp";
    static constexpr std::string_view source =
        "[H] Eq. 11 with [C] Blagojevic et al., Scheduling Asymmetric Parallelism on a PlayStation3 Cluster, Eq. 1-6 "
        "and §4.4; [R] EDTLP host sharing; time-shared cores and GPU sharing measured by this project";
    static constexpr bool communication = true;
    static constexpr bool sharing_layers = true;
    static constexpr std::string_view single_node = "";

    /// Layer (a): one process's terms per unit of work ([C] Eq. 1–6, transfers, C(nodes, m)).
    static dedicated_terms unit(const platform& pl, const application& app, const configuration& c, double alpha_m,
                                double ocol_m, double comm_phase, double dma_latency, double dma_s_per_byte) noexcept {
        return process_terms(pl, app, c, alpha_m, ocol_m, comm_phase, dma_latency, dma_s_per_byte);
    }
};

}  // namespace mmgp::detail
