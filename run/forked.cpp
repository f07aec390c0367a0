// A child running a function of this program, and a shell line waited for (run/forked.hpp): the GPU programs'
// processes, started here with the rest of the project's (run/process.cpp).
#include "forked.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <exception>

namespace mmgp::run {

int exit_code(int st) noexcept { return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1; }

bool wait_status_of(pid_t pid, int& st) noexcept {
    while (::waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return false;
    return true;
}

double steady_seconds() noexcept {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool write_all(int fd, const void* data, std::size_t n) noexcept {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
        const ssize_t k = ::write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        p += k, n -= static_cast<std::size_t>(k);
    }
    return true;
}

bool read_all_by(int fd, void* data, std::size_t n, double deadline) noexcept {
    char* p = static_cast<char*>(data);
    while (n > 0) {
        const double left = deadline - steady_seconds();
        if (left <= 0) return false;
        pollfd pf{fd, POLLIN, 0};
        const int ready = ::poll(&pf, 1, static_cast<int>(std::min(left, 1.0) * 1000) + 1);
        if (ready < 0 && errno != EINTR) return false;
        if (ready <= 0) continue;
        const ssize_t k = ::read(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        p += k, n -= static_cast<std::size_t>(k);
    }
    return true;
}

pid_t wait_status_by(pid_t pid, int& st, double deadline) noexcept {
    for (;;) {
        const pid_t got = ::waitpid(pid, &st, WNOHANG);
        if (got == pid || (got < 0 && errno != EINTR)) return got;
        if (steady_seconds() >= deadline) return 0;
        ::usleep(1000);
    }
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

bool answer_of_child(const std::function<int(int to_parent)>& body, void* data, std::size_t n, double deadline,
                     int* exit) {
    forked child = fork_with_pipes([&body](int to_parent, int) { return body(to_parent); });
    const bool got = child.pid > 0 && read_all_by(child.from_child, data, n, deadline);
    if (!got && child.pid > 0) ::kill(child.pid, SIGKILL);
    const int code = wait_forked(child);
    if (exit) *exit = code;
    return got;
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
