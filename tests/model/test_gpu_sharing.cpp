// Accelerators shared between processes (libmmgp/src/model/model.cpp time_sliced_curve, docs/MODEL.md §7): MPS as the
// dedicated layer, time slicing as the accelerator's busy time with a switch per off-load, m·p > A feasible only
// when time-sliced; the platform's sharing keys and the search over the modes.
#include <doctest/doctest.h>

#include <string>

#include "mmgp/fit.hpp"
#include "mmgp/model.hpp"
#include "mmgp/search.hpp"
#include "mmgp/tune.hpp"
#include "mmgp/validate.hpp"
#include "support.hpp"

namespace {

// A GPU node by hand: 16 host cores, 132 SMs; 8 task units of T_hpu 0.5 s and T_apu 13.2 s (on one SM), 100
// off-loads each of 9 µs; a time slice's switch 50 µs.
std::string gpu_scenario(const std::string& sharing = R"(["mps", "time_sliced"])", const std::string& search_extra = "") {
    return R"({"platform": {"hpu_contexts": 16, "apus": 132, "O_offload": 9e-6, "T_csw": 0, "alpha": 1.0,
                            "sharing": )" +
           sharing + R"(, "T_slice_switch": 5e-5},
               "application": {"decomposition": "task", "units": 8, "N": 100, "T_hpu": 0.5, "T_apu": 13.2, "C_apu": 0, "g": 0},
               "search": {"m": [1, 4], "p": [1, 132])" +
           search_extra + "}}";
}

}  // namespace

TEST_CASE("gpu sharing: MPS is the dedicated layer; time slicing waits for the accelerator's busy time") {
    const mmgp::scenario s = mmgp::parse_scenario(gpu_scenario(), "gpu.json");
    const mmgp::evaluator ev(s, mmgp::model_kind::mmgp);
    using mmgp::accelerator_sharing;
    auto at = [&](int m, int p, accelerator_sharing a) { return ev({m, p, 1, mmgp::policy::edtlp, a}); };
    // m = 4, p = 33, MPS: 2 units each of 0.5 + 13.2/33 + 100·9 µs, concurrently.
    const double mps = 2 * (0.5 + 0.4 + 100 * 9e-6);
    CHECK(at(4, 33, accelerator_sharing::mps).time_s == mmgp::test::approx(mps).epsilon(1e-12));
    // Time-sliced: the GPU runs the 4·2 units one kernel at a time, each off-load after a 50 µs switch.
    const double busy = 4 * 2 * (0.4 + 100 * 5e-5);
    const mmgp::prediction sliced = at(4, 33, accelerator_sharing::time_sliced);
    CHECK(sliced.time_s == mmgp::test::approx(busy).epsilon(1e-12));
    // The wait is off-load time: the parts still add up.
    CHECK(sliced.parts.offload == mmgp::test::approx(2 * 100 * 9e-6 + (busy - mps)).epsilon(1e-12));
    const mmgp::breakdown& b = sliced.parts;
    CHECK(b.host + b.accelerator + b.offload + b.context_switch + b.communication + b.spin + b.startup ==
          mmgp::test::approx(sliced.time_s).epsilon(1e-12));
    // m·p > A: each kernel gets the whole GPU; the host work now dominates the busy time 8·(0.1 + 0.005). The
    // kernels of the processes alternate, so each off-load also waits for the switch to its own context.
    CHECK(at(4, 132, accelerator_sharing::time_sliced).time_s ==
          mmgp::test::approx(2 * (0.5 + 0.1 + 100 * (9e-6 + 5e-5))).epsilon(1e-12));
    // One process: nothing to share, both modes are the dedicated time.
    CHECK(at(1, 66, accelerator_sharing::time_sliced).time_s == at(1, 66, accelerator_sharing::mps).time_s);
    CHECK(at(1, 66, accelerator_sharing::mps).time_s == mmgp::test::approx(8 * (0.5 + 0.2 + 100 * 9e-6)).epsilon(1e-12));
}

