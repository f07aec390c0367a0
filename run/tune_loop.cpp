// The loop of mmgp tune: fills --parallel places with the runs the tuner asks for, journals each run as it ends,
// tightens the bounds of the runs in flight as results set the scale, and once the choice is made cancels what
// still runs. Called by mmgp tune (cli/cmd_tune.cpp); calls one tune_backend, the journal, the tuner and the progress line.
#include "tune_loop.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <csignal>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

#include "mmgp/words.hpp"
#include "tune_progress.hpp"

namespace mmgp::run {

using nlohmann::json;

namespace {

class tune_loop {
public:
    tune_loop(tuner& t, tune_backend& backend, journal& jr, const journal_history& history, const loop_settings& settings)
        : t_(t), backend_(backend), jr_(jr), settings_(settings), a_(t.assess()),
          next_number_(history.next_run_number), any_ran_(history.any_ran),
          retry_failed_before_(history.retry_failed_before) {}

    loop_result run() {
        if (!settings_.quiet && !any_ran_) std::cerr << plan_line(a_, t_.space().size()) << std::flush;
        for (;;) {
            start_runs();
            if (a_.stop != tune_stop::none || flights_.empty()) break;
            const std::optional<run_end> end = backend_.wait_any();
            if (!end) return {interrupted()};
            if (learn(end_run(index_of(end->id), *end), *end)) break;
            tighten_bounds();
        }
        loop_result result;
        result.decided_s = backend_.now();
        if (!cancel_in_flight()) return {interrupted()};
        backend_.close();
        if (cannot_run_)
            throw mmgp::error(fmt::format("COMMAND: expected a program that runs, found its first {} runs failed with "
                                          "exit status {} and none succeeded ({} keeps them; its runs' commands say "
                                          "how it was started)",
                                          failures_.size(), failures_[0],
                                          jr_.is_open() ? jr_.path() : std::string("the replay")));
        result.trace = std::move(trace_);
        return result;
    }

private:
    struct flight {
        std::size_t config = 0;
        int number = 0;  // in the order started
        json line;       // its journal line, completed when it ends
        int id = 0;      // the backend's (0: refused, never started)
    };

    std::vector<std::size_t> configs_in_flight() const {
        std::vector<std::size_t> v;
        for (const auto& f : flights_) v.push_back(f.config);
        return v;
    }

    std::size_t index_of(int id) const {
        std::size_t i = 0;
        while (i < flights_.size() && flights_[i].id != id) ++i;
        return i;
    }

    // Up to --parallel runs in flight, while the tuner has a next run and the backend room for it.
    void start_runs() {
        while (static_cast<int>(flights_.size()) < settings_.parallel) {
            a_ = t_.assess(configs_in_flight());
            if (a_.stop != tune_stop::none || !a_.has_next) break;
            if (!start_next()) break;
        }
    }

    // The tuner's next run; false when the backend has no room for it now. A run the backend refuses is
    // recorded as failed at once.
    bool start_next() {
        const configuration& c = t_.space()[a_.next];
        flight f{a_.next, next_number_, json::object(), 0};
        f.line = {{"run", f.number}, {"m", c.m}, {"p", c.p}, {"nodes", c.nodes},
                  {"policy", std::string(to_string(c.pol))}, {"start", utc_now()}, {"bound_s", a_.next_bound_s},
                  {"why", a_.why_next}};
        if (a_.stops_early(a_.next_bound_s)) f.line["early_bound"] = true;
        if (c.share != accelerator_sharing::dedicated) f.line["sharing"] = std::string(to_string(c.share));
        const bool short_run = a_.next_work < 1;
        if (t_.options().short_work > 0) f.line["short"] = short_run;
        if (settings_.parallel > 1) f.line["in_flight"] = flights_.size(), f.line["start_s"] = backend_.now();
        const run_start started = backend_.start(
            {c, f.number, a_.next_bound_s, short_run, a_.noise, flights_.size(), a_.progress_bound_of(a_.next)}, f.line);
        if (started.verdict == start_verdict::no_room) return false;
        ++next_number_;
        f.id = started.id;
        flights_.push_back(std::move(f));
        if (started.verdict == start_verdict::refused) {
            const run_end failed{0, run_outcome::failed, 0, 1};
            const flight done = end_run(flights_.size() - 1, failed);
            a_ = t_.assess(configs_in_flight());
            show_progress(done, failed);
        }
        return true;
    }

    // Ends flights_[i]: journaled, given to the tuner, what it held given back.
    flight end_run(std::size_t i, const run_end& end) {
        flight f = std::move(flights_[i]);
        flights_.erase(flights_.begin() + static_cast<std::ptrdiff_t>(i));
        json& line = f.line;
        line["exit"] = end.exit_status;
        line["wall_s"] = end.wall_s;
        line["outcome"] = std::string(to_string(end.outcome));
        line["censored"] = end.outcome == run_outcome::censored;
        if (settings_.parallel > 1) line["end_s"] = backend_.now();
        line.update(end.journal_fields);
        if (jr_.is_open()) jr_.append(line);
        const bool early = end.outcome == run_outcome::censored && line.value("early_bound", false);
        t_.add(f.config, {end.wall_s, end.outcome, early, line.value("short", false) ? t_.options().short_work : 1.0,
                          past_bound_of(line, end.outcome == run_outcome::censored)});
        if (f.id != 0) backend_.release(f.id);
        return f;
    }

