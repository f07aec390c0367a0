// The fuzz targets' bodies, shared by the libFuzzer entry points (fuzz_*.cpp) and the unit test that
// replays the seed corpus and every past finding (tests/test_regressions.cpp).
// Every input must end in a result or an mmgp::error; a crash, a sanitizer report, another exception or
// a NaN prediction from an accepted scenario is a finding.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

#include "mmgp/fit.hpp"
#include "mmgp/model.hpp"
#include "mmgp/search.hpp"
#include "mmgp/validate.hpp"
#include "mmgp/wavefront.hpp"

namespace mmgp::fuzz {

/// JSON text -> validated scenario -> one prediction per model. Returns true when accepted.
inline bool profile_one(const std::string& text) {
    try {
        mmgp::scenario s = mmgp::parse_scenario(text, "fuzz.json", "/nonexistent");
        (void)mmgp::count_feasible(s);
        if (s.app.has_wavefront)
            for (auto wm : {mmgp::wave_mapping::accelerator_driven, mmgp::wave_mapping::host_driven})
                for (int nodes : {1, s.plat.nodes}) {
                    const auto t = mmgp::wavefront_time(s.plat, s.app.wave, wm, {wm == mmgp::wave_mapping::accelerator_driven ? s.plat.apus : 1,
                                                                                 wm == mmgp::wave_mapping::accelerator_driven ? 1 : s.plat.apus, nodes, mmgp::policy::edtlp});
                    if (t.valid && std::isnan(t.time_s)) std::abort();
                }
        for (auto kind : {mmgp::model_kind::mmgp, mmgp::model_kind::eq11}) {
            try {
                mmgp::evaluator ev(s, kind);
                mmgp::configuration c{static_cast<int>(s.space.m.lo), static_cast<int>(s.space.p.lo),
                                      static_cast<int>(s.space.nodes.lo), s.space.pol};
                if (std::isnan(ev(c).time_s)) std::abort();
            } catch (const mmgp::error&) {
            }
        }
        return true;
    } catch (const mmgp::error&) {
        return false;
    }
}

/// Measurements (CSV or JSON) -> parsed and fitted; JSON also read as a validation file.
inline bool runs_one(const std::string& text) {
    const bool as_json = !text.empty() && (text[0] == '{' || text[0] == '[');
    bool accepted = false;
    try {
        auto runs = mmgp::parse_runs(text, "fuzz.csv", as_json);
        accepted = true;
        if (runs.size() <= 64) {
            mmgp::platform pl;
            pl.name = "fuzz";
            pl.hpu_contexts = 2;
            pl.apus = 16;
            pl.nodes = 4;
            pl.O_offload = 1e-6;
            pl.T_csw = 2e-6;
            pl.alpha.value = 1.2;
            (void)mmgp::fit_application(pl, runs, {}, "fuzz.csv");
        }
    } catch (const mmgp::error&) {
    }
    if (as_json) {
        const std::string path = "/tmp/mmgp-fuzz-validation-" + std::to_string(getpid()) + ".json";
        if (FILE* f = std::fopen(path.c_str(), "wb")) {
            std::fwrite(text.data(), 1, text.size(), f);
            std::fclose(f);
            try {
                (void)mmgp::run_validation(path, mmgp::model_kind::mmgp);
                accepted = true;
            } catch (const mmgp::error&) {
            }
            std::remove(path.c_str());
        }
    }
    return accepted;
}

}  // namespace mmgp::fuzz
