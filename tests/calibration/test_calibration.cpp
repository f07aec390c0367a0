// Tests of the calibration statistics, fitting, topology roles, profile pieces and of `mmgp calibrate --quick`.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <fmt/format.h>
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.hpp"
#include "calibrate.hpp"
#include "gpu_describe.hpp"
#include "gpu/gpu_record.hpp"
#include "mmgp/io.hpp"
#include "mpi_driver.hpp"
#include "mmgp/error.hpp"
#include "mmgp/model.hpp"
#include "mmgp/profile.hpp"

using namespace mmgp::calib;
namespace fs = std::filesystem;

TEST_CASE("median, quantile and MAD on known samples") {
    CHECK(median({3, 1, 2}) == 2);
    CHECK(median({4, 1, 3, 2}) == doctest::Approx(2.5));
    CHECK(quantile({1, 2, 3, 4, 5}, 0.0) == 1);
    CHECK(quantile({1, 2, 3, 4, 5}, 1.0) == 5);
    CHECK(quantile({1, 2, 3, 4, 5}, 0.25) == doctest::Approx(2));
    // |x - 3| = 2,1,0,1,97 -> median 1
    CHECK(mad({1, 2, 3, 4, 100}) == doctest::Approx(1));
    CHECK_THROWS_AS(median({}), std::invalid_argument);
}

TEST_CASE("summary: mean, standard deviation, CV, min/max and the CI of the median") {
    summary s = summarize({2, 4, 4, 4, 5, 5, 7, 9});
    CHECK(s.n == 8);
    CHECK(s.mean == doctest::Approx(5));
    CHECK(s.stddev == doctest::Approx(std::sqrt(32.0 / 7.0)));
    CHECK(s.cv == doctest::Approx(std::sqrt(32.0 / 7.0) / 5));
    CHECK(s.median == doctest::Approx(4.5));
    CHECK(s.min == 2);
    CHECK(s.max == 9);
    CHECK(s.ci95_lo <= s.median);
    CHECK(s.ci95_hi >= s.median);
    // 1..1001: the median is 501; the 95 % order-statistic interval is about +-31 ranks around it.
    std::vector<double> v;
    for (int i = 1; i <= 1001; ++i) v.push_back(i);
    summary t = summarize(v);
    CHECK(t.median == 501);
    CHECK(t.ci95_lo == doctest::Approx(470).epsilon(0.01));
    CHECK(t.ci95_hi == doctest::Approx(532).epsilon(0.01));
    CHECK(summarize({7}).cv == 0);
}

TEST_CASE("least squares recovers a known line, weighted or not") {
    std::vector<double> x = {1, 2, 3, 4, 5}, y;
    for (double xi : x) y.push_back(0.5 + 2.0 * xi);
    line_fit f = fit_line(x, y);
    CHECK(f.intercept == doctest::Approx(0.5));
    CHECK(f.slope == doctest::Approx(2.0));
    CHECK(f.r2 == doctest::Approx(1.0));
    CHECK(f.se_slope == doctest::Approx(0.0));
    // Noisy symmetric residuals: +1, -1, 0, -1, +1 around y = 1 + x leave the slope at 1 and the intercept at 1.
    std::vector<double> yn = {3, 2, 4, 4, 7};
    line_fit g = fit_line(x, yn);
    CHECK(g.slope == doctest::Approx(1.0));
    CHECK(g.intercept == doctest::Approx(1.0));
    CHECK(g.r2 == doctest::Approx(1.0 - 4.0 / 14.0));
    CHECK(g.se_slope == doctest::Approx(std::sqrt((4.0 / 3.0) / 10.0)));
    // A zero weight removes an outlier.
    std::vector<double> yo = y;
    yo[2] = 100;
    line_fit h = fit_line(x, yo, {1, 1, 0, 1, 1});
    CHECK(h.slope == doctest::Approx(2.0));
    CHECK_THROWS_AS(fit_line({1}, {1}), std::invalid_argument);
    CHECK_THROWS_AS(fit_line({2, 2}, {1, 3}), std::invalid_argument);
}

TEST_CASE("latency-bandwidth fit recovers a known link") {
    std::vector<double> b, t;
    for (double s = 128; s <= 16 * 1024 * 1024; s *= 4) {
        b.push_back(s);
        t.push_back(1e-7 + s / 1e10);
    }
    link_fit f = fit_latency_bandwidth(b, t);
    CHECK(f.latency_s == doctest::Approx(1e-7).epsilon(1e-6));
    CHECK(f.bandwidth_Bps == doctest::Approx(1e10).epsilon(1e-6));
    // A negative fitted intercept is clamped to 0 and the bandwidth refitted through the origin.
    link_fit g = fit_latency_bandwidth({1000, 2000, 4000}, {0.5e-6, 1.5e-6, 3.5e-6});
    CHECK(g.latency_s == 0);
    CHECK(g.bandwidth_Bps > 0);
    CHECK_THROWS_AS(fit_latency_bandwidth({1, 2}, {1e-6, 0}), std::invalid_argument);
}

namespace {
topology make_topology(int cores, int smt) {
    topology t;
    t.source = "test";
    t.packages = 1;
    for (int c = 0; c < cores; ++c) {
        std::vector<int> pus;
        for (int s = 0; s < smt; ++s) pus.push_back(c + s * cores);
        t.cores.push_back(pus);
    }
    return t;
}
}  // namespace

TEST_CASE("default roles: 2 cores, a 64-core SMT-2 node, one core") {
    roles two = default_roles(make_topology(2, 1));
    CHECK(two.hpu == std::vector<int>{0});
    CHECK(two.apu == std::vector<int>{1});
    topology big = make_topology(64, 2);
    CHECK(big.pus() == 128);
    CHECK(big.smt() == 2);
    roles r = default_roles(big);
    CHECK(r.hpu.size() == 16);  // 8 host cores x 2 contexts
    CHECK(r.apu.size() == 56);
    CHECK(r.apu.front() == 8);
    roles one = default_roles(make_topology(1, 2));
    CHECK(one.hpu.size() == 2);
    CHECK(one.apu.size() == 1);
}

TEST_CASE("CPU lists and role overrides") {
    topology t = make_topology(8, 1);
    CHECK(parse_cpu_list("0-2,5", t) == std::vector<int>{0, 1, 2, 5});
    CHECK_THROWS_AS(parse_cpu_list("0,", t), std::invalid_argument);  // an empty item is a typo
    CHECK_THROWS_AS(parse_cpu_list(",1", t), std::invalid_argument);
    CHECK_THROWS_AS(parse_cpu_list("0,,1", t), std::invalid_argument);
    CHECK(parse_cpu_list("3,3", t) == std::vector<int>{3});
    CHECK_THROWS_AS(parse_cpu_list("", t), std::invalid_argument);
    CHECK_THROWS_AS(parse_cpu_list("a", t), std::invalid_argument);
    CHECK_THROWS_AS(parse_cpu_list("3-1", t), std::invalid_argument);
    CHECK_THROWS_AS(parse_cpu_list("9", t), std::invalid_argument);
    roles r = resolve_roles(t, "0-1", "");
    CHECK(r.hpu == std::vector<int>{0, 1});
    CHECK(r.apu == std::vector<int>{2, 3, 4, 5, 6, 7});
    CHECK(resolve_roles(t, "", "7").apu == std::vector<int>{7});
    CHECK_THROWS_AS(resolve_roles(t, "0-1", "1-3"), std::invalid_argument);
    CHECK_THROWS_AS(resolve_roles(t, "0-7", ""), std::invalid_argument);
}

namespace {
measurement fake(const std::string& name, double v, int m = 0) {
    measurement x;
    x.name = name;
    x.harness = "test";
    x.value = v;
    x.obs = summarize({v, v * 1.01, v * 0.99});
    x.reps = x.obs;
    x.repetitions = 3;
    x.observations = 3;
    if (m) x.extra = {{"m", m}};
    return x;
}
/// Validates a platform object the way `mmgp predict` reads it.
// The platform the profile tests build on: `hpu` host contexts and `apus` APUs on one node, with calibrated
// O_offload and T_csw; each test adds the keys it checks.
nlohmann::json test_platform(int hpu, int apus) {
    return {{"schema", "mmgp/1"},
            {"kind", "platform"},
            {"name", "test"},
            {"hpu_contexts", {{"value", hpu}, {"source", "test"}}},
            {"apus", {{"value", apus}, {"source", "test"}}},
            {"nodes", {{"value", 1}, {"source", "test"}}},
            {"O_offload", to_param(fake("offload/spin", 2e-7))},
            {"T_csw", to_param(fake("csw/yield", 7e-7))}};
}

void validate_platform(const nlohmann::json& plat) {
    nlohmann::json sc = {{"schema", "mmgp/1"}, {"platform", plat}, {"application", "pbpi"}};
    mmgp::scenario s = mmgp::parse_scenario(sc.dump(), "<test>");
    CHECK(s.plat.hpu_contexts == plat["hpu_contexts"]["value"].get<int>());
}
}  // namespace

