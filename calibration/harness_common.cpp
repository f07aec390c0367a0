#include "harness_common.hpp"
#include "mmgp/error.hpp"

#include <stdexcept>

namespace mmgp::calib {

namespace detail {

void say(const harness_options& o, const std::string& s) {
    if (o.progress) o.progress(s);
}

int reps_or(const harness_options& o, int quick, int full) {
    return o.repetitions > 0 ? o.repetitions : (o.quick ? quick : full);
}

measurement make(std::string name, std::string harness, const std::vector<double>& obs,
                 const std::vector<double>& per_rep) {
    measurement m;
    m.name = std::move(name);
    m.harness = std::move(harness);
    m.obs = summarize(obs);
    m.reps = summarize(per_rep);
    m.value = m.obs.median;
    m.repetitions = static_cast<int>(per_rep.size());
    m.observations = obs.size();
    return m;
}

int hpu0(const harness_options& o) {
    if (o.r.hpu.empty()) throw mmgp::failure("no HPU context");
    return o.r.hpu.front();
}
int apu0(const harness_options& o) {
    if (o.r.apu.empty()) throw mmgp::failure("no APU core");
    return o.r.apu.front();
}

}  // namespace detail

using namespace detail;

double clock_overhead() {
    std::vector<double> d(2001);
    for (auto& x : d) {
        auto a = clk::now();
        auto b = clk::now();
        x = secs(b - a);
    }
    return median(d);
}

namespace {

// What the report's record and the profile's parameter both say of a measurement: its value and unit, the
// observations' median, MAD, minimum and 95 % interval, the repetitions and their CV, and whether it is flagged.
nlohmann::json common_fields(const measurement& m) {
    nlohmann::json j;
    j["value"] = m.value;
    j["unit"] = m.unit;
    j["median"] = m.obs.median;
    j["mad"] = m.obs.mad;
    j["min"] = m.obs.min;
    j["ci95"] = {m.obs.ci95_lo, m.obs.ci95_hi};
    j["repetitions"] = m.repetitions;
    j["cv"] = m.reps.cv;
    j["flagged"] = m.flagged;
    if (!m.warning.empty()) j["warning"] = m.warning;
    return j;
}

}  // namespace

nlohmann::json to_json(const measurement& m) {
    nlohmann::json j = common_fields(m);
    j["name"] = m.name;
    j["harness"] = m.harness;
    j["run_type"] = "aggregate";
    j["mean"] = m.obs.mean;
    j["stddev"] = m.obs.stddev;
    j["max"] = m.obs.max;
    j["observations"] = m.observations;
    j["repetition_medians"] = {{"median", m.reps.median}, {"mad", m.reps.mad}, {"min", m.reps.min}, {"max", m.reps.max}};
    j["attempts"] = m.attempts;
    if (!m.extra.empty()) j["details"] = m.extra;
    return j;
}

nlohmann::json to_param(const measurement& m) {
    nlohmann::json j = common_fields(m);
    j["spread"] = m.obs.mad;
    j["harness"] = m.name;
    return j;
}

}  // namespace mmgp::calib
