// Internal: the keys of the documents of schema mmgp/1 that are not profiles: a validation file, its cases, a runs
// file and its runs. The readers reject any other key (besides provenance keys) and list these in the message.
// The profiles' keys are tables of their own, beside their readers: mmgp/profile_keys.hpp (platform,
// application) and profile/scenario.cpp (a scenario's sections and its search space).
#pragma once

#include <span>
#include <string_view>

namespace mmgp::detail::schema {

/// One key of a profile type; `required` when the reader refuses its absence.
struct key {
    std::string_view name;
    bool required;
};

inline constexpr key validation[] = {{"scenario", false}, {"cases", true}, {"group", false}};

inline constexpr key validation_case[] = {{"label", false},    {"group", false},      {"scenario", false}, {"application", false},
                                          {"platform", false}, {"m", true},           {"p", true},         {"nodes", false},
                                          {"policy", false},   {"measured_s", true},  {"censored", false}, {"role", false},
                                          {"runs", false},     {"mapping", false},    {"message", false},  {"sharing", false}};

inline constexpr key runs_document[] = {{"runs", true}};

inline constexpr key run[] = {{"m", true},    {"p", true},      {"nodes", false}, {"units", false},
                              {"time_s", true}, {"policy", false}, {"label", false}, {"sharing", false}};

}  // namespace mmgp::detail::schema
