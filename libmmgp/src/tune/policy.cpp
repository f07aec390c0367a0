// Stage 4 of the tuner (tuner::assess, tune/tune.cpp): the policy. From the posterior means (stage 3): the chosen
// configuration and the reference the next run is chosen against (choose); then, from every configuration's
// posterior (believe, stage 3) and the runs so far: P(each beats the chosen), P(beaten), the bound of the next
// run, whether to stop, and the next run by expected improvement per machine second (decide). Calls only
// objective_value (objective.hpp); works on plain vectors, so that it can be tried on hand-made beliefs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>

#include "tune/stages.hpp"

namespace mmgp::detail {
namespace {

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

std::string fmt_p(const char* what, double p) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s (P = %.2f)", what, p);
    return buf;
}

// Under a cost objective: each configuration's log cost weight (log nodes, log m p nodes), and the window,
// the configurations expected within `within` of the fastest expected time (log).
void cost_window(choice& ch, const std::function<double(std::size_t)>& posterior_mean,
                 const run_evidence& evidence, const std::vector<configuration>& space,
                 const tune_options& opt) {
    ch.log_weight.assign(evidence.size(), 0.0);
    if (!ch.by_cost) return;
    double fastest = std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < evidence.size(); ++c) {
        ch.log_weight[c] = std::log(objective_value(opt.minimise, space[c], 1.0));
        if (evidence[c].excluded()) continue;
        fastest = std::min(fastest, posterior_mean(c));
    }
    ch.window = fastest + std::log1p(opt.within);
}

// The chosen configuration: measured, never censored or failed, lowest expected time (a cost objective:
// lowest expected cost in the window; the fastest when none measured is in it).
void choose_incumbent(choice& ch, const std::function<double(std::size_t)>& posterior_mean,
                      const run_evidence& evidence) {
    auto rank_key = [&](std::size_t c, double m) {
        return !ch.by_cost ? std::pair{0, m} : m <= ch.window ? std::pair{0, m + ch.log_weight[c]} : std::pair{1, m};
    };
    double chosen_mean = 0;
    for (std::size_t c : evidence.measured) {
        if (evidence[c].excluded()) continue;
        const double m = posterior_mean(c);
        if (!ch.has_chosen || rank_key(c, m) < rank_key(ch.chosen, chosen_mean)) {
            ch.has_chosen = true;
            ch.chosen = c;
            chosen_mean = m;
        }
    }
}

// The reference of the next choice: the chosen configuration, or, before anything is chosen, the one in
// flight expected to be the fastest (what runs beside it is chosen against it).
void choose_reference(choice& ch, const std::function<double(std::size_t)>& posterior_mean,
                      const run_evidence& evidence, const std::vector<std::size_t>& in_flight) {
    ch.has_reference = ch.has_chosen;
    ch.reference = ch.chosen;
    if (ch.has_reference) return;
    double reference_mean = 0;
    for (std::size_t c : in_flight) {
        if (evidence[c].excluded()) continue;  // never chosen, never repeated
        const double m = posterior_mean(c);
        if (!ch.has_reference || m < reference_mean) ch.has_reference = true, ch.reference = c, reference_mean = m;
    }
}

// P(beaten): how likely another configuration beats the chosen by more than the tolerance (independent
// pairwise events); each configuration's share in its p_beats.
void rate_rivals(tune_assessment& a, const beat_probability& beats, const log_beliefs& b) {
    if (!a.has_chosen) return;
    double p_none = 1;
    for (std::size_t c = 0; c < a.configs.size(); ++c) {
        if (c == a.chosen || a.configs[c].excluded) continue;
        const double p = beats(c, a.chosen, b.var, b.cov);
        a.configs[c].p_beats = p;
        p_none *= 1 - p;
    }
    a.p_beaten = 1 - p_none;
}

// Whether rivals may be stopped by the noise at all (tune_options::bound_noise_z): asked for, without an
// application profile, under objective time.
bool bounds_by_noise(const tune_options& opt) {
    return opt.bound_noise_z > 0 && opt.choose_structure && opt.minimise == objective::time;
}

// The largest log excess of a finished run over its configuration's center, over the configurations with two
// finished runs or more: how far the noise measured so far reaches above a center; negative when none.
double measured_excess(const run_evidence& evidence) {
    double excess = -1;
    for (std::size_t c : evidence.measured) {
        const auto& logs = evidence[c].logs;
        if (logs.size() >= 2) excess = std::max(excess, *std::max_element(logs.begin(), logs.end()) - evidence[c].center);
    }
    return excess;
}