TEST_CASE("gpu sharing: an off-load that waits for several grids pays a switch for each, time-sliced only") {
    // The scenario above with every off-load waiting for 3 grids (waits_per_offload 3): time-sliced with m > 1 the
    // busy time counts 3 switches of 50 us an off-load, and so does each off-load's own path.
    std::string three = gpu_scenario();
    const std::string g = R"("g": 0})";
    three.replace(three.find(g), g.size(), R"("g": 0, "waits_per_offload": 3})");
    const mmgp::scenario s = mmgp::parse_scenario(three, "gpu.json"), one = mmgp::parse_scenario(gpu_scenario(), "gpu.json");
    REQUIRE(s.app.waits_per_offload == 3);
    const mmgp::evaluator ev(s, mmgp::model_kind::mmgp), ev1(one, mmgp::model_kind::mmgp);
    using mmgp::accelerator_sharing;
    auto at = [&](const mmgp::evaluator& e, int m, int p, accelerator_sharing a) { return e({m, p, 1, mmgp::policy::edtlp, a}).time_s; };
    CHECK(at(ev, 4, 33, accelerator_sharing::time_sliced) == mmgp::test::approx(4 * 2 * (0.4 + 100 * 3 * 5e-5)).epsilon(1e-12));
    CHECK(at(ev, 4, 132, accelerator_sharing::time_sliced) ==
          mmgp::test::approx(2 * (0.5 + 0.1 + 100 * (9e-6 + 3 * 5e-5))).epsilon(1e-12));
    // Under MPS, and with one process, nothing switches: the waits change nothing.
    for (int p : {1, 33, 132}) {
        CHECK(at(ev, 4, p, accelerator_sharing::mps) == at(ev1, 4, p, accelerator_sharing::mps));
        CHECK(at(ev, 1, p, accelerator_sharing::time_sliced) == at(ev1, 1, p, accelerator_sharing::time_sliced));
    }
}

TEST_CASE("gpu sharing: processes beyond the units keep the accelerator no busier") {
    // 8 units on m = 12 processes: 8 of them run one unit each, 4 have none. Time-sliced, the GPU runs the 8 units'
    // kernels one at a time, not 12.
    const mmgp::scenario s = mmgp::parse_scenario(gpu_scenario(), "gpu.json");
    const mmgp::evaluator ev(s, mmgp::model_kind::mmgp);
    using mmgp::accelerator_sharing;
    auto at = [&](int m, int p, accelerator_sharing a) { return ev({m, p, 1, mmgp::policy::edtlp, a}); };
    CHECK(at(12, 33, accelerator_sharing::time_sliced).time_s == mmgp::test::approx(8 * (0.4 + 100 * 5e-5)).epsilon(1e-12));
    CHECK(at(12, 33, accelerator_sharing::time_sliced).time_s == at(8, 33, accelerator_sharing::time_sliced).time_s);
}

TEST_CASE("gpu sharing: a row's time(p) is at(p) and the evaluator's, for each mode") {
    const mmgp::scenario s = mmgp::parse_scenario(gpu_scenario(), "gpu.json");
    const mmgp::evaluator ev(s, mmgp::model_kind::mmgp);
    for (auto a : {mmgp::accelerator_sharing::mps, mmgp::accelerator_sharing::time_sliced})
        for (int m = 1; m <= 4; ++m) {
            const mmgp::row r = ev.row_of(m, 1, mmgp::policy::edtlp, 0.0, false, a);
            for (int p : {1, 7, 33, 100, 132}) {
                CHECK(r.time(p) == r.at(p).time_s);
                CHECK(r.time(p) == ev({m, p, 1, mmgp::policy::edtlp, a}).time_s);
            }
        }
}

