// The runtime advisor's C API (mmgp/advisor.h): plain C over mmgp::advisor (advisor/advisor.cpp). Calls go one
// way, from a C runtime into the C++ advisor; every C++ exception is caught here and turned into a status.
#include "mmgp/advisor.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "mmgp/advisor.hpp"
#include "mmgp/error.hpp"

// The fields added since 0.1.0 sit in what was padding: the size and every older field's offset are those
// of 0.1.0, so a program built against the 0.1.0 header still passes and receives structs of the right size.
namespace {
struct options_0_1_0 {
    int model;
    double smoothing, min_gain;
    int refresh_every;
};
struct advice_0_1_0 {
    int m, p, action;
    double gain, time_s, time_p1_s;
    uint64_t version;
};
}  // namespace
static_assert(sizeof(mmgp_advisor_options) == sizeof(options_0_1_0));
static_assert(offsetof(mmgp_advisor_options, refresh_every) == offsetof(options_0_1_0, refresh_every));
static_assert(sizeof(mmgp_advice) == sizeof(advice_0_1_0));
static_assert(offsetof(mmgp_advice, gain) == offsetof(advice_0_1_0, gain));
static_assert(offsetof(mmgp_advice, version) == offsetof(advice_0_1_0, version));
// mmgp_sharing's values are mmgp::accelerator_sharing's.
static_assert(MMGP_SHARING_DEDICATED == static_cast<int>(mmgp::accelerator_sharing::dedicated));
static_assert(MMGP_SHARING_MPS == static_cast<int>(mmgp::accelerator_sharing::mps));
static_assert(MMGP_SHARING_TIME_SLICED == static_cast<int>(mmgp::accelerator_sharing::time_sliced));

struct mmgp_advisor {
    mmgp::advisor cpp;
    template <class... A>
    explicit mmgp_advisor(A&&... a) : cpp(std::forward<A>(a)...) {}
};

namespace {

void set_err(char* err, size_t size, const char* msg) noexcept {
    if (!err || size == 0) return;
    std::size_t n = std::min(std::strlen(msg), size - 1);
    std::memcpy(err, msg, n);
    err[n] = '\0';
}

int to_options(const mmgp_advisor_options* in, mmgp::advisor_options& out) noexcept {
    if (!in) return MMGP_OK;
    if (in->model != MMGP_MODEL_EQ11 && in->model != MMGP_MODEL_MMGP) return MMGP_E_INVALID_ARGUMENT;
    out.model = in->model == MMGP_MODEL_EQ11 ? mmgp::model_kind::eq11 : mmgp::model_kind::mmgp;
    out.smoothing = in->smoothing;
    out.min_gain = in->min_gain;
    out.refresh_every = in->refresh_every;
    out.explore_every = in->explore_every;
    return MMGP_OK;
}

// Runs make(options) and turns what it throws into a status and a message.
template <class Make>
int create(const mmgp_advisor_options* options, mmgp_advisor** out, char* err, size_t err_size, Make make) noexcept {
    set_err(err, err_size, "");
    if (!out) {
        set_err(err, err_size, "out: expected a pointer to a handle, found NULL");
        return MMGP_E_INVALID_ARGUMENT;
    }
    *out = nullptr;
    mmgp::advisor_options opt;
    if (to_options(options, opt) != MMGP_OK) {
        set_err(err, err_size, "options.model: expected MMGP_MODEL_EQ11 or MMGP_MODEL_MMGP");
        return MMGP_E_INVALID_ARGUMENT;
    }
    try {
        *out = make(opt);
        return MMGP_OK;
    } catch (const mmgp::usage_error& e) {  // an option out of range
        set_err(err, err_size, e.what());
        return MMGP_E_INVALID_ARGUMENT;
    } catch (const mmgp::error& e) {
        set_err(err, err_size, e.what());
        return MMGP_E_INPUT;
    } catch (const std::bad_alloc&) {
        set_err(err, err_size, "out of memory");
        return MMGP_E_NO_MEMORY;
    } catch (const std::exception& e) {
        set_err(err, err_size, e.what());
        return MMGP_E_INTERNAL;
    } catch (...) {
        set_err(err, err_size, "unknown error");
        return MMGP_E_INTERNAL;
    }
}

// One observation: MMGP_E_INVALID_ARGUMENT for a NULL handle or an invalid value (which the C++ advisor
// would silently ignore), otherwise observe(advisor).
template <class Observe>
int observe_if(mmgp_advisor* a, bool valid, Observe observe) noexcept {
    if (!a || !valid) return MMGP_E_INVALID_ARGUMENT;
    observe(a->cpp);
    return MMGP_OK;
}

bool is_duration(double seconds) noexcept { return seconds >= 0.0 && std::isfinite(seconds); }

void to_c(const mmgp::advice& in, mmgp_advice* out) noexcept {
    out->m = in.m;
    out->p = in.p;
    out->action = static_cast<int>(in.action);
    out->probe = in.probe ? 1 : 0;
    out->gain = in.gain;
    out->time_s = in.time_s;
    out->time_p1_s = in.time_p1_s;
    out->version = in.version;
}

}  // namespace