// The chosen's log time that its runs' bounds start from: the posterior mean, never below what the chosen's
// own finished runs measured (a model fitted badly elsewhere must not stop a run of the chosen that takes its
// usual time, and so exclude it). The loop chooses only measured configurations; a hand-made assessment may
// choose one without a finished run, which keeps its posterior.
double chosen_log_time(const tune_assessment& a, const log_beliefs& b, const run_evidence& evidence) {
    const auto& e = evidence[a.chosen];
    return e.logs.empty() ? b.mean[a.chosen] : std::max(b.mean[a.chosen], e.center);
}

// The bound of a rival's run (tune_options::bound_noise_z): a run of a configuration no slower than the chosen
// by more than the tolerance exceeds it only by noise beyond both the largest measured excess and z sd of the
// chosen's mean and one run; never later than `loose`. Without measured noise, `loose`; with an application
// profile, too (tune_options::bound_noise_z). `chosen_log`: chosen_log_time.
double rival_bound(const tune_assessment& a, const log_beliefs& b, double excess, double chosen_log, double loose,
                   const tune_options& opt) {
    if (!bounds_by_noise(opt) || excess < 0) return loose;
    const std::size_t ch = a.chosen;
    const double spread = std::max(excess, opt.bound_noise_z * std::sqrt(b.var[ch] + b.pooled_run_var));
    return std::min(loose, std::exp(chosen_log + std::log1p(opt.tolerance) + spread));
}

// The bounds of the next run (of the chosen, of a rival), and the configurations confidently slower than
// their bound. No bound before a run has finished: the model's scale is not yet checked against this machine.
// `excess`: measured_excess. Returns whether any configuration left is not pathological.
bool bound_next_run(tune_assessment& a, const log_beliefs& b, const run_evidence& evidence, double excess,
                    const tune_options& opt) {
    double loose = 0, tight = 0;
    if (a.has_chosen) {
        const double chosen_log = chosen_log_time(a, b, evidence);
        loose = opt.bound_factor * std::exp(chosen_log);
        tight = rival_bound(a, b, excess, chosen_log, loose, opt);
    }
    auto with_limit = [&opt](double bound) {
        return opt.max_run_s > 0 ? (bound > 0 ? std::min(bound, opt.max_run_s) : opt.max_run_s) : bound;
    };
    a.chosen_bound_s = with_limit(loose);
    a.rival_bound_s = with_limit(tight);
    a.rival_progress_bound_s = a.rival_bound_s;
    // Under objective time only: under a cost objective the chosen is the cheapest within --within of the fastest,
    // and a slower rival may be the cheaper one.
    if (opt.progress_chosen_z > 0 && opt.minimise == objective::time && a.has_chosen && !evidence[a.chosen].logs.empty()) {
        const double upper = chosen_log_time(a, b, evidence) + std::log1p(opt.tolerance) +
                             opt.progress_chosen_z * std::sqrt(b.var[a.chosen]);
        a.rival_progress_bound_s = std::min(a.rival_bound_s > 0 ? a.rival_bound_s : HUGE_VAL, std::exp(upper));
    }
    a.next_bound_s = a.rival_bound_s;
    bool any_runnable = false;
    for (std::size_t c = 0; c < a.configs.size(); ++c) {
        auto& belief = a.configs[c];
        if (belief.excluded) continue;
        const double bound = a.bound_of(c);
        belief.pathological = bound > 0 && b.mean[c] - z90 * std::sqrt(b.var[c]) > std::log(bound);
        any_runnable = any_runnable || !belief.pathological;
    }
    return any_runnable;
}

// E[T | T > bound] for log T ~ N(mean, var): what a run stopped at `bound` would have taken run to its end.
double expected_beyond(double mean, double var, double bound) {
    const double sd = std::sqrt(std::max(var, 1e-12)), lb = std::log(bound);
    const double tail = normal_cdf((mean - lb) / sd);
    if (!(tail > 1e-12)) return bound;  // far in the tail: just beyond the bound
    return std::max(bound, std::exp(mean + 0.5 * sd * sd) * normal_cdf((mean + sd * sd - lb) / sd) / tail);
}

// A run's expected machine seconds if stopped at `bound` (0: none): its expected time (the mean of its
// log-normal posterior), at most the bound, times its nodes.
double cost_within(const log_beliefs& b, const std::vector<configuration>& space, std::size_t c, double bound) {
    double t = std::exp(b.mean[c] + 0.5 * b.var[c]);
    if (bound > 0) t = std::min(t, bound);
    return t * space[c].nodes;
}

}  // namespace

