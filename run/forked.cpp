// A child running a function of this program, and a shell line waited for (run/forked.hpp): the GPU programs'
// processes, started here with the rest of the project's (run/process.cpp).
#include "forked.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <exception>

namespace mmgp::run {

int exit_code(int st) noexcept { return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1; }

bool wait_status_of(pid_t pid, int& st) noexcept {
    while (::waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return false;
    return true;
}

namespace {

int wait_pid(pid_t pid) noexcept {
    int st = 0;
    return wait_status_of(pid, st) ? exit_code(st) : -1;
}

}  // namespace

forked fork_with_pipes(const std::function<int(int to_parent, int from_parent)>& body) {
    forked out;
    int up[2], down[2];
    if (::pipe2(up, O_CLOEXEC) != 0) return out;
    if (::pipe2(down, O_CLOEXEC) != 0) {
        ::close(up[0]), ::close(up[1]);
        return out;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(up[0]), ::close(down[1]);
        int code = 1;
        try {
            code = body(up[1], down[0]);
        } catch (...) {
        }
        ::_exit(code);
    }
    ::close(up[1]), ::close(down[0]);
    if (pid < 0) {
        ::close(up[0]), ::close(down[1]);
        return out;
    }
    out.pid = pid, out.from_child = up[0], out.to_child = down[1];
    return out;
}

int wait_forked(forked& child) {
    if (child.from_child >= 0) ::close(child.from_child);
    if (child.to_child >= 0) ::close(child.to_child);
    child.from_child = child.to_child = -1;
    if (child.pid < 0) return -1;
    const int code = wait_pid(child.pid);
    child.pid = -1;
    return code;
}

int shell_status(const std::string& command) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    return pid < 0 ? -1 : wait_pid(pid);
}

}  // namespace mmgp::run