TEST_CASE("alpha and dma pieces build a profile the engine reads") {
    alpha_result a;
    a.H = 2;
    a.sizes = {100, 200};
    a.t1 = {0.001, 0.008};
    a.per_m = {fake("alpha/m=2", 1.1, 2), fake("alpha/m=4", 1.2, 4), fake("alpha/m=6", 1.3, 6)};
    std::vector<double> x = {1, 2, 3}, y = {1.1, 1.2, 1.3};
    a.fit = fit_line(x, y);
    a.linear = true;
    nlohmann::json aj = alpha_json(a);
    CHECK(aj["linear"]["slope"]["value"].get<double>() == doctest::Approx(0.1));
    CHECK(aj["linear"]["intercept"]["value"].get<double>() == doctest::Approx(1.0));
    CHECK(aj["measurements"]["table"]["4"].get<double>() == doctest::Approx(1.2));

    dma_result d;
    for (double b : {128.0, 4096.0, 1048576.0}) {
        measurement m = fake("dma", 1e-7 + b / 1e10);
        m.extra = {{"bytes", b}, {"bandwidth_Bps", b / m.value}};
        d.per_size.push_back(m);
    }
    d.fit = {1e-7, 1e10, 1};
    // The written value is the fit's; a single transfer's figure is named as such in the note, not
    // given as the value's "median" (the largest transfer's bytes / time is not the fitted bandwidth).
    const nlohmann::json dj = dma_json(d);
    CHECK(dj["bandwidth_Bps"]["value"].get<double>() == doctest::Approx(1e10));
    CHECK_FALSE(dj["bandwidth_Bps"].contains("median"));
    CHECK(dj["bandwidth_Bps"]["note"].get<std::string>().find(fmt::format("{:.3g} B/s", 1048576.0 / (1e-7 + 1048576.0 / 1e10))) !=
          std::string::npos);
    CHECK(dj["latency_s"]["note"].get<std::string>().find("smallest transfer (128 bytes)") != std::string::npos);
    nlohmann::json plat = test_platform(2, 6);
    plat["alpha"] = aj;
    plat["dma"] = dma_json(d);
    plat["measurements"] = {{"x", to_json(fake("gap", 4e-8))}};
    validate_platform(plat);
    mmgp::scenario s = mmgp::parse_scenario(
        nlohmann::json({{"schema", "mmgp/1"}, {"platform", plat}, {"application", "pbpi"}}).dump(), "<test>");
    CHECK(s.plat.O_offload == doctest::Approx(2e-7));
    CHECK(s.plat.T_csw == doctest::Approx(7e-7));
    // A constant alpha (negative slope) is accepted too.
    a.linear = false;
    a.constant = 1.05;
    plat["alpha"] = alpha_json(a);
    validate_platform(plat);
}

TEST_CASE("MPI benchmark reports become network tables the engine reads") {
    nlohmann::json report = nlohmann::json::parse(R"({"nodes": 2, "ppn": 1, "processes": 2, "repetitions": 5,
        "tables": {"allreduce": [[8, 1.3e-05, 1e-07, 0.01], [512, 1.4e-05, 1e-07, 0.01], [32768, 9e-04, 1e-06, 0.02]],
                   "reduce":    [[8, 9.0e-06, 1e-07, 0.01], [512, 1.0e-05, 1e-07, 0.01]],
                   "bcast":     [[8, 8.0e-06, 1e-07, 0.01], [512, 9.5e-06, 1e-07, 0.01]],
                   "sendrecv":  [[8, 5.7e-06, 1e-07, 0.01], [512, 3.2e-05, 1e-07, 0.01], [32768, 5.5e-04, 1e-06, 0.02]]}})");
    nlohmann::json tables = tables_from_bench(report, 2, 1);
    REQUIRE(tables.size() == 4);
    CHECK(tables[0]["primitive"] == "allreduce");
    CHECK(tables[1]["primitive"] == "reduce");
    CHECK(tables[2]["primitive"] == "bcast");
    CHECK(tables[2]["points"][1][1].get<double>() == doctest::Approx(9.5e-6));
    CHECK(tables[3]["points"][2][0].get<double>() == 32768);
    CHECK(tables[3]["points"][2][1].get<double>() == doctest::Approx(5.5e-4));
    CHECK(tables[0]["statistics"]["repetitions"] == 5);
    nlohmann::json plat = {{"schema", "mmgp/1"}, {"kind", "platform"},
                           {"hpu_contexts", {{"value", 1}}}, {"apus", {{"value", 1}}}, {"nodes", 2},
                           {"O_offload", 3e-7}, {"T_csw", 7e-7}, {"alpha", 1.0},
                           {"network", {{"tables", tables}, {"measurements", {{"harness", "test"}}}}}};
    mmgp::scenario s = mmgp::parse_scenario(
        nlohmann::json({{"schema", "mmgp/1"}, {"platform", plat}, {"application", "pbpi"}}).dump(), "<test>");
    CHECK(s.plat.comm_tables.size() == 4);
    CHECK(tables_from_bench(nlohmann::json::object(), 1, 2).empty());
    // calibrate --mpi writes nodes = the nodes the tables were measured on: a communicating program is then
    // predicted across them without editing the platform, and beyond them with --set platform.nodes=N.
    nlohmann::json intra = tables_from_bench(report, 1, 2);
    nlohmann::json both = tables;
    for (const auto& t : intra) both.push_back(t);
    CHECK(nodes_of_network({{"tables", both}}) == 2);
    CHECK(nodes_of_network({{"tables", intra}}) == 1);
    CHECK(nodes_of_network(nlohmann::json()) == 1);
    plat["network"]["tables"] = both;
    plat["nodes"] = nodes_of_network(plat["network"]);
    nlohmann::json app = {{"name", "a"}, {"N", 1000}, {"T_hpu", 0.1}, {"T_apu", 4}, {"C_apu", 0.01}, {"g", 1e-6},
                          {"communication", {{{"primitive", "allreduce"}, {"bytes", 8}}}}};  // a measured size
    mmgp::scenario across = mmgp::parse_scenario(
        nlohmann::json({{"schema", "mmgp/1"}, {"platform", plat}, {"application", app}}).dump(), "<test>");
    CHECK(across.space.nodes.hi == 2);
    const mmgp::evaluator ev(across, mmgp::model_kind::mmgp);
    CHECK(ev({1, 1, 2, mmgp::policy::edtlp}).parts.communication == doctest::Approx(1000 * 1.3e-05));
}

namespace {
/// A calibrated profile as calibrate_platform() writes it, reduced to what --time-shared reads.
nlohmann::json fake_calibrated(bool slice_measurable) {
    nlohmann::json slice = to_json(fake("spin/sched_slice", 4e-3));
    slice["measurable"] = slice_measurable;
    slice["pinned"] = true;
    slice["details"] = {{"cpu", 0}, {"threads", 2}, {"gap_threshold_s", 20e-6}, {"duration_s", 0.5},
                        {"tenure_median_s", 4e-3}};
    if (!slice_measurable) {
        slice["value"] = nullptr;
        slice["median"] = nullptr;
        slice["reason"] = "only 1 complete slice(s)";
    }
    nlohmann::json pause = to_json(fake("spin/pause", 1.5e-8));
    pause["details"] = {{"cpu", 0}, {"pause_instruction", "pause"}, {"iterations_per_repetition", 1000000},
                        {"iterations_per_observation", 10000}};
    nlohmann::json wake = to_json(fake("spin/wake_busy", 2e-5));
    wake["details"] = {{"cpus", 2}, {"pairs", 4}, {"rounds", 1000}, {"work_s", 20e-6}, {"spin_limit", 4000}};
    nlohmann::json plat = test_platform(1, 1);
    plat["description"] = "Measured.";
    plat["alpha"] = 1.0;
    plat["machine"] = {{"cores", 2}, {"topology_source", "hwloc"}};
    plat["calibration"] = {{"hpu_cpus", {0}}, {"apu_cpus", {1}}};
    plat["notes"] = nlohmann::json::array();
    plat["measurements"] = {{"offload_spin", to_json(fake("offload/spin", 2e-7))},
                            {"offload_futex", to_json(fake("offload/futex", 3.2e-5))},
                            {"csw_yield", to_json(fake("csw/yield", 7e-7))},
                            {"csw_futex", to_json(fake("csw/futex", 1.1e-6))},
                            {"spin_pause", pause},
                            {"sched_slice", slice},
                            {"wake_busy", wake}};
    return plat;
}

/// The keys --time-shared writes, and their derivations.
void check_time_shared(const nlohmann::json& p, int cores, int apus) {
    REQUIRE(p.contains("_derivation"));
    const auto& d = p["_derivation"];
    for (const char* k :
         {"cores", "hpu_contexts", "apus", "T_wake", "T_csw", "T_wake_busy", "spin_pause", "sched_slice"}) {
        CAPTURE(k);
        REQUIRE(d.contains(k));
        CHECK(d[k].is_string());
        CHECK_FALSE(d[k].get<std::string>().empty());
    }
    CHECK(p["cores"]["value"].get<int>() == cores);
    CHECK(p["hpu_contexts"]["value"].get<int>() == cores);
    CHECK(p["apus"]["value"].get<int>() == apus);
    const auto& m = p["measurements"];
    double spin = m["offload_spin"]["median"].get<double>(), futex = m["offload_futex"]["median"].get<double>();
    CHECK(p["T_wake"]["value"].get<double>() == doctest::Approx(std::max(0.0, (futex - spin) / 2)));
    CHECK(p["T_wake"]["unit"] == "s");
    // The off-load runtime blocks in futex waits: T_csw is the futex hand-off, not the sched_yield() one.
    CHECK(p["T_csw"]["value"].get<double>() == doctest::Approx(m["csw_futex"]["median"].get<double>()));
    CHECK(p["T_csw"]["harness"] == "csw/futex");
    CHECK(p["spin_pause"]["value"].get<double>() == doctest::Approx(m["spin_pause"]["median"].get<double>()));
    CHECK(p["spin_pause"]["unit"] == "s");
    CHECK(p["spin_pause"]["harness"] == "spin/pause");
    CHECK(p["T_wake_busy"]["value"].get<double>() == doctest::Approx(m["wake_busy"]["median"].get<double>()));
    CHECK(p["T_wake_busy"]["unit"] == "s");
    CHECK(p["T_wake_busy"]["harness"] == "spin/wake_busy");
    if (m["sched_slice"]["measurable"].get<bool>()) {
        CHECK(p["sched_slice"]["value"].get<double>() == doctest::Approx(m["sched_slice"]["median"].get<double>()));
        CHECK(p["sched_slice"]["harness"] == "spin/sched_slice");
    } else {
        CHECK_FALSE(p.contains("sched_slice"));
        CHECK(d["sched_slice"].get<std::string>().rfind("not written: ", 0) == 0);
    }
    CHECK(p["calibration"]["time_shared"] == true);
    CHECK(p["calibration"]["max_threads"].get<int>() == apus);
}

}  // namespace