TEST_CASE("gpu sharing: the search covers every mode; m·p > A only time-sliced") {
    const mmgp::scenario s = mmgp::parse_scenario(gpu_scenario(), "gpu.json");
    // MPS: m·p <= 132 (132 + 66 + 44 + 33 configurations); time-sliced: p <= 132 for each m (4·132).
    CHECK(mmgp::count_feasible(s) == 132 + 66 + 44 + 33 + 4 * 132);
    mmgp::search_options opt;
    opt.keep_all = true;
    const mmgp::search_result r = mmgp::search(s, mmgp::model_kind::mmgp, opt);
    CHECK(static_cast<std::int64_t>(r.all.size()) == mmgp::count_feasible(s));
    int over_a = 0;
    for (const auto& x : r.all)
        if (x.c.m * x.c.p > 132) {
            ++over_a;
            CHECK(x.c.share == mmgp::accelerator_sharing::time_sliced);
        }
    CHECK(over_a == 4 * 132 - (132 + 66 + 44 + 33));
    // The best by hand: time-sliced m = 4, p = 132 (the GPU busy 8·(0.1 + 0.005) = 0.84 s, the host-bound
    // processes 2·(0.5 + 0.1 + 100·(9 + 50) µs) = 1.2118 s) beats MPS's best, m = 4 × 33 SMs (1.8018 s): under time
    // slicing each kernel has the whole GPU while the other processes work on the host.
    const double sliced_best = 2 * (0.5 + 0.1 + 100 * (9e-6 + 5e-5));
    CHECK(r.best.pred.time_s == mmgp::test::approx(sliced_best).epsilon(1e-12));
    CHECK(r.best.c.share == mmgp::accelerator_sharing::time_sliced);
    CHECK(r.best.c.m == 4);
    CHECK(r.best.c.p == 132);
    // The same search without the row skipping of pass 2 (no keep_all) finds the same best.
    const mmgp::search_result quick = mmgp::search(s, mmgp::model_kind::mmgp);
    CHECK(quick.best.c.share == r.best.c.share);
    CHECK(quick.best.c.m == r.best.c.m);
    CHECK(quick.best.c.p == r.best.c.p);
    // A search restricted to MPS: m = 4, p = 33 (1.8018 s) is its best.
    const mmgp::scenario only_mps = mmgp::parse_scenario(gpu_scenario(R"(["mps", "time_sliced"])", R"(, "sharing": ["mps"])"), "gpu.json");
    CHECK(mmgp::count_feasible(only_mps) == 132 + 66 + 44 + 33);
    const mmgp::search_result rm = mmgp::search(only_mps, mmgp::model_kind::mmgp);
    CHECK(rm.best.c.share == mmgp::accelerator_sharing::mps);
    CHECK(rm.best.c.m == 4);
    CHECK(rm.best.c.p == 33);
    CHECK(rm.best.pred.time_s == mmgp::test::approx(2 * (0.5 + 0.4 + 100 * 9e-6)).epsilon(1e-12));
}

TEST_CASE("gpu sharing: the platform's sharing keys are checked") {
    auto bad = [](const std::string& sharing, const std::string& extra, const std::string& must_contain) {
        std::string doc = gpu_scenario(sharing);
        if (!extra.empty()) doc.replace(doc.find("\"T_slice_switch\": 5e-5"), 22, extra);
        try {
            mmgp::parse_scenario(doc, "gpu.json");
            FAIL("accepted: " << sharing << " " << extra);
        } catch (const mmgp::input_error& e) {
            CHECK_MESSAGE(std::string(e.what()).find(must_contain) != std::string::npos, std::string(e.what()));
        }
    };
    bad(R"(["time_sliced"])", R"("nodes": 1)", "/platform/T_slice_switch");  // time-sliced without its switch cost
    bad(R"(["mps"])", "", "T_slice_switch only with");                        // the switch without time slicing
    bad(R"(["mps", "mps", "time_sliced"])", "", "/platform/sharing/1");
    bad(R"(["shared"])", "", "/platform/sharing/0");
    bad(R"([])", "", "/platform/sharing");
    bad(R"(["dedicated", "time_sliced"])", "", "\"dedicated\" alone");
    bad(R"(["mps", "time_sliced"])", R"("T_slice_switch": 5e-5, "cores": 16)", "sharing modes with \"cores\"");
    try {
        mmgp::parse_scenario(gpu_scenario(R"(["time_sliced"])", R"(, "sharing": ["mps"])"), "gpu.json");
        FAIL("a searched mode the platform lacks was accepted");
    } catch (const mmgp::input_error& e) {
        CHECK(std::string(e.what()).find("/search/sharing/0") != std::string::npos);
    }
    // Without the key, one mode: dedicated (every existing platform).
    const mmgp::scenario plain = mmgp::load_scenario("pbpi-qs20");
    CHECK(mmgp::searched_modes(plain) == std::vector<mmgp::accelerator_sharing>{mmgp::accelerator_sharing::dedicated});
}

