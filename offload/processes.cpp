// The runtime's processes (run_processes, runtime.hpp): m forked processes, each owning its accelerator (a GPU's
// context, made after the fork so that the parent never opens the device) and running its units (i, i + m, ...)
// with every off-load on it. The parent starts them together once all are ready, watches them against the
// watchdog, and gathers each one's timers, finish time and units' log-likelihoods from its pipe.
#include "runtime_internal.hpp"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "forked.hpp"  // run/: a child running a function of this program, with a pipe each way

namespace mmgp::kernels::detail {

// Named, not anonymous: a unity build compiles this file with the runtime's others.
namespace processes_impl {

// What a process writes back once its units are done (or it failed): plain bytes through its pipe, followed by
// `units` unit_result records.
struct process_report {
    int ok = 0;
    char why[480] = {};
    timers t;
    double finish = 0;
    int units = 0;
};
struct unit_result {
    int unit = 0;
    double loglik = 0;
};
static_assert(std::is_trivially_copyable_v<process_report> && std::is_trivially_copyable_v<unit_result>);

// The first byte a process writes: ready to start, or failed (its report follows).
constexpr char tag_ready = 'r', tag_failed = 'f';

using run::read_all_by;
using run::write_all;

// The accelerator's off-loader with the HPU's timers around every off-load (the host program's time between them,
// the round trip inside them, the counts).
class timed_offloader final : public offloader {
public:
    timed_offloader(offloader& inner, timers& t) : in_(inner), t_(t) {}
    reply offload(const request& r) override {
        const double t0 = now();
        t_.host_s += t0 - last_;
        const reply out = in_.offload(r);
        last_ = now();
        t_.roundtrip_s += last_ - t0;
        count_offload(t_, r);
        return out;
    }
    void start_clock(double t) { last_ = t; }
    void stop_clock(double t) { t_.host_s += t - last_; }

private:
    offloader& in_;
    timers& t_;
    double last_ = 0;
};

void set_why(process_report& rep, const std::string& why) {
    std::strncpy(rep.why, why.c_str(), sizeof rep.why - 1);
}

// Process i (in the child): makes its accelerator, says it is ready, waits for the start, runs its units and
// writes its report; a failure anywhere is reported in place of the rest.
int process_body(int i, const config& c, const alignment& aln, const model& mdl, const tree& start,
                 const process_accelerator& acc, int to_parent, int from_parent) {
    process_report rep;
    std::vector<unit_result> units;
    bool ready = false;
    try {
        const std::unique_ptr<offloader> dev = acc.make(aln, mdl, start, c.p);
        // No stop flag: a process past the watchdog is killed by the parent.
        const std::unique_ptr<host_program> host = make_host(c, aln, start, nullptr);
        timed_offloader off(*dev, rep.t);
        if (!write_all(to_parent, &tag_ready, 1)) return 1;
        ready = true;
        char go = 0;
        if (read(from_parent, &go, 1) != 1) return 1;  // the parent gave up before the start
        const std::int64_t cs0 = context_switches();
        off.start_clock(now());
        for (int u = c.rank + i * c.ranks; u < c.units; u += c.m * c.ranks) units.push_back({u, host->run_unit(u, off)});
        rep.finish = now();
        off.stop_clock(rep.finish);
        dev->add_times(rep.t);
        rep.t.context_switches = context_switches() - cs0;
        rep.ok = 1;
        rep.units = static_cast<int>(units.size());
    } catch (const std::exception& e) {
        set_why(rep, e.what());
        units.clear();
        if (!ready && !write_all(to_parent, &tag_failed, 1)) return 1;
    }
    const bool sent = write_all(to_parent, &rep, sizeof rep) &&
                      (units.empty() || write_all(to_parent, units.data(), units.size() * sizeof(unit_result)));
    return sent && rep.ok ? 0 : 1;
}

// How a process that closed its pipe ended: "exit status N" or "killed by signal N", once it is reaped (waited for
// at most 2 s: it has closed its only pipe to us, so it is exiting); its pipes are closed.
std::string how_it_ended(run::forked& p) {
    int status = 0;
    std::string out = "still running";
    if (run::wait_status_by(p.pid, status, now() + 2) == p.pid) {
        const int code = run::exit_code(status);
        out = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status)) : "exit status " + std::to_string(code);
        p.pid = -1;
    }
    close(p.from_child), close(p.to_child);
    p.from_child = p.to_child = -1;
    return out;
}

