// The scenario the tuner's tests tune (tests/tune/test_tune.cpp, test_short_runs.cpp): a 4-context host with 16
// APUs and a task-decomposed program of 16 units, 100 off-loads each.
#pragma once

#include "mmgp/model.hpp"

inline mmgp::scenario tune_test_scenario() {
    mmgp::scenario s;
    s.name = "tune-test";
    s.plat.name = "test-host";
    s.plat.hpu_contexts = 4;
    s.plat.apus = 16;
    s.plat.O_offload = 1e-6;
    s.plat.T_csw = 3e-6;
    s.plat.alpha.kind = mmgp::m_function::form::constant;
    s.plat.alpha.value = 1.25;
    s.app.decomp = mmgp::decomposition::task;
    s.app.units = 16;
    s.app.N = 100;
    s.app.T_hpu = 2e-3;
    s.app.T_apu = 20e-3;
    s.app.C_apu = 1e-3;
    s.app.g = 2e-6;
    s.space.m = {1, 16};
    s.space.p = {1, 16};
    return s;
}