TEST_CASE("gpu sharing: validate predicts each case under its own sharing mode") {
    mmgp::test::temp_dir d;
    d.write("gpu.json", gpu_scenario());
    // measured_s chosen 10 % above the hand-computed predictions (1.8018 s, 3.24 s and 1.2118 s, see above).
    d.write("v.json", R"({"schema": "mmgp/1", "kind": "validation", "scenario": "gpu.json", "group": "g", "cases": [
        {"m": 4, "p": 33, "sharing": "mps", "measured_s": 1.98198},
        {"m": 4, "p": 33, "sharing": "time_sliced", "measured_s": 3.564},
        {"m": 4, "p": 132, "sharing": "time_sliced", "measured_s": 1.33298}]})");
    const mmgp::validation_report rep = mmgp::run_validation((d.path / "v.json").string(), mmgp::model_kind::mmgp);
    REQUIRE(rep.cases.size() == 3);
    CHECK(rep.cases[0].predicted_s == mmgp::test::approx(2 * (0.5 + 0.4 + 100 * 9e-6)).epsilon(1e-12));
    CHECK(rep.cases[1].predicted_s == mmgp::test::approx(4 * 2 * (0.4 + 100 * 5e-5)).epsilon(1e-12));
    CHECK(rep.cases[2].predicted_s == mmgp::test::approx(2 * (0.5 + 0.1 + 100 * (9e-6 + 5e-5))).epsilon(1e-12));
    for (const auto& c : rep.cases) CHECK(c.err_pct == doctest::Approx(100 * (1 / 1.1 - 1)).epsilon(1e-9));
    CHECK(rep.cases[0].label == "m=4 p=33 nodes=1 edtlp sharing=mps");
    // m·p above the SMs only time-sliced; a mode the platform lacks is named.
    d.write("bad.json", R"({"schema": "mmgp/1", "kind": "validation", "scenario": "gpu.json", "cases": [
        {"m": 4, "p": 132, "sharing": "mps", "measured_s": 1.3}]})");
    CHECK_THROWS_WITH_AS(mmgp::run_validation((d.path / "bad.json").string(), mmgp::model_kind::mmgp),
                         doctest::Contains("expected a feasible configuration (m*p <= apus = 132"), mmgp::input_error);
    std::string mps_only = gpu_scenario(R"(["mps"])");
    const std::string sw = ", \"T_slice_switch\": 5e-5";
    mps_only.erase(mps_only.find(sw), sw.size());
    d.write("gpu-mps.json", mps_only);
    d.write("lacks.json", R"({"schema": "mmgp/1", "kind": "validation", "scenario": "gpu-mps.json", "cases": [
        {"m": 4, "p": 33, "sharing": "time_sliced", "measured_s": 1.3}]})");
    CHECK_THROWS_WITH_AS(mmgp::run_validation((d.path / "lacks.json").string(), mmgp::model_kind::mmgp),
                         doctest::Contains("/cases/0/sharing: expected one of the platform's sharing modes (mps), found "
                                           "time_sliced"), mmgp::input_error);
    // A case that states no mode ran under the platform's first, as fit and a replayed tune read a run without a
    // sharing column (it was once predicted as dedicated, which no GPU platform has, and refused).
    d.write("unstated.json", R"({"schema": "mmgp/1", "kind": "validation", "scenario": "gpu.json", "cases": [
        {"m": 4, "p": 33, "measured_s": 1.98198}, {"m": 4, "p": 33, "sharing": "time_sliced", "measured_s": 3.564}]})");
    const mmgp::validation_report un = mmgp::run_validation((d.path / "unstated.json").string(), mmgp::model_kind::mmgp);
    REQUIRE(un.cases.size() == 2);
    CHECK(un.cases[0].measured.c.share == mmgp::accelerator_sharing::mps);
    CHECK(un.cases[0].predicted_s == mmgp::test::approx(rep.cases[0].predicted_s).epsilon(1e-12));
    CHECK(un.cases[0].label == "m=4 p=33 nodes=1 edtlp sharing=mps");
    CHECK(un.cases[1].label == "m=4 p=33 nodes=1 edtlp sharing=time_sliced");
}