extern "C" {

unsigned mmgp_advisor_version(void) { return MMGP_ADVISOR_VERSION; }

const char* mmgp_advisor_status_string(int status) {
    switch (status) {
        case MMGP_OK: return "ok";
        case MMGP_E_INVALID_ARGUMENT: return "invalid argument";
        case MMGP_E_INPUT: return "bad input: the profile cannot be read or evaluated";
        case MMGP_E_NO_MEMORY: return "out of memory";
        case MMGP_E_INTERNAL: return "internal error";
        default: return "unknown status";
    }
}

mmgp_advisor_options mmgp_advisor_options_default(void) {
    mmgp::advisor_options d;
    return {MMGP_MODEL_MMGP, d.smoothing, d.min_gain, d.refresh_every, d.explore_every};
}

int mmgp_advisor_create(const char* scenario, const mmgp_advisor_options* options, mmgp_advisor** out, char* err,
                        size_t err_size) {
    if (!scenario) {
        if (out) *out = nullptr;
        set_err(err, err_size, "scenario: expected a path or bundled name, found NULL");
        return MMGP_E_INVALID_ARGUMENT;
    }
    return create(options, out, err, err_size,
                  [&](const mmgp::advisor_options& o) { return new mmgp_advisor(std::string(scenario), o); });
}

int mmgp_advisor_create_from(const char* platform, const char* application, const mmgp_advisor_options* options,
                             mmgp_advisor** out, char* err, size_t err_size) {
    if (!platform || !application) {
        if (out) *out = nullptr;
        set_err(err, err_size, "platform, application: expected paths or bundled names, found NULL");
        return MMGP_E_INVALID_ARGUMENT;
    }
    return create(options, out, err, err_size, [&](const mmgp::advisor_options& o) {
        return new mmgp_advisor(mmgp::load_platform(platform), mmgp::load_application(application), o);
    });
}

void mmgp_advisor_destroy(mmgp_advisor* advisor) { delete advisor; }

int mmgp_advisor_task_begin(mmgp_advisor* a) {
    return observe_if(a, true, [](mmgp::advisor& adv) { adv.task_begin(); });
}
int mmgp_advisor_task_end(mmgp_advisor* a) {
    return observe_if(a, true, [](mmgp::advisor& adv) { adv.task_end(); });
}
int mmgp_advisor_set_active_tasks(mmgp_advisor* a, int m) {
    return observe_if(a, m >= 0, [m](mmgp::advisor& adv) { adv.set_active_tasks(m); });
}
int mmgp_advisor_offload_start(mmgp_advisor* a, int p) {
    return observe_if(a, p >= 1, [p](mmgp::advisor& adv) { adv.offload_start(p); });
}
int mmgp_advisor_offload_end(mmgp_advisor* a, int p, double seconds) {
    return observe_if(a, p >= 1 && is_duration(seconds), [=](mmgp::advisor& adv) { adv.offload_end(p, seconds); });
}
int mmgp_advisor_host_gap(mmgp_advisor* a, double seconds) {
    return observe_if(a, is_duration(seconds), [=](mmgp::advisor& adv) { adv.host_gap(seconds); });
}
int mmgp_advisor_set_idle_apus(mmgp_advisor* a, int n) {
    return observe_if(a, n >= 0, [n](mmgp::advisor& adv) { adv.set_idle_apus(n); });
}
int mmgp_advisor_set_waiting_tasks(mmgp_advisor* a, int n) {
    return observe_if(a, n >= 0, [n](mmgp::advisor& adv) { adv.set_waiting_tasks(n); });
}

int mmgp_advisor_recommend(const mmgp_advisor* a, mmgp_advice* out) {
    if (!a || !out) return MMGP_E_INVALID_ARGUMENT;
    to_c(a->cpp.recommend(), out);
    return MMGP_OK;
}

int mmgp_advisor_recommend_for(const mmgp_advisor* a, int m, int max_p, mmgp_advice* out) {
    if (!a || !out || m < 1) return MMGP_E_INVALID_ARGUMENT;
    to_c(max_p <= 0 ? a->cpp.recommend(m) : a->cpp.recommend(m, max_p), out);
    return MMGP_OK;
}

int mmgp_advisor_refresh(mmgp_advisor* a) {
    if (!a) return MMGP_E_INVALID_ARGUMENT;
    try {
        a->cpp.refresh();
        return MMGP_OK;
    } catch (const std::bad_alloc&) {
        return MMGP_E_NO_MEMORY;
    } catch (...) {
        return MMGP_E_INTERNAL;
    }
}

int mmgp_advisor_get_estimates(const mmgp_advisor* a, mmgp_advisor_estimates* out) {
    if (!a || !out) return MMGP_E_INVALID_ARGUMENT;
    mmgp::advisor_estimates e = a->cpp.estimates();
    *out = {e.host_gap_s, e.apu_s, e.parallel_fraction, e.offloads_per_task, e.offloads, e.tasks};
    return MMGP_OK;
}

int mmgp_advisor_get_node(const mmgp_advisor* a, mmgp_advisor_node* out) {
    if (!a || !out) return MMGP_E_INVALID_ARGUMENT;
    *out = {a->cpp.apus(), a->cpp.capacity(), a->cpp.hpu_contexts(), a->cpp.max_tasks(), static_cast<int>(a->cpp.sharing())};
    return MMGP_OK;
}

}  // extern "C"