TEST_CASE("--time-shared rewrites the platform from the measurements and records each derivation") {
    nlohmann::json p = fake_calibrated(true);
    describe_time_shared(p, 0);
    check_time_shared(p, 2, 8);
    CHECK(p["T_wake"]["value"].get<double>() == doctest::Approx((3.2e-5 - 2e-7) / 2));
    CHECK(p["sched_slice"]["value"].get<double>() == doctest::Approx(4e-3));
    CHECK(p["T_wake_busy"]["value"].get<double>() == doctest::Approx(2e-5));
    {  // a profile calibrated before the hand-back harness: no T_wake_busy, and the derivation says why
        nlohmann::json old = fake_calibrated(true);
        old["measurements"].erase("wake_busy");
        describe_time_shared(old, 0);
        CHECK_FALSE(old.contains("T_wake_busy"));
        CHECK(old["_derivation"]["T_wake_busy"].get<std::string>().rfind("not written: ", 0) == 0);
        // Nor is a T_wake_busy the profile holds without its record kept (once kept, beside "not written").
        nlohmann::json stale = fake_calibrated(true);
        stale["measurements"].erase("wake_busy");
        stale["T_wake_busy"] = {{"value", 2.1e-5}, {"source", "an older calibration"}};
        describe_time_shared(stale, 0);
        CHECK_FALSE(stale.contains("T_wake_busy"));
    }
    CHECK(p["_derivation"]["T_wake"].get<std::string>().find("offload_futex") != std::string::npos);
    // Unchanged: the calibrated parameters the option does not describe.
    CHECK(p["O_offload"]["value"].get<double>() == doctest::Approx(2e-7));
    CHECK(p["T_csw"]["value"].get<double>() == doctest::Approx(1.1e-6));
    {  // applied twice (mmgp calibrate --time-shared --from a time-shared profile): the same profile
        nlohmann::json twice = p;
        describe_time_shared(twice, 0);
        CHECK(twice == p);
        CHECK(twice["description"].get<std::string>().find("Time-shared") ==
              twice["description"].get<std::string>().rfind("Time-shared"));
    }

    nlohmann::json q = fake_calibrated(false);
    describe_time_shared(q, 16);
    check_time_shared(q, 2, 16);
    CHECK(q["_derivation"]["apus"].get<std::string>().find("--max-threads") != std::string::npos);
    CHECK(q["notes"].size() == 1);
    {  // applied twice with sched_slice unmeasurable: the same profile, its note once (once one more each time)
        nlohmann::json twice = q;
        describe_time_shared(twice, 16);
        CHECK(twice == q);
    }

    nlohmann::json r = fake_calibrated(true);
    r["measurements"].erase("spin_pause");
    CHECK_THROWS_AS(describe_time_shared(r, 0), std::invalid_argument);
    // What is missing is named by its JSON pointer, for the one-line error of mmgp calibrate --from.
    for (const char* key : {"csw_futex", "offload_futex", "sched_slice"}) {
        CAPTURE(key);
        nlohmann::json incomplete = fake_calibrated(true);
        incomplete["measurements"].erase(key);
        try {
            describe_time_shared(incomplete, 0);
            FAIL("describe_time_shared accepted a profile without measurements." << key);
        } catch (const incomplete_profile& e) {
            CHECK(e.pointer() == std::string("/measurements/") + key);
        }
    }
    nlohmann::json no_cores = fake_calibrated(true);
    no_cores["machine"]["cores"] = 0;
    CHECK_THROWS_AS(describe_time_shared(no_cores, 0), incomplete_profile);
    // The reader accepts "_"-prefixed keys (mmgp/1 provenance), so _derivation itself never makes a profile invalid.
    nlohmann::json plat = fake_calibrated(true);
    plat["_derivation"] = {{"x", "y"}};
    validate_platform(plat);
}

namespace {

// A fresh directory for one test, removed when the test ends (also when a REQUIRE ends it early).
struct scratch_dir {
    const fs::path dir = fs::temp_directory_path() / ("mmgp-calib-test-" + std::to_string(getpid()));
    scratch_dir() { fs::create_directories(dir); }
    ~scratch_dir() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    scratch_dir(const scratch_dir&) = delete;
    scratch_dir& operator=(const scratch_dir&) = delete;
};

// The environment variable `name`, set by meson test (the tests that read one are skipped without it).
std::string from_env(const char* name) {
    const char* v = std::getenv(name);
    REQUIRE(v != nullptr);
    return v;
}

// An end-to-end test of the mmgp binary (MMGP_BIN) in a scratch directory: `b` runs it, `prof` is the platform
// profile it writes there.
struct calibrate_run : scratch_dir {
    const std::string b = from_env("MMGP_BIN");
    const std::string prof = (dir / "host.json").string();
};

}  // namespace

namespace {

// A GPU harness record made by hand (the shape gpu_harness.cu writes): 132 SMs, a 9 µs launch + synchronise,
// copies of 8 bytes to 256 MiB, a block sweep, and both sharing measurements.
nlohmann::json gpu_record() {
    return nlohmann::json::parse(R"({
      "harness": "mmgp-gpu-harness", "quick": true,
      "device": {"index": 0, "name": "Test GPU", "sms": 132},
      "offload": {"launch_sync_s": {"median": 9.1e-6, "min": 8.1e-6, "repetitions": 300},
                  "enqueue_s": {"median": 3.8e-6, "min": 3.0e-6}, "by_blocks": [[1, 9.1e-6], [132, 9.6e-6]]},
      "mailbox": {"answered": true, "round_trip_s": {"median": 1.8e-6, "min": 1.5e-6, "repetitions": 280}},
      "copies": {"host_to_device": [[8, 3.8e-6], [268435456, 4.88e-3]],
                 "device_to_host": [[8, 4.0e-6], [268435456, 4.80e-3]]},
      "blocks": {"threads_per_block": 256, "resident_per_sm": 8,
                 "by_blocks": [[1, 1.0e-3], [132, 1.0e-3], [264, 1.15e-3], [396, 1.8e-3], [528, 2.25e-3]]},
      "sharing": {"time_sliced": {"measured": true, "kernels": 200, "kernel_s": 5e-5, "alone_wall_s": 0.012,
                                  "pair_wall_s": 0.028, "pair_over_alone": 2.33, "switch_s": 2e-5},
                  "mps": {"measured": true, "kernels": 200, "kernel_s": 5e-5, "alone_wall_s": 0.012,
                          "pair_wall_s": 0.013, "pair_over_alone": 1.08, "switch_s": -1.75e-5}}})");
}

nlohmann::json host_profile() {
    return {{"schema", "mmgp/1"}, {"kind", "platform"}, {"name", "host"}, {"hpu_contexts", 16}, {"apus", 8},
            {"O_offload", {{"value", 2e-7}}}, {"T_csw", {{"value", 3e-6}}}, {"alpha", 1.1},
            {"dma", {{"latency_s", 1e-7}, {"bandwidth_Bps", 1e10}}}};
}

}  // namespace

