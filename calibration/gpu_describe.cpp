// The GPU harness's record as platform keys (gpu_describe.hpp). Called by cmd_calibrate_gpu.cpp; pure.
#include "gpu_describe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "calibrate.hpp"

namespace mmgp::calib {

namespace {

// The member at JSON pointer `where` of the record, a finite number > 0 (or >= 0 when zero is allowed).
double number_at(const nlohmann::json& gpu, const std::string& where, bool zero_ok = false) {
    const nlohmann::json::json_pointer ptr(where);
    if (!gpu.contains(ptr) || !gpu.at(ptr).is_number())
        throw incomplete_profile("/measurements/gpu" + where, "the GPU harness's record has no number at " + where);
    const double v = gpu.at(ptr).get<double>();
    if (!std::isfinite(v) || v < 0 || (v == 0 && !zero_ok))
        throw incomplete_profile("/measurements/gpu" + where, fmt::format("the GPU harness measured {} at {}", v, where));
    return v;
}

// [[bytes, seconds], ...] of one copy direction, at least two sizes.
const nlohmann::json& copy_points(const nlohmann::json& gpu, const std::string& direction) {
    const std::string where = "/copies/" + direction;
    const nlohmann::json::json_pointer ptr(where);
    if (!gpu.contains(ptr) || !gpu.at(ptr).is_array() || gpu.at(ptr).size() < 2)
        throw incomplete_profile("/measurements/gpu" + where, "the GPU harness's record has no copy sizes at " + where);
    return gpu.at(ptr);
}

// dma: the latency of the smallest copy and the bandwidth of the largest, the slower direction of each.
nlohmann::json dma_of(const nlohmann::json& gpu) {
    double latency = 0, bandwidth = 0;
    for (const char* d : {"host_to_device", "device_to_host"}) {
        const nlohmann::json& pts = copy_points(gpu, d);
        const std::string base = std::string("/copies/") + d;
        const double small = number_at(gpu, base + "/0/1");
        const std::string last = base + "/" + std::to_string(pts.size() - 1);
        const double bw = number_at(gpu, last + "/0") / number_at(gpu, last + "/1");
        latency = std::max(latency, small);
        bandwidth = bandwidth == 0 ? bw : std::min(bandwidth, bw);
    }
    return {{"latency_s", latency}, {"bandwidth_Bps", bandwidth}};
}

// One sharing measurement ({"measured": true, ...}) or null.
bool measured(const nlohmann::json& gpu, const char* mode) {
    const nlohmann::json::json_pointer ptr(std::string("/sharing/") + mode);
    return gpu.contains(ptr) && gpu.at(ptr).is_object() && gpu.at(ptr).value("measured", false);
}

// sharing and T_slice_switch: MPS when the processes overlapped under the daemon; time slicing with its switch
// when they ran one after the other without it (an overlap there means a daemon was already running: MPS).
void write_sharing(nlohmann::json& p, const nlohmann::json& gpu, nlohmann::json& notes) {
    nlohmann::json modes = nlohmann::json::array();
    bool sliced = false, concurrent = false;
    if (measured(gpu, "time_sliced")) {
        const double ratio = number_at(gpu, "/sharing/time_sliced/pair_over_alone");
        if (ratio < concurrent_below) {
            concurrent = true;
            notes.push_back(fmt::format("two processes overlapped without a daemon started by the harness (pair/alone "
                                        "{:.2f}): an MPS daemon was already running; time slicing was not measured", ratio));
        } else {
            sliced = true;
            const double sw = number_at(gpu, "/sharing/time_sliced/switch_s", true);
            p["T_slice_switch"] = {{"value", std::max(0.0, sw)},
                                   {"source", fmt::format("GPU harness, sharing: two processes off-loading {}-µs kernels "
                                                          "at once took {:.2f}x one alone; per off-load, the pair's wall "
                                                          "time / (2 x kernels) - one kernel's device time",
                                                          1e6 * number_at(gpu, "/sharing/time_sliced/kernel_s"), ratio)}};
        }
    }
    if (measured(gpu, "mps")) {
        const double ratio = number_at(gpu, "/sharing/mps/pair_over_alone");
        if (ratio < concurrent_below) concurrent = true;
        else
            notes.push_back(fmt::format("under the MPS daemon two processes still ran one after the other (pair/alone "
                                        "{:.2f}): mps is not listed", ratio));
    }
    if (concurrent) modes.push_back("mps");
    if (sliced) modes.push_back("time_sliced");
    if (modes.empty())
        throw incomplete_profile("/measurements/gpu/sharing",
                                 "the GPU harness measured no sharing between processes (neither time-sliced nor MPS)");
    p["sharing"] = modes;
}

}  // namespace

double blocks_per_sm(const nlohmann::json& gpu) {
    const double sms = number_at(gpu, "/device/sms");
    const nlohmann::json::json_pointer ptr("/blocks/by_blocks");
    if (!gpu.contains(ptr) || !gpu.at(ptr).is_array() || gpu.at(ptr).empty())
        throw incomplete_profile("/measurements/gpu/blocks/by_blocks", "the GPU harness's record has no block sweep");
    const double one = number_at(gpu, "/blocks/by_blocks/0/1");
    double best = 1;
    for (std::size_t i = 0; i < gpu.at(ptr).size(); ++i) {
        const std::string at = "/blocks/by_blocks/" + std::to_string(i);
        const double blocks = number_at(gpu, at + "/0"), t = number_at(gpu, at + "/1");
        if (t <= 1.1 * one) best = std::max(best, blocks / sms);
    }
    return best;
}

void describe_gpu(nlohmann::json& p, const nlohmann::json& gpu) {
    const int sms = static_cast<int>(number_at(gpu, "/device/sms"));
    const std::string device = gpu.contains("/device/name"_json_pointer) && gpu["device"]["name"].is_string()
                                   ? gpu["device"]["name"].get<std::string>()
                                   : "GPU";
    nlohmann::json notes = p.contains("notes") && p["notes"].is_array() ? p["notes"] : nlohmann::json::array();
    p["apus"] = {{"value", sms}, {"source", fmt::format("GPU harness: {}'s streaming multiprocessors (an APU is an SM)", device)}};
    p["O_offload"] = {{"value", number_at(gpu, "/offload/launch_sync_s/median")},
                      {"min", number_at(gpu, "/offload/launch_sync_s/min")},
                      {"repetitions", static_cast<int>(number_at(gpu, "/offload/launch_sync_s/repetitions"))},
                      {"source", "GPU harness: launch + cudaStreamSynchronize of an empty one-block kernel, host-timed"}};
    p["dma"] = dma_of(gpu);
    write_sharing(p, gpu, notes);
    if (!p.contains("sources") || !p["sources"].is_object()) p["sources"] = nlohmann::json::object();
    p["sources"]["dma"] = "GPU harness: pinned cudaMemcpyAsync timed with CUDA events (copy-engine time, no host "
                          "synchronisation); latency of the smallest copy, bandwidth of the largest, slower direction";
    if (gpu.value("/mailbox/answered"_json_pointer, false))
        notes.push_back(fmt::format("a persistent kernel answering through mapped host memory: {} round trip (median), "
                                    "the off-load a runtime could use instead of a launch",
                                    number_at(gpu, "/mailbox/round_trip_s/median")));
    notes.push_back(fmt::format("the reference kernel (256-thread blocks) runs {:g} block(s) per SM before they slow "
                                "each other by more than 10 %", blocks_per_sm(gpu)));
    notes.push_back("O_offload's cost against the grid size p is under measurements.gpu.offload.by_blocks; the gap g is "
                    "an application parameter in mmgp/1");
    p["notes"] = notes;
    if (!p.contains("measurements") || !p["measurements"].is_object()) p["measurements"] = nlohmann::json::object();
    p["measurements"]["gpu"] = gpu;
    p["calibration"]["backend"] = "cuda";
    p["calibration"]["device"] = gpu.value("/device/index"_json_pointer, 0);
    p["description"] = fmt::format("Measured by mmgp calibrate --accelerator cuda: host = this machine's cores, "
                                   "accelerators = the {} SMs of {}.", sms, device);
    p.erase("cores");  // a GPU node's accelerators are not threads on the host's cores
}

}  // namespace mmgp::calib
