// The mmgp command's option values, checked in one place: a table of every option's kind and range.
// A value out of range, negative where a count is expected, NaN, infinite or empty is refused before the
// command runs, with one line naming the option, the value and what is allowed (exit status 2). No value
// stands for "not given": options that may be left out are std::optional.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace mmgp::cli {

/// What an option takes.
enum class value_kind {
    count,    ///< an integer in [lo, hi]
    real,     ///< a finite number in [lo, hi] (or (lo, hi] when lo_open)
    text,     ///< any non-empty text (a file name, a profile name)
    range,    ///< N or LO:HI, 1 <= LO <= HI <= 10^12
    word,     ///< one of `words` (separated by |)
    assignment,  ///< SECTION.KEY=VALUE, SECTION one of `words` (separated by |)
};

struct value_rule {
    std::string_view command;  ///< the subcommand, or "*" for every subcommand with this option
    std::string_view option;   ///< its longest name, e.g. "--tolerance"
    value_kind kind;
    double lo = 0, hi = 0;
    bool lo_open = false, hi_open = false;  ///< real: the bound itself excluded
    std::string_view words = {};
};

/// The table (cli/options.cpp), in the order it is searched: a command's own rule before a "*" one.
const std::vector<value_rule>& value_rules();

/// The rule for `option` of `command`; throws std::logic_error when the table has none (a programming error,
/// caught by the tests, which add every option of every subcommand).
const value_rule& rule_for(std::string_view command, std::string_view option);

/// "" when `text` satisfies `r`, else "expected ..., found \"...\"" (CLI11 prefixes the option's name).
std::string check_value(const value_rule& r, const std::string& text);
/// A number written in decimal: digits, signs, a point and an exponent only (no hex, no spaces, no inf or nan).
bool decimal_text(const std::string& text);

/// A CLI11 validator applying rule_for(command, option).
CLI::Validator checked(std::string_view command, std::string_view option);

/// Adds `--name` with its rule from the table (the common case: one call per option).
template <class T>
CLI::Option* add_checked(CLI::App* sub, const std::string& names, T& target, const std::string& help) {
    CLI::Option* o = sub->add_option(names, target, help);
    o->transform(checked(sub->get_name(), o->get_name()));
    return o;
}

/// A helper program mmgp runs (the GPU harness, mmgp-offload-run): the path in the environment variable `env`, else
/// built beside mmgp, else on the PATH (run::find_program); "" when none is. `env` set but empty is bad input,
/// which names the program as `what`.
std::string helper_program(const char* env, const char* name, const char* what);

}  // namespace mmgp::cli
