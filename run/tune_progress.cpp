// run/tune_progress.cpp — the lines a tune prints while it runs (tune_progress.hpp): the plan before the first
// run and a progress line after each. Called by the loop (tune_loop.cpp) and, for in_objective(), the result
// (cli/tune_report.cpp). Pure text.
#include "tune_progress.hpp"

#include <fmt/format.h>

#include "mmgp/words.hpp"

namespace mmgp::run {

std::string in_objective(objective minimise) {
    return minimise == objective::time ? "" : " in " + std::string(to_string(minimise));
}

std::string plan_line(const tune_assessment& a, std::size_t configurations) {
    std::string out =
        a.model_used ? fmt::format("mmgp tune: {} configurations; running every configuration once: about {} of "
                                   "machine time (the model's expectation)",
                                   configurations, human_time(a.exhaustive_s))
                     : fmt::format("mmgp tune: {} configurations; what running every configuration once costs is "
                                   "known after the first runs (no application profile to expect it from)",
                                   configurations);
    if (a.cap_s > 0)
        out += a.cap_s >= a.exhaustive_s || !a.model_used ? "; the tune costs no more (--max-cost)"
                                         : fmt::format("; the tune costs at most {} (--max-cost)", human_time(a.cap_s));
    return out + "\n";
}

std::string progress_line(const run_progress& run, const tune_assessment& a, const std::vector<configuration>& space,
                          double tolerance, objective minimise) {
    const config_words words(space);
    const std::string best = a.has_chosen ? fmt::format("chosen {} {}, P(beaten by > {:g} %{}) {:.2f}",
                                                        words(space[a.chosen]), human_time(a.configs[a.chosen].time_s),
                                                        100 * tolerance, in_objective(minimise), a.p_beaten)
                                          : "nothing chosen yet";
    // The budget as it stands: what was spent against the cap (the estimate of running every configuration once).
    const std::string spent = a.cap_s > 0 ? fmt::format(" · spent {} of {}", human_time(a.machine_s), human_time(a.cap_s))
                                          : fmt::format(" · spent {}", human_time(a.machine_s));
    return fmt::format("[run {}] {}{}: {} {}{}{} · {}{}\n", run.number, words(run.config),
                       run.short_run ? " short" : "", human_time(run.wall_s),
                       to_string(run.outcome),
                       run.outcome == run_outcome::failed ? fmt::format(" (exit status {})", run.exit_status)
                       : run.projected_s > 0 ? fmt::format(" (its progress projected {})", human_time(run.projected_s))
                                             : "",
                       run.in_flight == 0 ? "" : fmt::format(" ({} in flight)", run.in_flight), best, spent);
}

}  // namespace mmgp::run
