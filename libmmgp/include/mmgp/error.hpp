// mmgp/error.hpp — the errors libmmgp throws. Every one maps to exit status 2 in the CLI.
//
//   try { auto s = mmgp::load_scenario("profile.json"); }
//   catch (const mmgp::error& e) { std::cerr << "mmgp: " << e.what() << '\n'; return 2; }
#pragma once

#include "mmgp/export.hpp"

#include <stdexcept>
#include <string>

MMGP_API_BEGIN
namespace mmgp {

/// Base of every error libmmgp reports on purpose (bad input, unusable configuration).
class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Bad input: names the file, the location inside it (a JSON pointer such as /platform/T_csw,
/// or "row 3, column time_s"), what was expected and what was found. what() is one line:
/// "FILE: LOCATION: expected EXPECTED, found FOUND".
class input_error : public error {
public:
    input_error(std::string file, std::string location, std::string expected, std::string found);

    /// The file the bad input came from ("<string>" when parsed from memory).
    const std::string& file() const noexcept { return file_; }
    /// Where in the file: a JSON pointer ("" for the whole document) or "row R, column C".
    const std::string& location() const noexcept { return location_; }
    /// What the reader expected there.
    const std::string& expected() const noexcept { return expected_; }
    /// What it found instead.
    const std::string& found() const noexcept { return found_; }

private:
    std::string file_, location_, expected_, found_;
};

}  // namespace mmgp
MMGP_API_END
