// The application profile of the program on an accelerator's processes (process_profile.hpp): sequential runs
// through run_processes(), untimed and timed, summarized with app_profile's statistics, written as mmgp/1.
#include "process_profile.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>
#include <utility>

#include "mmgp/error.hpp"
#include "runtime_internal.hpp"  // detail::now()
#include "mmgp/profile.hpp"  // utc_now()

namespace mmgp::kernels {

// Named, not anonymous: a unity build compiles this file with the runtime's others.
namespace process_profile_impl {

const char* const harness = "mmgp-offload-run --accelerator cuda --profile (the off-load runtime's processes, offload/)";

void say(const process_profile_request& rq, const std::string& what) {
    if (rq.progress) rq.progress(what);
}

// What the repetitions measured, one value per repetition.
struct samples {
    std::vector<double> hpu, apu, capu, n, bytes, roundtrip, empty, wall, waits;
    std::vector<double> capu_p1;               // C_apu as the p = 1 runs give it (kept in the record)
    std::vector<double> roundtrip_s, calls_s;  // the untimed run at p = S: its off-loads' round trip and count
    bool capu_at_s = false;                    // C_apu and the split grids' floor from the runs at p = S
    std::vector<double> apu_p1;                // the split work's device time at p = 1, as measured
    std::vector<double> floor;                 // its floor: the part that does not divide by p (split_floor; at S)
    std::vector<double> offload_split;         // the off-loads' own part that divides by p (offload_split; at S)
    std::vector<double> charge_p1, charge_s;   // what C_apu leaves out per off-load at p = 1 and at p = S
};

// What C_apu leaves out of one off-load with p blocks that copies `bytes`: what the model charges it on the
// request's platform, else the empty grid's round trip measured in the process.
double left_out(const process_profile_request& rq, double bytes, int p, double empty) {
    return rq.offload_charge ? rq.offload_charge(bytes, p) : empty;
}

config sequential(const process_profile_request& rq, int p) {
    config c = rq.base;
    c.m = 1;
    c.p = p;
    c.policy = rq.policy;
    return c;
}

// One repetition: the untimed run (the host's view), then the timed one (the device's); then, when the device's
// SMs S are given, the untimed run at p = S (its round trip gives C_apu, below).
void measure_repetition(const process_profile_request& rq, int r, const process_accelerator& timed,
                        const process_accelerator& untimed, samples& x, process_profile_report& rep) {
    const double U = rq.base.units;
    result a = run_processes(sequential(rq, 1), untimed);
    result b = run_processes(sequential(rq, 1), timed);
    char line[96];
    std::snprintf(line, sizeof line, "[%d/%d] sequential runs (m=1, p=1), untimed and timed, done", r + 1, rq.repetitions);
    say(rq, line);
    if (!(b.t.apu_split_s > 0)) throw mmgp::failure("the timed run reported no device time for its off-loads");
    const double calls = static_cast<double>(a.t.offloads);
    const double empty = b.t.empty_roundtrip_s;
    x.hpu.push_back(a.t.host_s / U);
    x.n.push_back(calls / U);
    x.apu.push_back(b.t.apu_split_s / U);
    x.apu_p1.push_back(b.t.apu_split_s / U);
    x.bytes.push_back(static_cast<double>(b.t.bytes) / static_cast<double>(b.t.offloads));
    x.waits.push_back(static_cast<double>(b.t.device_waits) / static_cast<double>(b.t.offloads));
    // Everything of an off-load beyond its split work and what the model charges it anyway (left_out).
    x.charge_p1.push_back(left_out(rq, x.bytes.back(), 1, empty));
    x.capu_p1.push_back((a.t.roundtrip_s - b.t.apu_split_s - calls * x.charge_p1.back()) / U);
    x.roundtrip.push_back(a.t.roundtrip_s / calls);
    x.empty.push_back(empty);
    x.wall.push_back(a.wall_s);
    const std::size_t sites = a.sites;
    rep.runs.push_back(std::move(a));
    rep.runs.push_back(std::move(b));
    if (rq.sms <= 0 || static_cast<std::size_t>(rq.sms) > sites) return;
    result s = run_processes(sequential(rq, rq.sms), untimed);
    x.roundtrip_s.push_back(s.t.roundtrip_s);
    x.calls_s.push_back(static_cast<double>(s.t.offloads));
    rep.runs.push_back(std::move(s));
}

// C_apu, per repetition: the off-loads' round trip less their split work and what the model charges each, at
// p = S where measured (the untimed run there, the split work of the slot curve's timed run at S), else at p = 1.
// At S the grids are as short as the mappings the search weighs make them; at p = 1 each off-load waits
// milliseconds for one block, and what that wait costs the host beyond the work is counted in too.
void overhead_per_unit(const process_profile_request& rq, const process_profile_report& rep, samples& x) {
    const double U = rq.base.units;
    if (x.roundtrip_s.empty() || rep.slot_split_s.empty()) {
        x.capu = x.capu_p1;
        return;
    }
    x.capu_at_s = true;
    for (std::size_t r = 0; r < x.roundtrip_s.size(); ++r) {
        x.charge_s.push_back(left_out(rq, x.bytes[r], rq.sms, x.empty[r]));
        x.capu.push_back((x.roundtrip_s[r] - rep.slot_split_s[0] - x.calls_s[r] * x.charge_s.back()) / U);
    }
}

// The split work's device time at S, 2S and 4S blocks (as many as the sites allow), one timed run each.
void measure_slots(const process_profile_request& rq, const process_accelerator& timed, process_profile_report& rep) {
    for (int k : {1, 2, 4}) {
        const int p = k * rq.sms;
        if (rep.runs.empty() || static_cast<std::size_t>(p) > rep.runs.front().sites) break;
        result r = run_processes(sequential(rq, p), timed);
        char line[96];
        std::snprintf(line, sizeof line, "slot curve: p=%d (%d blocks per SM) done", p, k);
        say(rq, line);
        rep.slot_split_s.push_back(r.t.apu_split_s);
        rep.runs.push_back(std::move(r));
    }
}

std::string provenance_phrase(const process_profile_request& rq, const result& first) {
    return " over " + std::to_string(rq.repetitions) + " sequential runs (m=1, p=1, one process" +
           (rq.policy == host_policy::os ? ", its host spinning on its grids" : "") + ") of " +
           std::to_string(rq.base.units) + " bootstrap units on " + first.data_source + " (" + std::to_string(first.taxa) +
           " taxa x " + std::to_string(first.sites) + " sites, GTR+G4) on " + this_hostname() + ", " + utc_now();
}

// With the floor a (per unit): T_apu keeps the part of the split work that divides by p, C_apu gains the floor, so
// that the model's T_apu/p + C_apu is the measured time at p = 1 and at p = S alike.
void take_floor(const process_profile_request& rq, const process_profile_report& rep, samples& x) {
    if (!x.capu_at_s) return;
    const double tS = rep.slot_split_s[0] / rq.base.units;
    for (std::size_t r = 0; r < x.apu.size(); ++r) {
        const double a = split_floor(x.apu[r], tS, rq.sms);
        x.floor.push_back(a);
        x.apu[r] -= a;
        x.capu[r] += a;  // one each a repetition, as x.apu
    }
}

// The off-loads' cost beyond their split work, per repetition, at p = 1 (capu_p1) and at p = S (capu, less the
// floor take_floor added): the part of it that falls as 1/p through the two (a grid of p blocks outside the split
// kernels, the P-matrix update's, waits on one block at p = 1) is work that divides over the blocks as the split
// work does. T_apu gains it and C_apu keeps the rest, so that the model's T_apu/p + C_apu is still the measured
// cost at p = 1 and at p = S.
void take_offload_split(const process_profile_request& rq, samples& x) {
    if (!x.capu_at_s) return;
    for (std::size_t r = 0; r < x.apu.size(); ++r) {  // one of each a repetition, as take_floor's
        const double b = offload_split(x.capu_p1[r], x.capu[r] - x.floor[r], rq.sms);
        x.offload_split.push_back(b);
        x.apu[r] += b;
        x.capu[r] -= b / rq.sms;
    }
}

// f(k) = k·T(kS)/T(S) over the split work that divides by p (the floor, per unit `floor`, taken off each).
nlohmann::json slot_curve(const process_profile_request& rq, const process_profile_report& rep, double floor) {
    nlohmann::json curve = nlohmann::json::array({nlohmann::json::array({1, 1})});
    const int ks[] = {1, 2, 4};
    const double U = rq.base.units;
    // Every point with the floor taken off, or (where that leaves a point at or below 0) none.
    for (std::size_t i = 0; i < rep.slot_split_s.size(); ++i)
        if (rep.slot_split_s[i] / U - floor <= 0) floor = 0;
    const double base = rep.slot_split_s[0] / U - floor;
    for (std::size_t i = 1; i < rep.slot_split_s.size(); ++i)
        curve.push_back({ks[i], ks[i] * (rep.slot_split_s[i] / U - floor) / base});
    return curve;
}

// What C_apu leaves out of each off-load, in words (left_out()).
std::string charge_words(const process_profile_request& rq) {
    if (rq.offload_charge)
        return "what the model charges one off-load of a process alone on the platform " + rq.charge_platform +
               (rq.policy == host_policy::os ? " (its host spinning: O_offload + the transfer's latency + bytes / "
                                               "bandwidth / p, no T_csw"
                                             : " (O_offload + T_csw + the transfer's latency + bytes / bandwidth / p") +
               ": measurements.offload_charge_s, at p = 1 and at the C_apu's p), so that the model gives back these "
               "runs on that platform";
    return "one empty grid's round trip in the process (measurements.empty_grid_roundtrip_s; the model charges the "
           "platform's O_offload" + std::string(rq.policy == host_policy::os ? "" : " and T_csw") +
           " instead: given the platform, mmgp profile --platform subtracts those)";
}

std::string capu_where(const process_profile_request& rq, const samples& x) {
    if (x.capu_at_s)
        return "at p = " + std::to_string(rq.sms) + " blocks (the device's SMs; at p = 1 in measurements.C_apu_p1_s)";
    return "at p = 1";
}

std::string profile_text(const process_profile_request& rq, const process_profile_report& rep, const samples& x) {
    const std::string how = provenance_phrase(rq, rep.runs.front());
    nlohmann::json j = application_head(
        rq.name,
        "Bootstrap-like branch-length search on a fixed topology, its likelihood off-loaded to a GPU: per unit, resample "
        "sites, propose branch lengths, then for every edge newview, the sumtable and Newton steps' derivatives, and "
        "evaluate, each a grid of p blocks of 256 threads over the sites. Measured by the off-load runtime's processes "
        "(offload/).",
        rq.base.units);
    j["N"] = statistic_json(rep.N, rep.N.median, "off-loads per unit, counted" + how, harness);
    j["T_hpu"] = statistic_json(rep.T_hpu, rep.T_hpu.median,
                                "host time per unit outside off-loads (resampling, tree walk, Newton steps)" + how, harness);
    j["T_apu"] = statistic_json(rep.T_apu, rep.T_apu.median,
                                std::string("device time per unit of the grids that split over the blocks (newview, "
                                            "evaluate, sumtable, derivatives) at p = 1, CUDA events") +
                                (x.capu_at_s ? ", less their floor (the part that does not divide by p, through the "
                                               "split work at p = 1 and at p = S: measurements.split_floor_s; as "
                                               "measured: T_apu_p1_s), plus the part of the off-loads' other cost that "
                                               "divides by p (through C_apu at p = 1 and at p = S: "
                                               "measurements.offload_split_s)"
                                             : std::string()) +
                                how, harness);
    j["C_apu"] = statistic_json(rep.C_apu, std::max(0.0, rep.C_apu.median),
                                "per unit, what the off-loads cost beyond their split work and what the model charges "
                                "each anyway: the P-matrix grid, further launches, copies and synchronisations; the "
                                "off-loads' round trip (untimed run) minus their split work (timed run) minus N x " +
                                charge_words(rq) + ", " + capu_where(rq, x) +
                                (x.capu_at_s ? ", plus the split grids' floor, less the part that divides by p (in "
                                               "T_apu)"
                                             : "") +
                                how, harness);
    if (rep.C_apu.median < 0)
        j["C_apu"]["warning"] = "the measured value was negative (an off-load cost less than its split work and what the "
                                "model charges it: noise, or kernels overlapping the launch); clamped to 0";
    j["g"] = {{"value", 0}, {"source", "an off-load is one launch of p blocks whatever p: no cost per block"}};
    if (const statistic w = summarize(x.waits); w.median > 0)
        j["waits_per_offload"] = statistic_json(w, w.median,
                                                "times an off-load's host waits for its grids (the P matrices', then the "
                                                "likelihood's), counted in the timed runs" + how, harness);
    j["dma_bytes"] = statistic_json(rep.bytes, rep.bytes.median,
                                    "bytes copied per off-load between host and device (indices, branch lengths, "
                                    "weights, the blocks' partial sums)" + how, harness);
    if (rep.slot_split_s.size() >= 2) {
        j["slot_time"] = slot_curve(rq, rep, x.capu_at_s ? summarize(x.floor).median : 0.0);
        j["sources"] = {{"slot_time", "the program's own split grids at " + std::to_string(rq.sms) + " x {1, 2, 4} blocks (the "
                                      "device's SMs), f(k) = k T(kS) / T(S), T the split work's device time per unit (CUDA "
                                      "events) less its floor, one timed run each" + how}};
    }
    j["machine"] = {{"hostname", this_hostname()}, {"hardware_concurrency", std::thread::hardware_concurrency()}};
    j["measurements"] = {{"wall_s_p1", x.wall},
                         {"T_hpu_s", x.hpu},
                         {"T_apu_s", x.apu},
                         {"T_apu_p1_s", x.apu_p1},
                         {"split_floor_s", x.floor},
                         {"offload_split_s", x.offload_split},
                         {"C_apu_s", x.capu},
                         {"C_apu_p1_s", x.capu_p1},
                         {"N", x.n},
                         {"offload_roundtrip_s", x.roundtrip},
                         {"empty_grid_roundtrip_s", x.empty},
                         {"bytes_per_offload", x.bytes},
                         {"waits_per_offload", x.waits},
                         {"slot_split_s", rep.slot_split_s}};
    if (rq.offload_charge) j["measurements"]["offload_charge_s"] = {{"p1", x.charge_p1}, {"at_S", x.charge_s}};
    const auto& c = rq.base;
    const result& first = rep.runs.front();
    j["provenance"] = {{"command", rq.command}, {"date", utc_now()},         {"elapsed_s", rep.elapsed_s},
                       {"data", first.data_source}, {"taxa", first.taxa},    {"sites", first.sites},
                       {"rounds", c.rounds},        {"newton", c.newton},    {"seed", c.seed}};
    if (rq.policy == host_policy::os) j["provenance"]["policy"] = "os";  // the runs spun (blocking: no key, as before)
    if (rq.offload_charge) j["provenance"]["platform"] = rq.charge_platform;
    return j.dump(2) + "\n";
}

// The whole of the public function below, inside this namespace so that its names are this file's.
process_profile_report measure(const process_profile_request& rq, const process_accelerator& timed,
                               const process_accelerator& untimed) {
    if (rq.repetitions < 1) throw usage_error("--repetitions: expected an integer >= 1, found " + std::to_string(rq.repetitions));
    if (rq.sms < 0) throw usage_error("sms: expected an integer >= 0");
    const double t0 = detail::now();
    process_profile_report rep;
    samples x;
    for (int r = 0; r < rq.repetitions; ++r) measure_repetition(rq, r, timed, untimed, x, rep);
    if (rq.sms > 0) measure_slots(rq, timed, rep);
    overhead_per_unit(rq, rep, x);
    take_floor(rq, rep, x);
    take_offload_split(rq, x);
    rep.T_hpu = summarize(x.hpu);
    rep.T_apu = summarize(x.apu);
    rep.C_apu = summarize(x.capu);
    rep.N = summarize(x.n);
    rep.bytes = summarize(x.bytes);
    rep.roundtrip = summarize(x.roundtrip);
    rep.empty = summarize(x.empty);
    rep.elapsed_s = detail::now() - t0;
    rep.json = profile_text(rq, rep, x);
    return rep;
}

}  // namespace process_profile_impl

double split_floor(double t1, double tS, int S) {
    if (S <= 1) return 0;
    const double a = (tS - t1 / S) / (1.0 - 1.0 / S);
    return a > 0 && a < t1 ? a : 0;
}

double offload_split(double c1, double cS, int S) {
    if (S <= 1 || !(cS >= 0)) return 0;
    const double b = (c1 - cS) / (1.0 - 1.0 / S);
    if (!(b > 0)) return 0;
    return std::min(b, S * cS);  // what stays C_apu, cS - b/S, is not below 0
}

process_profile_report measure_process_profile(const process_profile_request& rq, const process_accelerator& timed,
                                               const process_accelerator& untimed) {
    return process_profile_impl::measure(rq, timed, untimed);
}

}  // namespace mmgp::kernels
