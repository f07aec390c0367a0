// A run as the model predicts it for a known application: the synthetic data of the fit's tests and benchmark.
#pragma once

#include <cstdint>
#include <string>

#include "mmgp/fit.hpp"
#include "mmgp/model.hpp"

namespace mmgp::test {

/// An application with the fitted fields given.
inline application known_app(decomposition d, double T_hpu, double T_apu, double C_apu, double N, double g) {
    application a;
    a.decomp = d;
    a.T_hpu = T_hpu;
    a.T_apu = T_apu;
    a.C_apu = C_apu;
    a.N = N;
    a.g = g;
    return a;
}

/// One run of configuration (m, p) on one node under `pol`, with `units` task units, timed by the model for `truth`:
/// a measurement of one run (the fit takes the runs of every measurement, in order).
inline measurement model_run(const platform& pl, const application& truth, int m, int p, std::int64_t units,
                              policy pol = policy::edtlp) {
    scenario s;
    s.plat = pl;
    s.app = truth;
    s.app.units = units;
    s.space.m = {m, m};
    s.space.p = {p, p};
    measurement run{{m, p, 1, pol}, units};
    run.runs.push_back({evaluator(s, model_kind::mmgp)(run.c).time_s});
    run.runs[0].where = "generated";
    return run;
}

/// The time of a measurement's first run.
inline double& time_of(measurement& m) { return m.runs.at(0).time_s; }
inline double time_of(const measurement& m) { return m.runs.at(0).time_s; }

}  // namespace mmgp::test
