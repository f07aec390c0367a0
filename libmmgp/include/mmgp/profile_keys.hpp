// mmgp/profile_keys.hpp — the keys of a platform and of an application profile (schema "mmgp/1"), one table per
// profile type. A row gives a key's name, whether the readers require it, the unit its errors name, the member it
// fills, whether `mmgp predict --uncertainty` varies it, and its line of docs/PROFILES.md; the tables name each
// field they set (`{.name = "T_csw", .required = true, ...}`), and a field left out takes the default below. The readers (which keys
// they accept, how and in which member they read each, the list an unknown key is told), `mmgp calibrate`'s
// writer, the uncertainty sampler and the documentation's key tables all come from these tables; they are
// defined beside their readers (profile/platform.cpp, profile/application.cpp).
//
//   for (const mmgp::platform_key& k : mmgp::platform_keys()) std::cout << k.name << '\n';
//   mmgp::key_of(&mmgp::platform::T_wake);   // "T_wake"
#pragma once

#include "mmgp/profile.hpp"

#include <cstdint>
#include <span>
#include <string_view>
#include <variant>
#include <vector>

MMGP_API_BEGIN
namespace mmgp {

/// What `mmgp predict --uncertainty` does with the spread written beside a key's value.
enum class key_sampling {
    fixed,       ///< never varied (a count, a choice, a structure)
    log_normal,  ///< varied log-normally: the spread as a standard deviation relative to the value
};

/// One key of a platform profile.
struct platform_key {
    /// The member the key fills; the reader reads each type its own way: counts (integers >= 1), numbers (finite,
    /// >= 0, in `unit`), the contention α(m), a link cost, the network's tables (and the models given beside them,
    /// platform::comm_models), the hierarchy, the sharing modes, the accelerator's time against its resident blocks.
    using member_type = std::variant<int platform::*, double platform::*, m_function platform::*, link_cost platform::*,
                                     std::vector<comm_table> platform::*, hierarchy platform::*,
                                     std::vector<accelerator_sharing> platform::*, slot_curve platform::*>;
    std::string_view name;
    bool required = false;
    const char* unit = "";    ///< numbers: the unit errors name ("seconds"); "" for other shapes
    member_type member;
    key_sampling spread = key_sampling::fixed;
    bool time_shared = false;  ///< describes time-shared cores only: refused without `cores`
    std::string_view shown_default = {};  ///< docs/PROFILES.md: the default, as "no (...)" shows it; empty: none shown
    std::string_view meaning = {};        ///< docs/PROFILES.md: what the key is
};

/// One key of an application profile.
struct application_key {
    /// The member the key fills (numbers: finite, >= 0, in `unit`).
    using member_type = std::variant<double application::*, std::int64_t application::*, decomposition application::*,
                                     scaling application::*, gap_charge application::*, m_function application::*,
                                     std::vector<comm_pattern> application::*, wavefront application::*,
                                     slot_curve application::*>;
    std::string_view name;
    bool required = false;    ///< a `wavefront` makes the work keys optional; `units` is required with `task`
    const char* unit = "";    ///< numbers: the unit errors name ("seconds"); "" for other shapes
    member_type member;
    key_sampling spread = key_sampling::fixed;
    std::string_view shown_default = {};  ///< docs/PROFILES.md: the default, as "no (...)" shows it; empty: none shown
    std::string_view meaning = {};        ///< docs/PROFILES.md: what the key is
};

/// The keys of a platform profile, in the order an unknown key's error lists them.
std::span<const platform_key> platform_keys() noexcept;
/// The keys of an application profile, in the order an unknown key's error lists them.
std::span<const application_key> application_keys() noexcept;

/// The key a platform profile writes `member` under (&platform::T_wake: "T_wake"); empty when no key fills it.
template <class T>
std::string_view key_of(T platform::*member) noexcept {
    for (const platform_key& k : platform_keys())
        if (const auto* m = std::get_if<T platform::*>(&k.member); m && *m == member) return k.name;
    return {};
}

/// The key an application profile writes `member` under (&application::T_apu: "T_apu"); empty when none.
template <class T>
std::string_view key_of(T application::*member) noexcept {
    for (const application_key& k : application_keys())
        if (const auto* m = std::get_if<T application::*>(&k.member); m && *m == member) return k.name;
    return {};
}

}  // namespace mmgp
MMGP_API_END