namespace {

// The same node with 8 blocks per SM and the reference kernel's curve (a 256-thread FMA chain on an H200: 1.2x at
// 2 blocks per SM, 2.32x at 4, 4.47x at 8); the host phases 0.01 s per unit so that the SMs can be the bottleneck.
std::string slotted_scenario(double T_hpu, const std::string& app_extra = "") {
    return R"({"platform": {"hpu_contexts": 16, "apus": 132, "O_offload": 9e-6, "T_csw": 0, "alpha": 1.0,
                            "sharing": ["mps", "time_sliced"], "T_slice_switch": 5e-5, "apu_slots": 8,
                            "slot_time": [[1, 1], [2, 1.2], [4, 2.32], [8, 4.47]]},
               "application": {"decomposition": "task", "units": 8, "N": 100, "T_hpu": )" +
           std::to_string(T_hpu) + R"(, "T_apu": 13.2, "C_apu": 0, "g": 0)" + app_extra + R"(},
               "search": {"m": [1, 8]}})";
}

}  // namespace

TEST_CASE("gpu grids beyond the SMs: p counts blocks, the SMs' slots priced by the curve") {
    const mmgp::scenario s = mmgp::parse_scenario(slotted_scenario(0.01), "gpu.json");
    const mmgp::evaluator ev(s, mmgp::model_kind::mmgp);
    using mmgp::accelerator_sharing;
    auto at = [&](int m, int p, accelerator_sharing a) { return ev({m, p, 1, mmgp::policy::edtlp, a}); };
    CHECK(s.plat.capacity() == 132 * 8);
    // Within the SMs nothing changes: m = 8 × p = 16 under MPS is 1 unit of 0.01 + 13.2/16 + 100·9 µs.
    CHECK(at(8, 16, accelerator_sharing::mps).time_s == mmgp::test::approx(0.01 + 13.2 / 16 + 100 * 9e-6).epsilon(1e-12));
    // One process, 264 blocks: two per SM, each block 13.2/264 s of one block's work, 1.2x as long together.
    CHECK(at(1, 264, accelerator_sharing::mps).time_s ==
          mmgp::test::approx(8 * (0.01 + 1.2 * 13.2 / 264 + 100 * 9e-6)).epsilon(1e-12));
    // 1.5 blocks per SM: the most loaded SMs hold two.
    CHECK(at(1, 198, accelerator_sharing::mps).time_s ==
          mmgp::test::approx(8 * (0.01 + 1.2 * 13.2 / 198 + 100 * 9e-6)).epsilon(1e-12));
    // MPS, m = 8 × p = 132 (1056 blocks, 8 per SM): each process alone would take 0.01 + 0.1 + 0.0009 s, but the
    // SMs' slots hold every process's blocks at once: 8 units of 13.2 s of one-block work at 1056/4.47 blocks' rate.
    const double busy = 8 * 13.2 * 4.47 / 1056;
    const mmgp::prediction full = at(8, 132, accelerator_sharing::mps);
    CHECK(full.time_s == mmgp::test::approx(busy).epsilon(1e-12));
    // Past the slots (an evaluation the search never asks for) the blocks run in waves: 2,112 blocks, 16 per SM.
    CHECK(at(8, 264, accelerator_sharing::mps).time_s == mmgp::test::approx(8 * 13.2 * 4.47 * 2 / 2112).epsilon(1e-12));
    const mmgp::breakdown& b = full.parts;
    CHECK(b.host + b.accelerator + b.offload + b.context_switch + b.communication + b.spin + b.startup ==
          mmgp::test::approx(full.time_s).epsilon(1e-12));
    // Time-sliced, m = 2 × p = 264: one grid at a time through the same curve, each off-load after a switch.
    const double grid = 1.2 * 13.2 / 264;
    CHECK(at(2, 264, accelerator_sharing::time_sliced).time_s ==
          mmgp::test::approx(std::max(2 * 4 * (grid + 100 * 5e-5), 4 * (0.01 + grid + 100 * (9e-6 + 5e-5)))).epsilon(1e-12));
    // The search covers m·p up to 1056 under MPS and p up to 1056 time-sliced, and each row's time(p) is at(p).
    std::int64_t mps = 0;
    for (int m = 1; m <= 8; ++m) mps += 1056 / m;
    CHECK(mmgp::count_feasible(s) == mps + 8 * 1056);
    for (auto a : {accelerator_sharing::mps, accelerator_sharing::time_sliced})
        for (int m : {1, 2, 8}) {
            const mmgp::row r = ev.row_of(m, 1, mmgp::policy::edtlp, 0.0, false, a);
            for (int p : {1, 16, 132, 133, 264, 1056 / m}) {
                CHECK(r.time(p) == r.at(p).time_s);
                CHECK(r.time(p) == ev({m, p, 1, mmgp::policy::edtlp, a}).time_s);
            }
        }
}

