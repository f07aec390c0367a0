// mmgp calibrate's fitting and writing: the harnesses' results as a platform profile (schema mmgp/1), each key
// named by the member it fills in the platform's key table (mmgp/profile_keys.hpp), and --time-shared's
// re-description of a calibrated profile. Called by cli/cmd_calibrate.cpp; calls the harnesses and the MPI driver.
#include "calibrate.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <limits>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

#include "mmgp/profile.hpp"
#include "mpi_driver.hpp"

namespace mmgp::calib {

roles resolve_roles(const topology& t, const std::string& hpu, const std::string& apu) {
    roles r = default_roles(t);
    if (!hpu.empty()) {
        try {
            r.hpu = parse_cpu_list(hpu, t);
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(std::string("--hpu-cpus: ") + e.what());
        }
        if (apu.empty()) {  // the APUs are then one context of every core without an HPU context
            r.apu.clear();
            for (const auto& c : t.cores) {
                bool host = false;
                for (int pu : c) host = host || std::find(r.hpu.begin(), r.hpu.end(), pu) != r.hpu.end();
                if (!host) r.apu.push_back(c.front());
            }
        }
    }
    if (!apu.empty()) {
        try {
            r.apu = parse_cpu_list(apu, t);
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(std::string("--apu-cpus: ") + e.what());
        }
    }
    if (r.apu.empty()) throw std::invalid_argument("--hpu-cpus: leaves no core for an APU; give --apu-cpus");
    if (!hpu.empty() || !apu.empty())
        for (int c : r.apu)
            if (std::find(r.hpu.begin(), r.hpu.end(), c) != r.hpu.end())
                throw std::invalid_argument(fmt::format("--apu-cpus: CPU {} is also an HPU context", c));
    return r;
}

nlohmann::json alpha_json(const alpha_result& a) {
    nlohmann::json table = nlohmann::json::object();
    table["1"] = 1.0;
    nlohmann::json per = nlohmann::json::array();
    for (const auto& m : a.per_m) {
        table[std::to_string(m.extra["m"].get<int>())] = m.value;
        per.push_back(to_json(m));
    }
    int reps = a.per_m.empty() ? 0 : a.per_m.front().repetitions;
    nlohmann::json meas = {{"harness", "alpha"},
                           {"kernel", "double-precision matrix multiply (i-k-j), one per thread"},
                           {"sizes", a.sizes},
                           {"hpu_contexts", a.H},
                           {"definition", "alpha(m) = wall time of m threads / (max(1, m/H) x time of one thread alone): "
                                          "contention only, time sharing excluded"},
                           {"table", table},
                           {"fitted_m", a.fitted_m},
                           {"alone_s", a.t1},
                           {"per_m", per}};
    nlohmann::json j;
    if (a.linear) {
        j["linear"] = {{"intercept", {{"value", a.fit.intercept}, {"spread", a.fit.se_intercept}, {"repetitions", reps},
                                      {"harness", "alpha/linear-fit"}, {"unit", "factor"}}},
                       {"slope", {{"value", a.fit.slope}, {"spread", a.fit.se_slope}, {"repetitions", reps},
                                  {"harness", "alpha/linear-fit"}, {"unit", "factor per thread per context"}}}};
        meas["fit"] = {{"form", "alpha(m) = intercept + slope * m / H for m >= 2, alpha(1) = 1"}, {"r2", a.fit.r2}};
    } else {
        j["constant"] = {{"value", a.constant}, {"repetitions", reps}, {"harness", "alpha/median"}, {"unit", "factor"}};
        meas["fit"] = {{"form", "constant: median of the measured alpha(m), m >= 2 (a linear fit had a negative slope "
                                "or too few points)"}};
    }
    j["measurements"] = meas;
    return j;
}

nlohmann::json dma_json(const dma_result& d) {
    nlohmann::json pts = nlohmann::json::array(), per = nlohmann::json::array();
    int reps = 0;
    bool flagged = false;
    for (const auto& m : d.per_size) {
        pts.push_back({m.extra["bytes"], m.value});
        per.push_back(to_json(m));
        reps = m.repetitions;
        flagged = flagged || m.flagged;
    }
    const auto& small = d.per_size.front();
    const auto& large = d.per_size.back();
    nlohmann::json j;
    // The values are the fit's; a single transfer's own figures differ from them (the smallest one's
    // time includes its bytes, the largest one's bytes/time includes the latency): the notes say so
    // with the numbers, and every size's measurement is in measurements.per_size.
    const double small_bytes = small.extra["bytes"].get<double>(), large_bytes = large.extra["bytes"].get<double>();
    const double effective = large.extra["bandwidth_Bps"].get<double>();
    j["latency_s"] = {{"value", d.fit.latency_s}, {"unit", "s"}, {"spread", small.obs.mad},
                      {"mad", small.obs.mad}, {"cv", small.reps.cv}, {"min", small.obs.min}, {"repetitions", reps},
                      {"harness", "dma/fit"},
                      {"note", fmt::format("intercept of the fit t(bytes) = latency + bytes / bandwidth over {} sizes; the "
                                           "smallest transfer ({:g} bytes) took {:.3g} s (median), latency and bytes together",
                                           d.per_size.size(), small_bytes, small.value)}};
    j["bandwidth_Bps"] = {{"value", d.fit.bandwidth_Bps},
                          {"unit", "B/s"},
                          {"spread", large.value > 0 ? d.fit.bandwidth_Bps * large.obs.mad / large.value : 0.0},
                          {"cv", large.reps.cv},
                          {"repetitions", reps},
                          {"harness", "dma/fit"},
                          {"note", fmt::format("1 / slope of the fit over {} sizes, weighted by relative error: the cost of "
                                               "one more byte, what the model charges; the largest transfer alone ({:g} bytes) "
                                               "moved {:.3g} B/s (median bytes / time, its latency included): the two differ as "
                                               "far as the times are not linear in the size",
                                               d.per_size.size(), large_bytes, effective)}};
    j["measurements"] = {{"harness", "dma"},
                         {"mechanism", "the APU core memcpy()s a buffer the HPU core has just written into its own buffer; "
                                       "time measured on the APU side"},
                         {"fit", "t(bytes) = latency + bytes / bandwidth, least squares weighted by 1/t^2"},
                         {"r2", d.fit.r2},
                         {"points", pts},
                         {"per_size", per}};
    return j;
}

namespace {

/// The member of a platform profile that holds `member`, named by the platform's key table (mmgp/profile_keys.hpp).
template <class T>
nlohmann::json& at_key(nlohmann::json& j, T platform::*member) {
    const std::string_view name = key_of(member);
    if (name.empty()) throw std::logic_error("no platform key fills this member");
    return j[std::string(name)];
}

/// A profile parameter from a benchmark record (the fields to_param() writes).
nlohmann::json param_from_record(const nlohmann::json& r) {
    nlohmann::json j = {{"value", r.at("median")}, {"unit", r.value("unit", "s")}, {"median", r.at("median")},
                        {"spread", r.at("mad")},   {"mad", r.at("mad")},             {"cv", r.at("cv")},
                        {"min", r.at("min")},      {"ci95", r.at("ci95")},           {"repetitions", r.at("repetitions")},
                        {"harness", r.at("name")}, {"flagged", r.value("flagged", false)}};
    if (r.contains("warning")) j["warning"] = r["warning"];
    return j;
}

const nlohmann::json& record(const nlohmann::json& p, const char* key) {
    if (!p.contains("measurements") || !p["measurements"].is_object() || !p["measurements"].contains(key) ||
        !p["measurements"][key].is_object() || !p["measurements"][key].contains("median"))
        throw incomplete_profile(fmt::format("/measurements/{}", key),
                                 fmt::format("the {} harness's record (a profile written by mmgp calibrate)", key));
    return p["measurements"][key];
}

/// The description describe_time_shared() appends, so that a second application replaces it.
constexpr std::string_view time_shared_sentence = " Time-shared cores (--time-shared):";

/// A profile being re-described as time-shared cores, and the derivation of each value it gets ("_derivation").
struct time_shared_profile {
    nlohmann::json& p;
    nlohmann::json& d;

