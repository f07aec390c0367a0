// The guard of a tune's runs (run/group_guard.hpp): a forked process that SIGKILLs the process groups announced to
// it once the tune's end of their socket closes. Its loop uses only calls that are safe after a fork of a
// threaded process (recv, kill, nanosleep, close, _exit), on memory of its own stack.
#include "group_guard.hpp"

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <ctime>

namespace mmgp::run {

namespace {

constexpr int max_groups = 4096;  // runs in flight at once (more are not guarded)
constexpr int grace_ticks = 200;  // 2 s of 10 ms: run_flights' grace between SIGTERM and SIGKILL

// In the guard: reads announcements (a group > 0) and releases (its negative) until the tune's end closes, then
// kills the groups still announced. Never returns.
[[noreturn]] void guard(int fd) {
    pid_t groups[max_groups];
    int n = 0;
    for (;;) {
        std::int32_t v = 0;
        const ssize_t got = ::recv(fd, &v, sizeof v, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;  // end of file: the tune's end is closed
        if (got != sizeof v || v == 0) continue;
        if (v > 0) {
            if (n < max_groups) groups[n++] = static_cast<pid_t>(v);
        } else {
            for (int i = 0; i < n; ++i)
                if (groups[i] == static_cast<pid_t>(-v)) {
                    groups[i] = groups[--n];
                    break;
                }
        }
    }
    // As the tune stops a run (run_flights::stop): SIGTERM first, so that a launcher ends its job cleanly (srun
    // cancels its job step), SIGKILL to what is left after the same grace.
    for (int i = 0; i < n; ++i) ::kill(-groups[i], SIGTERM);
    const timespec tick{0, 10'000'000};
    for (int waited = 0; waited < grace_ticks; ++waited) {
        bool any = false;
        for (int i = 0; i < n && !any; ++i) any = ::kill(-groups[i], 0) == 0;
        if (!any) break;
        ::nanosleep(&tick, nullptr);
    }
    for (int i = 0; i < n; ++i) ::kill(-groups[i], SIGKILL);
    ::_exit(0);
}

}  // namespace

group_guard::group_guard() {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return;
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(sv[0]), ::close(sv[1]);
        return;
    }
    if (pid == 0) {
        ::setpgid(0, 0);
        // Nothing of the tune's but the socket: a pipe the tune's caller reads to its end (its standard output and
        // error) must close when the tune dies, not when the guard does.
        if (::dup2(sv[1], 3) != 3) ::_exit(0);  // no guard: the runs are stopped by the tune alone
        for (int fd = 0; fd < 3; ++fd) ::close(fd);
        ::close_range(4, ~0U, 0);
        guard(3);
    }
    ::setpgid(pid, pid);  // also here: whichever runs first
    ::close(sv[1]);
    fd_ = sv[0];
    pid_ = pid;
}

group_guard::~group_guard() {
    if (fd_ >= 0) ::close(fd_);
    if (pid_ > 0)
        while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
        }
}

void group_guard::release(pid_t group) const noexcept {
    if (fd_ < 0 || group <= 0) return;
    const std::int32_t v = -static_cast<std::int32_t>(group);
    (void)::send(fd_, &v, sizeof v, MSG_NOSIGNAL);
}

}  // namespace mmgp::run