// The machine seconds a run of c is expected to take: its expected time (the mean of its log-normal posterior),
// at most the bound, times its nodes. The one statistic of a run's cost: the cap's estimate of a configuration
// not run yet is this same number (under the bound factor's bound, never less), so the cap alone never prices
// one out.
double run_cost(const tune_assessment& a, const log_beliefs& b, const std::vector<configuration>& space,
                std::size_t c) {
    return cost_within(b, space, c, a.bound_of(c));
}

// Machine seconds of running every configuration once: the runs' medians where measured; a stopped one at no
// less than its bound (with the model: its expected time given that it exceeds the bound); one screened by short
// runs alone at the lower end of its projection; else a run's
// expected cost (run_cost: the statistic the next run is charged at) under the bound factor's bound (a rival's
// run stopped sooner, bound_noise_z, is cheaper than the naive way's: no reason to cap the tune lower).
exhaustive_estimate exhaustive_seconds(const tune_assessment& a, const log_beliefs& b, const run_evidence& evidence,
                                       const std::vector<configuration>& space) {
    exhaustive_estimate out;
    for (std::size_t c = 0; c < a.configs.size(); ++c) {
        const auto& belief = a.configs[c];
        if (belief.measured_s > 0) {
            out.measured_s += belief.measured_s * space[c].nodes;
        } else if (belief.censored > 0) {
            const double bound = evidence[c].censored_at;
            const double run_var = c < b.run_var.size() ? b.run_var[c] : 0.0;
            double t = a.model_used ? expected_beyond(b.mean[c], b.var[c] + run_var, bound) : bound;
            // Stopped in short runs only: its projection may lie far past the bound a full run of it would get.
            if (evidence[c].stopped_short_only && a.chosen_bound_s > 0) t = std::min(t, a.chosen_bound_s);
            out.stopped_s += t * space[c].nodes;
            ++out.stopped;
        } else if (evidence[c].projected) {
            // Screened by short runs alone: a projection that errs high would raise the cap above exhaustive
            // trial's cost, which the tune promises not to exceed, so it counts at its lower 90 % bound.
            const double low = std::exp(evidence[c].projected_log - z90 * std::sqrt(evidence[c].projected_var));
            out.projected_s += std::min(low * space[c].nodes, cost_within(b, space, c, a.chosen_bound_s));
            ++out.projected;
        } else {
            out.expected_s += cost_within(b, space, c, a.chosen_bound_s);  // run_cost under the bound factor
            ++out.expected;
        }
    }
    return out;
}

namespace {

int chosen_runs(const tune_assessment& a) { return a.has_chosen ? a.configs[a.chosen].runs : 0; }

tune_stop stop_rule(const tune_assessment& a, const tune_options& opt) {
    if (a.has_chosen && chosen_runs(a) >= 3 && a.p_beaten < 1 - opt.confidence) return tune_stop::confident;
    if (opt.max_runs > 0 && a.runs >= opt.max_runs) return tune_stop::budget_runs;
    if (opt.max_seconds > 0 && a.machine_s >= opt.max_seconds) return tune_stop::budget_seconds;
    if (a.cap_s > 0 && a.machine_s >= a.cap_s) return tune_stop::budget_cost;
    for (const auto& belief : a.configs)
        if (!belief.excluded) return tune_stop::none;
    return tune_stop::exhausted;
}

// Whether nothing more should start: the run budget is taken by the runs in flight, or they are expected to
// settle it (confident once they return what is expected of them; a run started now would most likely be
// cancelled unfinished).
bool wait_for_flight(const tune_assessment& a, const beat_probability& beats, const log_beliefs& b,
                     const std::vector<int>& flying, const tune_options& opt) {
    if (opt.max_runs > 0 && a.runs + a.in_flight >= opt.max_runs) return true;
    if (!a.has_chosen || !b.fantasies || chosen_runs(a) + flying[a.chosen] < 3) return false;
    double p_none = 1;
    for (std::size_t c = 0; c < a.configs.size(); ++c)
        if (c != a.chosen && !a.configs[c].excluded) p_none *= 1 - beats(c, a.chosen, b.var_fantasy, b.cov_fantasy);
    return 1 - p_none < 1 - opt.confidence;
}

// Whether `seconds` exceed the cap. The cap and a run's cost are sums of the same terms: a last configuration
// whose own term is all that is left of the cap fits, whatever the rounding of the two sums.
bool over_cap(double seconds, double cap_s) { return seconds > cap_s * (1 + 1e-9); }

// Machine seconds spent and committed: the finished runs', and the expected cost of those in flight.
double committed_seconds(const tune_assessment& a, const log_beliefs& b, const std::vector<configuration>& space,
                         const std::vector<int>& flying) {
    double total = a.machine_s;
    for (std::size_t c = 0; c < flying.size(); ++c) total += flying[c] * run_cost(a, b, space, c);
    return total;
}

// E[max(0, X)] for X ~ N(mean, sd^2).
double expected_excess(double mean, double sd) {
    if (sd <= 0) return std::max(0.0, mean);
    const double z = mean / sd;
    return sd * std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI) + mean * normal_cdf(z);
}

