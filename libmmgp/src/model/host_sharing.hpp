// Layer (b) of the model: how m processes of one node share H host contexts on dedicated hardware
// (docs/MODEL.md §3, "Host sharing"). Takes one process's per-unit terms (layer (a)) and says how often
// each is paid. Pure, inline, allocation-free.
#pragma once

#include "mmgp/model_terms.hpp"
#include "mmgp/profile.hpp"

namespace mmgp::detail {

/// No sharing: one process, one unit, as Eq. 11 counts it.
inline host_share unshared(const dedicated_terms& unit) noexcept {
    host_share h;
    h.host = unit.host;
    h.context_switch = unit.context_switch;
    h.communication = unit.communication;
    return h;
}

/// m processes running `units` units each on H host contexts, q = ⌈m/H⌉ per context:
/// - edtlp: the host work of the q processes of a context is time-shared and each switches on every
///   off-load ([R] §5.2);
/// - os, m ≤ H: as edtlp without the switches;
/// - os, m > H: processes hold their context until done, so they run in q rounds of H, the last of
///   m − (q − 1)·H processes; the accelerator and off-load terms are paid once per round.
/// Start-up: processes sharing a context start one after another (T_start·q).
/// rounds = q (the evaluator's table); alpha(k) gives α for k processes (the evaluator's table).
template <class Alpha>
host_share host_sharing(const dedicated_terms& unit, const application& app, const configuration& c, int H, int rounds,
                        double units, Alpha&& alpha) noexcept {
    host_share h;
    h.communication = units * unit.communication;
    h.startup = app.T_start * rounds;
    if (c.pol == policy::edtlp) {
        h.host = units * rounds * unit.host;
        h.context_switch = units * rounds * unit.context_switch;
        h.per_unit = units;
    } else if (rounds == 1) {
        h.host = units * unit.host;
        h.per_unit = units;
    } else {
        const int last = c.m - (rounds - 1) * H;
        h.host = units * ((rounds - 1) * alpha(H) + alpha(last)) * app.T_hpu;
        h.per_unit = units * rounds;
    }
    return h;
}

}  // namespace mmgp::detail
