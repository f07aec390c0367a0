// mmgp/io.hpp — writing result files without ever losing the previous one.
//
//   mmgp::interrupt_guard guard("host.json");           // SIGINT/SIGTERM/SIGHUP now say what was kept
//   ... minutes of measurements ...
//   mmgp::write_file_atomically("host.json", text, [](const std::string& tmp) { /* validate tmp */ });
#pragma once

#include <functional>
#include <string>

#include "mmgp/error.hpp"

namespace mmgp {

/// Writes `text` to `path` through a temporary file next to it (mode 0644, fsync'ed), calls `check`
/// on the temporary file (it may throw to refuse it), then renames it over `path`. On any failure,
/// or on SIGINT/SIGTERM/SIGHUP during the write, the temporary file is removed and `path` is left
/// as it was. Throws mmgp::input_error naming `path` (or whatever `check` throws).
void write_file_atomically(const std::string& path, const std::string& text,
                           const std::function<void(const std::string& tmp_path)>& check = {});

/// While alive, SIGINT, SIGTERM and SIGHUP print one line — "mmgp: interrupted (SIGINT): PATH left as
/// it was" or "... PATH not created" — remove a temporary file write_file_atomically() has open, and
/// then end the process as the signal would have. One guard at a time; not copyable.
class interrupt_guard {
public:
    explicit interrupt_guard(const std::string& path);
    ~interrupt_guard();
    interrupt_guard(const interrupt_guard&) = delete;
    interrupt_guard& operator=(const interrupt_guard&) = delete;
};

}  // namespace mmgp