// The knowledge gradient of one more run of `run` (the rival or the chosen `ch`) for the comparison of `rival`
// with the chosen, in log time: D, the chosen's log time minus the rival's, has mean g; the run moves D's mean
// with variance k; the choice after it takes the faster of the two, which gains E[max(0, D')] - max(0, g) =
// sqrt(k) phi(|g| / sqrt(k)) - |g| Phi(-|g| / sqrt(k)). `var`, `cov`: the variances and the covariances with
// the chosen.
double knowledge_gradient(const log_beliefs& b, const std::vector<double>& var, const std::vector<double>& cov,
                          std::size_t ch, std::size_t rival, std::size_t run) {
    const double with_run = run == rival ? cov[rival] - var[rival] : var[ch] - cov[rival];
    const double k = with_run * with_run / (var[run] + b.run_var[run]);
    const double g = std::abs(b.mean[ch] - b.mean[rival]);
    if (!(k > 0)) return 0.0;
    return expected_excess(-g, std::sqrt(k));
}

// The next run by the knowledge gradient per machine second: a rival's own run by what it may gain on the
// comparison with the chosen, the chosen's by the most it gains on any comparison. Two configurations already
// within a hair of each other gain little from another run of either (switching between them gains little), an
// unmeasured one whose interval reaches below the chosen's gains much.
void knowledge_gradient_scores(const tune_assessment& a, const choice& ch, const log_beliefs& b,
                               const std::vector<bool>& candidate, const std::vector<configuration>& space,
                               std::vector<double>& score) {
    const std::vector<double>& var = b.fantasies ? b.var_fantasy : b.var;
    const std::vector<double>& cov = b.fantasies ? b.cov_fantasy : b.cov;
    const std::size_t chosen = ch.chosen;
    double chosen_gain = 0;
    for (std::size_t c = 0; c < a.configs.size(); ++c) {
        if (c == chosen || a.configs[c].excluded) continue;
        if (candidate[c]) score[c] = knowledge_gradient(b, var, cov, chosen, c, c) / run_cost(a, b, space, c);
        chosen_gain = std::max(chosen_gain, knowledge_gradient(b, var, cov, chosen, c, chosen));
    }
    if (candidate[chosen]) score[chosen] = chosen_gain / run_cost(a, b, space, chosen);
}

// Whether the next run is the tune's first (none finished, none in flight) and the platform picks it: the
// configuration it alone expects fastest (tune_options::first_by_platform).
bool first_by_platform(const tune_assessment& a, const log_beliefs& b, const std::vector<int>& flying) {
    return !b.first_time.empty() &&
           std::all_of(a.configs.begin(), a.configs.end(), [](const config_belief& c) { return c.runs == 0; }) &&
           std::all_of(flying.begin(), flying.end(), [](int k) { return k == 0; });
}

// With short runs, while exploring: every configuration is screened before any runs in full, then those screened
// and not run in full go first, the lowest expected time first, then the rest as scored.
void screen_first(const tune_assessment& a, const log_beliefs& b, const std::vector<int>& flying,
                  std::vector<double>& score) {
    constexpr double tier = 1e9;
    for (std::size_t c = 0; c < score.size(); ++c) {
        if (!std::isfinite(score[c])) continue;
        if (a.configs[c].runs == 0 && !b.screened[c] && flying[c] == 0) score[c] += 2 * tier;
        else if (b.screened[c] && a.configs[c].runs == a.configs[c].censored && flying[c] == 0) score[c] = tier - b.mean[c];
    }
}

