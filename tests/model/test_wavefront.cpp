// The wavefront sweep mapped accelerator-driven and host-driven (docs/MODEL.md §6): the message cost from its
// path, the pipeline's steps, where faces cross the hierarchy, the forwarding hosts' queue, the readers' refusals,
// and [RR]'s figures.
#include <doctest/doctest.h>

#include <string>

#include "mmgp/validate.hpp"
#include "mmgp/wavefront.hpp"
#include "support.hpp"

namespace {

// A made-up machine: 4 accelerators per chip, 8 per node, 2 host forwarders per node; a network level.
const char* scenario_text = R"({
  "schema": "mmgp/1",
  "platform": {"hpu_contexts": 2, "apus": 8, "nodes": 64, "O_offload": 1e-7, "T_csw": 1e-6, "alpha": 1.0,
    "hierarchy": {"levels": [
      {"name": "chip", "ranks": 4, "path": [{"name": "bus", "latency_s": 1e-6, "bandwidth_Bps": 1e9}]},
      {"name": "node", "ranks": 8, "forwarders": 2, "path": [
        {"name": "to host", "latency_s": 2e-6},
        {"name": "host to host", "latency_s": 4e-6, "bandwidth_Bps": 5e8, "host": true}]},
      {"name": "network", "forwarders": 2, "path": [
        {"name": "to host", "latency_s": 2e-6},
        {"name": "wire", "latency_s": 10e-6, "bandwidth_Bps": 1e8, "host": true}]}]}},
  "application": {"wavefront": {"cells_per_rank": [4, 4, 40], "angles": 2, "k_block": 10, "octants": 8, "fills": 2,
                                "t_cell_s": 1e-7, "dma_s_per_cell": 5e-8}}
})";

}  // namespace

TEST_CASE("wavefront: a message costs the sum of its path's parts") {
    const mmgp::scenario s = mmgp::parse_scenario(scenario_text, "w.json");
    const auto& node = s.plat.hier.levels[1];
    CHECK(mmgp::message_time(node, 0) == mmgp::test::approx(6e-6));
    CHECK(mmgp::message_time(node, 1000) == mmgp::test::approx(6e-6 + 1000 / 5e8));
    CHECK(mmgp::message_time(node, 1000, true) == mmgp::test::approx(4e-6 + 1000 / 5e8));  // the host's parts only
}

TEST_CASE("wavefront: one rank has no messages; its time is octants x blocks x the block's compute") {
    const mmgp::scenario s = mmgp::parse_scenario(scenario_text, "w.json");
    const auto t = mmgp::wavefront_time(s.plat, s.app.wave, mmgp::wave_mapping::accelerator_driven, {1, 1, 1, mmgp::policy::edtlp});
    REQUIRE(t.valid);
    // 4 K-blocks of 4 x 4 x 10 cells x 2 angles at 0.1 us, 8 octants, no fill (Px + Py - 2 = 0).
    CHECK(t.time_s == mmgp::test::approx(8 * 4 * (4 * 4 * 10 * 2 * 1e-7)));
    CHECK(t.communication == 0);
    CHECK(t.fill == 0);
}

TEST_CASE("wavefront: faces cross the levels the layout puts them on, and the pipeline fills") {
    const mmgp::scenario s = mmgp::parse_scenario(scenario_text, "w.json");
    // 8 ranks on one node: grid 4 x 2, rank = x + 4 y. I neighbours (r, r+1) stay on a chip (chips are ranks 0-3,
    // 4-7 = the rows); J neighbours (r, r+4) cross chips: the node level.
    const auto t = mmgp::wavefront_time(s.plat, s.app.wave, mmgp::wave_mapping::accelerator_driven, {8, 1, 1, mmgp::policy::edtlp});
    REQUIRE(t.valid);
    CHECK(t.px == 4);
    CHECK(t.py == 2);
    CHECK(t.level_i == 0);
    CHECK(t.level_j == 1);
    const double face = 4 * 10 * 2 * 8;  // 4 cells x 10 planes x 2 angles x 8 bytes
    CHECK(t.message_i_s == mmgp::test::approx(1e-6 + face / 1e9));
    CHECK(t.message_j_s == mmgp::test::approx(6e-6 + face / 5e8));
    // The forwarders: 4 J pairs per node per step, each costing the host part (4 us + face / 5e8), over 2 forwarders.
    CHECK(t.forward_s == mmgp::test::approx(4 * (4e-6 + face / 5e8) / 2));
    const double comp = 4 * 4 * 10 * 2 * 1e-7;
    const double comm = std::max(t.message_i_s + t.message_j_s, t.forward_s);
    CHECK(t.step_s == mmgp::test::approx(comp + comm));
    // 8 octants x 4 blocks of work, 2 fills x (4 + 2 - 2) steps.
    CHECK(t.time_s == mmgp::test::approx((8 * 4 + 2 * 4) * (comp + comm)));
    CHECK(t.compute + t.fill + t.transfer + t.communication == mmgp::test::approx(t.time_s));
    // On 2 nodes (grid 4 x 4) the J faces of the middle rows cross the network.
    const auto t2 = mmgp::wavefront_time(s.plat, s.app.wave, mmgp::wave_mapping::accelerator_driven, {8, 1, 2, mmgp::policy::edtlp});
    CHECK(t2.level_j == 2);
}