TEST_CASE("the GPU harness's record as platform keys: SMs, the launch, the copies, both sharing modes") {
    const nlohmann::json g = gpu_record();
    nlohmann::json p = host_profile();
    describe_gpu(p, g);
    const mmgp::platform pl = mmgp::parse_platform(p.dump(), "gpu.json");
    CHECK(pl.apus == g["device"]["sms"].get<int>());
    CHECK(pl.O_offload == g["offload"]["launch_sync_s"]["median"].get<double>());
    // The slower direction of each: the larger smallest-copy time, the smaller bandwidth.
    CHECK(pl.dma.latency_s == std::max(g["copies"]["host_to_device"][0][1].get<double>(), g["copies"]["device_to_host"][0][1].get<double>()));
    const double bw_in = 268435456 / g["copies"]["host_to_device"][1][1].get<double>();
    const double bw_out = 268435456 / g["copies"]["device_to_host"][1][1].get<double>();
    CHECK(pl.dma.s_per_byte == doctest::Approx(1 / std::min(bw_in, bw_out)));
    // Without the blocking round trip (an older record) T_csw stays the host's; with it, T_csw is the blocked host
    // thread's wake-up per off-load: the blocking round trip less the spinning one.
    CHECK(pl.T_csw == 3e-6);
    nlohmann::json blocking = g;
    blocking["offload"]["blocking_sync_s"] = {{"median", 3.0e-5}, {"min", 2.5e-5}, {"repetitions", 300}};
    nlohmann::json b = host_profile();
    describe_gpu(b, blocking);
    CHECK(mmgp::parse_platform(b.dump(), "gpu.json").T_csw == doctest::Approx(3.0e-5 - 9.1e-6));
    CHECK(b["calibration"]["T_csw_host"]["value"] == 3e-6);
    describe_gpu(b, blocking);  // described again (calibrate --from): the host's value is kept, not the derived one
    CHECK(b["calibration"]["T_csw_host"]["value"] == 3e-6);
    CHECK(mmgp::parse_platform(b.dump(), "gpu.json").T_csw == doctest::Approx(3.0e-5 - 9.1e-6));
    CHECK_FALSE(b["calibration"].contains("T_csw_by_wait"));  // a record without the waits: no curve
    // With the waits: the wake-up against the wait, blocking less spinning (never below 0), beside T_csw, which
    // stays the empty kernel's.
    nlohmann::json waits = blocking;
    waits["offload"]["by_wait"] = {{{"wait_s", 5e-5}, {"spinning_s", 6.5e-5}, {"blocking_s", 1.0e-4}, {"repetitions", 2}},
                                   {{"wait_s", 2e-4}, {"spinning_s", 2.2e-4}, {"blocking_s", 2.1e-4}, {"repetitions", 2}}};
    nlohmann::json bw = host_profile();
    describe_gpu(bw, waits);
    const nlohmann::json& curve = bw["calibration"]["T_csw_by_wait"]["value"];
    REQUIRE(curve.size() == 2);
    CHECK(curve[0][0].get<double>() == 5e-5);
    CHECK(curve[0][1].get<double>() == doctest::Approx(1.0e-4 - 6.5e-5));
    CHECK(curve[1][1].get<double>() == 0);
    CHECK(mmgp::parse_platform(bw.dump(), "gpu.json").T_csw == doctest::Approx(3.0e-5 - 9.1e-6));
    waits["offload"]["by_wait"] = "fast";
    nlohmann::json bad = host_profile();
    CHECK_THROWS_WITH_AS(describe_gpu(bad, waits), doctest::Contains("/offload/by_wait"), incomplete_profile);
    CHECK(pl.sharing == std::vector<mmgp::accelerator_sharing>{mmgp::accelerator_sharing::mps, mmgp::accelerator_sharing::time_sliced});
    CHECK(pl.T_slice_switch == g["sharing"]["time_sliced"]["switch_s"].get<double>());
    CHECK(pl.T_csw == 3e-6);  // the host's keys are kept
    CHECK(pl.hpu_contexts == 16);
    // The slots are the occupancy; the curve is each whole number of blocks per SM against one per SM (132 blocks).
    CHECK(pl.apu_slots == 8);
    CHECK(pl.capacity() == 8 * 132);
    CHECK(pl.slot_time.k == std::vector<double>{1, 2, 3, 4});
    CHECK(pl.slot_time.factor[1] == doctest::Approx(1.15));
    CHECK(pl.slot_time.factor[3] == doctest::Approx(2.25));
    // Between points the most loaded SM's count (1.5 per SM: 2), beyond the last one waves at its throughput.
    CHECK(pl.slot_time.at(1.5) == doctest::Approx(1.15));
    CHECK(pl.slot_time.at(8) == doctest::Approx(2.25 * 2));
    CHECK(pl.slot_time.at(0.5) == 1);
    CHECK(p["measurements"]["gpu"] == g);
    // No MPS measured, or MPS that did not overlap: time slicing alone.
    nlohmann::json no_mps = g;
    no_mps["sharing"]["mps"] = nullptr;
    nlohmann::json q = host_profile();
    describe_gpu(q, no_mps);
    CHECK(q["sharing"] == nlohmann::json::array({"time_sliced"}));
    no_mps["sharing"]["mps"] = g["sharing"]["mps"];
    no_mps["sharing"]["mps"]["pair_over_alone"] = 1.9;
    nlohmann::json r = host_profile();
    describe_gpu(r, no_mps);
    CHECK(r["sharing"] == nlohmann::json::array({"time_sliced"}));
    // A daemon already running: the "time-sliced" pair overlapped, so only MPS, and no switch cost.
    nlohmann::json running = g;
    running["sharing"]["time_sliced"]["pair_over_alone"] = 1.05;
    running["sharing"]["mps"] = nullptr;
    nlohmann::json t = host_profile();
    describe_gpu(t, running);
    CHECK(t["sharing"] == nlohmann::json::array({"mps"}));
    CHECK_FALSE(t.contains("T_slice_switch"));
    CHECK_NOTHROW(mmgp::parse_platform(t.dump(), "gpu.json"));
    // A record without the occupancy: the resident threads by compute capability; without either, one slot.
    nlohmann::json older = g;
    older["blocks"].erase("resident_per_sm");
    older["device"]["compute_capability"] = "8.6";
    nlohmann::json o1 = host_profile();
    describe_gpu(o1, older);
    CHECK(o1["apu_slots"]["value"] == 1536 / 256);
    older["device"]["compute_capability"] = "1.0";
    nlohmann::json o2 = host_profile();
    describe_gpu(o2, older);
    CHECK_FALSE(o2.contains("apu_slots"));
    CHECK_FALSE(o2.contains("slot_time"));
    CHECK(mmgp::parse_platform(o2.dump(), "gpu.json").capacity() == 132);
}

