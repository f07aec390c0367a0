// Tests of the runtime's processes (kernels::run_processes, offload/processes.cpp): m forked processes, each with
// its own accelerator, here the GPU kernels' host twin (the device's per-site arithmetic on the host), against the
// CPU runtime's threads on libpll; how a run that fails, crashes or hangs ends; and the application profile
// measured on them (process_profile.cpp).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "cuda/device_slice.hpp"  // kernel_times (a C++17 header: no CUDA here)
#include "cuda/slice_offloader.hpp"
#include "model_charge.hpp"
#include "process_profile.hpp"
#include "runtime.hpp"
#include "runtime_internal.hpp"

#include <mmgp/error.hpp>
#include <mmgp/model.hpp>
#include <mmgp/profile.hpp>

namespace K = mmgp::kernels;
namespace O = mmgp::offload;

namespace {

K::config problem(int m, int p, int units) {
    K::config c;
    c.simulate_taxa = 8;
    c.simulate_sites = 300;
    c.m = m;
    c.p = p;
    c.units = units;
    c.timeout_s = 60;
    return c;
}

// An accelerator whose off-loader runs the host twin and does `fault` at its off-load number `at`.
enum class fault { none, throw_error, exit_process, hang };
class faulty_offloader final : public K::detail::offloader {
public:
    faulty_offloader(std::unique_ptr<K::detail::offloader> in, fault f, int at) : in_(std::move(in)), f_(f), at_(at) {}
    K::detail::reply offload(const K::detail::request& r) override {
        if (++n_ == at_) {
            if (f_ == fault::throw_error) throw std::runtime_error("the device fell off the bus");
            if (f_ == fault::exit_process) _exit(3);
            if (f_ == fault::hang) std::this_thread::sleep_for(std::chrono::seconds(30));
        }
        return in_->offload(r);
    }

private:
    std::unique_ptr<K::detail::offloader> in_;
    fault f_;
    int at_, n_ = 0;
};

K::process_accelerator faulty(fault f, int at) {
    const K::process_accelerator twin = O::host_twin_accelerator();
    return {"faulty", [twin, f, at](const K::alignment& a, const K::model& m, const K::tree& t, int p) {
                return std::unique_ptr<K::detail::offloader>(std::make_unique<faulty_offloader>(twin.make(a, m, t, p), f, at));
            }};
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("processes on the kernels' host twin give every unit libpll's log-likelihood and the threads' off-loads") {
    for (const auto& [m, p, units] : {std::tuple{1, 1, 3}, std::tuple{2, 3, 5}, std::tuple{3, 2, 3}}) {
        const K::config c = problem(m, p, units);
        const K::result threads = K::run(c);
        const K::result procs = K::run_processes(c, O::host_twin_accelerator());
        INFO("m=" << m << " p=" << p << " units=" << units);
        CHECK(threads.accelerator == "cpu");
        CHECK(procs.accelerator == "host-twin");
        REQUIRE(procs.unit_loglik.size() == static_cast<std::size_t>(units));
        for (std::size_t u = 0; u < procs.unit_loglik.size(); ++u) {
            CHECK(procs.unit_loglik[u] < 0);
            CHECK(procs.unit_loglik[u] == doctest::Approx(threads.unit_loglik[u]).epsilon(1e-9));
        }
        CHECK(procs.t.offloads == threads.t.offloads);
        CHECK(procs.t.by_kind == threads.t.by_kind);
        CHECK(procs.t.newview_ops == threads.t.newview_ops);
        CHECK(procs.wall_s > 0);
        CHECK(procs.t.host_s > 0);
        CHECK(procs.t.roundtrip_s > 0);
        CHECK(procs.t.apu_busy_s == 0);  // no APU threads to time
        CHECK(procs.taxa == 8);
        CHECK(procs.sites == 300);
    }
}

TEST_CASE("a process's failure fails the run with its message; a crash or a hang ends it too, never a hang") {
    const K::config c = problem(2, 2, 4);
    SUBCASE("the accelerator cannot be made") {
        const K::process_accelerator none{"none", [](const K::alignment&, const K::model&, const K::tree&, int) -> std::unique_ptr<K::detail::offloader> {
                                              throw std::runtime_error("no device here");
                                          }};
        CHECK_THROWS_WITH_AS(K::run_processes(c, none), doctest::Contains("no device here"), mmgp::failure);
    }
    SUBCASE("an off-load fails in the middle of a unit") {
        CHECK_THROWS_WITH_AS(K::run_processes(c, faulty(fault::throw_error, 40)), doctest::Contains("fell off the bus"),
                             mmgp::failure);
    }
    SUBCASE("a process exits in the middle of a unit") {
        CHECK_THROWS_WITH_AS(K::run_processes(c, faulty(fault::exit_process, 40)),
                             doctest::Contains("without its report (exit status 3)"), mmgp::failure);
    }
    SUBCASE("a process hangs: the watchdog") {
        K::config quick = c;
        quick.timeout_s = 0.5;
        const auto t0 = std::chrono::steady_clock::now();
        CHECK_THROWS_WITH_AS(K::run_processes(quick, faulty(fault::hang, 40)), doctest::Contains("watchdog"), mmgp::failure);
        CHECK(seconds_since(t0) < 10.0);
    }
}

TEST_CASE("one process's failure ends the run at once with its message, while another still runs") {
    // The first process to claim the file hangs in its 3rd off-load; the other fails in its 3rd.
    char dir[] = "/tmp/mmgp-processes-XXXXXX";
    REQUIRE(mkdtemp(dir) != nullptr);
    const std::string claim = std::string(dir) + "/claimed";
    const K::process_accelerator twin = O::host_twin_accelerator();
    const K::process_accelerator split{"split", [twin, claim](const K::alignment& a, const K::model& m, const K::tree& t, int p) {
                                           const int fd = open(claim.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600);
                                           if (fd >= 0) close(fd);
                                           return std::unique_ptr<K::detail::offloader>(std::make_unique<faulty_offloader>(
                                               twin.make(a, m, t, p), fd >= 0 ? fault::hang : fault::throw_error, 3));
                                       }};
    K::config c = problem(2, 1, 4);
    c.timeout_s = 20;
    const auto t0 = std::chrono::steady_clock::now();
    CHECK_THROWS_WITH_AS(K::run_processes(c, split), doctest::Contains("fell off the bus"), mmgp::failure);
    CHECK(seconds_since(t0) < 10.0);  // not the watchdog's 20 s, nor the hang's 30
    unlink(claim.c_str());
    rmdir(dir);
}

TEST_CASE("processes refuse what only APU threads do, before any process starts") {
    K::config c = problem(2, 2, 2);
    c.synthetic = true;
    CHECK_THROWS_WITH_AS(K::run_processes(c, O::host_twin_accelerator()), doctest::Contains("--synthetic"), mmgp::usage_error);
    c = problem(2, 2, 2);
    c.apus = 4;
    CHECK_THROWS_WITH_AS(K::run_processes(c, O::host_twin_accelerator()), doctest::Contains("--apus"), mmgp::usage_error);
    c = problem(2, 301, 2);  // more blocks than sites
    CHECK_THROWS_AS(K::run_processes(c, O::host_twin_accelerator()), mmgp::usage_error);
    c = problem(K::max_processes + 1, 1, 2);  // once forked one by one, the watchdog not yet started
    CHECK_THROWS_WITH_AS(K::run_processes(c, O::host_twin_accelerator()), doctest::Contains("at most 1024 processes"),
                         mmgp::usage_error);
}

TEST_CASE("a run on CPU threads refuses more threads than it may start, before any starts") {
    K::config c = problem(2, 2, 2);
    c.m = 20000;  // once 40,000 threads started before the watchdog: minutes and gigabytes, or an abort
    CHECK_THROWS_WITH_AS(K::run(c), doctest::Contains("expected at most 4096 threads"), mmgp::usage_error);
    c.m = 1000, c.p = 4;  // 1,000 HPU threads and 4,000 APU threads
    CHECK_THROWS_WITH_AS(K::check_config(c), doctest::Contains("found 5000"), mmgp::usage_error);
    c.p = 3;  // 4,000 in all: allowed
    CHECK_NOTHROW(K::check_config(c));
}

namespace {

// A device's split work of known shape, per off-load: a floor of 0.2 ms whatever the grid, and 0.6 ms that
// divides over its p blocks; and what an off-load costs beyond it: 0.1 ms whatever the grid, and 0.4 ms of a grid
// of p blocks outside the split kernels (as the P-matrix update's).
constexpr double split_floor_per_offload = 2e-4, split_work_per_offload = 6e-4;
constexpr double other_fixed_per_offload = 1e-4, other_work_per_offload = 4e-4;

// The host twin as that device: timed, it also reports the split work's device time of the shape above (not the
// host's own timing), an empty off-load's round trip (1 us), 100 bytes and 2 waits for its grids an off-load;
// untimed, each off-load's round trip is the host twin's time plus the device's split work, the cost beyond it and
// one empty round trip, added as the process's timers are collected (deterministic: nothing spun), and no device
// time.
class device_like_offloader final : public K::detail::offloader {
public:
    device_like_offloader(std::unique_ptr<K::detail::offloader> in, int p, bool timed)
        : in_(std::move(in)), p_(p), timed_(timed) {}
    K::detail::reply offload(const K::detail::request& r) override {
        ++n_;
        return in_->offload(r);
    }
    void add_times(K::timers& t) const override {
        const double before = t.apu_split_s, n = static_cast<double>(n_);
        in_->add_times(t);
        if (!timed_) {
            t.roundtrip_s += n * (split_floor_per_offload + split_work_per_offload / p_ + other_fixed_per_offload +
                                  other_work_per_offload / p_ + 1e-6);
            return;
        }
        t.apu_split_s = before + n * (split_floor_per_offload + split_work_per_offload / p_);
        t.empty_roundtrip_s += 1e-6;
        t.bytes += 100 * n_;
        t.device_waits += 2 * n_;
    }

private:
    std::unique_ptr<K::detail::offloader> in_;
    int p_;
    bool timed_;
    std::int64_t n_ = 0;
};

K::process_accelerator device_like(bool timed = true) {
    const K::process_accelerator twin = O::host_twin_accelerator(timed);
    return {timed ? "device-like" : "device-like, untimed", [twin, timed](const K::alignment& a, const K::model& m,
                                                                           const K::tree& t, int p) {
                return std::unique_ptr<K::detail::offloader>(
                    std::make_unique<device_like_offloader>(twin.make(a, m, t, p), p, timed));
            }};
}


}  // namespace

TEST_CASE("the processes' application profile: per-unit values from the runs, the slot curve, a document predict reads") {
    K::process_profile_request rq;
    rq.base = problem(1, 1, 2);
    rq.repetitions = 2;
    rq.sms = 3;  // the slot runs at 3, 6 and 12 blocks
    const K::process_profile_report rep = K::measure_process_profile(rq, device_like(), device_like(false));
    // Per repetition: untimed and timed at p = 1, untimed at p = S; then the slot runs.
    REQUIRE(rep.runs.size() == 2 * 3 + 3);
    const K::result& untimed = rep.runs[0];
    const K::result& timed = rep.runs[1];
    CHECK(untimed.t.apu_split_s == 0);  // the untimed run reports no kernel time
    CHECK(timed.t.apu_split_s > 0);
    CHECK(rep.runs[2].cfg.p == 3);
    CHECK(rep.runs[2].t.apu_split_s == 0);
    // Derived from the runs' timers, per unit (2 units): N and T_hpu from the untimed runs, T_apu from the timed.
    const std::vector<double> n = {static_cast<double>(rep.runs[0].t.offloads) / 2, static_cast<double>(rep.runs[3].t.offloads) / 2};
    CHECK(rep.N.median == doctest::Approx((n[0] + n[1]) / 2));
    CHECK(rep.T_hpu.median == doctest::Approx((rep.runs[0].t.host_s + rep.runs[3].t.host_s) / 4));
    REQUIRE(rep.slot_split_s.size() == 3);
    for (std::size_t k = 0; k < 3; ++k) {
        CHECK(rep.runs[6 + k].cfg.p == 3 << k);
        CHECK(rep.slot_split_s[k] == rep.runs[6 + k].t.apu_split_s);
    }
    // C_apu at p = S: the untimed round trip there less the split work at S (the slot curve's timed run) and one
    // empty round trip per off-load, per unit. The p = 1 value (the same from the p = 1 runs) stays in the record.
    auto c_apu = [&](std::size_t r) {
        const K::timers& u = rep.runs[3 * r + 2].t;
        return (u.roundtrip_s - rep.slot_split_s[0] - static_cast<double>(u.offloads) * 1e-6) / 2;
    };
    auto c_apu_p1 = [&](std::size_t r) {
        const K::timers &u = rep.runs[3 * r].t, &t = rep.runs[3 * r + 1].t;
        return (u.roundtrip_s - t.apu_split_s - static_cast<double>(u.offloads) * 1e-6) / 2;
    };
    // The split grids' floor per repetition: a + b/p through the split work at p = 1 and at p = S = 3 (0 where
    // that gives none between 0 and the p = 1 time). T_apu keeps b, C_apu gains a. Then the off-loads' other cost's
    // part that divides by p, through C_apu at p = 1 and at p = S: T_apu gains it, C_apu keeps the rest (on the host
    // twin that part is whatever its host timing gives; offload_split's own test has known shapes).
    const double tS = rep.slot_split_s[0] / 2;
    auto t1 = [&](std::size_t r) { return rep.runs[3 * r + 1].t.apu_split_s / 2; };
    auto floor_of = [&](std::size_t r) { return K::split_floor(t1(r), tS, 3); };
    auto moved = [&](std::size_t r) { return K::offload_split(c_apu_p1(r), c_apu(r), 3); };
    CHECK(rep.T_apu.median == doctest::Approx((t1(0) - floor_of(0) + moved(0) + t1(1) - floor_of(1) + moved(1)) / 2));
    // The device's shape comes back: the floor and the work that divides, per unit (N off-loads a unit).
    CHECK(floor_of(0) == doctest::Approx(rep.N.median * split_floor_per_offload));
    CHECK(rep.T_apu.median - (moved(0) + moved(1)) / 2 == doctest::Approx(rep.N.median * split_work_per_offload));
    // The cost beyond the split work that divides by p comes back too (give or take the host twin's own time,
    // which does not depend on p): T_apu gains it, C_apu keeps the fixed part and the host twin's.
    CHECK(moved(0) == doctest::Approx(rep.N.median * other_work_per_offload).epsilon(0.25));
    CHECK(moved(1) == doctest::Approx(rep.N.median * other_work_per_offload).epsilon(0.25));
    CHECK(rep.C_apu.median == doctest::Approx((c_apu(0) + floor_of(0) - moved(0) / 3 + c_apu(1) + floor_of(1) - moved(1) / 3) / 2));
    // The profile's T_apu/p + C_apu is the measured per-unit cost at p = S (the split work and the cost beyond it
    // there), whatever part moved; at p = 1 it is T_apu + C_apu = t1 + c_S + (2/3)·moved per repetition, which is
    // the measured cost at p = 1 too where the part that divides is taken whole: between 0 and S·c_S, so that C_apu
    // at p = S stays at or above 0 (offload_split). On a slow host the fixed part can measure below 0 and the
    // bound then holds C_apu there instead (ThreadSanitizer's build: 0.1651 against 0.1615 at p = 1).
    const double c_s = (c_apu(0) + c_apu(1)) / 2, c_p1 = (c_apu_p1(0) + c_apu_p1(1)) / 2;
    CHECK(rep.T_apu.median / 3 + rep.C_apu.median == doctest::Approx(tS + c_s));
    CHECK(rep.T_apu.median + rep.C_apu.median ==
          doctest::Approx((t1(0) + c_apu(0) + moved(0) * 2 / 3 + t1(1) + c_apu(1) + moved(1) * 2 / 3) / 2));
    bool whole = true;
    for (std::size_t r = 0; r < 2; ++r) {
        const double divides = (c_apu_p1(r) - c_apu(r)) * 3 / 2;  // (c1 - cS) / (1 - 1/S)
        whole = whole && divides > 0 && divides <= 3 * c_apu(r);
    }
    CAPTURE(whole);
    if (whole) CHECK(rep.T_apu.median + rep.C_apu.median == doctest::Approx((t1(0) + t1(1)) / 2 + c_p1));
    REQUIRE(nlohmann::json::parse(rep.json)["measurements"]["offload_split_s"].size() == 2);
    CHECK(rep.bytes.median == doctest::Approx(100));
    CHECK(nlohmann::json::parse(rep.json)["waits_per_offload"]["value"] == 2.0);  // the timed runs' count
    CHECK(rep.empty.median == doctest::Approx(1e-6));
    const auto doc = nlohmann::json::parse(rep.json);
    CHECK(doc["T_apu"]["value"] == rep.T_apu.median);
    REQUIRE(doc["measurements"]["C_apu_p1_s"].size() == 2);
    CHECK(doc["measurements"]["C_apu_p1_s"][1].get<double>() == doctest::Approx(c_apu_p1(1)));
    CHECK(doc["C_apu"]["source"].get<std::string>().find("at p = 3 blocks") != std::string::npos);
    CHECK(doc["g"]["value"] == 0);
    REQUIRE(doc["slot_time"].size() == 3);
    // f(k) = k·T(kS)/T(S) over the part of the split work that divides by p (the floor taken off): it divides
    // exactly here, so k blocks per SM take k times one's time per block, f = 1 at k = 2 and 4.
    CHECK(doc["slot_time"][1][1].get<double>() == doctest::Approx(1.0));
    CHECK(doc["slot_time"][2][1].get<double>() == doctest::Approx(1.0));
    REQUIRE(doc["measurements"]["split_floor_s"].size() == 2);
    CHECK(doc["measurements"]["T_apu_p1_s"][0].get<double>() == doctest::Approx(t1(0)));
    const mmgp::application app = mmgp::parse_application(rep.json, "profile");
    CHECK(app.units == 2);
    CHECK(app.T_apu == doctest::Approx(rep.T_apu.median));
    CHECK(app.waits_per_offload == 2);
    REQUIRE(app.slot_time.k.size() == 3);
    CHECK(app.slot_time.factor[2] == doctest::Approx(doc["slot_time"][2][1].get<double>()));
}

namespace {

// A node by hand with 3 accelerators (a GPU's SMs): an off-load's launch 5 us, the host's switch 1 us, a copy's
// latency 2 us and 1 ns a byte.
mmgp::platform three_sm_node() {
    return mmgp::parse_platform(R"({"hpu_contexts": 16, "apus": 3, "O_offload": 5e-6, "T_csw": 1e-6, "alpha": 1.0,
                                    "dma": {"latency_s": 2e-6, "bandwidth_Bps": 1e9}})",
                                "three-sm.json");
}

}  // namespace

