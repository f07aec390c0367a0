// The GPU harness's record as platform keys (gpu_describe.hpp). Called by cmd_calibrate_gpu.cpp; pure.
#include "gpu_describe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "calibrate.hpp"
#include "mmgp/profile.hpp"

namespace mmgp::calib {

namespace {

// What a number of the record may be: every one has a range, counts are integers.
enum class quantity { seconds, seconds_or_zero, count, bytes, ratio };

// The member at JSON pointer `where` of the record: a finite number in the range of its quantity.
double number_at(const nlohmann::json& gpu, const std::string& where, quantity q = quantity::seconds) {
    const nlohmann::json::json_pointer ptr(where);
    if (!gpu.contains(ptr) || !gpu.at(ptr).is_number())
        throw incomplete_profile("/measurements/gpu" + where, "the GPU harness's record has no number at " + where);
    const double v = gpu.at(ptr).get<double>();
    struct bounds {
        double lo, hi;
        bool lo_ok, integer;
        const char* what;
    };
    static constexpr bounds table[] = {{0, 3600, false, false, "seconds in (0, 3600]"},
                                       {0, 3600, true, false, "seconds in [0, 3600]"},
                                       {1, 1e9, true, true, "an integer in [1, 1e9]"},
                                       {0, 1e15, false, false, "bytes in (0, 1e15]"},
                                       {0, 1e6, false, false, "a ratio in (0, 1e6]"}};
    const bounds& b = table[static_cast<int>(q)];
    if (!std::isfinite(v) || v < b.lo || (v == b.lo && !b.lo_ok) || v > b.hi || (b.integer && v != std::floor(v)))
        throw incomplete_profile("/measurements/gpu" + where,
                                 fmt::format("{} at {} of the GPU harness's record, found {}", b.what, where, v));
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
        const double bw = number_at(gpu, last + "/0", quantity::bytes) / number_at(gpu, last + "/1");
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

// The time-slice switch between grids spread over the SMs (sharing.time_sliced_grids), as notes: the model charges
// the one-block kernels' switch (`one_block_s`) whatever an off-load's grid.
void note_grid_switches(const nlohmann::json& gpu, double one_block_s, nlohmann::json& notes) {
    const nlohmann::json::json_pointer ptr("/sharing/time_sliced_grids");
    if (!gpu.contains(ptr) || !gpu.at(ptr).is_array()) return;
    for (const nlohmann::json& g : gpu.at(ptr)) {  // a note only: one the record does not give in full is left out
        if (!g.is_object() || !g.value("measured", false) || !g.contains("blocks") || !g["blocks"].is_number() ||
            !g.contains("switch_s") || !g["switch_s"].is_number())
            continue;
        notes.push_back(fmt::format("the time-slice switch between two processes' grids of {:g} blocks: {:.1f} µs a "
                                    "kernel (T_slice_switch is the one-block kernels' {:.1f} µs, whatever the grid)",
                                    g["blocks"].get<double>(), 1e6 * g["switch_s"].get<double>(), 1e6 * one_block_s));
    }
}

// The sharing measured with more processes at once, recorded as curves under `calibration` ([processes, value]):
// the record's list, the value each entry gives, the key written, and its source.
struct by_procs_curve {
    const char* list;
    const char* value;
    const char* key;
    const char* source;
};
constexpr by_procs_curve sliced_spinning{
    "time_sliced_procs", "switch_s", "T_slice_switch_by_procs",
    "GPU harness, sharing: n processes off-loading one-block kernels at once without MPS, their host threads spinning "
    "while they wait: [n, their wall time / (n x kernels) - one kernel's device time] (T_slice_switch is the pair's)"};
constexpr by_procs_curve sliced_blocking{
    "time_sliced_blocking_procs", "switch_s", "T_slice_switch_blocking_by_procs",
    "GPU harness, sharing: n processes off-loading one-block kernels at once without MPS, their host threads blocking "
    "while they wait (cudaDeviceScheduleBlockingSync, as edtlp processes wait): [n, their wall time / (n x kernels) - "
    "one kernel's device time]"};
constexpr by_procs_curve mps_spinning{
    "mps_procs", "over_alone", "mps_over_alone_by_procs",
    "GPU harness, sharing: n processes off-loading one-block kernels at once under the MPS daemon: [n, their wall "
    "time / one process's alone] (1: they did not slow each other)"};

// One curve of `c` (the pair's value first, where given). Nothing in the model reads these: T_slice_switch stays the
// pair's, spinning, and MPS's processes are taken not to slow each other, until a device run shows how either grows
// with m or with the host's wait. An entry the record does not give in full, of fewer than 2 processes, or of a
// count already given is left out, and a ratio must be positive; the curve goes by the processes.
void record_by_procs(nlohmann::json& p, const nlohmann::json& gpu, const by_procs_curve& c,
                     std::optional<double> pair_value) {
    const bool is_switch = std::string(c.value) == "switch_s";
    const nlohmann::json::json_pointer ptr(std::string("/sharing/") + c.list);
    if (!gpu.contains(ptr) || !gpu.at(ptr).is_array()) return;
    nlohmann::json curve = nlohmann::json::array();
    if (pair_value) curve.push_back({2, *pair_value});
    for (const nlohmann::json& g : gpu.at(ptr)) {
        if (!g.is_object() || !g.value("measured", false) || !g.contains("procs") || !g["procs"].is_number_integer() ||
            !g.contains(c.value) || !g[c.value].is_number() || !std::isfinite(g[c.value].get<double>()))
            continue;
        const int procs = g["procs"].get<int>();
        const double v = g[c.value].get<double>();
        const bool known = std::any_of(curve.begin(), curve.end(), [&](const nlohmann::json& pt) { return pt[0] == procs; });
        if (procs < 2 || known || (!is_switch && v <= 0)) continue;
        curve.push_back({procs, is_switch ? std::max(0.0, v) : v});
    }
    if (curve.size() < 2) return;
    std::sort(curve.begin(), curve.end(), [](const nlohmann::json& a, const nlohmann::json& b) { return a[0] < b[0]; });
    if (!p.contains("calibration") || !p["calibration"].is_object()) p["calibration"] = nlohmann::json::object();
    p["calibration"][c.key] = {{"value", curve}, {"source", c.source}};
}

// sharing and T_slice_switch: MPS when the processes overlapped under the daemon; time slicing with its switch
// when they ran one after the other without it (an overlap there means a daemon was already running: MPS).
void write_sharing(nlohmann::json& p, const nlohmann::json& gpu, nlohmann::json& notes) {
    nlohmann::json modes = nlohmann::json::array();
    bool sliced = false, concurrent = false;
    if (measured(gpu, "time_sliced")) {
        const double ratio = number_at(gpu, "/sharing/time_sliced/pair_over_alone", quantity::ratio);
        if (ratio < concurrent_below) {
            concurrent = true;
            notes.push_back(fmt::format("two processes overlapped without a daemon started by the harness (pair/alone "
                                        "{:.2f}): an MPS daemon was already running; time slicing was not measured", ratio));
        } else {
            sliced = true;
            const double sw = number_at(gpu, "/sharing/time_sliced/switch_s", quantity::seconds_or_zero);
            p["T_slice_switch"] = {{"value", std::max(0.0, sw)},
                                   {"source", fmt::format("GPU harness, sharing: two processes off-loading {}-µs kernels "
                                                          "at once took {:.2f}x one alone; per off-load, the pair's wall "
                                                          "time / (2 x kernels) - one kernel's device time",
                                                          1e6 * number_at(gpu, "/sharing/time_sliced/kernel_s"), ratio)}};
            note_grid_switches(gpu, std::max(0.0, sw), notes);
            record_by_procs(p, gpu, sliced_spinning, std::max(0.0, sw));
            record_by_procs(p, gpu, sliced_blocking, std::nullopt);
        }
    }
    if (measured(gpu, "mps")) {
        const double ratio = number_at(gpu, "/sharing/mps/pair_over_alone", quantity::ratio);
        if (ratio < concurrent_below) {
            concurrent = true;
            record_by_procs(p, gpu, mps_spinning, ratio);
        } else
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

nlohmann::json slot_time_of(const nlohmann::json& gpu) {
    const double sms = number_at(gpu, "/device/sms", quantity::count);
    const nlohmann::json::json_pointer ptr("/blocks/by_blocks");
    if (!gpu.contains(ptr) || !gpu.at(ptr).is_array() || gpu.at(ptr).empty())
        throw incomplete_profile("/measurements/gpu/blocks/by_blocks", "the GPU harness's record has no block sweep");
    double base = 0;  // the grid of one block per SM: every SM busy with one block
    nlohmann::json points = nlohmann::json::array();
    for (std::size_t i = 0; i < gpu.at(ptr).size(); ++i) {
        const std::string at = "/blocks/by_blocks/" + std::to_string(i);
        const double blocks = number_at(gpu, at + "/0", quantity::count), t = number_at(gpu, at + "/1");
        const double k = blocks / sms;
        if (k < 1 || k != std::floor(k)) continue;  // whole grids of k blocks per SM only
        if (k == 1) base = t;
        if (base > 0 && (points.empty() || k > points.back()[0].get<double>())) points.push_back({k, t / base});
    }
    // What the platform reader takes (slot_curve's limits, read_slot_curve).
    const auto beyond = [](const nlohmann::json& pt) {
        const double k = pt[0].get<double>();
        return k > mmgp::slot_curve::max_blocks || pt[1].get<double>() > mmgp::slot_curve::max_factor_per_block * k;
    };
    if (points.size() > mmgp::slot_curve::max_points || std::any_of(points.begin(), points.end(), beyond))
        throw incomplete_profile("/measurements/gpu/blocks/by_blocks",
                                 fmt::format("a block sweep of at most 64 grids of at most 1e6 blocks per SM, each "
                                             "at most 10 x slower per block than one block per SM, found {} grids",
                                             points.size()));
    if (points.empty())
        throw incomplete_profile("/measurements/gpu/blocks/by_blocks",
                                 "the GPU harness's block sweep has no grid of one block per SM (blocks = SMs)");
    return points;
}

int slots_of(const nlohmann::json& gpu, std::string& source) {
    if (gpu.contains("/blocks/resident_per_sm"_json_pointer)) {
        source = "GPU harness: cudaOccupancyMaxActiveBlocksPerMultiprocessor of the 256-thread reference kernel";
        return static_cast<int>(std::min(1024.0, number_at(gpu, "/blocks/resident_per_sm", quantity::count)));
    }
    const auto per_block = [&](double threads_per_sm) {  // the SM's resident threads over the kernel's block
        return static_cast<int>(
            std::clamp(threads_per_sm / number_at(gpu, "/blocks/threads_per_block", quantity::count), 1.0, 1024.0));
    };
    if (gpu.contains("/device/max_threads_per_sm"_json_pointer)) {
        source = "GPU harness: the SM's resident threads / the reference kernel's 256 threads per block";
        return per_block(number_at(gpu, "/device/max_threads_per_sm", quantity::count));
    }
    // Records made before either was written: the SM's resident threads by compute capability (CUDA C++
    // Programming Guide, "Technical Specifications per Compute Capability": maximum resident threads per SM).
    static constexpr std::pair<const char*, int> threads_per_sm[] = {
        {"7.0", 2048}, {"7.5", 1024}, {"8.0", 2048}, {"8.6", 1536}, {"8.7", 2048}, {"8.9", 1536}, {"9.0", 2048}};
    const std::string cc = gpu.value("/device/compute_capability"_json_pointer, std::string());
    for (const auto& [name, threads] : threads_per_sm)
        if (cc == name && gpu.contains("/blocks/threads_per_block"_json_pointer)) {
            source = fmt::format("CUDA C++ Programming Guide, technical specifications per compute capability: {} "
                                 "resident threads per SM at {}, over the reference kernel's 256 threads per block "
                                 "(the record has no occupancy of its own)",
                                 threads, cc);
            return per_block(threads);
        }
    source.clear();
    return 1;
}

void redescribe_gpu_host(nlohmann::json& p) {
    const nlohmann::json::json_pointer cpus("/machine/num_cpus");
    if (!p.contains(cpus) || !p.at(cpus).is_number_integer() || p.at(cpus).get<long long>() < 1 ||
        p.at(cpus).get<long long>() > 1000000)
        throw incomplete_profile("/machine/num_cpus", "the measured machine's hardware contexts (a positive integer)");
    if (!p.contains("/measurements/gpu"_json_pointer) || !p["measurements"]["gpu"].is_object())
        throw incomplete_profile("/measurements/gpu", "the GPU harness's record (a profile of calibrate --accelerator cuda)");
    const int n = p.at(cpus).get<int>();
    const std::string measured_on =
        p.contains("/calibration/hpu_cpus"_json_pointer) ? p["calibration"]["hpu_cpus"].dump() : std::string("?");
    p["hpu_contexts"] = {{"value", n},
                         {"source", fmt::format("machine.num_cpus: every hardware context of the measured machine is a "
                                                "host context on a GPU node (re-described by calibrate --accelerator cuda "
                                                "--from; T_csw and alpha were measured on CPUs {})",
                                                measured_on)}};
    // What describe_gpu writes only where the record has it: described again from the record alone (a switch
    // kept from a profile whose record shows no time slicing would be refused beside its sharing).
    p.erase("apu_slots");
    p.erase("slot_time");
    p.erase("T_slice_switch");
    if (p.contains("calibration") && p["calibration"].is_object())
        for (const char* key : {"T_slice_switch_by_procs", "T_slice_switch_blocking_by_procs", "mps_over_alone_by_procs"})
            p["calibration"].erase(key);
    const nlohmann::json gpu = p["measurements"]["gpu"];
    describe_gpu(p, gpu);
    // The GPU's notes were there already: each once; and not an older mmgp's note of the blocks an SM runs,
    // which apu_slots and slot_time now say.
    nlohmann::json notes = nlohmann::json::array();
    for (const auto& n : p["notes"])
        if (std::find(notes.begin(), notes.end(), n) == notes.end() &&
            !(n.is_string() && n.get<std::string>().rfind("the reference kernel (256-thread blocks) runs", 0) == 0))
            notes.push_back(n);
    p["notes"] = notes;
    p["calibration"]["redescribed"] = "calibrate --accelerator cuda --from: host contexts recounted, the GPU harness's "
                                      "record described again; nothing measured";
}

namespace {

// The blocked host thread's wake-up against how long it slept (the record's offload.by_wait: a one-block kernel
// that waits on the device, blocking less spinning round trip): recorded beside T_csw, which stays the empty
// grid's; nothing in the model reads it. An older record has none.
void write_wake_by_wait(nlohmann::json& p, const nlohmann::json& gpu) {
    if (!gpu.contains("/offload/by_wait"_json_pointer)) return;
    if (!gpu["offload"]["by_wait"].is_array())
        throw incomplete_profile("/measurements/gpu/offload/by_wait", "the GPU harness's record has no list at /offload/by_wait");
    nlohmann::json curve = nlohmann::json::array();
    for (std::size_t i = 0; i < gpu["offload"]["by_wait"].size(); ++i) {
        const std::string at = "/offload/by_wait/" + std::to_string(i);
        const double wait = number_at(gpu, at + "/wait_s"), spinning = number_at(gpu, at + "/spinning_s"),
                     blocking = number_at(gpu, at + "/blocking_s");
        curve.push_back({wait, std::max(0.0, blocking - spinning)});
    }
    if (!p.contains("calibration") || !p["calibration"].is_object()) p["calibration"] = nlohmann::json::object();
    p["calibration"]["T_csw_by_wait"] = {
        {"value", curve},
        {"source", "GPU harness: launch + synchronise of a one-block kernel that waits W seconds on the device, the "
                   "host thread blocking less spinning (medians): [W, the blocked thread's wake-up] (T_csw is the "
                   "empty kernel's)"}};
}

void describe(nlohmann::json& p, const nlohmann::json& gpu) {
    const int sms = static_cast<int>(number_at(gpu, "/device/sms", quantity::count));
    const std::string device = gpu.contains("/device/name"_json_pointer) && gpu["device"]["name"].is_string()
                                   ? gpu["device"]["name"].get<std::string>()
                                   : "GPU";
    nlohmann::json notes = p.contains("notes") && p["notes"].is_array() ? p["notes"] : nlohmann::json::array();
    p["apus"] = {{"value", sms}, {"source", fmt::format("GPU harness: {}'s streaming multiprocessors (an APU is an SM)", device)}};
    p["O_offload"] = {{"value", number_at(gpu, "/offload/launch_sync_s/median")},
                      {"min", number_at(gpu, "/offload/launch_sync_s/min")},
                      {"repetitions", static_cast<int>(number_at(gpu, "/offload/launch_sync_s/repetitions", quantity::count))},
                      {"source", "GPU harness: launch + cudaStreamSynchronize of an empty one-block kernel, host-timed"}};
    if (gpu.contains("/offload/blocking_sync_s/median"_json_pointer)) {
        // An edtlp process blocks while its off-load runs: each off-load's switch is the wake-up of its host thread.
        const double blocking = number_at(gpu, "/offload/blocking_sync_s/median");
        if (!p.contains("calibration") || !p["calibration"].is_object()) p["calibration"] = nlohmann::json::object();
        if (p.contains("T_csw") && !p["calibration"].contains("T_csw_host")) p["calibration"]["T_csw_host"] = p["T_csw"];
        p["T_csw"] = {{"value", std::max(0.0, blocking - p["O_offload"]["value"].get<double>())},
                      {"source", "GPU harness: launch + synchronise of an empty one-block kernel with the host thread "
                                 "blocking while it waits (cudaDeviceScheduleBlockingSync, as an edtlp process waits), "
                                 "less O_offload's spinning one (medians): the wake-up of the blocked host thread, per "
                                 "off-load (the csw harness's host hand-off: calibration.T_csw_host)"}};
    }
    write_wake_by_wait(p, gpu);
    p["dma"] = dma_of(gpu);
    write_sharing(p, gpu, notes);
    if (!p.contains("sources") || !p["sources"].is_object()) p["sources"] = nlohmann::json::object();
    p["sources"]["dma"] = "GPU harness: pinned cudaMemcpyAsync timed with CUDA events (copy-engine time, no host "
                          "synchronisation); latency of the smallest copy, bandwidth of the largest, slower direction";
    if (gpu.value("/mailbox/answered"_json_pointer, false))
        notes.push_back(fmt::format("a persistent kernel answering through mapped host memory: {} round trip (median), "
                                    "the off-load a runtime could use instead of a launch",
                                    number_at(gpu, "/mailbox/round_trip_s/median")));
    std::string slots_source;
    const int slots = slots_of(gpu, slots_source);
    p["slot_time"] = slot_time_of(gpu);
    p["sources"]["slot_time"] = "GPU harness, blocks.by_blocks: a 256-thread FMA-chain kernel (every block the same "
                                "work) at k blocks per SM, its time over the time at one block per SM (CUDA events)";
    if (slots > 1) {
        p["apu_slots"] = {{"value", slots}, {"source", slots_source}};
    } else {
        p.erase("slot_time");
        p["sources"].erase("slot_time");
        notes.push_back("apu_slots not written: the harness's record has no occupancy (a record made before it was "
                        "measured); p and m*p stay within the SMs");
    }
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

}  // namespace

void describe_gpu(nlohmann::json& p, const nlohmann::json& gpu) {
    if (!gpu.is_object()) throw incomplete_profile("/measurements/gpu", "the GPU harness's record: a JSON object");
    try {
        describe(p, gpu);
    } catch (const nlohmann::json::exception&) {  // a member of another type than the harness writes
        throw incomplete_profile("/measurements/gpu", "the GPU harness's record with the types it writes (a boolean "
                                                      "for answered and measured, a string for names, objects for "
                                                      "sections), found a member of another type");
    }
}

}  // namespace mmgp::calib
