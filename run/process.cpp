// The one place that starts processes (run/process.hpp). The interrupt rules (which groups an interrupt kills) are
// child_scope's (child_scope.cpp); the signal handler that holds a signal is libmmgp's (mmgp/io.hpp).
#include "process.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "mmgp/error.hpp"
#include "mmgp/io.hpp"

namespace mmgp::run {

namespace {

// In the child: its group, mask, environment and output, then the program. Never returns.
[[noreturn]] void become(const child& c, const sigset_t& mask, std::vector<char*>& argv) {
    if (c.group >= 0) ::setpgid(0, c.group);
    if (c.announce_fd >= 0) {
        const std::int32_t group = ::getpgrp();
        (void)::send(c.announce_fd, &group, sizeof group, MSG_NOSIGNAL);
    }
    ::pthread_sigmask(SIG_SETMASK, &mask, nullptr);
    for (const auto& [k, v] : c.env) ::setenv(k.c_str(), v.c_str(), 1);
    if (!c.stdout_file.empty()) {
        const int fd = ::open(c.stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) ::dup2(fd, 1), ::close(fd);
    } else if (c.output_fd >= 0) {
        ::dup2(c.output_fd, 1), ::dup2(c.output_fd, 2);
    } else if (c.stdout_to_stderr) {
        ::dup2(2, 1);
    }
    ::execvp(argv[0], argv.data());
    const std::string msg = "mmgp: " + c.argv[0] + ": cannot execute: " + std::strerror(errno) + "\n";
    const ssize_t ignored = ::write(2, msg.data(), msg.size());
    (void)ignored;
    ::_exit(127);
}

// `/bin/sh -c command` with standard output into `out_fd` (-1: /dev/null) in a group of its own (when `own_group`).
pid_t start_shell(const std::string& command, int out_fd, bool own_group, const sigset_t& mask) {
    const pid_t pid = ::fork();
    if (pid != 0) return pid;
    if (own_group) ::setpgid(0, 0);
    ::pthread_sigmask(SIG_SETMASK, &mask, nullptr);
    if (out_fd >= 0) {
        ::dup2(out_fd, 1);
    } else if (const int null = ::open("/dev/null", O_WRONLY); null >= 0) {
        ::dup2(null, 1), ::dup2(null, 2);
    }
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
}

// Everything on fd until its end, or until `max` bytes were exceeded (`over` set, the first max kept).
std::string read_all(int fd, const child_scope* scope, std::size_t max = SIZE_MAX, bool* over = nullptr) {
    std::string text;
    char buf[4096];
    while (!scope || !scope->interrupted()) {  // a descendant outside the group may hold the pipe: stop on an interrupt
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        if (static_cast<std::size_t>(n) > max - text.size()) {
            text.append(buf, max - text.size());
            if (over) *over = true;
            break;
        }
        text.append(buf, static_cast<std::size_t>(n));
    }
    return text;
}

// The child's wait status; 0 when waitpid failed (as if it had succeeded: nothing left to wait for).
int wait_for(pid_t pid) {
    int st = 0;
    if (!wait_status_of(pid, st)) st = 0;
    return st;
}

sigset_t current_mask() {
    sigset_t mask;
    ::pthread_sigmask(SIG_SETMASK, nullptr, &mask);
    return mask;
}

}  // namespace

pid_t start(const child& c, const sigset_t& mask) {
    std::vector<std::string> words = c.argv;
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw mmgp::failure(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) become(c, mask, argv);
    if (c.group >= 0) ::setpgid(pid, c.group == 0 ? pid : c.group);  // also here: whichever runs first
    return pid;
}

int shell(const std::string& command, std::string* out, std::size_t max_out) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return -1;
    child_scope scope;
    const pid_t pid = start_shell(command, fds[1], true, scope.child_mask());
    ::close(fds[1]);
    if (pid > 0) ::setpgid(pid, pid);
    scope.adopt(pid);
    if (pid < 0) {
        ::close(fds[0]);
        return -1;
    }
    bool over = false;
    const std::string text = read_all(fds[0], &scope, max_out, &over);
    if (over) ::kill(-pid, SIGKILL);  // the whole group: the shell and what it started
    ::close(fds[0]);
    const int st = wait_for(pid);
    scope.reap_descendants();
    if (out) *out = text;
    if (over) return output_too_long;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

std::vector<std::string> output_lines(const std::string& command) {
    std::vector<std::string> lines;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return lines;
    const pid_t pid = start_shell(command, fds[1], false, current_mask());
    ::close(fds[1]);
    if (pid < 0) {
        ::close(fds[0]);
        return lines;
    }
    const std::string text = read_all(fds[0], nullptr);
    ::close(fds[0]);
    wait_for(pid);
    for (std::size_t pos = 0; pos < text.size();) {
        std::size_t nl = text.find('\n', pos);
        if (nl == std::string::npos) nl = text.size();
        std::string line = text.substr(pos, nl - pos);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        lines.push_back(std::move(line));
        pos = nl + 1;
    }
    return lines;
}

int quietly(const std::string& command) {
    const pid_t pid = start_shell(command, -1, false, current_mask());
    return pid < 0 ? -1 : exit_code(wait_for(pid));
}

std::string path_lookup(const std::string& word) {
    if (word.find('/') != std::string::npos) return word;
    const char* path = std::getenv("PATH");
    const std::string dirs = path ? path : "/usr/bin:/bin";
    for (std::size_t a = 0; a <= dirs.size();) {
        std::size_t b = dirs.find(':', a);
        if (b == std::string::npos) b = dirs.size();
        const std::string candidate = (b > a ? dirs.substr(a, b - a) : ".") + "/" + word;
        std::error_code ec;
        if (std::filesystem::is_regular_file(candidate, ec) && access(candidate.c_str(), X_OK) == 0) return candidate;
        a = b + 1;
    }
    return "";
}

std::string find_program(const std::string& given, const char* env, const std::string& name) {
    namespace fs = std::filesystem;
    if (!given.empty()) return given;
    if (const char* e = std::getenv(env)) return e;
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (!ec)
        for (const fs::path& c : {self.parent_path() / ".." / "calibration" / name,
                                  self.parent_path() / ".." / "calibration" / "gpu" / name,
                                  self.parent_path() / ".." / "offload" / name, self.parent_path() / name})
            if (fs::exists(c, ec)) return fs::weakly_canonical(c, ec).string();
    return name.find('/') == std::string::npos ? path_lookup(name) : "";
}

int exit_status_of(const std::exception& e) noexcept { return dynamic_cast<const mmgp::error*>(&e) ? 2 : 1; }

namespace {
void on_sigchld(int) {}  // internal linkage: a program cannot replace it
}  // namespace

int run_together(const std::vector<child>& children) {
    std::vector<pid_t> pids(children.size(), -1);
    std::vector<int> status(children.size(), 0);
    sigset_t wanted, old;
    sigemptyset(&wanted);
    sigaddset(&wanted, SIGINT);
    sigaddset(&wanted, SIGTERM);
    sigaddset(&wanted, SIGCHLD);
    struct sigaction sa {};
    sa.sa_handler = on_sigchld;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, nullptr);
    sigprocmask(SIG_BLOCK, &wanted, &old);
    int live = 0;
    for (std::size_t i = 0; i < children.size(); ++i) {
        try {
            pids[i] = start(children[i], old);
        } catch (const mmgp::failure&) {
            for (pid_t other : pids)
                if (other > 0) kill(other, SIGTERM);
            throw;
        }
        ++live;
    }
    while (live > 0) {
        int sig = 0;
        if (sigwait(&wanted, &sig) != 0) continue;
        if (sig == SIGINT || sig == SIGTERM) {
            for (pid_t pid : pids)
                if (pid > 0) kill(pid, sig);
            continue;
        }
        for (std::size_t i = 0; i < pids.size(); ++i) {
            if (pids[i] <= 0) continue;
            int st = 0;
            if (waitpid(pids[i], &st, WNOHANG) == pids[i]) {
                status[i] = exit_code(st);
                pids[i] = 0;
                --live;
            }
        }
    }
    sigprocmask(SIG_SETMASK, &old, nullptr);
    for (int st : status)
        if (st != 0) return st;
    return 0;
}

}  // namespace mmgp::run