TEST_CASE("what the model charges one off-load of a process alone: O_offload + T_csw + latency + bytes / bandwidth / p") {
    mmgp::platform pl = three_sm_node();
    const auto charge = K::model_offload_charge(pl);
    CHECK(charge(0, 1) == doctest::Approx(5e-6 + 1e-6 + 2e-6).epsilon(1e-12));
    CHECK(charge(1000, 1) == doctest::Approx(5e-6 + 1e-6 + 2e-6 + 1000e-9).epsilon(1e-12));
    CHECK(charge(1000, 3) == doctest::Approx(5e-6 + 1e-6 + 2e-6 + 1000e-9 / 3).epsilon(1e-12));
    // A GPU node that lists its sharing modes: one process shares with none, either order gives the same.
    pl.sharing = {mmgp::accelerator_sharing::time_sliced, mmgp::accelerator_sharing::mps};
    pl.T_slice_switch = 5e-5;
    CHECK(K::model_offload_charge(pl)(1000, 3) == doctest::Approx(charge(1000, 3)).epsilon(1e-12));
    pl.sharing = {mmgp::accelerator_sharing::mps, mmgp::accelerator_sharing::time_sliced};
    CHECK(K::model_offload_charge(pl)(1000, 3) == doctest::Approx(charge(1000, 3)).epsilon(1e-12));
    // No transfer cost: bytes cannot be charged, which the model says (the profile could not be predicted there).
    pl.has_dma = false;
    CHECK_THROWS_AS(K::model_offload_charge(pl)(1000, 1), mmgp::input_error);
    CHECK(K::model_offload_charge(pl)(0, 1) == doctest::Approx(5e-6 + 1e-6).epsilon(1e-12));
}

