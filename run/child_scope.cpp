// The children an interrupt stops (run/process.hpp's child_scope): the process groups this process started are
// killed from the signal handler (libmmgp's, mmgp/io.hpp, through its interrupt hook), and the descendants that left
// them are found and killed once the child is reaped. Used by run::shell (process.cpp).
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

#include "mmgp/io.hpp"
#include "process.hpp"

namespace mmgp::run {

namespace {

constexpr int max_children = 16;
volatile std::sig_atomic_t g_children[max_children] = {};  // process groups adopted by a child_scope

// The interrupt hook (async-signal-safe): every adopted group killed.
void kill_children() noexcept {
    for (int i = 0; i < max_children; ++i)
        if (g_children[i] > 0) ::kill(-static_cast<pid_t>(g_children[i]), SIGKILL);
}

// The live descendants of this process (from /proc), children first.
std::vector<pid_t> descendants() {
    std::multimap<pid_t, pid_t> kids;
    if (DIR* d = ::opendir("/proc")) {
        while (dirent* e = ::readdir(d)) {
            char* end = nullptr;
            long pid = std::strtol(e->d_name, &end, 10);
            if (pid <= 0 || *end != '\0') continue;
            char path[64], buf[512];
            std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
            FILE* f = std::fopen(path, "r");
            if (!f) continue;
            std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
            std::fclose(f);
            buf[n] = '\0';
            const char* close = std::strrchr(buf, ')');  // the command name may hold spaces and parentheses
            char state = 0;
            long ppid = 0;
            if (close && std::sscanf(close + 1, " %c %ld", &state, &ppid) == 2 && state != 'Z')
                kids.emplace(static_cast<pid_t>(ppid), static_cast<pid_t>(pid));
        }
        ::closedir(d);
    }
    std::vector<pid_t> out, todo{::getpid()};
    while (!todo.empty()) {
        pid_t p = todo.back();
        todo.pop_back();
        auto [a, b] = kids.equal_range(p);
        for (auto it = a; it != b; ++it) {
            out.push_back(it->second);
            todo.push_back(it->second);
        }
    }
    return out;
}

// After an interrupt: SIGKILLs every descendant, also those that left the child's process group (timeout(1),
// daemons such as MPI's orted in sessions of their own), which this process adopts as a subreaper once their
// parents are gone; reaps them, for at most 2 s.
void kill_descendants() {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    for (;;) {
        std::vector<pid_t> pids = descendants();
        for (pid_t p : pids) ::kill(p, SIGKILL);
        while (::waitpid(-1, nullptr, WNOHANG) > 0) {
        }
        if (pids.empty() || std::chrono::steady_clock::now() > end) return;
        ::usleep(2000);
    }
}

}  // namespace

child_scope::child_scope() {
    set_interrupt_hook(kill_children);
    int was = 0;
    ::prctl(PR_GET_CHILD_SUBREAPER, &was, 0, 0, 0);
    was_subreaper_ = was != 0;
    if (!was_subreaper_) ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    const sigset_t block = interrupt_signals();
    ::pthread_sigmask(SIG_BLOCK, &block, &old_mask_);  // no signal between fork() and adopt()
}

void child_scope::adopt(int group) noexcept {
    if (group > 0)
        for (int i = 0; i < max_children && slot_ < 0; ++i)
            if (g_children[i] == 0) {
                g_children[i] = group;
                slot_ = i;
            }
    ::pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
    unblocked_ = true;
    if (group > 0 && interrupted()) ::kill(-group, SIGKILL);  // the handler ran before the child was known
}

bool child_scope::interrupted() const noexcept { return interrupts_handled() != seen_; }

void child_scope::reap_descendants() noexcept {
    if (interrupted()) kill_descendants();
}

child_scope::~child_scope() {
    if (!unblocked_) ::pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
    if (!was_subreaper_) ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
    if (slot_ >= 0) g_children[slot_] = 0;
}

}  // namespace mmgp::run