// Each configuration's score for the next run, higher first (-infinity: not a candidate). The tune's first run
// by the platform (`platform_first`, first_by_platform): the platform's fastest. While nothing predicts (no
// model, too few runs to fit one): how little is known of it. Before anything is chosen: the
// lowest expected time. Then the probability it beats the chosen (or the reference) by more than the
// tolerance per machine second of its run, and the chosen itself when its own interval is the wider of the two
// (both sides of the comparison that keeps the loop going).
std::vector<double> next_run_scores(const tune_assessment& a, const choice& ch, const beat_probability& beats,
                                    const log_beliefs& b, const std::vector<int>& flying,
                                    const std::vector<configuration>& space, bool exploring, bool platform_first,
                                    bool any_runnable, bool by_gradient) {
    const std::size_t n = a.configs.size(), ref = ch.reference;
    const std::vector<double>& v_next = b.fantasies ? b.var_fantasy : b.var;
    std::vector<double> score(n, -std::numeric_limits<double>::infinity());
    std::vector<bool> candidate(n, false);
    for (std::size_t c = 0; c < n; ++c)
        candidate[c] = !a.configs[c].excluded && !(a.configs[c].pathological && any_runnable);
    if (platform_first) {
        for (std::size_t c = 0; c < n; ++c)
            if (candidate[c]) score[c] = -b.first_time[c];
        return score;
    }
    if (exploring || !ch.has_reference) {
        for (std::size_t c = 0; c < n; ++c)
            if (candidate[c] && !(exploring && a.configs[c].censored > 0))  // stopped early: not unknown
                score[c] = exploring ? v_next[c] / (b.explore_cost.empty() ? 1.0 : b.explore_cost[c]) : -b.mean[c];
        if (exploring && !b.screened.empty()) screen_first(a, b, flying, score);
        return score;
    }
    if (by_gradient && a.has_chosen && !ch.by_cost) {
        knowledge_gradient_scores(a, ch, b, candidate, space, score);
        return score;
    }
    for (std::size_t c = 0; c < n; ++c) {
        if (!candidate[c] || c == ref) continue;
        const double p = b.fantasies ? beats(c, ref, b.var_fantasy, b.cov_fantasy)
                         : a.has_chosen ? a.configs[c].p_beats : beats(c, ref, b.var, b.cov);
        score[c] = p / run_cost(a, b, space, c);
    }
    // One more run of a configuration with n runs takes about var / (n + 1) off its variance.
    std::size_t best = ref;
    for (std::size_t c = 0; c < n; ++c)
        if (score[c] > score[best]) best = c;
    auto var_gain = [&](std::size_t c) { return v_next[c] / (a.configs[c].runs + flying[c] + 1); };
    if (best == ref || var_gain(ref) > var_gain(best)) score[ref] = std::numeric_limits<double>::max();
    return score;
}

// Under the cost cap: while the configurations not run yet that may still beat the chosen would not all fit
// in what is left of the cap after the best-scoring repeat, the next run is one of them (the naive way's
// worst case is then met, not exceeded).
void keep_room_for_unmeasured(const tune_assessment& a, const log_beliefs& b,
                              const std::vector<configuration>& space, const std::vector<int>& flying,
                              std::vector<double>& score) {
    if (a.cap_s <= 0 || !a.has_chosen) return;
    // Not run, not in flight, and may still beat the chosen.
    // (Whatever the scores say of it: a repeat that confirms the chosen has set every other score aside.)
    auto open_rival = [&](std::size_t c) {
        return a.configs[c].runs == 0 && flying[c] == 0 && !a.configs[c].excluded && !a.configs[c].pathological &&
               a.configs[c].p_beats >= 1e-3;
    };
    double unmeasured_cost = 0;
    std::size_t best = 0;
    bool any = false;
    for (std::size_t c = 0; c < a.configs.size(); ++c) {
        if (open_rival(c)) unmeasured_cost += run_cost(a, b, space, c), any = true;
        if (score[c] > score[best]) best = c;
    }
    if (!any || a.configs[best].runs == 0) return;
    if (!over_cap(committed_seconds(a, b, space, flying) + run_cost(a, b, space, best) + unmeasured_cost, a.cap_s)) return;
    // The most promising of them next: P(beats the chosen) per machine second, as step 6 scores a run.
    for (std::size_t c = 0; c < a.configs.size(); ++c)
        score[c] = open_rival(c) ? a.configs[c].p_beats / run_cost(a, b, space, c) : -std::numeric_limits<double>::infinity();
}

// The next run is c's, whatever the scores said.
void run_only(std::vector<double>& score, std::size_t c) {
    std::fill(score.begin(), score.end(), -std::numeric_limits<double>::infinity());
    score[c] = std::numeric_limits<double>::max();
}