TEST_CASE("what the model charges one off-load of a process whose host spins (os): no wake-up, T_csw left out") {
    const mmgp::platform pl = three_sm_node();
    const auto spinning = K::model_offload_charge(pl, mmgp::policy::os);
    CHECK(spinning(0, 1) == doctest::Approx(5e-6 + 2e-6).epsilon(1e-12));
    CHECK(spinning(1000, 3) == doctest::Approx(5e-6 + 2e-6 + 1000e-9 / 3).epsilon(1e-12));
    CHECK(K::model_offload_charge(pl, mmgp::policy::edtlp)(1000, 3) - spinning(1000, 3) == doctest::Approx(1e-6));
}

TEST_CASE("given its platform, the processes' profile leaves out of C_apu what the model charges: it gives back its runs") {
    K::process_profile_request rq;
    rq.base = problem(1, 1, 2);
    rq.repetitions = 2;
    rq.sms = 3;
    const mmgp::platform pl = three_sm_node();
    rq.offload_charge = K::model_offload_charge(pl);
    rq.charge_platform = "three-sm.json";
    const K::process_profile_report rep = K::measure_process_profile(rq, device_like(), device_like(false));
    REQUIRE(rep.runs.size() == 2 * 3 + 3);
    const double charge_1 = 8e-6 + 100e-9, charge_s = 8e-6 + 100e-9 / 3;  // 100 bytes an off-load
    // C_apu at p = 1 and at p = S, per repetition: the round trip less the split work and the model's charge.
    const auto doc = nlohmann::json::parse(rep.json);
    for (std::size_t r = 0; r < 2; ++r) {
        const K::timers &u = rep.runs[3 * r].t, &t = rep.runs[3 * r + 1].t, &us = rep.runs[3 * r + 2].t;
        CHECK(doc["measurements"]["C_apu_p1_s"][r].get<double>() ==
              doctest::Approx((u.roundtrip_s - t.apu_split_s - static_cast<double>(u.offloads) * charge_1) / 2));
        CHECK(doc["measurements"]["offload_charge_s"]["p1"][r].get<double>() == doctest::Approx(charge_1).epsilon(1e-12));
        CHECK(doc["measurements"]["offload_charge_s"]["at_S"][r].get<double>() == doctest::Approx(charge_s).epsilon(1e-12));
        (void)us;
    }
    CHECK(doc["C_apu"]["source"].get<std::string>().find("three-sm.json") != std::string::npos);
    CHECK(doc["provenance"]["platform"] == "three-sm.json");
    // The model on that platform gives back the profile's sequential runs at p = S: the accelerator's part of its
    // prediction (all but the host's T_hpu) is the runs' round trip there, per unit the mean of the two.
    mmgp::scenario sc;
    sc.plat = pl;
    sc.app = mmgp::parse_application(rep.json, "profile");
    sc.space.p = {3, 3};
    const mmgp::evaluator ev(sc, mmgp::model_kind::mmgp);
    const double predicted = ev({1, 3}).time_s - 2 * sc.app.T_hpu;
    const double measured = (rep.runs[2].t.roundtrip_s + rep.runs[5].t.roundtrip_s) / 2;
    CHECK(predicted == doctest::Approx(measured).epsilon(1e-9));
}