TEST_CASE("the GPU harness's samples as its record: medians, minima, the sharing ratios, then platform keys") {
    namespace rec = mmgp::calib::gpu;
    rec::harness_samples s;
    s.device = {0, "Test \"GPU\"", 4, 9, 0, std::size_t{1} << 30, 32, 2048, 13000, 13000, 0};
    s.quick = true;
    // Medians of even counts are the middle pair's mean, as the calibration takes them.
    s.offload = {{9e-6, 7e-6, 8e-6, 12e-6}, {3e-6, 4e-6, 5e-6}, {{1, {10e-6}}, {4, {10e-6, 12e-6}}}};
    s.mailbox = {true, {2e-6, 1e-6, 3e-6}};
    s.copies = {{{8, {4e-6, 2e-6, 3e-6}}, {1 << 20, {2e-4}}}, {{8, {5e-6}}, {1 << 20, {4e-4, 2e-4}}}};
    s.blocks = {256, 1000, 8, {{1, {1e-3}}, {4, {1e-3}}, {8, {1.2e-3, 1.2e-3, 1.4e-3}}, {16, {2e-3}}}};
    s.sharing.time_sliced = rec::sharing_samples{true, 100, 5e-5, 0.01, 0.03};
    s.sharing.mps_note = "not asked";
    const nlohmann::json g = nlohmann::json::parse(rec::harness_record(s));
    CHECK(g["harness"] == "mmgp-gpu-harness");
    CHECK(g["device"]["name"] == "Test \"GPU\"");
    CHECK(g["device"]["compute_capability"] == "9.0");
    CHECK(g["device"]["memory_bytes"] == 1073741824);
    CHECK(g["offload"]["launch_sync_s"]["median"].get<double>() == doctest::Approx(8.5e-6));
    CHECK(g["offload"]["launch_sync_s"]["min"].get<double>() == 7e-6);
    CHECK(g["offload"]["launch_sync_s"]["repetitions"] == 4);
    CHECK(g["offload"]["enqueue_s"]["median"].get<double>() == 4e-6);
    CHECK_FALSE(g["offload"].contains("blocking_sync_s"));  // not measured: no key
    rec::harness_samples sb = s;
    sb.offload.blocking_sync_s = {3e-5, 2e-5, 4e-5};
    const nlohmann::json gb = nlohmann::json::parse(rec::harness_record(sb));
    CHECK(gb["offload"]["blocking_sync_s"]["median"].get<double>() == 3e-5);
    CHECK(gb["offload"]["blocking_sync_s"]["min"].get<double>() == 2e-5);
    CHECK(gb["offload"]["blocking_sync_s"]["repetitions"] == 3);
    CHECK_FALSE(gb["offload"].contains("by_wait"));  // not measured: no key
    rec::harness_samples sw = sb;
    sw.offload.by_wait = {{5e-5, {6e-5, 7e-5, 6.5e-5}, {9e-5, 1.1e-4}}, {2e-4, {2.1e-4}, {}}};  // the second: half measured
    const nlohmann::json gw = nlohmann::json::parse(rec::harness_record(sw));
    REQUIRE(gw["offload"]["by_wait"].size() == 1);
    CHECK(gw["offload"]["by_wait"][0]["wait_s"].get<double>() == 5e-5);
    CHECK(gw["offload"]["by_wait"][0]["spinning_s"].get<double>() == 6.5e-5);
    CHECK(gw["offload"]["by_wait"][0]["blocking_s"].get<double>() == doctest::Approx(1e-4));
    CHECK(gw["offload"]["by_wait"][0]["repetitions"] == 2);
    CHECK(g["offload"]["by_blocks"][1][1].get<double>() == doctest::Approx(11e-6));
    CHECK(g["mailbox"]["round_trip_s"]["median"].get<double>() == 2e-6);
    CHECK(g["mailbox"]["round_trip_s"]["repetitions"] == 3);
    CHECK(g["copies"]["host_to_device"][0] == nlohmann::json::array({8, 3e-6}));
    CHECK(g["copies"]["device_to_host"][1][1].get<double>() == doctest::Approx(3e-4));
    CHECK(g["blocks"]["by_blocks"][2][1].get<double>() == doctest::Approx(1.2e-3));
    // Serialised: 0.03 s over 200 kernels is 150 µs each, the kernel 50 µs: a 100 µs switch; the pair took 3 times
    // as long as one alone.
    CHECK(g["sharing"]["time_sliced"]["pair_over_alone"].get<double>() == doctest::Approx(3));
    CHECK(g["sharing"]["time_sliced"]["switch_s"].get<double>() == doctest::Approx(1e-4));
    CHECK(g["sharing"]["mps"].is_null());
    CHECK(g["sharing"]["mps_note"] == "not asked");
    CHECK(g["sharing"]["time_sliced"]["blocks"] == 1);
    CHECK_FALSE(g["sharing"].contains("time_sliced_grids"));  // not measured: no key
    // Grids over the SMs: 0.04 s over 200 kernels of 50 µs is a 150 µs switch; a failed run says only that.
    rec::harness_samples sg = s;
    sg.sharing.time_sliced_grids = {rec::sharing_samples{true, 100, 5e-5, 0.01, 0.04, 4}, rec::sharing_samples{}};
    const nlohmann::json gg = nlohmann::json::parse(rec::harness_record(sg));
    CHECK(gg["sharing"]["time_sliced_grids"][0]["blocks"] == 4);
    CHECK(gg["sharing"]["time_sliced_grids"][0]["switch_s"].get<double>() == doctest::Approx(1.5e-4));
    CHECK(gg["sharing"]["time_sliced_grids"][1] == nlohmann::json{{"measured", false}});
    nlohmann::json pg = host_profile();
    describe_gpu(pg, gg);
    CHECK(mmgp::parse_platform(pg.dump(), "gpu.json").T_slice_switch == doctest::Approx(1e-4));  // still one block's
    CHECK(pg.dump().find("grids of 4 blocks: 150.0 µs a kernel") != std::string::npos);
    CHECK_FALSE(pg["calibration"].contains("T_slice_switch_by_procs"));  // not measured: no curve
    // More processes at once: 4 processes' 100 kernels of 50 µs in 0.08 s is a 150 µs switch, 8 in 0.2 s a 200 µs
    // one; under MPS 4 at once took 1.1x one alone. A failed entry is left out, the pair's value comes first.
    rec::harness_samples sp = s;
    rec::sharing_samples four{true, 100, 5e-5, 0.01, 0.08, 1, 4}, eight{true, 100, 5e-5, 0.01, 0.2, 1, 8}, failed{};
    failed.procs = 8;
    sp.sharing.time_sliced_procs = {four, eight};
    sp.sharing.mps = rec::sharing_samples{true, 100, 5e-5, 0.01, 0.0102, 1};
    sp.sharing.mps_procs = {rec::sharing_samples{true, 100, 5e-5, 0.01, 0.011, 1, 4}, failed};
    // Time-sliced again with the host threads blocking: 2 processes' 100 kernels in 0.034 s is a 120 µs switch, 4 in
    // 0.072 s a 130 µs one; 8 failed.
    rec::sharing_samples two_b{true, 100, 5e-5, 0.01, 0.034, 1, 2, true}, four_b{true, 100, 5e-5, 0.01, 0.072, 1, 4, true},
        eight_b{};
    eight_b.procs = 8, eight_b.blocking = true;
    sp.sharing.time_sliced_blocking_procs = {two_b, four_b, eight_b};
    nlohmann::json gp = nlohmann::json::parse(rec::harness_record(sp));
    CHECK(gp["sharing"]["time_sliced_blocking_procs"][1]["blocking"] == true);
    CHECK(gp["sharing"]["time_sliced_blocking_procs"][1]["switch_s"].get<double>() == doctest::Approx(1.3e-4));
    CHECK(gp["sharing"]["time_sliced_blocking_procs"][2] == nlohmann::json{{"measured", false}, {"procs", 8}, {"blocking", true}});
    CHECK(gp["sharing"]["time_sliced_procs"][0]["blocking"] == false);
    CHECK(gp["sharing"]["time_sliced_procs"][0]["procs"] == 4);
    CHECK(gp["sharing"]["time_sliced_procs"][0]["switch_s"].get<double>() == doctest::Approx(1.5e-4));
    CHECK(gp["sharing"]["time_sliced_procs"][1]["over_alone"].get<double>() == doctest::Approx(20));
    CHECK(gp["sharing"]["mps_procs"][1] == nlohmann::json{{"measured", false}, {"procs", 8}, {"blocking", false}});
    // Entries a record may carry that the curves leave out: one not measured (whatever its numbers), one of 4
    // processes again, a pair; and one of 16 before the others, which the curve puts last.
    gp["sharing"]["time_sliced_procs"].push_back({{"measured", false}, {"procs", 6}, {"switch_s", 1.0}, {"over_alone", 9}});
    gp["sharing"]["time_sliced_procs"].push_back({{"measured", true}, {"procs", 4}, {"switch_s", 1.0}});
    gp["sharing"]["time_sliced_procs"].push_back({{"measured", true}, {"procs", 2}, {"switch_s", 1.0}});
    gp["sharing"]["mps_procs"].insert(gp["sharing"]["mps_procs"].begin(),
                                      nlohmann::json{{"measured", true}, {"procs", 16}, {"over_alone", 1.5}});
    nlohmann::json pp = host_profile();
    describe_gpu(pp, gp);
    const nlohmann::json by_switch = pp["calibration"]["T_slice_switch_by_procs"]["value"];
    REQUIRE(by_switch.size() == 3);
    CHECK(by_switch[0][0] == 2);
    CHECK(by_switch[0][1].get<double>() == doctest::Approx(1e-4));
    CHECK(by_switch[1][1].get<double>() == doctest::Approx(1.5e-4));
    CHECK(by_switch[2][0] == 8);
    CHECK(by_switch[2][1].get<double>() == doctest::Approx(2e-4));
    const nlohmann::json by_mps = pp["calibration"]["mps_over_alone_by_procs"]["value"];
    REQUIRE(by_mps.size() == 3);  // the pair's 1.02, four's 1.1 and sixteen's 1.5; eight failed
    CHECK(by_mps[0][1].get<double>() == doctest::Approx(1.02));
    CHECK(by_mps[1][0] == 4);
    CHECK(by_mps[1][1].get<double>() == doctest::Approx(1.1));
    CHECK(by_mps[2] == nlohmann::json::array({16, 1.5}));
    const nlohmann::json by_blocking = pp["calibration"]["T_slice_switch_blocking_by_procs"]["value"];
    REQUIRE(by_blocking.size() == 2);  // its own pair's, then four's; eight failed
    CHECK(by_blocking[0][0] == 2);
    CHECK(by_blocking[0][1].get<double>() == doctest::Approx(1.2e-4));
    CHECK(by_blocking[1][0] == 4);
    CHECK(by_blocking[1][1].get<double>() == doctest::Approx(1.3e-4));
    const mmgp::platform ppl = mmgp::parse_platform(pp.dump(), "gpu.json");
    CHECK(ppl.T_slice_switch == doctest::Approx(1e-4));  // the model still takes the pair's switch
    // A mailbox that never answered, a failed sharing run and an empty sample: no number is made up.
    s.mailbox = {};
    s.sharing.time_sliced = rec::sharing_samples{};
    s.offload.enqueue_s.clear();
    const nlohmann::json h = nlohmann::json::parse(rec::harness_record(s));
    CHECK(h["mailbox"] == nlohmann::json{{"answered", false}});
    CHECK(h["sharing"]["time_sliced"] == nlohmann::json{{"measured", false}});
    CHECK(h["offload"]["enqueue_s"]["median"].is_null());
    // The record as platform keys: the SMs, the launch's median, the slower copies, one slot curve per SM multiple.
    nlohmann::json p = host_profile();
    describe_gpu(p, g);
    const mmgp::platform pl = mmgp::parse_platform(p.dump(), "gpu.json");
    CHECK(pl.apus == 4);
    CHECK(pl.O_offload == doctest::Approx(8.5e-6));
    CHECK(pl.dma.latency_s == 5e-6);
    CHECK(pl.sharing == std::vector<mmgp::accelerator_sharing>{mmgp::accelerator_sharing::time_sliced});
    CHECK(pl.T_slice_switch == doctest::Approx(1e-4));
    CHECK(pl.apu_slots == 8);
    CHECK(pl.slot_time.k == std::vector<double>{1, 2, 4});
    CHECK(pl.slot_time.factor[1] == doctest::Approx(1.2));
}