    /// cores, hpu_contexts = cores, apus = the bound on m*p.
    void counts(int cores, int apus, int max_threads) {
        const std::string topo = p["machine"].value("topology_source", "topology");
        const std::string cpus = p.contains("calibration")
                                     ? fmt::format("{}", fmt::join(p["calibration"].value("hpu_cpus", std::vector<int>{}), ","))
                                     : std::string("?");
        at_key(p, &platform::cores) = {{"value", cores}, {"source", fmt::format("{}: the machine's cores", topo)}};
        at_key(d, &platform::cores) =
            fmt::format("machine.cores = {} ({}): HPU and APU threads are unpinned software threads time-sharing "
                        "the cores (mmgp calibrate --time-shared)",
                        cores, topo);
        at_key(p, &platform::hpu_contexts) = {{"value", cores}, {"source", "= cores (time-shared): HPU threads are not pinned"}};
        at_key(d, &platform::hpu_contexts) = fmt::format(
            "= cores = {}: HPU threads are not pinned, any core runs them (the harnesses ran with HPU = CPU(s) {})", cores,
            cpus);
        at_key(p, &platform::apus) = {{"value", apus}, {"source", "bound on m*p (time-shared): APUs are threads, not hardware"}};
        at_key(d, &platform::apus) =
            max_threads > 0
                ? fmt::format("{}: APUs are threads, the bound on m*p given by --max-threads (not hardware)", apus)
                : fmt::format("{} = 4 x cores: APUs are threads, the default bound on m*p (--max-threads; not hardware)",
                              apus);
    }