TEST_CASE("a profile for spinning runs (policy os): C_apu leaves out the model's charge without T_csw; it gives back its runs") {
    K::process_profile_request rq;
    rq.base = problem(1, 1, 2);
    rq.repetitions = 2;
    rq.sms = 3;
    rq.policy = K::host_policy::os;
    const mmgp::platform pl = three_sm_node();
    rq.offload_charge = K::model_offload_charge(pl, mmgp::policy::os);
    rq.charge_platform = "three-sm.json";
    const K::process_profile_report rep = K::measure_process_profile(rq, device_like(), device_like(false));
    REQUIRE(rep.runs.size() == 2 * 3 + 3);
    const double charge_1 = 7e-6 + 100e-9;  // O_offload + latency + 100 bytes, no T_csw
    const auto doc = nlohmann::json::parse(rep.json);
    for (std::size_t r = 0; r < 2; ++r) {
        const K::timers &u = rep.runs[3 * r].t, &t = rep.runs[3 * r + 1].t;
        CHECK(doc["measurements"]["offload_charge_s"]["p1"][r].get<double>() == doctest::Approx(charge_1).epsilon(1e-12));
        CHECK(doc["measurements"]["C_apu_p1_s"][r].get<double>() ==
              doctest::Approx((u.roundtrip_s - t.apu_split_s - static_cast<double>(u.offloads) * charge_1) / 2));
    }
    CHECK(doc["provenance"]["policy"] == "os");
    CHECK(doc["C_apu"]["source"].get<std::string>().find("no T_csw") != std::string::npos);
    CHECK(doc["N"]["source"].get<std::string>().find("its host spinning on its grids") != std::string::npos);
    // The model of runs that spin gives back the profile's sequential runs at p = S.
    mmgp::scenario sc;
    sc.plat = pl;
    sc.app = mmgp::parse_application(rep.json, "profile");
    sc.space.p = {3, 3};
    sc.space.pol = mmgp::policy::os;
    const mmgp::evaluator ev(sc, mmgp::model_kind::mmgp);
    mmgp::configuration spin{1, 3};
    spin.pol = mmgp::policy::os;
    const double predicted = ev(spin).time_s - 2 * sc.app.T_hpu;
    const double measured = (rep.runs[2].t.roundtrip_s + rep.runs[5].t.roundtrip_s) / 2;
    CHECK(predicted == doctest::Approx(measured).epsilon(1e-9));
    // A blocking profile of the same runs has no policy in its provenance (as before).
    rq.policy = K::host_policy::edtlp;
    rq.offload_charge = K::model_offload_charge(pl);
    CHECK_FALSE(nlohmann::json::parse(K::measure_process_profile(rq, device_like(), device_like(false)).json)["provenance"]
                    .contains("policy"));
}

