// run/group_guard.hpp — the runs a tune leaves behind when it dies without ending them. Used by run_flights
// (tune_runs.cpp); the announcement is made by run::start's child (process.cpp).
//
// A tune stops its runs when it ends, is interrupted or fails; a SIGKILL (the OOM killer, `kill -9`, a batch system
// past its grace) or a crash ends it before it can, and the run it had in flight went on, on the machine it was
// tuning. The guard is a small process forked when the runs begin: each run's group leader announces its process
// group to it before it execs, and the tune says when a group has ended. When the tune's end of their socket
// closes (the tune ended, in any way), the guard stops every group still announced as the tune stops a run
// (SIGTERM, SIGKILL 2 s later unless the group is gone) and exits.
#pragma once

#include <sys/types.h>

namespace mmgp::run {

class group_guard {
public:
    /// Forks the guard, in a process group of its own (a kill of the tune's group leaves it to do its work), with
    /// none of this process's files but its socket. Without a guard (fork or socketpair failed), announce_fd() is
    /// -1 and the runs are as before: stopped by this process only.
    group_guard();
    /// Closes the socket: the guard kills what is still announced (nothing after a tune that ended its runs) and
    /// exits, and is reaped.
    ~group_guard();
    group_guard(const group_guard&) = delete;
    group_guard& operator=(const group_guard&) = delete;

    /// The socket a run's group leader sends its process group on (a 4-byte int, run::child::announce_fd), in
    /// the child before it execs; closed on exec. -1 without a guard.
    int announce_fd() const noexcept { return fd_; }
    /// The group has ended (its processes reaped, what they left killed): the guard forgets it.
    void release(pid_t group) const noexcept;

private:
    int fd_ = -1;
    pid_t pid_ = -1;
};

}  // namespace mmgp::run