namespace {
// A backend that cannot start: the section says so for it and goes on with the next.
class unstartable_backend final : public mmgp::calib::apu_backend {
public:
    std::string name() const override { return "test/unstartable"; }
    void start(const std::vector<int>&, int) override { throw mmgp::failure("no device here"); }
    void stop() override {}
    int count() const override { return 0; }
    void signal(int, std::uint32_t) override {}
    std::uint32_t wait(int) override { return 0; }
};
// A backend that measures but does not stop cleanly (as a persistent kernel that never ends): its measurements and
// the error, both.
class unstoppable_backend final : public mmgp::calib::apu_backend {
public:
    std::string name() const override { return "test/unstoppable"; }
    void start(const std::vector<int>& cpus, int count) override { inner_->start(cpus, count); }
    void stop() override {
        inner_->stop();
        throw mmgp::failure("1 persistent kernel(s) did not end");
    }
    int count() const override { return inner_->count(); }
    void signal(int apu, std::uint32_t payload) override { inner_->signal(apu, payload); }
    std::uint32_t wait(int apu) override { return inner_->wait(apu); }

private:
    std::unique_ptr<mmgp::calib::apu_backend> inner_ =
        mmgp::calib::make_host_thread_backend(mmgp::calib::wait_mode::spin, 0);
};
}  // namespace

TEST_CASE("the GPU harness's backend section: the CPU harnesses' round trips and copies through the backends given") {
    namespace rec = mmgp::calib::gpu;
    auto spin = mmgp::calib::make_host_thread_backend(mmgp::calib::wait_mode::spin, std::size_t{1} << 20);
    auto futex = mmgp::calib::make_host_thread_backend(mmgp::calib::wait_mode::futex, 0);  // no transfer path
    unstartable_backend broken;
    unstoppable_backend unstoppable;
    const nlohmann::json b =
        nlohmann::json::parse(rec::backend_harnesses({spin.get(), &broken, futex.get(), &unstoppable}, true));
    REQUIRE(b.size() == 4);
    CHECK(b["test/unstoppable"]["offload"]["median"].get<double>() > 0);
    CHECK(b["test/unstoppable"]["error"] == "1 persistent kernel(s) did not end");
    const nlohmann::json& s = b["host-thread/spin"];
    CHECK(s["offload"]["name"] == "offload/host-thread/spin");
    CHECK(s["offload"]["harness"] == "offload");
    CHECK(s["offload"]["details"]["backend"] == "host-thread/spin");
    CHECK(s["offload"]["median"].get<double>() > 0);
    CHECK(s["offload"]["repetitions"] == 5);  // the harness's quick repetitions
    // The copies from 128 B up to the backend's transfer buffer (below the harness's 16 MiB), 4x apart when quick:
    // 128 B .. 512 KiB (7 sizes), then the buffer's 1 MiB.
    const nlohmann::json& sizes = s["dma"]["per_size"];
    REQUIRE(sizes.size() == 8);
    CHECK(sizes.front()["details"]["bytes"] == 128);
    CHECK(sizes.back()["details"]["bytes"] == 1 << 20);
    CHECK(s["dma"]["bandwidth_Bps"].get<double>() > 0);
    CHECK(b["host-thread/futex"]["offload"]["median"].get<double>() > 0);
    CHECK_FALSE(b["host-thread/futex"].contains("dma"));
    CHECK(b["test/unstartable"] == nlohmann::json{{"error", "no device here"}});
    CHECK(spin->count() == 0);  // stopped after its measurement
    // In the harness's record under its own key; null when not measured.
    rec::harness_samples h;
    CHECK(nlohmann::json::parse(rec::harness_record(h))["backend_harnesses"].is_null());
    h.backend_harnesses = b.dump();
    CHECK(nlohmann::json::parse(rec::harness_record(h))["backend_harnesses"] == b);
}

TEST_CASE("calibrate --accelerator cuda --from: every context of the measured machine a host context") {
    nlohmann::json p = host_profile();
    describe_gpu(p, gpu_record());
    p["hpu_contexts"] = 2;
    p["machine"] = {{"num_cpus", 16}};
    p["calibration"] = {{"hpu_cpus", {0, 1}}};
    p["notes"].push_back("the reference kernel (256-thread blocks) runs 1 block(s) per SM before they slow each other");
    redescribe_gpu_host(p);
    redescribe_gpu_host(p);  // twice: the GPU's notes once each, an older mmgp's blocks note gone
    std::set<std::string> seen;
    for (const auto& n : p["notes"]) {
        CHECK(seen.insert(n.get<std::string>()).second);
        CHECK(n.get<std::string>().find("runs 1 block(s) per SM") == std::string::npos);
    }
    CHECK(p["hpu_contexts"]["value"] == 16);
    CHECK(p["apu_slots"]["value"] == 8);
    CHECK(mmgp::parse_platform(p.dump(), "gpu.json").hpu_contexts == 16);
    nlohmann::json q = host_profile();
    q["machine"] = {{"num_cpus", 16}};
    CHECK_THROWS_AS(redescribe_gpu_host(q), incomplete_profile);  // no GPU record: not a GPU platform
}

TEST_CASE("a GPU node's host roles: every context, or the list given, and no CPU an accelerator") {
    topology t;
    t.cores = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};
    const roles all = gpu_host_roles(t, "");
    CHECK(all.hpu.size() == 8);
    CHECK(all.apu.empty());
    CHECK(gpu_host_roles(t, "0-7").hpu.size() == 8);  // --hpu-cpus may name every context
    CHECK(gpu_host_roles(t, "1,3").hpu == std::vector<int>{1, 3});
    CHECK_THROWS_AS(gpu_host_roles(t, "0-9"), std::invalid_argument);
}

TEST_CASE("the GPU harness's record: a missing or impossible member is named") {
    auto failure = [](nlohmann::json g) {
        nlohmann::json p = host_profile();
        try {
            describe_gpu(p, g);
        } catch (const incomplete_profile& e) {
            return e.pointer();
        }
        return std::string("accepted");
    };
    nlohmann::json g = gpu_record();
    g["device"].erase("sms");
    CHECK(failure(g) == "/measurements/gpu/device/sms");
    g = gpu_record();
    g["offload"]["launch_sync_s"]["median"] = -1;
    CHECK(failure(g) == "/measurements/gpu/offload/launch_sync_s/median");
    g = gpu_record();
    g["copies"]["device_to_host"] = nlohmann::json::array();
    CHECK(failure(g) == "/measurements/gpu/copies/device_to_host");
    g = gpu_record();
    g["sharing"] = {{"time_sliced", {{"measured", false}}}, {"mps", nullptr}};
    CHECK(failure(g) == "/measurements/gpu/sharing");
}

TEST_CASE_FIXTURE(scratch_dir, "write_atomically: replaces the file, or leaves the previous one and no temporary behind") {
    std::string f = (dir / "p.json").string();
    mmgp::write_file_atomically(f, "first\n");
    auto read = [&] {
        std::ifstream in(f);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    };
    CHECK(read() == "first\n");
    CHECK_THROWS(mmgp::write_file_atomically(f, "second\n", [](const std::string&) { throw std::runtime_error("no"); }));
    CHECK(read() == "first\n");
    mmgp::write_file_atomically(f, "third\n", [](const std::string& tmp) { CHECK(fs::exists(tmp)); });
    CHECK(read() == "third\n");
    int files = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
    CHECK(files == 1);
    CHECK_THROWS(mmgp::write_file_atomically((dir / "missing" / "p.json").string(), "x"));
}