TEST_CASE("the off-loads' part that divides by p: c0 + b/p through their cost beyond the split work at p = 1 and S") {
    // 40 ms of a grid of p blocks and 9 ms that stay, per unit: 49 ms at p = 1, 9 + 40/132 ms at p = 132.
    const double b = K::offload_split(0.049, 0.009 + 0.040 / 132, 132);
    CHECK(b == doctest::Approx(0.040).epsilon(1e-12));
    // What stays, c0 = cS - b/S, and b give back both points: c0 + b at p = 1, c0 + b/S at S.
    const double c0 = 0.009 + 0.040 / 132 - b / 132;
    CHECK(c0 + b == doctest::Approx(0.049).epsilon(1e-12));
    CHECK(c0 == doctest::Approx(0.009).epsilon(1e-12));
    CHECK(K::offload_split(0.009, 0.009, 132) == 0);         // the same at S as at p = 1: nothing divides
    CHECK(K::offload_split(0.009, 0.012, 132) == 0);         // higher at S: not a part that divides
    CHECK(K::offload_split(0.049, -0.001, 132) == 0);        // a negative cost at S (noise): nothing taken
    CHECK(K::offload_split(0.049, 0.0001, 132) == doctest::Approx(132 * 0.0001));  // at most what leaves c0 = 0
    CHECK(K::offload_split(0.049, 0.009, 1) == 0);           // one SM: nothing to tell apart
}