// Already unlikely to be beaten but with too few runs of its own to stop confident: the open question is the
// chosen's own noise, so the next run is the chosen again (a rival no more likely to win than the confidence
// allows is not worth a run; if the repeats show the chosen slower, P(beaten) rises and the rivals come back).
void confirm_the_chosen(const tune_assessment& a, const choice& ch, const std::vector<int>& flying,
                        const tune_options& opt, std::vector<double>& score) {
    if (!a.has_chosen || ch.by_cost || a.p_beaten >= 1 - opt.confidence) return;
    if (a.configs[a.chosen].runs + flying[a.chosen] >= 3 || a.configs[a.chosen].excluded) return;
    run_only(score, a.chosen);
}

// Rivals are stopped by the noise only once some configuration has run twice (tune_options::bound_noise_z):
// until then, while no model predicts (each rival is run to learn it, as exhaustive trial would), once a rival
// has run beside the chosen (the first run, often the slowest corner of the space, is not repeated) and when
// the run the scores ask for is a rival's expected to cost more than one of the chosen, the next run is the
// chosen again, whose noise then sets how soon the rivals' runs are stopped — provided that under the cost cap
// the repeat leaves room for one run of every configuration not run yet, each at most at the bound the noise
// prior alone would set (the repeat never prices one out). Returns whether it set the next run so.
bool measure_noise_first(const tune_assessment& a, const log_beliefs& b, const run_evidence& evidence,
                         const std::vector<configuration>& space, const std::vector<int>& flying, double excess,
                         const tune_options& opt, std::vector<double>& score) {
    if (!bounds_by_noise(opt) || !a.has_chosen || excess >= 0 || a.model_used) return false;
    const std::size_t ch = a.chosen;
    if (a.configs[ch].excluded || a.configs[ch].runs + flying[ch] >= 2) return false;
    const auto ran = std::count_if(a.configs.begin(), a.configs.end(),
                                   [](const config_belief& c) { return c.runs > c.failed; });
    if (ran < 2) return false;
    const std::size_t asked = static_cast<std::size_t>(std::max_element(score.begin(), score.end()) - score.begin());
    if (asked == ch || (!std::isfinite(score[asked]) && score[asked] < 0)) return false;
    if (!(run_cost(a, b, space, ch) < run_cost(a, b, space, asked))) return false;
    if (a.cap_s > 0) {
        const double prior_bound = rival_bound(a, b, 0.0, chosen_log_time(a, b, evidence), a.chosen_bound_s, opt);
        double need = committed_seconds(a, b, space, flying) + run_cost(a, b, space, ch);
        for (std::size_t c = 0; c < a.configs.size(); ++c)
            if (a.configs[c].runs == 0 && flying[c] == 0 && !a.configs[c].excluded)
                need += cost_within(b, space, c, prior_bound);
        if (over_cap(need, a.cap_s)) return false;
    }
    run_only(score, ch);
    return true;
}

// What the cap charges the next run: its expected cost while some configuration has not run; once every one has
// (a finished or stopped run of its own, or a short one), the most it can take, its bound x nodes, so that no
// run takes the machine time spent past the cap (a repeat's expectation is its median; one slow run of it would
// overshoot).
double cap_charge(const tune_assessment& a, const log_beliefs& b, const std::vector<configuration>& space) {
    bool all_ran = true;
    for (std::size_t c = 0; c < a.configs.size(); ++c)
        all_ran = all_ran && (a.configs[c].runs > 0 || a.configs[c].excluded || (!b.screened.empty() && b.screened[c]));
    if (!all_ran || a.next_bound_s <= 0) return a.next_cost_s;
    return std::max(a.next_cost_s, a.next_bound_s * space[a.next].nodes);
}

// The next run: the highest score. Returns whether it is the reference (the chosen one) again.
bool choose_next(tune_assessment& a, const choice& ch, const std::vector<double>& score) {
    double best_score = -std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < a.configs.size(); ++c)
        if (score[c] > best_score) {
            best_score = score[c];
            a.next = c;
            a.has_next = true;
        }
    return a.has_next && ch.has_reference && a.next == ch.reference;
}

// The expected regret of the chosen configuration: the largest, over its rivals, expected excess of its log
// time over theirs (a lower bound of the expected excess over the best of them), as a fraction and in seconds.
void rate_regret(tune_assessment& a, const log_beliefs& b) {
    if (!a.has_chosen) return;
    const std::size_t ch = a.chosen;
    double worst = 0;
    for (std::size_t c = 0; c < a.configs.size(); ++c) {
        if (c == ch || a.configs[c].excluded) continue;
        const double sd = std::sqrt(std::max(b.var[c] + b.var[ch] - 2 * b.cov[c], 0.0));
        worst = std::max(worst, expected_excess(b.mean[ch] - b.mean[c], sd));
    }
    a.expected_regret = std::expm1(worst);
    a.expected_regret_s = a.expected_regret * std::exp(b.mean[ch]);
}

