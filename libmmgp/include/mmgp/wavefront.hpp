// mmgp/wavefront.hpp — a wavefront sweep (Sweep3D-like) on a hybrid machine, mapped two ways (docs/MODEL.md §6):
//
//   accelerator-driven ("reverse acceleration", [RR]): every accelerator is a rank; its faces travel through
//     the platform's communication hierarchy (same chip, same blade, same node, another node), forwarded by
//     host cores over the slower levels;
//   host-driven (the accelerator model of [H], [RR]'s single-Cell comparison): every host process is a rank
//     that off-loads its block to p accelerators, whose data moves between main memory and their local
//     memories; faces travel between host processes (the host parts of the hierarchy's paths).
//
//   mmgp::scenario s = mmgp::load_scenario("sweep3d-roadrunner");
//   mmgp::wavefront_prediction t = mmgp::wavefront_time(s.plat, s.app.wave, mmgp::wave_mapping::accelerator_driven,
//                                                        {32, 1, 3060});
//
// Pure and allocation-free: no I/O, no clock.
#pragma once

#include "mmgp/export.hpp"

#include <string_view>

#include "mmgp/profile.hpp"

MMGP_API_BEGIN
namespace mmgp {

enum class wave_mapping { accelerator_driven, host_driven };
std::string_view to_string(wave_mapping m) noexcept;

/// Where the time of a wavefront run goes (seconds; the parts add up to time_s).
struct wavefront_prediction {
    double time_s = 0;
    double compute = 0;        ///< the blocks a rank computes itself (octants x blocks steps)
    double fill = 0;           ///< waiting while the pipeline fills and drains (fills x (Px + Py - 2) steps of compute)
    double communication = 0;  ///< the face messages on every step's critical path, and forwarding hosts' queues
    double transfer = 0;       ///< host-driven: main memory <-> accelerator transfers and the host's control
    int px = 1, py = 1;        ///< the process grid
    int level_i = -1, level_j = -1;  ///< outermost hierarchy level an I / J face crosses (-1: none)
    double step_s = 0;         ///< one step: compute + transfer + communication of one block
    double message_i_s = 0, message_j_s = 0;  ///< one I / J face message at its level
    double forward_s = 0;      ///< per step: the busiest forwarding host's queue (0 without forwarders)
    bool valid = false;        ///< false when the configuration cannot be evaluated (see why)
    std::string_view why;      ///< reason when !valid
};

/// One message of `bytes` between two ranks whose innermost common level is `level`: the sum over its path of
/// latency + bytes / bandwidth (host_only: only the parts a host core does).
double message_time(const hierarchy_level& level, double bytes, bool host_only = false) noexcept;

/// Predicted time of the wavefront on configuration c: accelerator-driven, c.m accelerator ranks per node
/// (c.p must be 1); host-driven, c.m host processes per node, each driving c.p accelerators (m*p <= apus).
/// Ranks are laid out row-major on the most nearly square Px x Py grid (Px >= Py), m consecutive ranks per node.
wavefront_prediction wavefront_time(const platform& pl, const wavefront& w, wave_mapping mapping,
                                    const configuration& c) noexcept;

}  // namespace mmgp
MMGP_API_END