TEST_CASE("the split grids' floor: a + b/p through the split work at p = 1 and at p = S") {
    // 0.5 s of work that divides by p and a 2 ms floor: 0.502 s at p = 1, 0.5/132 + 0.002 at p = 132.
    CHECK(K::split_floor(0.502, 0.5 / 132 + 0.002, 132) == doctest::Approx(0.002).epsilon(1e-12));
    CHECK(K::split_floor(0.5, 0.5 / 132, 132) == 0);          // perfect division: no floor
    CHECK(K::split_floor(0.5, 0.5 / 264, 132) == 0);          // faster than t1/S: none either
    CHECK(K::split_floor(0.5, 0.6, 132) == 0);                // not faster at S than at 1: not a floor
    CHECK(K::split_floor(0.5, 0.1, 1) == 0);                  // one SM: nothing to tell apart
}

namespace {

// The host twin timed the way a device_slice is (cuda/device_slice.cu): kernel_times of its own, one grid the
// host waits for per call that launches one, as launched() counts them (the P matrices' grid as serial work, when
// there are matrices; newview's, evaluate's, the sumtable's and the derivatives' as split work; the weights only a
// copy), 1 us of serial and 2 us of split device time a call, 12 bytes a matrix copied, an empty grid 3 us.
class timed_twin : public O::host_slice {
public:
    using O::host_slice::host_slice;
    void update_matrices(const unsigned* m, const double* l, std::size_t count) {
        O::host_slice::update_matrices(m, l, count);
        t_.bytes += static_cast<long long>(12 * count);
        if (count > 0) t_.serial_s += 1e-6, ++t_.serial_calls;
    }
    void update_partials(const std::vector<O::partial_op>& ops) {
        O::host_slice::update_partials(ops);
        split();
    }
    double edge_loglik(int a, int b, unsigned m) {
        split();
        return O::host_slice::edge_loglik(a, b, m);
    }
    void update_sumtable(int a, int b) {
        O::host_slice::update_sumtable(a, b);
        split();
    }
    std::array<double, 2> derivatives(int a, int b, double x) {
        split();
        return O::host_slice::derivatives(a, b, x);
    }
    void time_kernels(bool) {}
    double empty_roundtrip(int) const { return 3e-6; }
    O::kernel_times times() const { return t_; }

private:
    void split() { t_.split_s += 2e-6, ++t_.split_calls; }
    O::kernel_times t_;
};

}  // namespace