// What one more run of `next` is expected to save on one use of the choice, seconds: the knowledge gradient
// of the comparison with the chosen (the chance the run changes the choice, times what the change gains). D,
// the chosen's log time minus a rival's, has mean g; the run moves D's mean with variance k; the choice after
// it takes the faster of the two, which gains E[max(0, D')] - max(0, g) = sqrt(k) phi(|g| / sqrt(k)) -
// |g| Phi(-|g| / sqrt(k)). A run of the chosen itself: the largest of these over its rivals.
double expected_saving(const tune_assessment& a, const log_beliefs& b, std::size_t next) {
    const std::size_t ch = a.chosen;
    double best = 0;
    if (next != ch) best = knowledge_gradient(b, b.var, b.cov, ch, next, next);
    else
        for (std::size_t c = 0; c < a.configs.size(); ++c)
            if (c != ch && !a.configs[c].excluded) best = std::max(best, knowledge_gradient(b, b.var, b.cov, ch, c, ch));
    return std::expm1(best) * std::exp(b.mean[ch]);
}

std::string why_next(const tune_assessment& a, bool exploring, bool has_reference, bool repeat_chosen,
                     bool noise_first, bool platform_first, bool explore_by_cost) {
    const auto& next = a.configs[a.next];
    if (noise_first) return "repeat the chosen: its noise sets how soon the others' runs are stopped";
    if (platform_first) return "first: the one the platform alone expects fastest (its time bounds the next runs)";
    if (exploring && explore_by_cost)
        return "explore: the least known per machine second the platform alone expects (too few runs for the model yet)";
    if (exploring) return "explore: the least known configuration (too few runs for the model yet)";
    if (!has_reference) return "the lowest expected time";
    if (repeat_chosen)
        return a.has_chosen ? "repeat the chosen: one more run of it tells more"
                            : "another run of the one in flight expected fastest";
    if (next.pathological) return "nothing else left to run";
    if (!a.has_chosen) return "may beat the one in flight expected fastest";
    if (next.runs > 0) return fmt_p("repeat: may still beat the chosen", next.p_beats);
    return fmt_p("may beat the chosen", next.p_beats);
}

}  // namespace

choice choose(const std::function<double(std::size_t)>& posterior_mean, const run_evidence& evidence,
              const std::vector<configuration>& space, const tune_options& opt, const std::vector<std::size_t>& in_flight) {
    choice ch;
    ch.by_cost = opt.minimise != objective::time;
    cost_window(ch, posterior_mean, evidence, space, opt);
    choose_incumbent(ch, posterior_mean, evidence);
    choose_reference(ch, posterior_mean, evidence, in_flight);
    return ch;
}

beat_probability::beat_probability(const std::vector<double>& mean, const choice& ch, const tune_options& opt)
    : mean_(mean), ch_(ch), margin_(std::log1p(opt.tolerance)), log_within_(std::log1p(opt.within)) {}

// Under a cost objective, c beats the chosen when it is cheaper by more than the tolerance and in the
// window, or when it is faster than the chosen by more than `within` (the chosen is then out of the window).
double beat_probability::operator()(std::size_t c, std::size_t against, const std::vector<double>& var,
                                    const std::vector<double>& cov) const {
    const auto& mu = mean_;
    const auto& lw = ch_.log_weight;
    const double sd = std::sqrt(std::max(var[c] + var[against] - 2 * cov[c], 1e-12));
    if (!ch_.by_cost) return normal_cdf((mu[against] - mu[c] - margin_) / sd);
    const double cheaper = normal_cdf((mu[against] + lw[against] - mu[c] - lw[c] - margin_) / sd);
    const double in_window = normal_cdf((ch_.window - mu[c]) / std::sqrt(std::max(var[c], 1e-12)));
    const double faster = normal_cdf((mu[against] - mu[c] - log_within_) / sd);
    return 1 - (1 - cheaper * in_window) * (1 - faster);
}

void rate_choice(tune_assessment& a, const choice& ch, const log_beliefs& b, const tune_options& opt) {
    a.has_chosen = ch.has_chosen;
    a.chosen = ch.chosen;
    a.p_beaten = 1;
    for (auto& belief : a.configs) belief.p_beats = 0;
    const beat_probability beats(b.mean, ch, opt);
    rate_rivals(a, beats, b);
    rate_regret(a, b);
}

