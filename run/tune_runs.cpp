// The runs of mmgp tune that are processes: run_flights (one event loop over process groups, signals held) and the
// base of the local and Slurm backends over it. Calls the system only.
#include "tune_runs.hpp"

#include <fmt/format.h>

#include "mmgp/error.hpp"
#include "group_guard.hpp"
#include "process.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iostream>

namespace mmgp::run {

namespace {

constexpr double grace_s = 2.0;  // SIGTERM -> SIGKILL

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

void on_child(int) {}  // SIGCHLD must not be ignored for sigtimedwait

}  // namespace

struct run_flights::flight {
    int id = 0;
    pid_t group = 0;
    std::vector<pid_t> pids;
    std::vector<int> status;
    std::size_t live = 0;
    double start = 0, bound = 0, hard_kill_at = 0, bound_set_at = 0;  // bound_set_at: its age when the bound was set
    bool killed = false, hard_killed = false;
    std::string done_file;
    run_watch watch;
    double watched_out_at = 0;  // its age when its watch stopped it
    run_result result;
};

run_flights::run_flights() {
    sigemptyset(&wanted_);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&wanted_, sig);
    struct sigaction sa {};
    sa.sa_handler = on_child;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, &old_chld_);
    sigprocmask(SIG_BLOCK, &wanted_, &old_);
    guard_.emplace();
}

run_flights::~run_flights() {
    for (flight* f : runs_) {
        kill(-f->group, SIGKILL);
        for (pid_t p : f->pids)
            if (p > 0) waitpid(p, nullptr, 0);
        guard_->release(f->group);
        delete f;
    }
    guard_.reset();  // nothing left for it to kill: it exits and is reaped
    sigaction(SIGCHLD, &old_chld_, nullptr);  // the caller's handler back (a program embedding the tune)
    sigprocmask(SIG_SETMASK, &old_, nullptr);
}

run_flights::flight* run_flights::find(int id) const {
    for (flight* f : runs_)
        if (f->id == id) return f;
    throw std::logic_error("run_flights: no run " + std::to_string(id));
}

int run_flights::start(const std::vector<run_process>& procs, double bound_s, const std::string& stdout_file,
                       const std::string& done_file, const std::string& log_file, run_watch watch) {
    std::cout.flush();
    std::cerr.flush();
    int log_fd = -1;  // opened here, once: every process of the run appends to it
    if (!log_file.empty()) log_fd = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    auto* f = new flight;
    f->id = next_id_++;
    f->bound = bound_s;
    f->done_file = done_file;
    f->watch = std::move(watch);
    f->start = now_s();
    for (const auto& pr : procs) {
        run::child c;
        c.argv = pr.argv, c.env = pr.env;
        c.group = f->group;  // 0 for the first process: it leads the run's group
        if (f->group == 0) c.announce_fd = guard_->announce_fd();
        c.stdout_file = stdout_file, c.output_fd = log_fd, c.stdout_to_stderr = log_fd < 0;
        pid_t pid = -1;
        try {
            pid = run::start(c, old_);
        } catch (const mmgp::failure&) {
            if (f->group > 0) kill(-f->group, SIGKILL);
            for (pid_t p : f->pids) waitpid(p, nullptr, 0);
            if (f->group > 0) guard_->release(f->group);
            delete f;
            throw;
        }
        if (f->group == 0) f->group = pid;
        f->pids.push_back(pid);
    }
    if (log_fd >= 0) ::close(log_fd);
    f->status.assign(f->pids.size(), 0);
    f->live = f->pids.size();
    runs_.push_back(f);
    return f->id;
}

void run_flights::set_bound(int id, double bound_s) {
    flight* f = find(id);
    f->bound = bound_s;
    f->bound_set_at = now_s() - f->start;
}

double run_flights::elapsed(int id) const { return now_s() - find(id)->start; }

void run_flights::stop(int id) {
    flight* f = find(id);
    if (f->killed) return;
    kill(-f->group, SIGTERM);
    f->killed = true;
    f->hard_kill_at = now_s() + grace_s;
    if (!f->result.censored) f->result.stopped = true;
}

// Each watched run in flight, looked at now (at `t`): stopped when its watch says so (censored at its age), else
// looked at again in progress_look_s (`next`: the nearest deadline so far, -1 for none).
void run_flights::look_at_watched(double t, double& next) {
    for (flight* f : runs_) {
        if (!f->watch || f->killed) continue;
        if (f->watch(t - f->start)) {
            f->result.censored = f->result.watched_out = true;
            f->watched_out_at = t - f->start;
            stop(f->id);
            continue;
        }
        next = next < 0 ? t + progress_look_s : std::min(next, t + progress_look_s);
    }
}

