// Internal: the keys of each profile type of schema mmgp/1, in one place. The readers reject any
// other key (besides provenance keys) and list these in the message; the documentation's key tables
// (docs/PROFILES.md) are checked against them by tests/test_profile.cpp.
#pragma once

#include <span>
#include <string_view>

namespace mmgp::detail::schema {

/// One key of a profile type; `required` when the reader refuses its absence.
struct key {
    std::string_view name;
    bool required;
};

inline constexpr key platform[] = {
    {"hpu_contexts", true}, {"apus", true},    {"nodes", false},       {"max_processes_per_node", false},
    {"O_offload", true},    {"T_csw", true},   {"alpha", true},        {"dma", false},
    {"network", false},     {"cores", false},  {"T_wake", false},      {"T_wake_busy", false},
    {"spin_pause", false},  {"sched_slice", false}, {"hierarchy", false}};

inline constexpr key application[] = {
    {"decomposition", false}, {"scaling", false},  {"N", true},           {"T_hpu", true},      {"T_apu", true},
    {"C_apu", true},          {"g", true},         {"O_col", false},      {"units", false},     {"dma_bytes", false},
    {"communication", false}, {"g_charge", false}, {"spin_limit", false}, {"T_start", false},   {"N_start", false},
    {"T_offload_idle", false}, {"wavefront", false}};

inline constexpr key search[] = {{"m", false}, {"p", false}, {"nodes", false}, {"policy", false}, {"tolerance", false}};

inline constexpr key scenario[] = {{"platform", true}, {"application", true}, {"search", false}};

inline constexpr key validation[] = {{"scenario", false}, {"cases", true}, {"group", false}};

inline constexpr key validation_case[] = {{"label", false},    {"group", false},      {"scenario", false}, {"application", false},
                                          {"platform", false}, {"m", true},           {"p", true},         {"nodes", false},
                                          {"policy", false},   {"measured_s", true},  {"censored", false}, {"role", false},
                                          {"runs", false},     {"mapping", false},    {"message", false}};

inline constexpr key runs_document[] = {{"runs", true}};

inline constexpr key run[] = {{"m", true},    {"p", true},      {"nodes", false}, {"units", false},
                              {"time_s", true}, {"policy", false}, {"label", false}};

}  // namespace mmgp::detail::schema
