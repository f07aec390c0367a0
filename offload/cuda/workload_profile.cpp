// mmgp-gpu-workload --profile's application profile from its measurements (workload_profile.hpp): called by
// gpu_workload.cu's main, tested in tests/offload/test_workload_profile.cpp.
#include "workload_profile.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace mmgp::gpu_workload {

std::string profile_document(const profile_samples& s) {
    using json = nlohmann::ordered_json;
    json doc = {
        {"schema", "mmgp/1"},
        {"kind", "application"},
        {"name", "gpu-workload"},
        {"description", fmt::format("mmgp-gpu-workload: {} units of {} off-loads, host {:.6g} us and kernel {:.6g} us each",
                                    s.units, s.offloads, s.host_us, s.kernel_us)},
        {"decomposition", "task"},
        {"units", s.units},
        {"N", s.offloads},
        {"T_hpu", {{"value", s.host_s / s.units}, {"source", "mmgp-gpu-workload --profile: host phases per unit, measured"}}},
        {"T_apu",
         {{"value", s.kernel_s / s.units}, {"source", "mmgp-gpu-workload --profile: kernels per unit at p = 1, CUDA events"}}},
        {"C_apu", 0},
        {"g", 0}};
    // The off-load round trip beyond the kernel is the platform's O_offload (calibrated), not the program's.
    if (s.slots_measured && s.slot_s[0] > 0) {
        doc["slot_time"] = json::array({{1, 1}, {2, s.slot_s[1] / s.slot_s[0]}, {4, s.slot_s[2] / s.slot_s[0]}});
        doc["sources"] = {{"slot_time",
                           "mmgp-gpu-workload --profile --compute: the kernel at 2 and 4 blocks per SM over 1, every block "
                           "the same work, CUDA events"}};
    }
    doc["measurements"] = {{"wall_s", s.wall_s}, {"offload_wall_s_per_unit", s.offload_s / s.units}};
    return doc.dump(1) + "\n";
}

}  // namespace mmgp::gpu_workload