TEST_CASE("wavefront: host-driven, a process off-loads its p accelerators' blocks and moves their data") {
    const mmgp::scenario s = mmgp::parse_scenario(scenario_text, "w.json");
    const auto t = mmgp::wavefront_time(s.plat, s.app.wave, mmgp::wave_mapping::host_driven, {1, 4, 1, mmgp::policy::edtlp});
    REQUIRE(t.valid);
    // One process with 4 accelerators holds a 2 x 2 arrangement of 4 x 4 blocks: 8 x 8 cells per step.
    const double cell_angles = 8 * 8 * 10 * 2;
    CHECK(t.transfer == mmgp::test::approx(8 * 4 * cell_angles * 5e-8));
    CHECK(t.compute == mmgp::test::approx(8 * 4 * cell_angles * 1e-7 / 4));
    // p must be 1 accelerator-driven; m * p within the node.
    CHECK_FALSE(mmgp::wavefront_time(s.plat, s.app.wave, mmgp::wave_mapping::accelerator_driven, {4, 2, 1, mmgp::policy::edtlp}).valid);
    CHECK_FALSE(mmgp::wavefront_time(s.plat, s.app.wave, mmgp::wave_mapping::host_driven, {4, 4, 1, mmgp::policy::edtlp}).valid);
}

TEST_CASE("wavefront: the readers refuse a hierarchy or a wavefront they cannot use") {
    auto refused = [](const std::string& from, const std::string& to) {
        std::string text = scenario_text;
        const auto at = text.find(from);
        REQUIRE(at != std::string::npos);
        text.replace(at, from.size(), to);
        try {
            mmgp::parse_scenario(text, "w.json");
        } catch (const mmgp::input_error& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    CHECK(refused(R"("name": "node", "ranks": 8)", R"("name": "node", "ranks": 6)").find("/platform/hierarchy/levels/1/ranks: expected a multiple of the level inside it (4 ranks)") != std::string::npos);
    CHECK(refused(R"("name": "node", "ranks": 8)", R"("name": "node", "ranks": 16)").find("/platform/hierarchy/levels/1/ranks: expected the node's accelerators (apus = 8)") != std::string::npos);
    CHECK(refused(R"("cells_per_rank": [4, 4, 40])", R"("cells_per_rank": [4, 4, 40], "cells": [1, 1, 1])").find("/application/wavefront: expected exactly one of \"cells_per_rank\" and \"cells\", found both") != std::string::npos);
    CHECK(refused(R"("fills": 2)", R"("fills": 9)").find("/application/wavefront/fills: expected at most the octants (8)") != std::string::npos);
    CHECK(refused(R"("latency_s": 1e-6, "bandwidth_Bps": 1e9)", R"("latency_s": -1e-6, "bandwidth_Bps": 1e9)").find("/platform/hierarchy/levels/0/path/0/latency_s") != std::string::npos);
    // More levels than the model counts crossings for: refused, not silently cut.
    std::string deep;
    for (int i = 1; i <= 16; ++i) deep += R"({"name": "l)" + std::to_string(i) + R"(", "ranks": 1, "path": [{"name": "x", "latency_s": 0}]}, )";
    CHECK(refused(R"({"name": "chip", "ranks": 4)", deep + R"({"name": "chip", "ranks": 4)").find("/platform/hierarchy/levels: expected an array of 1 to 16 levels") != std::string::npos);
}

TEST_CASE("[RR] Sweep3D: the inter-blade message from its parts within 5 %, 97,920 SPEs within 5 %") {
    auto rep = mmgp::run_validation(MMGP_SOURCE_DIR "/validation/paper/roadrunner-sweep3d.json", mmgp::model_kind::mmgp);
    REQUIRE(rep.cases.size() == 4);
    CHECK(rep.cases[0].measured_s == 11.77e-6);
    CHECK(std::fabs(rep.cases[0].err_pct) <= 5.0);
    CHECK(rep.cases[3].measured_s == 0.433);
    CHECK(std::fabs(rep.cases[3].err_pct) <= 5.0);
    // The single Cell: the accelerator-driven mapping wins, as measured (0.37 s against 1.3 s).
    CHECK(rep.cases[1].predicted_s < rep.cases[2].predicted_s);
}
