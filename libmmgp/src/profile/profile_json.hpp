// Internal: the profile readers' shared steps. The bundled registry and references (profile/registry.cpp), the
// value shapes both profile types use (profile/values.cpp), the platform, application and scenario readers
// (profile/platform.cpp, profile/application.cpp, profile/scenario.cpp); fit/validate.cpp reads its scenarios
// through them. Readers read and check; of the model they call only check_coverage (model/coverage.cpp) on a
// scenario read (the evaluator fits the communication models and checks the rest of the coverage).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "base/json_reader.hpp"
#include "mmgp/profile.hpp"

namespace mmgp::detail {

/// A JSON document with the label used for it in errors and the directory its relative paths resolve against.
struct located_json {
    json doc;
    std::string file;
    std::string base_dir;
};

/// Loads `ref` (a path, relative to base_dir or the working directory, or a bundled name of `kind`:
/// "platforms", "apps" or "scenarios"). `from_file`/`from_path` name where the reference was written.
located_json load_ref(const std::string& ref, std::string_view kind, const std::string& base_dir,
                      const std::string& from_file, const std::string& from_path);

/// JSON merge patches (RFC 7386) of a scenario's sections, applied in order to the resolved objects before
/// they are read: a validation case's own patches, then the command line's what-if edits (--set).
struct section_patches {
    std::vector<const json*> platform, application, search;
};

/// Builds a scenario from its JSON, its sections patched by `patches`; checks that its profiles cover its search
/// space (check_coverage) unless `cover_search` is false (validate: each case checks its own configuration).
scenario scenario_from_json(const json& doc, const std::string& file, const std::string& base_dir,
                            const section_patches& patches = {}, bool cover_search = true);

/// The patches of `edits` (scenario_edits: JSON objects as text, "--set" in errors), kept alive in `owned`.
section_patches edits_patches(const scenario_edits& edits, std::vector<json>& owned);

/// `base_dir` resolves the files a platform names (network tables given as OSU micro-benchmark output).
platform platform_from_json(const json& obj, const reader& r, const std::string& path, const std::string& base_dir = ".");
application application_from_json(const json& obj, const reader& r, const std::string& path);

/// The names of a key table's rows (mmgp/profile_keys.hpp), in its order: the keys a reader accepts. Built once
/// per table.
template <const auto& table>
const std::vector<std::string_view>& key_names() {
    static const std::vector<std::string_view> names = [] {
        std::vector<std::string_view> out;
        for (const auto& k : table) out.push_back(k.name);
        return out;
    }();
    return names;
}

/// Directory part of a path ("." when none).
std::string dir_of(const std::string& path);

/// The most one operation of a machine may cost (an off-load, a switch, a transfer's latency, a gap): an hour.
inline constexpr double max_operation_s = 3600;
/// The most a program's run or unit of work may take (T_hpu, T_apu, C_apu, T_start): about 31 years.
inline constexpr double max_run_s = 1e9;
/// The largest count or size an application profile holds (phases, off-loads, bytes).
inline constexpr double max_amount = 1e15;

/// The largest count a profile's int members hold.
inline constexpr std::int64_t int_max = std::numeric_limits<int>::max();

/// What a function of m measures: the host contention α(m) (a factor > 0) or a time (seconds >= 0, O_col(m)).
enum class m_quantity { contention, seconds };
/// A number, {"constant"|"value": x}, {"table": {"m": x, ...}} or {"linear": {"intercept", "slope"}}.
m_function read_m_function(const json& v, const reader& r, const std::string& path, m_quantity q);
/// [[k, factor], ...]: an accelerator's time against its resident blocks (slot_curve), k increasing from [1, 1].
slot_curve read_slot_curve(const json& v, const reader& r, const std::string& path);
/// {"latency_s", "bandwidth_Bps"|"s_per_byte"}.
link_cost read_link(const json& v, const reader& r, const std::string& path);
/// The required member "primitive" of obj: one of primitive_names.
primitive read_primitive(const json& obj, const reader& r, const std::string& path);
/// The spreads written beside values: {"value": v, "spread"|"mad"|"std_error": s} at the top level of a profile.
std::vector<parameter_spread> read_spreads(const json& obj);

}  // namespace mmgp::detail