    /// T_wake from the blocking and the spinning round trips; T_csw = the futex hand-off.
    void wake_and_switch(const nlohmann::json& spin_rt, const nlohmann::json& futex_rt, const nlohmann::json& csw) {
        const double spin = spin_rt.at("median").get<double>(), futex = futex_rt.at("median").get<double>();
        const double wake = std::max(0.0, (futex - spin) / 2);
        const double wake_spread = std::hypot(spin_rt.at("mad").get<double>(), futex_rt.at("mad").get<double>()) / 2;
        at_key(p, &platform::T_wake) = {{"value", wake}, {"unit", "s"}, {"median", wake}, {"spread", wake_spread},
                                        {"repetitions", std::min(spin_rt.value("repetitions", 0), futex_rt.value("repetitions", 0))},
                                        {"harness", "offload/futex-spin"},
                                        {"source", "(offload_futex - offload_spin) / 2, see _derivation.T_wake"}};
        at_key(d, &platform::T_wake) =
            fmt::format("waking a blocked thread while a core is idle = (measurements.offload_futex.median {:.3e} "
                        "- measurements.offload_spin.median {:.3e}) / 2 = {:.3e} s: the blocking round trip "
                        "(threads on two cores, each idle while it waits) wakes two blocked threads; spread = "
                        "sqrt(mad_futex^2 + mad_spin^2) / 2",
                        futex, spin, wake);
        at_key(p, &platform::T_csw) = param_from_record(csw);
        at_key(p, &platform::T_csw)["source"] = "csw harness: futex hand-off between two threads on one busy core, see _derivation.T_csw";
        at_key(d, &platform::T_csw) =
            fmt::format("waking a blocked thread when no core is idle = measurements.csw_futex.median = {:.3e} s "
                        "(futex hand-off between two threads pinned to one CPU: the off-load runtime blocks in "
                        "futex waits, not in sched_yield(); the sched_yield() hand-off is under "
                        "measurements.csw_yield)",
                        csw.at("median").get<double>());
    }

    /// spin_pause: one iteration of the off-load runtime's spin-wait.
    void spin_pause(const nlohmann::json& pause) {
        at_key(p, &platform::spin_pause) = param_from_record(pause);
        at_key(p, &platform::spin_pause)["source"] = "spin harness: one iteration of the off-load runtime's spin-wait loop";
        const nlohmann::json pd = pause.value("details", nlohmann::json::object());
        at_key(d, &platform::spin_pause) = fmt::format(
            "measurements.spin_pause.median = {:.3e} s: one iteration of the off-load runtime's spin-wait (wait_change(): "
            "acquire load of an unchanging 32-bit word + {} + counter test), {} repetitions of {} iterations timed in "
            "blocks of {}, pinned to CPU {}",
            pause.at("median").get<double>(), pd.value("pause_instruction", "pause"), pause.value("repetitions", 0),
            pd.value("iterations_per_repetition", 0L), pd.value("iterations_per_observation", 0L), pd.value("cpu", -1));
    }

