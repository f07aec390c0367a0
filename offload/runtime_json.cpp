// JSON text of an off-load runtime result (to_json: what mmgp-offload-run prints).
#include "runtime.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace mmgp::kernels {

std::string to_json(const result& r) {
    using nlohmann::json;
    const auto& c = r.cfg;
    json j;
    j["accelerator"] = r.accelerator;
    j["m"] = c.m;
    j["p"] = c.p;
    j["policy"] = to_string(c.policy);
    if (c.apus > 0) {
        j["p"] = nullptr;  // chosen per off-load
        j["apus"] = c.apus;
        j["scheduler"] = r.scheduler;
        json hist = json::object();
        for (std::size_t p = 1; p < r.p_histogram.size(); ++p)
            if (r.p_histogram[p]) hist[std::to_string(p)] = r.p_histogram[p];
        j["offloads_by_p"] = hist;
        j["mean_p"] = r.mean_p();
        j["clamped"] = r.clamped;
    }
    j["units"] = c.units;
    if (c.pin_team) j["pinned"] = r.pinned;
    j["workload"] = c.synthetic ? "synthetic" : "bootstrap";
    if (c.synthetic) {
        j["synthetic"] = {{"offloads", c.synth.offloads}, {"host_s", c.synth.host_s}, {"split_s", c.synth.split_s},
                          {"serial_s", c.synth.serial_s}};
    } else {
        j["data"] = {{"source", r.data_source}, {"taxa", r.taxa}, {"sites", r.sites}, {"model", "GTR+G4"},
                     {"rounds", c.rounds}, {"newton", c.newton}, {"seed", c.seed}};
    }
    j["wall_s"] = r.wall_s;
    j["setup_s"] = r.setup_s;
    const auto& t = r.t;
    json by;
    for (std::size_t k = 0; k < 6; ++k)
        if (t.by_kind[k]) by[offload_kind_names[k]] = t.by_kind[k];
    j["timers"] = {{"host_s", t.host_s},           {"roundtrip_s", t.roundtrip_s},     {"apu_busy_s", t.apu_busy_s},
                   {"apu_serial_s", t.apu_serial_s}, {"apu_split_s", t.apu_split_s},   {"apu_fork_s", t.apu_fork_s},
                   {"apu_join_s", t.apu_join_s},   {"worker_split_s", t.worker_split_s}};
    if (c.apus > 0) j["timers"]["queue_s"] = t.queue_s;
    j["offloads"] = t.offloads;
    j["offloads_by_kind"] = by;
    j["newview_ops"] = t.newview_ops;
    j["hpu_context_switches"] = t.context_switches;
    if (!r.unit_loglik.empty()) j["unit_loglik"] = r.unit_loglik;
    return j.dump(2);
}

}  // namespace mmgp::kernels
