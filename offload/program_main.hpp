// What the programs built on the runtime (mmgp-offload-run, examples/runtime_advisor) do the same way around their
// work: the command line parsed, and errors reported — bad input on one line of stderr with exit status 2, anything
// else as "PROG: error: ..." with exit status 1.
#pragma once

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <optional>

#include <mmgp/error.hpp>

#include "kernels.hpp"
#include "process.hpp"

namespace mmgp::kernels {

/// Parses the command line: nothing when the program is to run, else its exit status (--help: 0; an option that
/// does not parse: "PROG: what" on stderr, 2).
inline std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv, const char* prog) {
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << prog << ": " << e.what() << '\n';
        return 2;
    }
    return std::nullopt;
}

/// Runs body() and returns its exit status. Bad input (any mmgp::error: an input_error, a usage_error, an advisor's scenario) is
/// "PROG: what" on stderr and 2; any other exception "PROG: error: what" and 1.
template <class Body>
int run_reporting_errors(const char* prog, Body&& body) {
    try {
        return body();
    } catch (const std::exception& e) {
        const int status = mmgp::run::exit_status_of(e);  // mmgp::error: 2
        std::cerr << prog << (status == 2 ? ": " : ": error: ") << e.what() << '\n';
        return status;
    }
}

}  // namespace mmgp::kernels