    /// sched_slice, or a note that it could not be measured.
    void sched_slice(const nlohmann::json& slice) {
        const nlohmann::json sd = slice.value("details", nlohmann::json::object());
        if (!slice.value("measurable", false)) {
            p.erase(std::string(key_of(&platform::sched_slice)));
            at_key(d, &platform::sched_slice) = "not written: " + slice.value("reason", std::string("unmeasurable"));
            // Once: described again (--from its own output), the note was added each time.
            const std::string note = "sched_slice not written (time-shared): " + slice.value("reason", std::string("unmeasurable"));
            if (p.contains("notes") && p["notes"].is_array() &&
                std::find(p["notes"].begin(), p["notes"].end(), nlohmann::json(note)) == p["notes"].end())
                p["notes"].push_back(note);
            return;
        }
        at_key(p, &platform::sched_slice) = param_from_record(slice);
        at_key(p, &platform::sched_slice)["source"] = "spin harness: scheduler time slice of two CPU-bound threads sharing a CPU";
        std::string tenure = sd.contains("tenure_median_s") && sd["tenure_median_s"].is_number()
                                 ? fmt::format("; the median tenure (CPU taken from the sibling until handed back, "
                                               "other gaps included) was {:.3e} s",
                                               sd["tenure_median_s"].get<double>())
                                 : std::string();
        at_key(d, &platform::sched_slice) = fmt::format(
            "measurements.sched_slice.median = {:.3e} s: median length of the uninterrupted runs (between two gaps "
            "> {:.0f} us in a thread's own time stamps) of {} CPU-bound threads {}, {} slices in {:.2f} s{}{}",
            slice.at("median").get<double>(), 1e6 * sd.value("gap_threshold_s", 20e-6), sd.value("threads", 2),
            slice.value("pinned", false) ? fmt::format("pinned to CPU {}", sd.value("cpu", -1))
                                         : std::string("unpinned (pinning refused), two per CPU"),
            slice.value("observations", 0), sd.value("duration_s", 0.0), tenure,
            slice.value("flagged", false) ? " (flagged: " + slice.value("warning", std::string("noisy")) + ")" : "");
    }