std::optional<std::pair<int, run_result>> run_flights::wait_any() {
    for (;;) {
        // A run whose processes have all ended.
        for (auto it = runs_.begin(); it != runs_.end(); ++it) {
            flight* f = *it;
            if (f->live > 0) continue;
            kill(-f->group, SIGKILL);  // what its processes left behind in their group
            guard_->release(f->group);
            run_result r = f->result;
            r.wall_s = r.watched_out ? f->watched_out_at
                       : r.censored  ? std::max(f->bound, f->bound_set_at)
                                     : now_s() - f->start;
            for (int st : f->status)
                if (st != 0 && r.exit_status == 0) r.exit_status = st;
            const int id = f->id;
            runs_.erase(it);
            delete f;
            if (interrupted_by_) break;  // interrupted: reap every run, report none
            return std::make_pair(id, r);
        }
        if (runs_.empty()) return std::nullopt;
        // A run that says it has ended (its done file): what is left of its processes is killed and reaped.
        for (flight* f : runs_)
            if (f->live > 0 && !f->done_file.empty() && access(f->done_file.c_str(), F_OK) == 0) {
                kill(-f->group, SIGKILL);
                for (pid_t& p : f->pids)
                    if (p > 0) waitpid(p, nullptr, 0), p = 0;
                f->live = 0;
            }
        if (std::any_of(runs_.begin(), runs_.end(), [](const flight* f) { return f->live == 0; })) continue;
        // The nearest deadline: a run's bound, the end of a stopped run's grace, the next look for done files.
        const double t = now_s();
        double next = -1;
        for (flight* f : runs_)
            if (!f->done_file.empty() && !f->killed) next = next < 0 ? t + 0.1 : std::min(next, t + 0.1);
        look_at_watched(t, next);
        for (flight* f : runs_) {
            double d = -1;
            if (!f->killed && f->bound > 0) {
                d = f->start + f->bound;
                if (d <= t) {
                    f->result.censored = true;
                    stop(f->id);
                    d = f->hard_kill_at;
                }
            } else if (f->killed && !f->hard_killed) {
                d = f->hard_kill_at;
                if (d <= t) {
                    kill(-f->group, SIGKILL);
                    f->hard_killed = true;
                    d = -1;
                }
            }
            if (d > 0 && (next < 0 || d < next)) next = d;
        }
        timespec ts{};
        timespec* tsp = nullptr;
        if (next > 0) {
            const double left = std::max(0.0, next - t);
            ts.tv_sec = static_cast<time_t>(left);
            ts.tv_nsec = static_cast<long>((left - static_cast<double>(ts.tv_sec)) * 1e9);
            tsp = &ts;
        }
        const int sig = sigtimedwait(&wanted_, nullptr, tsp);
        if ((sig == SIGINT || sig == SIGTERM || sig == SIGHUP) && !interrupted_by_) {
            interrupted_by_ = sig;
            for (flight* f : runs_) stop(f->id);
        }
        for (flight* f : runs_)
            for (std::size_t i = 0; i < f->pids.size(); ++i) {
                if (f->pids[i] <= 0) continue;
                int st = 0;
                if (waitpid(f->pids[i], &st, WNOHANG) == f->pids[i]) {
                    f->status[i] = run::exit_code(st);
                    f->pids[i] = 0;
                    --f->live;
                }
            }
    }
}

std::vector<std::string> command_lines(const std::string& command) { return run::output_lines(command); }

// --- The base of the process backends ----------------------------------------------------------------------

void process_backend::begin() {
    runner_.emplace();
    begin_ = std::chrono::steady_clock::now();
}

double process_backend::now() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_).count();
}

int process_backend::launch(const std::vector<run_process>& procs, double bound_s, const std::string& stdout_file,
                            const std::string& done_file, const std::string& log_file, run_watch watch) {
    const int id = runner_->start(procs, bound_s, stdout_file, done_file, log_file, std::move(watch));
    in_flight_.push_back(id);
    return id;
}

std::optional<run_end> process_backend::wait_any() {
    const auto done = runner_->wait_any();
    if (!done) return std::nullopt;
    const auto& [id, result] = *done;
    std::erase(in_flight_, id);
    run_end end{id,
                result.censored            ? run_outcome::censored
                : result.exit_status != 0 ? run_outcome::failed
                                           : run_outcome::ok,
                result.wall_s, result.exit_status};
    if (stopped_) {
        end.outcome = run_outcome::cancelled;
        end.wall_s = spent_at_stop_[id];
    } else {
        read_end(end);
    }
    return end;
}

bool process_backend::tighten_bound(int id, double bound_s) {
    runner_->set_bound(id, bound_s);
    return true;
}

double process_backend::spent_s(int id) const { return runner_->elapsed(id); }

void process_backend::stop_all() {
    for (int id : in_flight_) {
        spent_at_stop_[id] = spent_s(id);
        cancel_outside(id);
        runner_->stop(id);
    }
    stopped_ = true;
}

int process_backend::interrupted() {
    const int sig = runner_->interrupted_by();
    for (int id : in_flight_) cancel_outside(id);
    return sig;
}

void process_backend::close() { runner_.reset(); }

double load1() {
    std::ifstream in("/proc/loadavg");
    double v = -1;
    in >> v;
    return in ? v : -1;
}

std::string journal_command(const std::string& command) {
    constexpr std::size_t keep = 4096;
    if (command.size() <= keep) return command;
    std::size_t cut = keep;
    while (cut > 0 && (static_cast<unsigned char>(command[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
    return command.substr(0, cut) + fmt::format(" ... ({} bytes in all: the journal header's command, rendered for "
                                                "this run's mapping as mmgp launch renders it)",
                                                command.size());
}

}  // namespace mmgp::run
