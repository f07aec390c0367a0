// Internal: validated reading of nlohmann::json with file + JSON-pointer error messages.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/format.hpp"
#include "base/schema.hpp"
#include "mmgp/error.hpp"

namespace mmgp::detail {

using json = nlohmann::json;

/// "the number -1", "the string \"x\"", "an object", ... : how a found value is named in errors.
std::string describe(const json& j);
/// Appends a key or an index to a JSON pointer, escaping '~' and '/'.
std::string child(const std::string& path, std::string_view key);
std::string child(const std::string& path, std::size_t index);

/// Parses JSON text; a syntax error becomes input_error(file, "", "a JSON document", "...at line L, column C"),
/// a key given twice in one object input_error(file, "/path/key", "one value per key ...", "two: X and Y").
json parse_json(std::string_view text, const std::string& file);
/// How deep any JSON input may nest arrays and objects: every reader refuses deeper text before parsing it, so
/// that what a refusal costs is bounded by the input's size (no MMGP input nests beyond 4 levels).
inline constexpr std::size_t max_json_depth = 64;
/// The same check alone (mmgp::check_unique_keys): a key given twice in one object of `text` is refused, and so
/// is text nested deeper than max_json_depth.
void refuse_duplicate_keys(std::string_view text, const std::string& file, const std::string& location_prefix);
/// The bound read_file() puts on an input (a file of runs, a profile, a journal, an OSU table).
inline constexpr std::size_t max_input_bytes = std::size_t{16} << 20;
/// Reads a whole file — a regular file or a stream (FIFO, device) alike — to its end, at most max_input_bytes;
/// input_error(file, "", EXPECTED, FOUND) when it cannot (a directory, unreadable, larger than the bound, a file
/// whose read would block, such as /proc/kmsg).
std::string read_file(const std::string& path);

/// Reads values out of one JSON document and throws input_error naming `file` and the path.
/// Where a number must lie: at least `lo`, or above it when `strict`; `what` its unit or meaning, for messages.
struct number_range {
    double lo = 0.0;
    bool strict = false;
    const char* what = "";
};
/// A number >= lo, e.g. at_least(0.0, "seconds").
inline number_range at_least(double lo, const char* what) noexcept { return {lo, false, what}; }
/// A number > lo, e.g. above(0.0, "seconds").
inline number_range above(double lo, const char* what) noexcept { return {lo, true, what}; }

struct reader {
    std::string file;

    [[noreturn]] void fail(const std::string& path, const std::string& expected, const std::string& found) const;
    [[noreturn]] void fail(const std::string& path, const std::string& expected, const json& found) const {
        fail(path, expected, describe(found));
    }
    [[noreturn]] void fail(const std::string& path, const std::string& expected, const char* found) const {
        fail(path, expected, std::string(found));
    }

    /// Requires j to be an object.
    const json& object(const json& j, const std::string& path) const;
    /// The document's format and kind, when given: "schema" must be "mmgp/1", "kind" must be `kind` (a platform
    /// profile where an application is read, runs where a platform is). A hand-written file may leave both out.
    void document(const json& obj, const std::string& path, std::string_view kind) const;
    /// Rejects keys not in `known` (provenance keys such as "source", "notes" and "_..." are allowed);
    /// the message lists every key of the table.
    void known_keys(const json& obj, const std::string& path, std::span<const schema::key> known) const;
    void known_keys(const json& obj, const std::string& path, std::initializer_list<std::string_view> known) const;
    void known_keys(const json& obj, const std::string& path, std::span<const std::string_view> known) const;
    /// True when obj has `key`.
    static bool has(const json& obj, std::string_view key) { return obj.is_object() && obj.contains(key); }

    /// A finite number in `range`, given as a number or as {"value": number, ...}.
    double number(const json& v, const std::string& path, number_range range) const;
    /// Required numeric member.
    double number_at(const json& obj, const std::string& path, std::string_view key, number_range range) const;
    /// Optional numeric member with a default.
    double number_or(const json& obj, const std::string& path, std::string_view key, double dflt, number_range range) const;
    /// An integer in [lo, hi] (a JSON integer, or a double with no fractional part).
    std::int64_t integer(const json& v, const std::string& path, std::int64_t lo, std::int64_t hi) const;
    std::int64_t integer_at(const json& obj, const std::string& path, std::string_view key, std::int64_t lo,
                            std::int64_t hi) const;
    std::int64_t integer_or(const json& obj, const std::string& path, std::string_view key, std::int64_t dflt,
                            std::int64_t lo, std::int64_t hi) const;
    /// A string member (required unless a default is given via string_or).
    std::string string_at(const json& obj, const std::string& path, std::string_view key) const;
    std::string string_or(const json& obj, const std::string& path, std::string_view key, std::string dflt) const;
    /// A string member that must be one of `choices`; returns the index of the match.
    std::size_t choice(const json& obj, const std::string& path, std::string_view key,
                       std::initializer_list<std::string_view> choices, std::size_t dflt, bool required) const {
        return choice(obj, path, key, std::span<const std::string_view>(choices.begin(), choices.size()), dflt, required);
    }
    std::size_t choice(const json& obj, const std::string& path, std::string_view key,
                       std::span<const std::string_view> choices, std::size_t dflt, bool required) const;
};

}  // namespace mmgp::detail
