// The GPU harness's record from its samples (gpu_record.hpp): called by gpu_harness.cu's main, tested in
// tests/calibration/test_calibration.cpp against gpu_describe.cpp, which reads the record back.
#include "gpu/gpu_record.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "stats.hpp"

namespace mmgp::calib::gpu {

namespace {

using json = nlohmann::ordered_json;

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

double median_of(const std::vector<double>& v) { return v.empty() ? nan : median(v); }
double minimum_of(const std::vector<double>& v) { return v.empty() ? nan : *std::min_element(v.begin(), v.end()); }

/// [[blocks, median seconds], ...]
json grid_medians(const std::vector<grid_sample>& grids) {
    json out = json::array();
    for (const grid_sample& g : grids) out.push_back({g.blocks, median_of(g.seconds)});
    return out;
}

json device_json(const device_facts& d) {
    return {{"index", d.index},
            {"name", d.name},
            {"sms", d.sms},
            {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
            {"memory_bytes", d.memory_bytes},
            {"max_blocks_per_sm", d.max_blocks_per_sm},
            {"max_threads_per_sm", d.max_threads_per_sm},
            {"driver_version", d.driver_version},
            {"runtime_version", d.runtime_version},
            {"compute_mode", d.compute_mode}};
}

json offload_json(const offload_samples& o) {
    json j = {{"launch_sync_s", {{"median", median_of(o.sync_s)}, {"min", minimum_of(o.sync_s)}, {"repetitions", o.sync_s.size()}}},
              {"enqueue_s", {{"median", median_of(o.enqueue_s)}, {"min", minimum_of(o.enqueue_s)}}},
              {"by_blocks", grid_medians(o.by_blocks)}};
    if (!o.blocking_sync_s.empty())
        j["blocking_sync_s"] = {{"median", median_of(o.blocking_sync_s)}, {"min", minimum_of(o.blocking_sync_s)},
                                {"repetitions", o.blocking_sync_s.size()}};
    for (const auto& w : o.by_wait) {
        if (w.spinning_s.empty() || w.blocking_s.empty()) continue;
        j["by_wait"].push_back({{"wait_s", w.wait_s},
                                {"spinning_s", median_of(w.spinning_s)},
                                {"blocking_s", median_of(w.blocking_s)},
                                {"repetitions", std::min(w.spinning_s.size(), w.blocking_s.size())}});
    }
    return j;
}

json mailbox_json(const mailbox_samples& m) {
    if (!m.answered) return {{"answered", false}};
    return {{"answered", true},
            {"round_trip_s",
             {{"median", median_of(m.round_trip_s)}, {"min", minimum_of(m.round_trip_s)}, {"repetitions", m.round_trip_s.size()}}}};
}

json copies_json(const copy_samples& c) {
    auto medians = [](const std::vector<copy_sample>& v) {
        json out = json::array();
        for (const copy_sample& s : v) out.push_back({s.bytes, median_of(s.seconds)});
        return out;
    };
    return {{"host_to_device", medians(c.host_to_device)}, {"device_to_host", medians(c.device_to_host)}};
}

json blocks_json(const block_samples& b) {
    return {{"threads_per_block", b.threads_per_block},
            {"iterations", b.iterations},
            {"resident_per_sm", b.resident_per_sm},
            {"by_blocks", grid_medians(b.by_blocks)}};
}

/// Serialised, the GPU runs 2·kernels kernels one after the other with a switch before each: pair wall =
/// 2·kernels·(kernel + switch). Concurrent: pair wall ≈ alone wall.
json sharing_json(const std::optional<sharing_samples>& s) {
    if (!s) return nullptr;
    if (!s->measured) return {{"measured", false}};
    return {{"measured", true},
            {"kernels", s->kernels},
            {"blocks", s->blocks},
            {"kernel_s", s->kernel_s},
            {"alone_wall_s", s->alone_wall_s},
            {"pair_wall_s", s->pair_wall_s},
            {"pair_over_alone", s->pair_wall_s / s->alone_wall_s},
            {"switch_s", s->pair_wall_s / (2.0 * s->kernels) - s->kernel_s}};
}

/// The same with `procs` processes at once: serialised, wall = procs·kernels·(kernel + switch).
json procs_json(const sharing_samples& s) {
    if (!s.measured) return {{"measured", false}, {"procs", s.procs}, {"blocking", s.blocking}};
    return {{"measured", true},
            {"procs", s.procs},
            {"blocking", s.blocking},
            {"kernels", s.kernels},
            {"blocks", s.blocks},
            {"kernel_s", s.kernel_s},
            {"alone_wall_s", s.alone_wall_s},
            {"wall_s", s.pair_wall_s},
            {"over_alone", s.pair_wall_s / s.alone_wall_s},
            {"switch_s", s.pair_wall_s / (static_cast<double>(s.procs) * s.kernels) - s.kernel_s}};
}

json sharing_json(const sharing_section& s) {
    json out = {{"time_sliced", sharing_json(s.time_sliced)}, {"mps", sharing_json(s.mps)}};
    if (!s.time_sliced_grids.empty()) {
        json grids = json::array();
        for (const sharing_samples& g : s.time_sliced_grids) grids.push_back(sharing_json(std::optional(g)));
        out["time_sliced_grids"] = grids;
    }
    for (const auto& [key, list] : {std::pair{"time_sliced_procs", &s.time_sliced_procs}, std::pair{"mps_procs", &s.mps_procs},
                                    std::pair{"time_sliced_blocking_procs", &s.time_sliced_blocking_procs}}) {
        if (list->empty()) continue;
        json by = json::array();
        for (const sharing_samples& g : *list) by.push_back(procs_json(g));
        out[key] = by;
    }
    if (!s.mps) out["mps_note"] = s.mps_note;
    return out;
}

}  // namespace

std::string harness_record(const harness_samples& s) {
    const json doc = {{"harness", "mmgp-gpu-harness"},
                      {"device", device_json(s.device)},
                      {"quick", s.quick},
                      {"offload", offload_json(s.offload)},
                      {"mailbox", mailbox_json(s.mailbox)},
                      {"copies", copies_json(s.copies)},
                      {"blocks", blocks_json(s.blocks)},
                      {"sharing", sharing_json(s.sharing)},
                      {"backend_harnesses", s.backend_harnesses.empty() ? json(nullptr) : json::parse(s.backend_harnesses)}};
    return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace mmgp::calib::gpu
