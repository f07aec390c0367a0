// mmgp/io.hpp — writing result files without ever losing the previous one, and stopping cleanly.
//
//   mmgp::check_output("-o", "host.json", {"runs.csv"});  // before any work: refuse a bad destination
//   mmgp::interrupt_guard guard("host.json");           // SIGINT/SIGTERM/SIGHUP now say what was kept
//   ... minutes of measurements ...
//   mmgp::write_file_atomically("host.json", text, [](const std::string& tmp) { /* validate tmp */ });
#pragma once

#include "mmgp/export.hpp"

#include <csignal>
#include <functional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

#include "mmgp/error.hpp"

MMGP_API_BEGIN
namespace mmgp {

/// Checks an output destination before any work is done, so that a command never measures for
/// minutes and then cannot write. Refused (mmgp::error, one line naming `option` and `path`): an
/// empty path, a directory, a socket, a destination whose directory is missing or in which no file can
/// be made (the temporary file the write will make is made and removed: as root, access() says yes to
/// /proc), a device or FIFO that cannot be opened for writing without blocking (a FIFO nobody reads, a
/// terminal the process has none of) or that refuses a write of nothing (/dev/full), and a destination that
/// is the same file (device and inode, through any symbolic link) as one of `inputs` (inputs that do not
/// exist are ignored). A device or FIFO it opened stays open for write_file_atomically() (closing a FIFO's
/// only writer would end its reader's input).
void check_output(const std::string& option, const std::string& path, const std::vector<std::string>& inputs = {});

/// The first at most `max_bytes` bytes of `text`, never cut inside a UTF-8 character (for messages that quote
/// a value).
std::string utf8_prefix(std::string_view text, std::size_t max_bytes);
/// The offset of the first byte of `text` that is not part of valid UTF-8, or text.size() when it is all valid.
std::size_t invalid_utf8_at(std::string_view text) noexcept;

/// Refuses a JSON text in which an object has a key twice (the JSON library would keep the last value
/// silently): input_error(file, location_prefix + "/path/key", "one value per key ...", "two: X and Y").
/// Text that is not JSON passes (its own parse reports it). Every profile, runs and validation reader applies
/// it already; this is for the callers' own documents (a journal's lines, a --set value).
void check_unique_keys(std::string_view text, const std::string& file, const std::string& location_prefix = "");

/// The whole text of the file at `path` (a leading UTF-8 byte-order mark removed). Throws
/// mmgp::input_error naming `path` when it is a directory or cannot be read.
std::string read_text_file(const std::string& path);

/// Writes `text` to `path`. A regular file (or a new one) is replaced atomically: a temporary file
/// next to it (fsync'ed; mode 0644, or the replaced file's own) is passed to `check` (which may throw to
/// refuse it), then renamed over it. A symbolic link is followed: its target is replaced, the link stays.
/// A device or FIFO (e.g. /dev/null) is written to directly, after `check` has accepted the text in a
/// temporary file, and is never replaced; a FIFO nobody reads is an error, not a wait. /dev/stdout,
/// /dev/stderr, /dev/fd/N and /proc/self/fd/N are streams: the text goes to that descriptor of this process,
/// after what is already there (a shell's `>> file`), never replacing the file behind it. On any failure, or on SIGINT/SIGTERM/SIGHUP
/// during the write, the temporary file is removed and `path` is left as it was. Throws
/// mmgp::input_error naming `path` (or whatever `check` throws).
void write_file_atomically(const std::string& path, const std::string& text,
                           const std::function<void(const std::string& tmp_path)>& check = {});

/// Creates `path` holding `text`, whole or not at all: the text is written and synced in a temporary file beside
/// it (removed on any failure, and by SIGINT/SIGTERM/SIGHUP), which is then linked to `path`. Returns false, with
/// nothing written, when `path` exists; throws mmgp::input_error naming `path` on any other failure.
bool create_file_exclusively(const std::string& path, const std::string& text);
/// While alive, SIGINT, SIGTERM and SIGHUP (to the process or to its process group) stop the
/// command at once: the interrupt hook stops the child processes (set_interrupt_hook), a temporary
/// file write_file_atomically() has open is removed, one line is printed on stderr — "mmgp:
/// interrupted (SIGINT): PATH left as it was", "... PATH not created", or without a path "mmgp:
/// interrupted (SIGINT)" — and the process ends by the signal (exit status 128 + n). One guard at a
/// time; not copyable.
class interrupt_guard {
public:
    explicit interrupt_guard(const std::string& path = "");
    ~interrupt_guard();
    interrupt_guard(const interrupt_guard&) = delete;
    interrupt_guard& operator=(const interrupt_guard&) = delete;
};

/// The process layer's part in stopping cleanly (run/process.hpp's child_scope, the one place that starts and
/// stops processes; this library does neither). While an interrupt_hold is alive, SIGINT, SIGTERM and SIGHUP are
/// held (interrupt_pending()) instead of ending the process, so that the caller can undo what it set up (network
/// namespaces, temporary directories) before finish_interrupt(). Holds nest; not copyable.
class interrupt_hold {
public:
    interrupt_hold();
    ~interrupt_hold();
    interrupt_hold(const interrupt_hold&) = delete;
    interrupt_hold& operator=(const interrupt_hold&) = delete;
};

/// What the signal handler calls first, before it removes a temporary file and ends or holds: the process layer's
/// stop of the process groups it started. Runs inside the handler: async-signal-safe code only. One hook (nullptr:
/// none); set before the processes it stops are started.
using interrupt_hook = void (*)() noexcept;
void set_interrupt_hook(interrupt_hook hook) noexcept;

/// The SIGINT, SIGTERM and SIGHUP handled so far: two readings differ when one came between them.
int interrupts_handled() noexcept;

/// The signals the handler takes (SIGINT, SIGTERM, SIGHUP): what a process runner blocks between fork() and
/// registering the child.
sigset_t interrupt_signals() noexcept;

/// True when a SIGINT/SIGTERM/SIGHUP arrived during an interrupt_hold and has not been acted on yet.
bool interrupt_pending() noexcept;

/// Acts on a pending interrupt as the guard would have (message, then the process ends by the
/// signal); returns at once when none is pending.
void finish_interrupt();

}  // namespace mmgp
MMGP_API_END
