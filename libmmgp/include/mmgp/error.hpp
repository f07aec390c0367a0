// mmgp/error.hpp — the project's errors. mmgp::error and what derives from it (bad input, a configuration the model
// cannot evaluate) map to exit status 2 in the CLI; mmgp::failure (a measurement, a tool or a harness that failed
// on this machine, not the input) to 1.
//
//   try { auto s = mmgp::load_scenario("profile.json"); }
//   catch (const mmgp::error& e) { std::cerr << "mmgp: " << e.what() << '\n'; return 2; }
#pragma once

#include "mmgp/export.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>

MMGP_API_BEGIN
namespace mmgp {

/// Base of every error libmmgp reports on purpose (bad input, unusable configuration).
class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A command's options or arguments are wrong (not a file's content): what() is one line naming the option, what
/// was expected and what was found, e.g. "--policy: expected edtlp or os, found \"x\"". The mmgp command, the
/// off-load runtime and its programs throw it.
class usage_error : public error {
public:
    using error::error;
};

/// What failed on this machine rather than in the input: a measurement that went wrong, a tool that exited
/// with an error, a CPU that could not be pinned. The calibration harnesses and the off-load runtime throw it.
class failure : public std::runtime_error {
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

/// What of a scenario the model cannot evaluate.
enum class model_subject {
    nodes_range,    ///< --model eq11 asked for several nodes
    transfer_cost,  ///< the application declares dma_bytes and the platform gives no transfer cost
    search_size,    ///< too many (nodes, m) pairs for an application that communicates
    communication,  ///< a communication pattern (index()) that no table or model of the platform covers
};

/// The model cannot evaluate a scenario (thrown by mmgp::evaluator). The model names what (subject(),
/// index()); the profile loader maps it to the key at fault, so location() is a JSON pointer as for any
/// other input_error.
class model_error : public input_error {
public:
    model_error(std::string file, model_subject subject, std::size_t index, std::string expected, std::string found);
    model_subject subject() const noexcept { return subject_; }
    /// The communication pattern at fault (model_subject::communication), else 0.
    std::size_t index() const noexcept { return index_; }

private:
    model_subject subject_;
    std::size_t index_;
};

}  // namespace mmgp
MMGP_API_END
