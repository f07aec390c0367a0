// Internal: numbers as text in messages; names of enumerators, both ways.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace mmgp::detail {

/// Shortest text that reads back as the same double.
std::string format_double(double v);

/// Sets `out` to the value named `text` in `names`; false when no name matches.
template <class E, std::size_t N>
bool parse_named(std::string_view text, const std::pair<std::string_view, E> (&names)[N], E& out) noexcept {
    for (const auto& [name, value] : names)
        if (text == name) {
            out = value;
            return true;
        }
    return false;
}

/// The name of `value` in `names` (the table parse_named reads); `otherwise` when it has none.
template <class E, std::size_t N>
std::string_view name_of(E value, const std::pair<std::string_view, E> (&names)[N], std::string_view otherwise) noexcept {
    for (const auto& [name, v] : names)
        if (v == value) return name;
    return otherwise;
}

}  // namespace mmgp::detail