// The run's processes, each forked with its pipes; killed and reaped when the run is given up.
struct process_set {
    std::vector<run::forked> procs;
    ~process_set() {
        for (run::forked& p : procs)
            if (p.pid > 0) kill(p.pid, SIGKILL);
        reap(0);
    }
    // Waits for every process until `deadline` (now()'s clock), then kills those left and waits 5 s more for them
    // (a process stuck in a driver call dies only when it leaves it; one that does not is left behind): the worst
    // exit code of those that exited by themselves.
    int reap(double deadline) {
        int worst = 0;
        for (run::forked& p : procs) {
            if (p.pid <= 0) continue;
            int status = 0;
            const pid_t got = run::wait_status_by(p.pid, status, deadline);
            if (got == p.pid) worst = std::max(worst, run::exit_code(status));
            if (got == 0) {
                kill(p.pid, SIGKILL);
                (void)run::wait_status_by(p.pid, status, now() + 5);
            }
            p.pid = -1;
            run::wait_forked(p);  // closes its pipes (the pid is reaped, or left behind)
        }
        return worst;
    }
};

// The process, among those not yet `done`, whose pipe first has something to read (data, or its end) by the
// deadline; -1 past it.
int next_readable(const std::vector<run::forked>& procs, const std::vector<bool>& done, double deadline) {
    std::vector<pollfd> fds;
    std::vector<int> who;
    for (std::size_t i = 0; i < procs.size(); ++i)
        if (!done[i]) fds.push_back({procs[i].from_child, POLLIN, 0}), who.push_back(static_cast<int>(i));
    for (;;) {
        const double left = deadline - now();
        if (left <= 0 || fds.empty()) return -1;
        const int ready = poll(fds.data(), fds.size(), static_cast<int>(std::min(left, 1.0) * 1000) + 1);
        if (ready < 0 && errno != EINTR) throw mmgp::failure(std::string("poll on the processes' pipes: ") + std::strerror(errno));
        for (std::size_t k = 0; ready > 0 && k < fds.size(); ++k)
            if (fds[k].revents != 0) return who[k];
    }
}

// Process i's report by the deadline: throws mmgp::failure when it failed, closed its pipe or was too late.
process_report read_report(run::forked& p, std::size_t i, double deadline, const std::string& late,
                           std::vector<unit_result>& units) {
    process_report rep;
    if (!read_all_by(p.from_child, &rep, sizeof rep, deadline)) {
        if (now() >= deadline) throw mmgp::failure(late);
        throw mmgp::failure("process " + std::to_string(i) + " ended without its report (" + how_it_ended(p) + ")");
    }
    if (!rep.ok) throw mmgp::failure("process " + std::to_string(i) + ": " + rep.why);
    units.resize(static_cast<std::size_t>(std::max(rep.units, 0)));
    if (!units.empty() && !read_all_by(p.from_child, units.data(), units.size() * sizeof(unit_result), deadline))
        throw mmgp::failure("process " + std::to_string(i) + " ended without its units' results (" + how_it_ended(p) + ")");
    return rep;
}