bool stopped_unsure(const tune_assessment& a, const tune_options& opt) {
    const bool budget = a.stop == tune_stop::budget_cost || a.stop == tune_stop::budget_runs ||
                        a.stop == tune_stop::budget_seconds || a.stop == tune_stop::not_worth;
    return budget && a.has_chosen && a.p_beaten >= 1 - opt.confidence;
}

void decide(tune_assessment& a, const choice& ch, const log_beliefs& b, const run_evidence& evidence,
            const std::vector<int>& flying, const std::vector<configuration>& space, const tune_options& opt) {
    rate_choice(a, ch, b, opt);
    const beat_probability beats(b.mean, ch, opt);
    const double excess = measured_excess(evidence);
    const bool any_runnable = bound_next_run(a, b, evidence, excess, opt);
    const exhaustive_estimate exhaustive = exhaustive_seconds(a, b, evidence, space);
    a.exhaustive_s = exhaustive.total();
    a.exhaustive_stopped = exhaustive.stopped;
    a.exhaustive_stopped_s = exhaustive.stopped_s;
    a.exhaustive_expected = exhaustive.expected;
    a.exhaustive_projected = exhaustive.projected;
    a.cap_s = opt.cap_at_exhaustive ? a.exhaustive_s : 0.0;
    if (opt.max_cost_s > 0) a.cap_s = a.cap_s > 0 ? std::min(a.cap_s, opt.max_cost_s) : opt.max_cost_s;
    a.stop = stop_rule(a, opt);
    if (a.stop != tune_stop::none || wait_for_flight(a, beats, b, flying, opt)) return;
    // While nothing predicts (no model, or too few runs to fit one without the prior): explore.
    const bool pairs_enough = opt.short_explore_pairs > 0 && a.carryover.ranks &&
                              a.carryover.pairs >= opt.short_explore_pairs;
    const bool exploring =
        !a.model_used && !pairs_enough &&
        (opt.use_model ? evidence.measured.size() < fit_threshold(opt) : !a.has_chosen);
    const bool platform_first = exploring && first_by_platform(a, b, flying);
    std::vector<double> score = next_run_scores(a, ch, beats, b, flying, space, exploring, platform_first,
                                                any_runnable, opt.next_by_gradient);
    // The chosen confirmed first, then room kept under the cap: a repeat that would price out a configuration not
    // run yet that may still win gives way to it, the confirming repeat too.
    if (!exploring) confirm_the_chosen(a, ch, flying, opt, score);
    if (!exploring) keep_room_for_unmeasured(a, b, space, flying, score);
    const bool noise_first = measure_noise_first(a, b, evidence, space, flying, excess, opt, score);
    const bool repeat_chosen = choose_next(a, ch, score);
    if (!a.has_next) {
        a.stop = tune_stop::exhausted;
        return;
    }
    a.next_bound_s = a.bound_of(a.next);
    a.next_cost_s = run_cost(a, b, space, a.next);
    // Nothing more starts past the cap, or when it is not worth its cost; the runs in flight are waited for
    // (they are paid for already), and the tune stops when none is left.
    auto hold = [&a](tune_stop why) {
        a.has_next = false;
        if (a.in_flight == 0) a.stop = why;
    };
    // The cap at running everything once holds from the first choice on (until then every run is one of the
    // once-each); a cap in seconds (--max-cost S) once a run has taken a time, finished or stopped at its bound,
    // chosen or not (before it, what a run costs is not known: a failed run says nothing of it).
    const bool timed = std::any_of(a.configs.begin(), a.configs.end(), [](const config_belief& c) {
        return c.full_runs > 0 || c.censored > 0 || c.short_runs > 0;
    });
    const double cap_s = a.has_chosen ? a.cap_s : timed ? opt.max_cost_s : 0.0;
    if (cap_s > 0 && over_cap(committed_seconds(a, b, space, flying) + cap_charge(a, b, space), cap_s))
        return hold(tune_stop::budget_cost);
    if (opt.uses > 0 && a.has_chosen && !ch.by_cost && !exploring) {
        a.next_saving_s = expected_saving(a, b, a.next) * opt.uses;
        if (a.next_saving_s < a.next_cost_s) return hold(tune_stop::not_worth);
    }
    a.why_next = why_next(a, exploring, ch.has_reference, repeat_chosen, noise_first, platform_first,
                          !b.explore_cost.empty());
}

}  // namespace mmgp::detail
