// mmgp-gpu-workload --profile's document (offload/cuda/workload_profile.cpp), checked without a GPU: the values per
// unit computed by hand from the run's sums, and the document read back as an application profile.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "mmgp/profile.hpp"
#include "workload_profile.hpp"

TEST_CASE("the GPU workload's profile: per-unit times from the run's sums, read back as an application") {
    mmgp::gpu_workload::profile_samples s;
    s.units = 4, s.offloads = 10, s.host_us = 200, s.kernel_us = 2000;
    s.host_s = 0.008, s.kernel_s = 0.08, s.offload_s = 0.1, s.wall_s = 0.11;
    const std::string text = mmgp::gpu_workload::profile_document(s);
    CHECK(text.back() == '\n');
    const nlohmann::json j = nlohmann::json::parse(text);
    CHECK(j["description"] == "mmgp-gpu-workload: 4 units of 10 off-loads, host 200 us and kernel 2000 us each");
    CHECK(j["measurements"]["offload_wall_s_per_unit"].get<double>() == doctest::Approx(0.025));
    CHECK_FALSE(j.contains("slot_time"));
    const mmgp::application app = mmgp::parse_application(text, "workload.json");
    CHECK(app.units == 4);
    CHECK(app.N == 10);
    CHECK(app.T_hpu == doctest::Approx(0.002));
    CHECK(app.T_apu == doctest::Approx(0.02));
    CHECK(app.C_apu == 0);
    // --compute: the kernel's curve, each multiple of the SMs against one block per SM.
    s.slots_measured = true;
    s.slot_s[0] = 0.01, s.slot_s[1] = 0.012, s.slot_s[2] = 0.02;
    const mmgp::application with_slots = mmgp::parse_application(mmgp::gpu_workload::profile_document(s), "w.json");
    CHECK(with_slots.slot_time.k == std::vector<double>{1, 2, 4});
    CHECK(with_slots.slot_time.factor[1] == doctest::Approx(1.2));
    CHECK(with_slots.slot_time.factor[2] == doctest::Approx(2.0));
}