// Writes the start byte to every process. One already gone is found when its report is read: the write's SIGPIPE
// is held back and taken here, not delivered.
void start_all(const std::vector<run::forked>& procs) {
    sigset_t pipe_only, old;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
    bool broken = false;
    for (const run::forked& p : procs)
        if (!write_all(p.to_child, "g", 1) && errno == EPIPE) broken = true;
    if (broken && !sigismember(&old, SIGPIPE)) {
        const timespec none{};
        sigtimedwait(&pipe_only, nullptr, &none);
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

// The whole of the public function below, inside this namespace so that its names are this file's.
void run(const config& c, const alignment& aln, const model& mdl, const tree& start, const process_accelerator& acc,
         result& res, double setup0) {
    const std::string late = "watchdog: the run did not finish within " + std::to_string(c.timeout_s) + " s (m=" +
                             std::to_string(c.m) + ", p=" + std::to_string(c.p) + ", " + acc.name + " processes)";
    process_set set;
    set.procs.reserve(static_cast<std::size_t>(c.m));
    const pid_t parent = getpid();
    for (int i = 0; i < c.m; ++i) {
        run::forked child = run::fork_with_pipes([&, i](int to_parent, int from_parent) {
            // Ended with the parent (a run killed from outside leaves no process holding the device).
            if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) return 1;
            for (int k = 0; k < i; ++k) close(set.procs[static_cast<std::size_t>(k)].from_child), close(set.procs[static_cast<std::size_t>(k)].to_child);
            return process_body(i, c, aln, mdl, start, acc, to_parent, from_parent);
        });
        const int fork_errno = errno;
        if (child.pid < 0) throw mmgp::failure("could not start process " + std::to_string(i) + ": " + std::strerror(fork_errno));
        set.procs.push_back(child);
    }
    // Every process ready (its accelerator made) before the start, within the watchdog; the first to fail ends
    // the run with its own message, whichever it is.
    const double ready_by = now() + c.timeout_s;
    std::vector<bool> done(set.procs.size(), false);
    for (std::size_t n = 0; n < set.procs.size(); ++n) {
        const int i = next_readable(set.procs, done, ready_by);
        if (i < 0) throw mmgp::failure(late);
        run::forked& p = set.procs[static_cast<std::size_t>(i)];
        char tag = 0;
        if (!read_all_by(p.from_child, &tag, 1, ready_by))
            throw mmgp::failure(now() >= ready_by ? late : "process " + std::to_string(i) + " ended before it was ready (" + how_it_ended(p) + ")");
        std::vector<unit_result> none;
        if (tag != tag_ready) read_report(p, static_cast<std::size_t>(i), ready_by, late, none);  // throws its failure
        done[static_cast<std::size_t>(i)] = true;
    }
    res.setup_s = now() - setup0;
    const double t0 = now();
    start_all(set.procs);
    const double deadline = t0 + c.timeout_s;
    res.unit_loglik.assign(static_cast<std::size_t>(c.units), c.ranks > 1 ? std::nan("") : 0.0);  // NaN: another rank's
    double last = t0;
    done.assign(set.procs.size(), false);
    for (std::size_t n = 0; n < set.procs.size(); ++n) {
        const int i = next_readable(set.procs, done, deadline);
        if (i < 0) throw mmgp::failure(late);
        std::vector<unit_result> units;
        const process_report rep = read_report(set.procs[static_cast<std::size_t>(i)], static_cast<std::size_t>(i), deadline, late, units);
        done[static_cast<std::size_t>(i)] = true;
        res.t += rep.t;
        last = std::max(last, rep.finish);
        for (const unit_result& u : units)
            if (u.unit >= 0 && u.unit < c.units) res.unit_loglik[static_cast<std::size_t>(u.unit)] = u.loglik;
    }
    // Each has reported: it exits now. One that does not within 10 s (a driver's teardown hung) is killed; its
    // results are in, so that is not a failure of the run.
    if (const int worst = set.reap(now() + 10); worst != 0)
        throw mmgp::failure("a process exited with status " + std::to_string(worst) + " after its report");
    res.wall_s = last - t0;
}

}  // namespace processes_impl

void run_processes(const config& c, const alignment& aln, const model& mdl, const tree& start,
                   const process_accelerator& acc, result& res, double setup0) {
    processes_impl::run(c, aln, mdl, start, acc, res, setup0);
}

}  // namespace mmgp::kernels::detail