    /// T_wake_busy from the hand-back harness (profiles calibrated before it lack its record).
    void wake_busy() {
        if (!p["measurements"].contains("wake_busy")) {
            // As sched_slice: a value without its record is not kept (once kept, old, beside "not written").
            p.erase(std::string(key_of(&platform::T_wake_busy)));
            at_key(d, &platform::T_wake_busy) =
                "not written: the profile has no measurements.wake_busy (calibrated by an older mmgp)";
            return;
        }
        const nlohmann::json& wb = p["measurements"]["wake_busy"];
        const nlohmann::json wd = wb.value("details", nlohmann::json::object());
        at_key(p, &platform::T_wake_busy) = param_from_record(wb);
        at_key(p, &platform::T_wake_busy)["source"] = "spin harness: processor time of one hand-back to a blocked thread "
                                                      "when more threads are runnable than cores";
        at_key(d, &platform::T_wake_busy) = fmt::format(
            "measurements.wake_busy.median = {:.3e} s: {} pairs of unpinned threads on {} CPUs, each an HPU thread "
            "that blocks while its APU thread works {:.0f} us and then waits like the off-load runtime ({} spin "
            "iterations, then a futex wait); (wall - ideal) x cpus / (rounds x pairs), {} repetitions{}",
            wb.at("median").get<double>(), wd.value("pairs", 0), wd.value("cpus", 0), 1e6 * wd.value("work_s", 0.0),
            wd.value("spin_limit", 0L), wb.value("repetitions", 0),
            wb.value("flagged", false) ? " (flagged: " + wb.value("warning", std::string("noisy")) + ")" : "");
    }
};

}  // namespace

namespace {

// A JSON value's kind, for a message ("a string", "the number 3").
std::string kind_of(const nlohmann::json& v) {
    if (v.is_number()) return "the number " + v.dump();
    if (v.is_string()) return "a string";
    if (v.is_boolean()) return "a boolean";
    if (v.is_array()) return "an array";
    if (v.is_object()) return "an object";
    return "null";
}

// The members describe_time_shared() reads, of the types mmgp calibrate writes them: one of another type is named
// by its own pointer (once every such member was "/measurements", with the JSON library's text as the reason).
void check_shapes(const nlohmann::json& p) {
    using J = nlohmann::json;
    const auto need = [](const J& parent, const std::string& at, const char* key, bool (J::*is)() const noexcept,
                         const char* what) {
        if (parent.contains(key) && !(parent[key].*is)())
            throw incomplete_profile(at + "/" + key, what, kind_of(parent[key]));
    };
    const auto integers = [](const J& parent, const std::string& at, const char* key) {
        if (!parent.contains(key)) return;
        const J& v = parent[key];
        if (!v.is_array()) throw incomplete_profile(at + "/" + key, "a list of CPU numbers", kind_of(v));
        for (std::size_t i = 0; i < v.size(); ++i)
            if (!v[i].is_number_integer())
                throw incomplete_profile(fmt::format("{}/{}/{}", at, key, i), "a CPU number", kind_of(v[i]));
    };
    if (!p.is_object()) return;
    need(p, "", "description", &J::is_string, "a text");
    need(p, "", "notes", &J::is_array, "a list of texts");
    need(p, "", "calibration", &J::is_object, "the calibration's settings (an object)");
    if (p.contains("calibration")) {
        integers(p["calibration"], "/calibration", "hpu_cpus");
        integers(p["calibration"], "/calibration", "apu_cpus");
    }
    if (p.contains("machine") && p["machine"].is_object())
        need(p["machine"], "/machine", "topology_source", &J::is_string, "a text");
    if (!p.contains("measurements") || !p["measurements"].is_object()) return;
    for (const char* key : {"offload_spin", "offload_futex", "csw_futex", "spin_pause", "sched_slice", "wake_busy"}) {
        const J& m = p["measurements"];
        if (!m.contains(key) || !m[key].is_object()) continue;
        const J& r = m[key];
        const std::string at = std::string("/measurements/") + key;
        const bool round_trip = key == std::string_view("offload_spin") || key == std::string_view("offload_futex");
        const bool unmeasured = key == std::string_view("sched_slice") && !r.value("measurable", false);
        // A number; null only where the harness had none to give (an unmeasurable sched_slice's median, a cv of no
        // mean), never in what the description computes with (the median, and the round trips' mad).
        for (const char* number : {"median", "mad", "cv", "min", "repetitions"}) {
            const bool computed = (number == std::string_view("median") && !unmeasured) ||
                                  (number == std::string_view("mad") && round_trip);
            if (r.contains(number) && !r[number].is_number() && (computed || !r[number].is_null()))
                throw incomplete_profile(at + "/" + number, "a number", kind_of(r[number]));
        }
        // The harness's details the description quotes: numbers, and the pause instruction's name.
        if (r.contains("details") && r["details"].is_object())
            need(r["details"], at + "/details", "pause_instruction", &J::is_string, "a text");
        for (const char* k : {"cpu", "threads", "gap_threshold_s", "duration_s", "tenure_median_s", "pairs", "cpus",
                              "work_s", "spin_limit", "iterations_per_repetition", "iterations_per_observation"})
            if (r.contains("details") && r["details"].is_object() && r["details"].contains(k) &&
                !r["details"][k].is_number())
                throw incomplete_profile(at + "/details/" + k, "a number", kind_of(r["details"][k]));
        // What the description reads of each record (param_from_record: the whole record; the round trips: their
        // median and mad), where it is missing.
        const std::vector<const char*> read = round_trip ? std::vector<const char*>{"median", "mad"}
                                              : unmeasured ? std::vector<const char*>{}
                                                           : std::vector<const char*>{"median", "mad", "cv", "min", "ci95",
                                                                                      "repetitions", "name"};
        for (const char* k : read)
            if (!r.contains(k))
                throw incomplete_profile(at + "/" + k, std::string("the harness record's ") + k +
                                                           " (a profile written by mmgp calibrate)",
                                         "nothing (the key is missing)");
        if (r.contains("ci95") && !r["ci95"].is_array() && !r["ci95"].is_null())
            throw incomplete_profile(at + "/ci95", "an interval [low, high]", kind_of(r["ci95"]));
        need(r, at, "name", &J::is_string, "the harness's name");
        need(r, at, "unit", &J::is_string, "a unit");
        need(r, at, "flagged", &J::is_boolean, "true or false");
        need(r, at, "warning", &J::is_string, "a text");
        need(r, at, "measurable", &J::is_boolean, "true or false");
        need(r, at, "reason", &J::is_string, "a text");
        need(r, at, "details", &J::is_object, "the harness's details (an object)");
    }
}

}  // namespace

void describe_time_shared(nlohmann::json& p, int max_threads) {
    check_shapes(p);
    // At most what an int holds, and a quarter of it where 4 x cores is the bound on m*p.
    const long long most = max_threads > 0 ? std::numeric_limits<int>::max() : std::numeric_limits<int>::max() / 4;
    if (!p.contains("machine") || !p["machine"].is_object() || !p["machine"].contains("cores") ||
        !p["machine"]["cores"].is_number_integer() || p["machine"]["cores"].get<long long>() < 1 ||
        p["machine"]["cores"].get<long long>() > most)
        throw incomplete_profile("/machine/cores",
                                 fmt::format("the machine's core count (a positive integer, at most {})", most),
                                 p.contains("machine") && p["machine"].is_object() && p["machine"].contains("cores")
                                     ? kind_of(p["machine"]["cores"])
                                     : "nothing of that shape");
    const int cores = p["machine"]["cores"].get<int>();
    const int apus = max_threads > 0 ? max_threads : 4 * cores;
    const nlohmann::json& spin_rt = record(p, "offload_spin");
    const nlohmann::json& futex_rt = record(p, "offload_futex");
    const nlohmann::json& pause = record(p, "spin_pause");
    const nlohmann::json& slice = record(p, "sched_slice");
    const nlohmann::json& csw = record(p, "csw_futex");
    nlohmann::json d = nlohmann::json::object();
    time_shared_profile ts{p, d};
    ts.counts(cores, apus, max_threads);
    ts.wake_and_switch(spin_rt, futex_rt, csw);
    ts.spin_pause(pause);
    ts.sched_slice(slice);
    ts.wake_busy();
    p["_derivation"] = d;
    p["calibration"]["time_shared"] = true;
    p["calibration"]["max_threads"] = apus;
    std::string description = p.value("description", std::string());
    if (auto at = description.find(time_shared_sentence); at != std::string::npos) description.erase(at);
    p["description"] = description +
                       fmt::format(" Time-shared cores (--time-shared): HPU and APU threads are unpinned software "
                                   "threads sharing the {} cores, at most {} of them (m*p).",
                                   cores, apus);
}

int nodes_of_network(const nlohmann::json& network) {
    int nodes = 1;
    if (network.is_object() && network.contains("tables") && network["tables"].is_array())
        for (const auto& t : network["tables"])
            if (t.is_object() && t.contains("nodes") && t["nodes"].is_number_integer())
                nodes = std::max(nodes, t["nodes"].get<int>());
    return nodes;
}

namespace {

using clk = std::chrono::steady_clock;

/// The progress line of each step: "[i/n] what (elapsed, about N s left)", the time left from each harness's share.
struct progress_steps {
    const calibrate_settings& s;
    clk::time_point start;