    // After a run: the new assessment, traced and shown. True when the loop is over: the tuner stops, or the
    // program cannot run (its first three runs failed alike and none succeeded).
    bool learn(const flight& f, const run_end& end) {
        a_ = t_.assess(configs_in_flight());
        trace_.push_back({{"runs", a_.runs}, {"machine_s", a_.machine_s}, {"elapsed_s", backend_.now()},
                          {"p_beaten", a_.p_beaten},
                          {"chosen", a_.has_chosen ? json(key_of(t_.space()[a_.chosen])) : json(nullptr)}});
        show_progress(f, end);
        if (end.outcome == run_outcome::failed) {
            failures_.push_back(end.exit_status);
            if (!settings_.quiet) name_failure_pattern();
        } else if (end.outcome == run_outcome::ok || end.outcome == run_outcome::censored) {
            any_ran_ = true;
        }
        if (!any_ran_ && failures_.size() >= 3 &&
            std::all_of(failures_.begin(), failures_.end(), [&](int e) { return e == failures_[0]; })) {
            cannot_run_ = true;
            return true;
        }
        return a_.stop != tune_stop::none;
    }

    // A failure that follows the configuration: from the second failed run on, when every failed run has
    // m > 1 (or p > 1, or nodes > 1) and every run that ran has it at 1, one note says so (once per kind).
    void name_failure_pattern() {
        struct dimension {
            const char* name;
            int configuration::*member;
            const char* hint;
        };
        static constexpr dimension dims[] = {
            {"m", &configuration::m, "several processes (a file or a redirection every rank writes, a port, an MPI setting)"},
            {"p", &configuration::p, "several threads or accelerators per process (the {p} placeholder's option?)"},
            {"nodes", &configuration::nodes, "several nodes (a path or a program missing on the others?)"}};
        for (const dimension& d : dims) {
            bool failed_above = true, ran_at_one = true, any_ran = false;
            int failed = 0;
            for (const auto& [c, m] : t_.measured())
                for (const measurement::run& r : m.runs) {
                    const int v = m.c.*d.member;
                    if (r.outcome == run_outcome::failed) ++failed, failed_above = failed_above && v > 1;
                    else if (r.outcome == run_outcome::ok || r.outcome == run_outcome::censored)
                        any_ran = true, ran_at_one = ran_at_one && v == 1;
                }
            const std::string kind = d.name;
            if (failed < 2 || !failed_above || !any_ran || !ran_at_one || named_.count(kind)) continue;
            named_.insert(kind);
            std::cerr << fmt::format("mmgp: note: the {} failed runs all have {} > 1, and every run with {} = 1 "
                                     "ran: the command may fail only with {}; fix it and run mmgp tune --resume {} "
                                     "--retry-failed\n",
                                     failed, d.name, d.name, d.hint, jr_.is_open() ? jr_.path() : std::string("JOURNAL"));
        }
    }

    void show_progress(const flight& f, const run_end& end) const {
        if (settings_.quiet) return;
        const run_progress run{f.number, t_.space()[f.config], end.wall_s, end.outcome, end.exit_status, flights_.size(),
                               f.line.value("short", false),
                               f.line.value("progress_stop", false) ? f.line.value("projected_s", 0.0) : 0.0};
        std::cerr << progress_line(run, a_, t_.space(), settings_.tolerance, settings_.minimise) << std::flush;
    }

    // Runs started before a result set their scale get the bound the results set now for their configuration
    // (never a looser one).
    void tighten_bounds() {
        for (auto& f : flights_) {
            const double now = a_.bound_of(f.config);
            if (now <= 0) continue;
            const double b = f.line["bound_s"].get<double>();
            if (b > 0 && b <= now) continue;
            if (!backend_.tighten_bound(f.id, now)) continue;
            f.line["bound_s"] = now;
            if (a_.stops_early(now)) f.line["early_bound"] = true;
            if (f.line.contains("at_least_s") && f.line["at_least_s"].get<double>() > now) f.line["at_least_s"] = now;
        }
    }

    // The decision is made: runs still in flight are cancelled (their machine time spent, nothing learnt from
    // them). False when mmgp was interrupted meanwhile.
    bool cancel_in_flight() {
        if (flights_.empty()) return true;
        backend_.stop_all();
        while (!flights_.empty()) {
            const std::optional<run_end> end = backend_.wait_any();
            if (!end) return false;
            if (const std::size_t i = index_of(end->id); i < flights_.size()) end_run(i, *end);
        }
        return true;
    }

    // mmgp interrupted: every run has been stopped, batch jobs cancelled, their files removed; 128 + signal.
    int interrupted() {
        const int sig = backend_.interrupted();
        std::cerr << fmt::format("mmgp: interrupted ({}): the journal {} keeps the {} runs that ended; {} run(s) in "
                                 "flight were stopped; mmgp tune --resume {}{} continues\n",
                                 sigabbrev_np(sig) ? fmt::format("SIG{}", sigabbrev_np(sig)) : "signal", jr_.path(),
                                 t_.run_count(), flights_.size(), jr_.path(),
                                 retry_failed_before_ > 0 ? " --retry-failed" : "");
        backend_.close();
        signal(sig, SIG_DFL);
        raise(sig);
        return 128 + sig;
    }

    tuner& t_;
    tune_backend& backend_;
    journal& jr_;
    const loop_settings settings_;
    tune_assessment a_;
    std::vector<flight> flights_;  // in the order started
    json trace_ = json::array();
    int next_number_;
    std::vector<int> failures_;  // exit statuses of the failed runs, while none has run
    bool any_ran_, cannot_run_ = false;
    int retry_failed_before_;  // > 0: this session retries the failures numbered below it (its mark says so)
    std::set<std::string> named_;  // the failure patterns named so far
};

}  // namespace

loop_result run_tune_loop(tuner& t, tune_backend& backend, journal& jr, const journal_history& history,
                          const loop_settings& settings) {
    return tune_loop(t, backend, jr, history, settings).run();
}

}  // namespace mmgp::run