TEST_CASE("a timed slice with device times: each process reports its kernels' time, bytes and waits for its grids") {
    const K::process_accelerator timed{"timed twin", [](const K::alignment& a, const K::model& m, const K::tree& t, int) {
        return std::unique_ptr<K::detail::offloader>(std::make_unique<O::owned_slice_offloader<timed_twin>>(
            std::make_unique<timed_twin>(a, O::arrays_of(a, m), 0, a.sites(), t.edges()), true));
    }};
    const K::result r = K::run_processes(problem(2, 1, 3), timed);
    const auto& k = r.t.by_kind;  // weights, newview, evaluate, sumtable, derivatives
    REQUIRE(k[1] > 0);
    REQUIRE(k[2] > 0);
    // A wait for each grid: newview and evaluate 2 (their P matrices', then their own), the sumtable and the
    // derivatives 1, the weights none (validation/gpu/rederive.py's table of the same).
    const std::int64_t waits = 2 * k[1] + 2 * k[2] + k[3] + k[4];
    CHECK(r.t.device_waits == waits);
    CHECK(r.t.apu_serial_s == doctest::Approx(1e-6 * static_cast<double>(k[1] + k[2])));
    CHECK(r.t.apu_split_s == doctest::Approx(2e-6 * static_cast<double>(k[1] + k[2] + k[3] + k[4])));
    CHECK(r.t.empty_roundtrip_s == doctest::Approx(2 * 3e-6));  // one each process
    CHECK(r.t.bytes > 0);
}