    void operator()(int i, const char* what) const {
        if (!s.progress) return;
        // Each harness's share of a run (a --quick run here: 2.4, 0.05, 0.4, 0.3, 0.1, 1.6 s, the MPI tables
        // about 3 s), for the estimate of the time left after the first harness.
        static constexpr double share[] = {2.4, 0.05, 0.4, 0.3, 0.1, 1.6, 0.05, 3.0};
        const int steps = s.mpi ? 8 : 7;
        const double elapsed = std::chrono::duration<double>(clk::now() - start).count();
        double done = 0, left = 0;
        for (int k = 0; k < steps; ++k) (k < i - 1 ? done : left) += share[k == steps - 1 ? 6 : k == 6 ? 7 : k];
        s.progress(i == 1 ? fmt::format("[{}/{}] {} (0.0 s)", i, steps, what)
                          : fmt::format("[{}/{}] {} ({:.1f} s, about {:.0f} s left)", i, steps, what, elapsed,
                                        elapsed * left / done));
    }
};

/// What every harness measured.
struct measured {
    measurement off_spin, off_futex, gap, csw_yield, csw_futex;
    alpha_result alpha;
    dma_result dma;
    measurement spin;
    slice_result slice;
    measurement wake_busy;
    nlohmann::json network;  ///< --mpi: the network section; null otherwise
};

measured run_harnesses(const harness_options& o, const calibrate_settings& s, const topology& topo,
                       const progress_steps& step) {
    measured m;
    step(1, "off-load round trip");
    m.off_spin = run_offload(o, wait_mode::spin);
    m.off_futex = run_offload(o, wait_mode::futex);
    step(2, "gap between back-to-back off-loads");
    m.gap = run_gap(o);
    step(3, "context switch");
    m.csw_yield = run_csw(o, csw_mode::yield);
    m.csw_futex = run_csw(o, csw_mode::futex);
    step(4, "host contention alpha");
    m.alpha = run_alpha(o);
    step(5, "data transfer");
    m.dma = run_dma(o);
    step(6, "spin-wait iteration, scheduler time slice, hand-back on oversubscribed cores");
    m.spin = run_spin_pause(o);
    m.slice = run_sched_slice(o);
    m.wake_busy = run_wake_busy(o);
    if (s.mpi) {
        step(7, "MPI allreduce and send/recv");
        mpi_settings ms;
        ms.quick = s.quick;
        ms.cores = static_cast<int>(topo.cores.size());
        ms.progress = s.progress;
        m.network = measure_network(ms);
    }
    return m;
}

/// hpu_contexts, apus and nodes: the roles the harnesses ran with, the nodes the network tables reach.
void write_counts(nlohmann::json& p, const roles& r, const topology& topo, const nlohmann::json& network) {
    at_key(p, &platform::hpu_contexts) = {
        {"value", static_cast<int>(r.hpu.size())},
        {"source", fmt::format("{}: hardware contexts given the HPU role (CPUs {})", topo.source, fmt::join(r.hpu, ","))}};
    at_key(p, &platform::apus) = {
        {"value", static_cast<int>(r.apu.size())},
        {"source", fmt::format("{}: cores given the APU role, one context each (CPUs {})", topo.source, fmt::join(r.apu, ","))}};
    at_key(p, &platform::nodes) = {{"value", 1}, {"source", "one machine measured"}};
    const int table_nodes = nodes_of_network(network);  // --mpi: the tables reach across the emulated nodes
    if (table_nodes > 1)
        at_key(p, &platform::nodes) = {
            {"value", table_nodes},
            {"source", fmt::format("calibrate --mpi: the network tables were measured on {} nodes (network "
                                   "namespaces of this machine); --set platform.nodes=N predicts more, the "
                                   "communication then extrapolated by the latency-bandwidth model fitted "
                                   "to the tables",
                                   table_nodes)}};
}

/// O_offload, T_csw, alpha, dma and network: the fitted parameters.
void write_costs(nlohmann::json& p, const measured& m) {
    at_key(p, &platform::O_offload) = to_param(m.off_spin);
    at_key(p, &platform::O_offload)["source"] = "offload harness, spinning cache-line mailbox, 4-byte payload (the "
                                                "blocking futex variant is under measurements.offload_futex)";
    at_key(p, &platform::T_csw) = to_param(m.csw_yield);
    at_key(p, &platform::T_csw)["source"] = "csw harness: two threads pinned to one HPU context handing off with "
                                            "sched_yield() (futex hand-off under measurements.csw_futex)";
    at_key(p, &platform::alpha) = alpha_json(m.alpha);
    at_key(p, &platform::dma) = dma_json(m.dma);
    if (!m.network.is_null()) at_key(p, &platform::comm_tables) = m.network;
}

/// Every harness's record, and a note for each measurement flagged noisy.
void write_measurements(nlohmann::json& p, const measured& m) {
    p["measurements"] = {{"offload_spin", to_json(m.off_spin)}, {"offload_futex", to_json(m.off_futex)},
                         {"gap", to_json(m.gap)},               {"csw_yield", to_json(m.csw_yield)},
                         {"csw_futex", to_json(m.csw_futex)},   {"spin_pause", to_json(m.spin)},
                         {"sched_slice", slice_json(m.slice)},  {"wake_busy", to_json(m.wake_busy)}};
    nlohmann::json notes = nlohmann::json::array();
    notes.push_back("g (gap) is an application parameter in mmgp/1; its measured value is under measurements.gap.");
    std::vector<const measurement*> all = {&m.off_spin, &m.off_futex, &m.gap,     &m.csw_yield,
                                           &m.csw_futex, &m.spin,     &m.slice.m, &m.wake_busy};
    for (const auto& a : m.alpha.per_m) all.push_back(&a);
    for (const auto& d : m.dma.per_size) all.push_back(&d);
    for (const auto* x : all)
        if (x->flagged) notes.push_back(x->name + ": " + x->warning);
    p["notes"] = notes;
}

}  // namespace

nlohmann::json calibrate_platform(const calibrate_settings& s) {
    const progress_steps step{s, clk::now()};
    topology topo = detect_topology();
    harness_options o;
    o.r = resolve_roles(topo, s.hpu_cpus, s.apu_cpus);
    o.quick = s.quick;
    o.cv_threshold = s.cv_threshold;
    o.progress = s.progress;
    o.retry_budget_s = s.quick ? 1.5 : 8.0;  // per harness, for repeating noisy measurements
    nlohmann::json machine = machine_info(topo);
    const measured m = run_harnesses(o, s, topo, step);
    step(s.mpi ? 8 : 7, "fitting");

    std::string host = machine.value("host_name", "host");
    nlohmann::json p;
    p["schema"] = "mmgp/1";
    p["kind"] = "platform";
    p["name"] = s.name.empty() ? "host-" + host : s.name;
    p["description"] = fmt::format("Measured by mmgp calibrate{} on {} ({}): HPU = CPU(s) {}, APU = CPU(s) {}, "
                                   "host-thread accelerator backend.",
                                   s.quick ? " --quick" : "", host, machine.value("cpu_model", "?"),
                                   fmt::join(o.r.hpu, ","), fmt::join(o.r.apu, ","));
    write_counts(p, o.r, topo, m.network);
    write_costs(p, m);
    p["machine"] = machine;
    double took = std::chrono::duration<double>(clk::now() - step.start).count();
    p["calibration"] = {{"tool", "mmgp calibrate"},
                        {"mode", s.quick ? "quick" : "full"},
                        {"duration_s", took},
                        {"hpu_cpus", o.r.hpu},
                        {"apu_cpus", o.r.apu},
                        {"backend", "host-thread"},
                        {"cv_threshold", s.cv_threshold}};
    write_measurements(p, m);
    if (s.time_shared) describe_time_shared(p, s.max_threads);
    return p;
}

roles gpu_host_roles(const topology& t, const std::string& hpu) {
    roles r;
    if (hpu.empty()) {
        for (const auto& c : t.cores) r.hpu.insert(r.hpu.end(), c.begin(), c.end());
        if (r.hpu.empty()) throw std::invalid_argument("no CPU this process may use");
        return r;
    }
    try {
        r.hpu = parse_cpu_list(hpu, t);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("--hpu-cpus: ") + e.what());
    }
    return r;
}

