// run/forked.hpp — a child forked to run a function of this program (not another program), with a pipe each way;
// a shell line run as std::system would. For the GPU programs, which must fork before CUDA is initialised in
// them (calibration/gpu/gpu_harness.cu, offload/cuda/gpu_workload.cu): C++17 and the C library only, since nvcc
// builds those as C++17; they link run/forked.cpp alone (the library mmgp-forked), never libmmgp.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <string>

namespace mmgp::run {

/// A child of this process running a function, and this side's ends of its two pipes.
struct forked {
    pid_t pid = -1;       ///< -1: never started (the pipes or fork() failed)
    int from_child = -1;  ///< what the child writes to `to_parent`
    int to_child = -1;    ///< what the child reads from `from_parent`
};

/// Forks a child that runs body(to_parent, from_parent) on its ends of the two pipes and _exit()s with what it
/// returns (an exception it lets out: status 1); this side's ends are close-on-exec. Check `pid` for failure.
forked fork_with_pipes(const std::function<int(int to_parent, int from_parent)>& body);

/// Runs body(to_parent) in a forked child (fork_with_pipes) and reads the n bytes it writes into `data` by `deadline`
/// (steady_seconds()); a child that has not written them by then is killed. Waits for the child either way, its
/// exit code in `exit` when given (wait_forked). True when all n bytes came: a probe that must not hang its caller.
bool answer_of_child(const std::function<int(int to_parent)>& body, void* data, std::size_t n, double deadline,
                     int* exit = nullptr);

/// Closes this side's pipes and waits for the child: its exit code, 128 + n when signal n ended it, -1 when it was
/// never started.
int wait_forked(forked& child);

/// A wait status as an exit code: the program's own, 128 + n for one ended by signal n, 1 otherwise.
int exit_code(int wait_status) noexcept;

/// waitpid(pid) until it answers, through EINTR: true with `wait_status` set, false when waitpid failed.
bool wait_status_of(pid_t pid, int& wait_status) noexcept;

/// Times below are std::chrono::steady_clock's, in seconds since its epoch (the off-load runtime's now()).
double steady_seconds() noexcept;

/// Writes all n bytes to fd (through EINTR): false when a write fails.
bool write_all(int fd, const void* data, std::size_t n) noexcept;

/// Reads n bytes from fd by `deadline` (steady_seconds()): false at end of file, on an error or past the deadline.
bool read_all_by(int fd, void* data, std::size_t n, double deadline) noexcept;

/// waitpid(pid) without blocking past `deadline` (steady_seconds()): pid with `wait_status` set once it answers, 0
/// when the process is still running then, -1 when waitpid fails (no such child).
pid_t wait_status_by(pid_t pid, int& wait_status, double deadline) noexcept;

/// `/bin/sh -c command` with this process's standard streams, waited for: its exit code (128 + n for signal n),
/// -1 when it could not be started. What std::system would do, without std::system.
int shell_status(const std::string& command);

}  // namespace mmgp::run