TEST_CASE("the processes' profile refuses a timed accelerator that times nothing, and a bad repetition count") {
    K::process_profile_request rq;
    rq.base = problem(1, 1, 1);
    CHECK_THROWS_WITH_AS(K::measure_process_profile(rq, O::host_twin_accelerator(false), O::host_twin_accelerator(false)),
                         doctest::Contains("no device time"), mmgp::failure);
    rq.repetitions = 0;
    CHECK_THROWS_AS(K::measure_process_profile(rq, O::host_twin_accelerator(true), O::host_twin_accelerator(false)),
                    mmgp::usage_error);
}

TEST_CASE("a rank of a launched mapping runs its share of the units, the ones the mapping's process would run") {
    K::config all = problem(3, 2, 7);
    const K::result threads = K::run(all);
    for (int rank = 0; rank < 3; ++rank) {
        K::config c = problem(1, 2, 7);
        c.rank = rank;
        c.ranks = 3;
        const K::result r = K::run_processes(c, O::host_twin_accelerator());
        INFO("rank " << rank);
        REQUIRE(r.unit_loglik.size() == 7);
        for (int u = 0; u < 7; ++u) {
            if (u % 3 == rank) CHECK(r.unit_loglik[static_cast<std::size_t>(u)] == doctest::Approx(threads.unit_loglik[static_cast<std::size_t>(u)]).epsilon(1e-9));
            else CHECK(std::isnan(r.unit_loglik[static_cast<std::size_t>(u)]));
        }
    }
    // Two ranks of two processes each: rank r's process i runs r + 2i, then every 4th (rank 1: 1, 3, 5, 7, 9).
    K::config two = problem(2, 1, 11);
    two.rank = 1;
    two.ranks = 2;
    const K::result r = K::run_processes(two, O::host_twin_accelerator());
    const K::result all11 = K::run(problem(1, 1, 11));
    for (int u = 0; u < 11; ++u) {
        INFO("unit " << u);
        if (u % 2 == 1) CHECK(r.unit_loglik[static_cast<std::size_t>(u)] == doctest::Approx(all11.unit_loglik[static_cast<std::size_t>(u)]).epsilon(1e-9));
        else CHECK(std::isnan(r.unit_loglik[static_cast<std::size_t>(u)]));
    }
    CHECK(r.t.offloads > 0);
    CHECK(r.t.offloads < all11.t.offloads);  // 5 of the 11 units
    K::config bad = problem(1, 1, 2);
    bad.rank = 3;
    bad.ranks = 3;
    CHECK_THROWS_AS(K::run_processes(bad, O::host_twin_accelerator()), mmgp::usage_error);
    bad.rank = 0;
    CHECK_THROWS_AS(K::run(bad), mmgp::usage_error);  // ranks on APU threads
}