nlohmann::json calibrate_gpu_host(const calibrate_settings& s) {
    const clk::time_point start = clk::now();
    const topology topo = detect_topology();
    harness_options o;
    o.r = gpu_host_roles(topo, s.hpu_cpus);
    o.quick = s.quick;
    o.cv_threshold = s.cv_threshold;
    o.progress = s.progress;
    o.retry_budget_s = s.quick ? 1.5 : 8.0;
    auto step = [&](int i, const char* what) {
        if (s.progress) s.progress(fmt::format("[{}/2] {} on the host's {} context(s)", i, what, o.r.hpu.size()));
    };
    step(1, "context switch");
    const measurement csw_yield = run_csw(o, csw_mode::yield), csw_futex = run_csw(o, csw_mode::futex);
    step(2, "host contention alpha");
    const alpha_result alpha = run_alpha(o);
    const nlohmann::json machine = machine_info(topo);
    nlohmann::json p;
    p["schema"] = "mmgp/1";
    p["kind"] = "platform";
    p["name"] = s.name.empty() ? "gpu-node" : s.name;
    at_key(p, &platform::hpu_contexts) = {
        {"value", static_cast<int>(o.r.hpu.size())},
        {"source", fmt::format("{}: every hardware context the processes may use is a host context on a GPU node "
                               "(CPUs {}; the accelerators are the GPU's SMs)",
                               topo.source, fmt::join(o.r.hpu, ","))}};
    at_key(p, &platform::nodes) = {{"value", 1}, {"source", "one machine measured"}};
    at_key(p, &platform::T_csw) = to_param(csw_yield);
    at_key(p, &platform::T_csw)["source"] = "csw harness: two threads pinned to one host context handing off with "
                                            "sched_yield() (futex hand-off under measurements.csw_futex)";
    at_key(p, &platform::alpha) = alpha_json(alpha);
    p["machine"] = machine;
    p["calibration"] = {{"tool", "mmgp calibrate"},
                        {"mode", s.quick ? "quick" : "full"},
                        {"duration_s", std::chrono::duration<double>(clk::now() - start).count()},
                        {"hpu_cpus", o.r.hpu},
                        {"apu_cpus", nlohmann::json::array()},
                        {"cv_threshold", s.cv_threshold}};
    p["measurements"] = {{"csw_yield", to_json(csw_yield)}, {"csw_futex", to_json(csw_futex)}};
    nlohmann::json notes = nlohmann::json::array();
    std::vector<const measurement*> all = {&csw_yield, &csw_futex};
    for (const auto& a : alpha.per_m) all.push_back(&a);
    for (const auto* x : all)
        if (x->flagged) notes.push_back(x->name + ": " + x->warning);
    p["notes"] = notes;
    return p;
}

}  // namespace mmgp::calib