TEST_CASE("gpu grids beyond the SMs: the program's own kernel curve replaces the platform's") {
    const mmgp::scenario s = mmgp::parse_scenario(slotted_scenario(0.01, R"(, "slot_time": [[1, 1], [2, 1.0]])"), "gpu.json");
    const mmgp::evaluator ev(s, mmgp::model_kind::mmgp);
    // A kernel whose two blocks per SM run as fast as one: 264 blocks halve its time.
    CHECK(ev({1, 264, 1, mmgp::policy::edtlp, mmgp::accelerator_sharing::mps}).time_s ==
          mmgp::test::approx(8 * (0.01 + 13.2 / 264 + 100 * 9e-6)).epsilon(1e-12));
}

TEST_CASE("gpu grids beyond the SMs: the slot keys are checked") {
    auto error_of = [](const std::string& doc) {
        try {
            mmgp::parse_scenario(doc, "gpu.json");
        } catch (const mmgp::input_error& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    std::string doc = slotted_scenario(0.01);
    const std::string curve = R"("slot_time": [[1, 1], [2, 1.2], [4, 2.32], [8, 4.47]])";
    auto with_curve = [&](const std::string& c) {
        std::string d = doc;
        return d.replace(d.find(curve), curve.size(), c);
    };
    CHECK(error_of(with_curve(R"("nodes": 1)")).find("/platform/slot_time: expected the accelerator's time") != std::string::npos);
    CHECK(error_of(with_curve(R"("slot_time": [[2, 1.2]])")).find("/platform/slot_time/0: expected [1, 1] first") != std::string::npos);
    CHECK(error_of(with_curve(R"("slot_time": [[1, 1], [4, 2], [2, 1.2]])")).find("/platform/slot_time/2/0") != std::string::npos);
    CHECK(error_of(with_curve(R"("slot_time": [[1, 1], [2, -1]])")).find("/platform/slot_time/1/1") != std::string::npos);
    CHECK(error_of(with_curve(R"("slot_time": [[1, 1], [2, 1e308]])")).find("/platform/slot_time/1/1: expected a time factor of at most 10 x") !=
          std::string::npos);
    std::string many = doc;
    many.replace(many.find("\"apu_slots\": 8"), 14, "\"apu_slots\": 4096");
    CHECK(error_of(many).find("/platform/apu_slots: expected at most 1024") != std::string::npos);
}

TEST_CASE("gpu grids beyond the SMs: fit takes the runs within the SMs, where the model is linear in the parameters") {
    const mmgp::scenario s = mmgp::parse_scenario(slotted_scenario(0.01), "gpu.json");
    auto run = [](int m, int p, double t) {
        mmgp::measurement r{{m, p, 1, mmgp::policy::edtlp}, 8};
        r.runs.push_back({t});
        r.runs[0].where = "m=" + std::to_string(m) + " p=" + std::to_string(p);
        return r;
    };
    std::vector<mmgp::measurement> runs = {run(1, 1, 14), run(1, 16, 1.2), run(2, 16, 0.7), run(1, 66, 0.5), run(4, 33, 0.3)};
    mmgp::fit_options opt;
    opt.decomp = mmgp::decomposition::task;
    CHECK_NOTHROW(mmgp::fit_application(s.plat, runs, opt, "runs.csv"));
    runs.push_back(run(8, 132, 0.2));  // 1,056 blocks on 132 SMs: predicted, not fitted
    CHECK_THROWS_WITH_AS(mmgp::fit_application(s.plat, runs, opt, "runs.csv"),
                         doctest::Contains("m=8 p=132: expected a configuration feasible on platform  (m*p <= 132, its "
                                           "accelerators: runs beyond them are predicted, not fitted"),
                         mmgp::input_error);
}

TEST_CASE("gpu sharing: a time-sliced tune fits its runs under its own mode, not the platform's first") {
    // The platform lists MPS first; the tune runs time-sliced. Runs timed by the model under time slicing for a
    // known program (T_hpu 0.5 s, T_apu 13.2 s, C_apu 0): those of one process fit exactly; those of several wait
    // for the GPU's busy time (the larger of two terms) and are left out of the fit, not fitted as MPS runs.
    const mmgp::scenario truth = mmgp::parse_scenario(gpu_scenario(), "gpu.json");
    const mmgp::evaluator ev(truth, mmgp::model_kind::mmgp);
    std::vector<mmgp::configuration> space;
    for (int m : {1, 2, 4})
        for (int p : {1, 2, 4, 8, 33}) space.push_back({m, p, 1, mmgp::policy::edtlp, mmgp::accelerator_sharing::time_sliced});
    mmgp::tune_options o;
    o.prior = false;
    o.choose_structure = true;  // a new user's tune: the fit mmgp fit does (tune/prior.cpp)
    mmgp::tuner t(truth, space, o);
    for (std::size_t c = 0; c < space.size(); ++c) t.add(c, {ev(space[c]).time_s, mmgp::run_outcome::ok});
    const mmgp::tune_assessment a = t.assess();
    REQUIRE(a.model_used);
    auto param = [&](const std::string& name) {
        for (const mmgp::tune_param& q : a.params)
            if (q.name == name) return q.value;
        FAIL("no fitted " << name);
        return 0.0;
    };
    // One process's runs tell the host time from the serial accelerator time only as their sum.
    CHECK(param("T_hpu") + param("C_apu") == mmgp::test::approx(0.5).epsilon(1e-6));
    CHECK(param("T_apu") == mmgp::test::approx(13.2).epsilon(1e-6));
    for (std::size_t c = 0; c < space.size(); ++c)
        if (space[c].m == 1) CHECK(a.configs[c].model_s == mmgp::test::approx(ev(space[c]).time_s).epsilon(1e-6));
}