namespace {
int run(const std::string& cmd) {
    int st = std::system(cmd.c_str());
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
}  // namespace

TEST_CASE_FIXTURE(calibrate_run, "mmgp calibrate --quick --dedicated writes a profile that mmgp predict runs on" *
                                      doctest::skip(std::getenv("MMGP_BIN") == nullptr) *
                                      doctest::description("runs through meson test, which sets MMGP_BIN")) {
    // Bad option values: exit 2, one line on stderr, nothing written.
    CHECK(run(b + " calibrate --quick --cv-threshold -1 -o " + prof + " 2>" + (dir / "err").string()) == 2);
    CHECK(run(b + " calibrate --quick --hpu-cpus 99999 -o " + prof + " 2>/dev/null") == 2);
    CHECK(run(b + " calibrate --quick --hpu-cpus x-y -o " + prof + " 2>/dev/null") == 2);
    CHECK(run(b + " calibrate --quick -o " + (dir / "no" / "such" / "dir.json").string() + " 2>/dev/null") == 2);
    CHECK(run(b + " calibrate --quick -o " + dir.string() + " 2>/dev/null") == 2);
    CHECK_FALSE(fs::exists(prof));
    {
        std::ifstream err(dir / "err");
        std::string l1, l2;
        std::getline(err, l1);
        CHECK_FALSE(l1.empty());
        CHECK_FALSE(std::getline(err, l2));
    }
    REQUIRE(run(b + " calibrate --quick --dedicated -o " + prof) == 0);
    REQUIRE(fs::exists(prof));
    mmgp::platform pl = mmgp::load_platform(prof);
    {
        std::ifstream in(prof);
        nlohmann::json j = nlohmann::json::parse(in);
        // The spin harness's records are under measurements; --dedicated writes no time-shared key.
        CHECK(j["measurements"]["spin_pause"]["name"] == "spin/pause");
        CHECK(j["measurements"]["spin_pause"]["median"].get<double>() > 0);
        CHECK(j["measurements"]["sched_slice"]["name"] == "spin/sched_slice");
        CHECK(j["measurements"]["sched_slice"]["measurable"].is_boolean());
        for (const char* k : {"cores", "T_wake", "spin_pause", "sched_slice", "_derivation"}) {
            CAPTURE(k);
            CHECK_FALSE(j.contains(k));
        }
        CHECK_FALSE(j["calibration"].contains("time_shared"));
    }
    CHECK(pl.hpu_contexts >= 1);
    CHECK(pl.apus >= 1);
    CHECK(pl.O_offload > 0);
    CHECK(pl.O_offload < 1e-3);
    CHECK(pl.T_csw > 0);
    CHECK(pl.T_csw < 1e-3);
    {
        std::ofstream sc(dir / "scenario.json");
        sc << R"({"schema":"mmgp/1","platform":"host.json","application":"pbpi"})";
    }
    CHECK(run(b + " predict " + (dir / "scenario.json").string() + " >/dev/null") == 0);
    CHECK(run(b + " predict --json " + (dir / "scenario.json").string() + " >/dev/null") == 0);
}

TEST_CASE_FIXTURE(scratch_dir, "mmgp-harness-spin --quick: well-formed report, spin_pause and sched_slice in physical ranges" *
                                    doctest::skip(std::getenv("MMGP_HARNESS_DIR") == nullptr) *
                                    doctest::description("runs through meson test, which sets MMGP_HARNESS_DIR")) {
    const std::string exe = (fs::path(from_env("MMGP_HARNESS_DIR")) / "mmgp-harness-spin").string();
    const std::string out = (dir / "spin.json").string();
    CHECK(run(exe + " --quick --mode nonsense 2>/dev/null") == 2);
    // A report that cannot be written is bad input, as for mmgp's own -o (it once exited 1, as a failed measurement).
    CHECK(run(exe + " --quick -o " + (dir / "no" / "such.json").string() + " 2>/dev/null") == 2);
    auto t0 = std::chrono::steady_clock::now();
    REQUIRE(run(exe + " --quick -o " + out) == 0);
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    MESSAGE("mmgp-harness-spin --quick took " << took << " s");
    CHECK(took < 20);  // 1-4 s (the hand-back pairs retry up to 3 s); generous for a loaded test machine
    nlohmann::json doc;
    {
        std::ifstream in(out);
        doc = nlohmann::json::parse(in);
    }
    REQUIRE(doc["context"].is_object());
    CHECK(doc["context"]["cores"].get<int>() >= 1);
    REQUIRE(doc["benchmarks"].is_array());
    REQUIRE(doc["benchmarks"].size() == 3);
    const auto& pause = doc["benchmarks"][0];
    const auto& slice = doc["benchmarks"][1];
    const auto& wake = doc["benchmarks"][2];
    CHECK(wake["name"] == "spin/wake_busy");
    CHECK(wake["harness"] == "spin");
    CHECK(wake["details"]["pairs"].get<int>() == 2 * wake["details"]["cpus"].get<int>());
    CHECK(wake["details"]["spin_limit"].get<long>() == mmgp::calib::offload_spin_limit);
    const double wb = wake["median"].get<double>();
    MESSAGE("wake_busy " << wb * 1e6 << " us");
    CHECK(wb >= 0);      // processor time per hand-back beyond the work
    CHECK(wb <= 20e-3);  // below a few scheduler slices even on a loaded machine
    CHECK(pause["name"] == "spin/pause");
    CHECK(slice["name"] == "spin/sched_slice");
    for (const auto* b : {&pause, &slice}) {
        CHECK((*b)["harness"] == "spin");
        CHECK((*b)["unit"] == "s");
        CHECK((*b)["repetitions"].get<int>() >= 1);
        CHECK((*b)["flagged"].is_boolean());
        CHECK((*b)["details"].is_object());
    }
    for (const char* k : {"median", "mad", "min", "max", "mean", "stddev", "ci95", "cv", "observations"}) {
        CAPTURE(k);
        CHECK(pause.contains(k));
    }
    const double sp = pause["median"].get<double>();
    MESSAGE("spin_pause " << sp * 1e9 << " ns");
    CHECK(sp >= 0.1e-9);
    CHECK(sp <= 1000e-9);
    CHECK(pause["value"].get<double>() == sp);
    CHECK(pause["observations"].get<int>() == 100 * pause["repetitions"].get<int>());
    REQUIRE(slice["measurable"].is_boolean());
    CHECK(slice["pinned"].is_boolean());
    if (slice["measurable"].get<bool>()) {
        const double sl = slice["median"].get<double>();
        MESSAGE("sched_slice " << sl * 1e3 << " ms over " << slice["observations"] << " slices");
        CHECK(sl >= 10e-6);  // other processes on the CPU shorten the turns (seen: 80 us under load)
        CHECK(sl <= 100e-3);
        CHECK(slice["observations"].get<int>() >= 3);
        // Pinned, the value is the median tenure; unpinned, the median run between gaps.
        CHECK(slice["observations"] == (slice["pinned"].get<bool>() && slice["details"]["tenures"].get<int>() >= 3
                                            ? slice["details"]["tenures"]
                                            : slice["details"]["slices"]));
        CHECK(slice["details"]["gap_threshold_s"].get<double>() == doctest::Approx(20e-6));
    } else {
        MESSAGE("sched_slice unmeasurable: " << slice["reason"]);
        CHECK(slice["value"].is_null());
        REQUIRE(slice["reason"].is_string());
        CHECK_FALSE(slice["reason"].get<std::string>().empty());
    }
}

TEST_CASE_FIXTURE(calibrate_run, "mmgp calibrate --quick, time-shared by default: cores, T_wake, spin_pause, sched_slice with derivations" *
                                      doctest::skip(std::getenv("MMGP_BIN") == nullptr) *
                                      doctest::description("runs through meson test, which sets MMGP_BIN")) {
    // Bad --max-threads, or contradictory descriptions: exit 2 before measuring, nothing written.
    CHECK(run(b + " calibrate --quick --dedicated --max-threads 4 -o " + prof + " 2>/dev/null") == 2);
    CHECK(run(b + " calibrate --quick --dedicated --time-shared -o " + prof + " 2>/dev/null") == 2);
    CHECK(run(b + " calibrate --quick --time-shared --max-threads 0 -o " + prof + " 2>/dev/null") == 2);
    CHECK(run(b + " calibrate --quick --time-shared --max-threads x -o " + prof + " 2>/dev/null") == 2);
    CHECK_FALSE(fs::exists(prof));
    const int cores = static_cast<int>(detect_topology().cores.size());
    // No option: on this node (host threads, no accelerator) the threads time-share the cores, so MPI ranks x
    // threads up to 4 x cores are feasible.
    REQUIRE(run(b + " calibrate --quick -o " + prof) == 0);
    nlohmann::json p;
    {
        std::ifstream in(prof);
        p = nlohmann::json::parse(in);
    }
    {
        std::ofstream sc(dir / "scenario.json");
        sc << R"({"schema":"mmgp/1","platform":"host.json","application":"pbpi"})";
    }
    // The engine reads the time-shared platform (cores, T_wake, spin_pause, sched_slice, _derivation).
    mmgp::platform pl = mmgp::load_platform(prof);
    CHECK(pl.cores == cores);
    CHECK(pl.hpu_contexts == cores);
    CHECK(pl.apus == 4 * cores);
    CHECK(pl.spin_pause == doctest::Approx(p["spin_pause"]["value"].get<double>()));
    if (p.contains("sched_slice")) CHECK(pl.sched_slice == doctest::Approx(p["sched_slice"]["value"].get<double>()));
    CHECK(run(b + " predict " + (dir / "scenario.json").string() + " >/dev/null") == 0);
    check_time_shared(p, cores, 4 * cores);
}

TEST_CASE_FIXTURE(calibrate_run, "mmgp calibrate --time-shared --from: the platform of a calibrated profile, without measuring" *
                                      doctest::skip(std::getenv("MMGP_BIN") == nullptr) *
                                      doctest::description("runs through meson test, which sets MMGP_BIN")) {
    const std::string cal = (dir / "cal.json").string(), out = (dir / "ts.json").string(),
                      err = (dir / "err").string();
    auto write = [](const std::string& path, const nlohmann::json& j) { std::ofstream(path) << j.dump(2) << "\n"; };
    auto first_line = [&] {
        std::ifstream in(err);
        std::string l1, l2;
        std::getline(in, l1);
        CHECK_FALSE(std::getline(in, l2));  // one line
        return l1;
    };
    nlohmann::json calibrated = fake_calibrated(true);
    write(cal, calibrated);

    REQUIRE(run(b + " calibrate --time-shared --from " + cal + " --max-threads 12 -o " + out + " 2>" + err) == 0);
    nlohmann::json p;
    {
        std::ifstream in(out);
        p = nlohmann::json::parse(in);
    }
    nlohmann::json expected = calibrated;  // the same rewrite as calibrate --time-shared after measuring
    describe_time_shared(expected, 12);
    CHECK(p == expected);
    check_time_shared(p, 2, 12);
    CHECK(mmgp::load_platform(out).T_csw == doctest::Approx(1.1e-6));
    {  // the summary: a row per calibrated parameter (value, spread, repetitions, flag), then one line
        std::ifstream in(err);
        std::stringstream text;
        text << in.rdbuf();
        const std::string summary = text.str();
        CHECK(summary.find("mmgp calibrate: parameter ") != std::string::npos);
        CHECK(summary.find("mmgp calibrate: T_csw ") != std::string::npos);
        CHECK(summary.find("mmgp calibrate: T_wake ") != std::string::npos);
        CHECK(summary.find("re-described as time-shared cores") != std::string::npos);
    }
    // Once more from its own output, to standard output: the same platform.
    REQUIRE(run(b + " calibrate --time-shared --from " + out + " --max-threads 12 -q > " + (dir / "again.json").string() +
                " 2>" + err) == 0);
    {
        std::ifstream in(dir / "again.json");
        CHECK(nlohmann::json::parse(in) == p);
    }

    // Bad input: exit 2, one line naming the file and the member, and the output left as it was.
    const std::string before = p.dump();
    auto refused = [&](const nlohmann::json& doc, const std::string& must_name) {
        CAPTURE(must_name);
        write(cal, doc);
        CHECK(run(b + " calibrate --time-shared --from " + cal + " -o " + out + " 2>" + err) == 2);
        const std::string line = first_line();
        CHECK(line.find(cal) != std::string::npos);
        CHECK(line.find(must_name) != std::string::npos);
        std::ifstream in(out);
        CHECK(nlohmann::json::parse(in).dump() == before);
    };
    nlohmann::json no_csw = calibrated;
    no_csw["measurements"].erase("csw_futex");
    refused(no_csw, "/measurements/csw_futex");
    nlohmann::json bad_type = calibrated;
    bad_type["measurements"]["offload_spin"]["median"] = "fast";
    refused(bad_type, "/measurements");
    nlohmann::json bad_platform = calibrated;
    bad_platform["T_csw"]["value"] = -1;
    refused(bad_platform, "/T_csw");
    // Members of another type or missing, each at its own pointer (once all "/measurements", with the JSON
    // library's own text as what was found).
    nlohmann::json number_description = calibrated;
    number_description["description"] = 3;
    refused(number_description, "/description: expected a text, found the number 3");
    nlohmann::json text_cpus = calibrated;
    text_cpus["calibration"]["hpu_cpus"] = "x";
    refused(text_cpus, "/calibration/hpu_cpus: expected a list of CPU numbers, found a string");
    nlohmann::json no_mad = calibrated;
    no_mad["measurements"]["offload_spin"].erase("mad");
    refused(no_mad, "/measurements/offload_spin/mad: expected the harness record's mad");
    nlohmann::json null_median = calibrated;
    null_median["measurements"]["csw_futex"]["median"] = nullptr;
    refused(null_median, "/measurements/csw_futex/median: expected a number, found null");
    nlohmann::json text_cpu = calibrated;
    text_cpu["measurements"]["spin_pause"]["details"]["cpu"] = "x";
    refused(text_cpu, "/measurements/spin_pause/details/cpu: expected a number, found a string");
    nlohmann::json text_cores = calibrated;
    text_cores["machine"]["cores"] = "2";
    refused(text_cores, "/machine/cores: expected the machine's core count (a positive integer, at most");
    refused(text_cores, "found a string");
    nlohmann::json mixed_cpus = calibrated;
    mixed_cpus["calibration"]["hpu_cpus"] = {0, "x"};
    refused(mixed_cpus, "/calibration/hpu_cpus/1: expected a CPU number, found a string");
    {
        std::ofstream(cal) << "{\"schema\": ";
        CHECK(run(b + " calibrate --time-shared --from " + cal + " -o " + out + " 2>" + err) == 2);
        CHECK(first_line().find(cal) != std::string::npos);
    }
    CHECK(run(b + " calibrate --time-shared --from " + (dir / "missing.json").string() + " -o " + out + " 2>" + err) ==
          2);
    CHECK(first_line().find("missing.json") != std::string::npos);
    // --from measures nothing: it re-describes as time-shared cores and refuses the options that choose what
    // to measure or describe the roles as dedicated.
    write(cal, calibrated);
    CHECK(run(b + " calibrate --dedicated --from " + cal + " -o " + out + " 2>/dev/null") == 2);
    REQUIRE(run(b + " calibrate --from " + cal + " --max-threads 12 -q -o " + (dir / "plain.json").string()) == 0);
    {
        std::ifstream in(dir / "plain.json");
        CHECK(nlohmann::json::parse(in) == p);  // --time-shared is the default
    }
    CHECK(run(b + " calibrate --time-shared --quick --from " + cal + " -o " + out + " 2>/dev/null") == 2);
    CHECK(run(b + " calibrate --time-shared --hpu-cpus 0 --from " + cal + " -o " + out + " 2>/dev/null") == 2);
    CHECK(run(b + " calibrate --time-shared --from " + cal + " -o " + cal + " 2>/dev/null") == 2);  // in place
    {
        std::ifstream in(out);
        CHECK(nlohmann::json::parse(in).dump() == before);
    }
    // An OSU table named relative to the profile: written into another folder, the profile names it from there
    // (once refused as the records' fault when written beside it from elsewhere, or written naming a file that
    // was not there).
    fs::create_directories(dir / "sub" / "deeper");
    std::ofstream(dir / "sub" / "lat.txt") << "# OSU MPI Allreduce Latency Test\n# Size       Avg Latency(us)\n"
                                              "4 1.5\n8 1.7\n1024 5.0\n";
    nlohmann::json with_osu = calibrated;
    with_osu["network"] = {{"tables", {{{"primitive", "allreduce"}, {"nodes", 1}, {"ppn", 2}, {"osu", "lat.txt"}}}}};
    write((dir / "sub" / "osu.json").string(), with_osu);
    for (const fs::path& to : {dir / "sub" / "beside.json", dir / "above.json", dir / "sub" / "deeper" / "below.json"}) {
        CAPTURE(to);
        REQUIRE(run(b + " calibrate --from " + (dir / "sub" / "osu.json").string() + " -q -o " + to.string() + " 2>" + err) == 0);
        const mmgp::platform pl = mmgp::load_platform(to.string());
        REQUIRE(pl.comm_tables.size() == 1);
        CHECK(pl.comm_tables.front().points.size() == 3);
    }
    std::ifstream above(dir / "above.json");
    CHECK(nlohmann::json::parse(above)["network"]["tables"][0]["osu"] == "sub/lat.txt");
    // Through a symbolic link: "link/.." is the link target's parent, as the system opens it (sub, not dir).
    fs::create_directory_symlink(dir / "sub" / "deeper", dir / "link");
    REQUIRE(run(b + " calibrate --from " + (dir / "sub" / "osu.json").string() + " -q -o " + (dir / "link" / ".." / "w.json").string() +
                " 2>" + err) == 0);
    std::ifstream linked(dir / "sub" / "w.json");
    CHECK(nlohmann::json::parse(linked)["network"]["tables"][0]["osu"] == "lat.txt");
}

