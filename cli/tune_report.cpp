// What mmgp tune prints at its end: the result (text or JSON on stdout, the --plot SVG). Called by cmd_tune.cpp;
// calls the launcher rendering (plan_launch: cli/cmd_launch.cpp; run/slurm_env.hpp) for the chosen command.
#include "tune_report.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "slurm_env.hpp"
#include "svg.hpp"
#include "tune_progress.hpp"

namespace mmgp::cli {

using nlohmann::json;
using mmgp::config_text;
using mmgp::config_words;
using run::in_objective;

namespace {

std::string pct(double v) { return fmt::format("{:.1f} %", 100 * v); }

std::string plot_svg(const std::vector<configuration>& space, const tune_assessment& a, const std::string& title) {
    const config_words words(space);
    // Log-log: expected (x, with its 90 % interval) against measured (y), one point per measured configuration.
    double lo = 1e300, hi = 0;
    for (std::size_t i = 0; i < space.size(); ++i) {
        const auto& b = a.configs[i];
        if (b.measured_s <= 0) continue;
        lo = std::min({lo, b.measured_s, b.lo_s});
        hi = std::max({hi, b.measured_s, b.hi_s});
    }
    if (hi <= 0) lo = 1e-3, hi = 1;
    lo /= 1.2, hi *= 1.2;
    const svg_plot plot({lo, hi, true, "expected time (s, log scale), 90 % interval"},
                        {lo, hi, true, "measured median (s, log scale)"}, title, 560, 560);
    std::string s = plot.begin();
    s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#999\" stroke-dasharray=\"4\"/>\n",
                     plot.px(lo), plot.py(lo), plot.px(hi), plot.py(hi));
    for (std::size_t i = 0; i < space.size(); ++i) {
        const auto& b = a.configs[i];
        if (b.measured_s <= 0) continue;
        const bool chosen = a.has_chosen && i == a.chosen;
        s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#4a7\"/>\n"
                         "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\"><title>{} ({} runs)</title></circle>\n",
                         plot.px(b.lo_s), plot.py(b.measured_s), plot.px(b.hi_s), plot.py(b.measured_s), plot.px(b.time_s),
                         plot.py(b.measured_s), chosen ? 5 : 3, chosen ? "#d22" : "#246", xml_text(words(space[i])), b.runs);
    }
    return s + svg_plot::finish();
}

// The configurations in the order shown: those that may be chosen first, by expected time.
std::vector<std::size_t> shown_order(const tune_assessment& a) {
    std::vector<std::size_t> order(a.configs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
        const auto &bx = a.configs[x], &by = a.configs[y];
        if (bx.excluded != by.excluded) return !bx.excluded;
        return bx.time_s < by.time_s;
    });
    return order;
}

// Why a tune chose nothing: no configuration finished a run, or each that did was also stopped at its bound or
// failed in another run (such a configuration is never chosen, its finished runs shown in the table all the same).
std::string why_none(const tune_assessment& a) {
    // Only full runs choose: a short run (--work) screens a configuration.
    std::size_t finished = 0, screened = 0;
    for (const config_belief& b : a.configs) finished += b.full_runs > 0 ? 1 : 0, screened += b.short_runs > 0 ? 1 : 0;
    if (finished == 0)
        return screened == 0 ? "no configuration finished a run"
                             : "no configuration finished a full run (short runs screen, they do not choose)";
    return finished == 1 ? std::string("the one configuration that finished a run was also stopped at its bound or "
                                       "failed in another run, and is never chosen")
                         : fmt::format("each of the {} configurations that finished a run was also stopped at its bound "
                                       "or failed in another run, and is never chosen",
                                       finished);
}

// The command that runs the chosen configuration; empty without a choice or a command (replay).
std::string launch_line(const tune_summary& r) {
    if (!r.a.has_chosen || r.o.launch.command.empty()) return {};
    // The production run is a full one: {work} at its full value.
    const auto work = parse_work(r.o.work);
    // With --oversubscribe inside an allocation, as its runs ran: told the allocation's CPUs (tune_local.cpp,
    // tune_slurm_steps.cpp); without it, a configuration past them failed and was never chosen.
    launch_options lo = r.o.launch;
    if (!lo.cores_per_node) lo.cores_per_node = run::tune_srun_node_cpus(r.kind == launcher_kind::srun, lo.oversubscribe);
    return shell_command(plan_launch(r.kind, r.space[r.a.chosen], r.s.app.units, lo,
                                     work ? with_work(r.o.launch.command, std::to_string(work->second))
                                          : r.o.launch.command));
}

// The configurations not run yet that may still beat the chosen (P >= 0.01), the likeliest first, at most 5.
std::vector<std::size_t> open_rivals(const tune_assessment& a) {
    std::vector<std::size_t> out;
    if (!a.has_chosen) return out;
    for (std::size_t i = 0; i < a.configs.size(); ++i)
        if (a.configs[i].runs == 0 && a.configs[i].p_beats >= 0.01) out.push_back(i);
    std::stable_sort(out.begin(), out.end(), [&](std::size_t x, std::size_t y) {
        return a.configs[x].p_beats > a.configs[y].p_beats;
    });
    if (out.size() > 5) out.resize(5);
    return out;
}

// Why the tune stopped, as the JSON's "stop" says it: a stop at the cap names the cap that held, running every
// configuration once (the default) or --max-cost SECONDS where that was the lower.
std::string stop_name(const tune_summary& r) {
    const tune_assessment& a = r.a;
    if (a.stop == tune_stop::budget_cost && r.to.max_cost_s > 0 && a.cap_s == r.to.max_cost_s)
        return fmt::format("cost cap reached (--max-cost {:g} s)", r.to.max_cost_s);
    return std::string(to_string(a.stop));
}

json chosen_json(const tune_summary& r) {
    if (!r.a.has_chosen) return nullptr;
    const auto& c = r.space[r.a.chosen];
    const auto& b = r.a.configs[r.a.chosen];
    json j = {{"m", c.m}, {"p", c.p}, {"nodes", c.nodes}, {"policy", std::string(to_string(c.pol))},
              {"time_s", b.time_s}, {"measured_s", b.measured_s}, {"node_hours", node_hours(c, b.time_s)},
              {"core_hours", core_hours(c, b.time_s)}};
    if (c.share != accelerator_sharing::dedicated) j["sharing"] = std::string(to_string(c.share));  // a GPU node's
    return j;
}

// The short runs of the tune (--work).
int short_run_count(const tune_assessment& a) {
    int shorts = 0;
    for (const auto& b : a.configs) shorts += b.short_runs;
    return shorts;
}

// With --work: how many runs were short, how they carried over to full ones, and whether they ranked.
std::string short_runs_text(const tune_summary& r) {
    if (!(r.to.short_work > 0)) return "";
    const tune_assessment& a = r.a;
    const tune_carryover& c = a.carryover;
    const int shorts = short_run_count(a);
    std::string out = fmt::format("short runs: {} of the {} runs (--work {}); ", shorts, a.runs, r.o.work);
    if (c.pairs == 0) return out + "no configuration run both ways yet\n";
    out += fmt::format("a full run = {:.3g} x (short - {}) + {}, within {} (from {} configuration{} run both ways)\n",
                       c.ratio, human_time(c.startup_s), human_time(c.startup_s), pct(c.error), c.pairs,
                       c.pairs == 1 ? "" : "s");
    if (!c.ranks)
        out += fmt::format("short runs do not rank these configurations as full runs do: their projections miss by {}, "
                           "more than half the {} spread they see; they were set aside and the tune went on with full "
                           "runs (a shorter run of this program is no screen)\n",
                           pct(c.fit_error), pct(c.spread));
    return out;
}

json short_runs_json(const tune_summary& r) {
    const tune_carryover& c = r.a.carryover;
    return {{"work", r.o.work}, {"short_runs", short_run_count(r.a)}, {"pairs", c.pairs}, {"ratio", c.ratio},
            {"startup_s", c.startup_s}, {"error", c.error}, {"fit_error", c.fit_error}, {"spread", c.spread},
            {"ranks", c.ranks}};
}

json configurations_json(const tune_summary& r) {
    json list = json::array();
    for (std::size_t i : shown_order(r.a)) {
        const auto& b = r.a.configs[i];
        const auto& c = r.space[i];
        list.push_back({{"m", c.m}, {"p", c.p}, {"nodes", c.nodes}, {"policy", std::string(to_string(c.pol))},
                        {"runs", b.runs}, {"censored", b.censored}, {"failed", b.failed},
                        {"measured_s", b.measured_s > 0 ? json(b.measured_s) : json(nullptr)},
                        {"model_s", b.model_s > 0 ? json(b.model_s) : json(nullptr)},
                        {"time_s", b.time_s}, {"lo_s", b.lo_s}, {"hi_s", b.hi_s}, {"p_beats", b.p_beats}});
        if (r.to.short_work > 0) list.back()["short_runs"] = b.short_runs;
        if (c.share != accelerator_sharing::dedicated) list.back()["sharing"] = std::string(to_string(c.share));
    }
    return list;
}

std::string json_report(const tune_summary& r, const std::string& launch) {
    const tune_assessment& a = r.a;
    const auto or_null = [](bool given, const json& v) { return given ? v : json(nullptr); };
    json rivals = json::array(), params = json::array();
    for (std::size_t i : open_rivals(a)) rivals.push_back(config_text(r.space[i]));
    for (const auto& p : a.params) params.push_back({{"name", p.name}, {"prior", p.prior}, {"value", p.value}});
    json j = {{"schema", "mmgp/1"}, {"kind", "tune"}, {"objective", std::string(to_string(r.to.minimise))},
              {"within", or_null(r.to.minimise != objective::time, r.to.within)}, {"profile", r.s.file},
              {"replay", or_null(!r.o.replay.empty(), r.o.replay)}, {"journal", or_null(!r.journal.empty(), r.journal)},
              {"stop", stop_name(r)}, {"p_beaten", a.p_beaten}, {"runs", a.runs},
              {"parallel", r.parallel}, {"machine_s", a.machine_s}, {"elapsed_s", r.decided_s},
              {"exhaustive_s_estimate", a.exhaustive_s}, {"exhaustive_stopped", a.exhaustive_stopped},
              {"exhaustive_expected", a.exhaustive_expected}, {"exhaustive_projected", a.exhaustive_projected},
              {"cap_s", or_null(a.cap_s > 0, a.cap_s)},
              {"expected_regret", or_null(a.has_chosen, a.expected_regret)},
              {"expected_regret_s", or_null(a.has_chosen, a.expected_regret_s)},
              {"uses", or_null(r.to.uses > 0, r.to.uses)}, {"noise", a.noise}, {"model_error", a.model_error},
              {"model_used", a.model_used}, {"chosen", chosen_json(r)},
              {"chosen_by", std::string(to_string(a.chosen_by))}, {"loo_error", or_null(a.loo_error > 0, a.loo_error)},
              {"measured_noise", or_null(a.measured_noise > 0, a.measured_noise)}, {"open_rivals", rivals},
              {"trace", r.trace}, {"params", params}, {"configurations", configurations_json(r)}};
    if (r.to.short_work > 0) j["short_runs"] = short_runs_json(r);
    if (!launch.empty()) j["command"] = launch;
    return j.dump() + '\n';
}

// Which terms of the estimate of running every configuration once are not medians of measured runs.
std::string exhaustive_terms(const tune_assessment& a) {
    std::string out;
    if (a.exhaustive_stopped > 0)
        out += fmt::format("{} of it for {} stopped configuration{} (at least {} bound{})", human_time(a.exhaustive_stopped_s),
                           a.exhaustive_stopped, a.exhaustive_stopped == 1 ? "" : "s", a.exhaustive_stopped == 1 ? "its" : "their",
                           a.exhaustive_stopped == 1 ? "" : "s");
    const bool screened = short_run_count(a) > 0;
    if (a.exhaustive_projected > 0)
        out += fmt::format("{}{} run short only, at the low end of {} projection{}", out.empty() ? "" : "; ",
                           a.exhaustive_projected, a.exhaustive_projected == 1 ? "its" : "their",
                           a.exhaustive_projected == 1 ? "" : "s");
    if (a.exhaustive_expected > 0)
        out += fmt::format("{}{} not run{}, at {} expected cost", out.empty() ? "" : "; ", a.exhaustive_expected,
                           screened ? " in full" : "", a.exhaustive_expected == 1 ? "its" : "their");
    return out.empty() ? out : " (" + out + ")";
}

// Stopped unsure: what the choice was made by and why, and the configurations not run that may still win.
std::string basis_text(const tune_summary& r) {
    const config_words words(r.space);
    const tune_assessment& a = r.a;
    std::string out;
    if (a.chosen_by == choice_basis::measurements)
        out = a.measured_noise > 0
                  ? fmt::format("chosen by the measurements alone: the model's leave-one-out error ({}) is above the "
                                "run-to-run noise repetitions measured ({})\n", pct(a.loo_error), pct(a.measured_noise))
                  : "chosen by the measurements alone: no configuration was run twice, so nothing measured says the "
                    "model predicts this program within its noise\n";
    else if (a.loo_error > 0)
        out = fmt::format("chosen by the model and the runs: its leave-one-out error ({}) is within the run-to-run "
                          "noise repetitions measured ({})\n", pct(a.loo_error), pct(a.measured_noise));
    const auto rivals = open_rivals(a);
    if (a.loo_error > 0 && !rivals.empty()) {
        out += "not run, may still win:";
        for (std::size_t i : rivals)
            out += fmt::format(" {} (P = {:.2f}){}", words(r.space[i]), a.configs[i].p_beats, i == rivals.back() ? "" : ",");
        out += "\n";
    }
    return out;
}

// The expected regret of the choice, and with --uses the arithmetic of the last decision to run or stop.
std::string regret_text(const tune_summary& r) {
    const config_words words(r.space);
    const tune_assessment& a = r.a;
    if (!a.has_chosen) return {};
    std::string out = fmt::format("expected regret: {:.2f} % ({} a run)\n", 100 * a.expected_regret,
                                  human_time(a.expected_regret_s));
    if (a.stop == tune_stop::not_worth)
        out += fmt::format("uses: one more run of {} would cost about {} and is expected to save {} over {:g} uses\n",
                           words(r.space[a.next]), human_time(a.next_cost_s), human_time(a.next_saving_s),
                           r.to.uses);
    return out;
}

// Why the tune stopped, with the probability that the choice is beaten.
std::string stop_text(const tune_summary& r) {
    const tune_assessment& a = r.a;
    if (a.stop == tune_stop::confident)
        return fmt::format("confident: P(another configuration beats the chosen by more than {:g} %{}) = {:.3f} < {:.3f}",
                           100 * r.o.tolerance, in_objective(r.to.minimise), a.p_beaten, 1 - r.o.confidence);
    return stop_name(r) + fmt::format(" (P(beaten by more than {:g} %) = {:.3f})", 100 * r.o.tolerance, a.p_beaten);
}

// The text's head: what was tuned, why it stopped, what it cost, the choice and its command.
std::string text_head(const tune_summary& r, const std::string& launch) {
    const config_words words(r.space);
    const tune_assessment& a = r.a;
    const bool replay = !r.o.replay.empty();
    std::string out = fmt::format("# mmgp tune: {}, {} configurations{}\n", one_line(r.s.name.empty() ? r.s.file : r.s.name),
                                  r.space.size(), replay ? fmt::format(", replay of {} (seed {})", one_line(r.o.replay), r.o.seed) : "");
    // The mapping in the words of the machine: ranks x threads on a CPU node (time-shared cores), else the papers'.
    out += r.s.plat.cores > 0 ? "# m: processes (MPI ranks) per node, p: threads per process\n"
                              : "# m: processes per node, p: accelerators per process\n";
    out += fmt::format("stopped: {}\n", stop_text(r));
    out += fmt::format("spent: {} runs, {} of machine time; running every configuration once: about {} ({:.0f} %){}\n", a.runs,
                       human_time(a.machine_s), human_time(a.exhaustive_s), a.exhaustive_s > 0 ? 100 * a.machine_s / a.exhaustive_s : 0.0,
                       exhaustive_terms(a));
    out += short_runs_text(r);
    out += basis_text(r);
    out += regret_text(r);
    if (r.parallel > 1)
        out += fmt::format("in flight: up to {} runs at once; decided after {}{}\n", r.parallel, human_time(r.decided_s),
                           replay ? " (the recorded times laid out that way)" : "");
    if (a.has_chosen) {
        const auto& b = a.configs[a.chosen];
        const objective m = r.to.minimise;
        out += fmt::format("chosen: {}: measured {} (median of {} runs), expected {} [{}, {}]{}\n", words(r.space[a.chosen]),
                           human_time(b.measured_s), b.full_runs, human_time(b.time_s), human_time(b.lo_s), human_time(b.hi_s),
                           m == objective::time
                               ? std::string()
                               : fmt::format(", {:.4g} {} expected (objective {}, within {:g} % of the fastest expected time)",
                                             objective_value(m, r.space[a.chosen], b.time_s), to_string(m), to_string(m),
                                             100 * r.to.within));
    } else {
        out += "chosen: none (" + why_none(a) + ")\n";
    }
    if (!launch.empty()) out += "launch: " + launch + "\n";
    std::error_code ec;
    if (r.o.replay.empty() && !r.journal.empty() && std::filesystem::is_directory(r.journal + ".logs", ec))
        out += "each run's output and errors: " + r.journal + ".logs/run-N.log (N: the run's number)\n";
    return out;
}

// The text's table (the configurations run and the 15 fastest expected), then the fit.
std::string text_table(const tune_summary& r) {
    const config_words words(r.space);
    const tune_assessment& a = r.a;
    // The model's own column and the fitted parameters are its terms, not the user's: shown with --verbose.
    const bool verbose = r.o.verbose;
    std::string out = fmt::format("\n{:<30} {:>4} {:>11}{} {:>11} {:>25} {:>9}\n", "configuration", "runs", "measured",
                                  verbose ? fmt::format(" {:>11}", "model") : "", "expected", "90 % interval", "P(beats)");
    std::size_t shown = 0;
    for (std::size_t i : shown_order(a)) {
        const auto& b = a.configs[i];
        if (shown >= 15 && b.runs == 0) continue;
        ++shown;
        std::string runs = std::to_string(b.runs);
        if (b.short_runs) runs += fmt::format(" ({} short)", b.short_runs);
        if (b.censored) runs += fmt::format(" ({} stopped)", b.censored);
        if (b.failed) runs += fmt::format(" ({} failed)", b.failed);
        out += fmt::format("{:<30} {:>4} {:>11}{} {:>11} {:>25} {:>9}{}\n", words(r.space[i]), runs,
                           b.measured_s > 0 ? human_time(b.measured_s) : "-",
                           verbose ? fmt::format(" {:>11}", b.model_s > 0 ? human_time(b.model_s) : "-") : "",
                           human_time(b.time_s), "[" + human_time(b.lo_s) + ", " + human_time(b.hi_s) + "]",
                           b.excluded ? "-" : fmt::format("{:.3f}", b.p_beats), a.has_chosen && i == a.chosen ? "  <- chosen" : "");
    }
    if (shown < r.space.size())
        out += fmt::format("({} configurations not run and not among the 15 fastest expected: not shown)\n", r.space.size() - shown);
    out += fmt::format("\nrun-to-run noise {}, model error {}{}\n", pct(a.noise), pct(a.model_error),
                       a.model_used ? "" : " (the model is not used: runs alone)");
    if (!verbose) return out;
    for (const auto& p : a.params)
    {
        const std::string unit = p.unit.empty() ? "" : " " + p.unit;
        out += fmt::format("fitted {}: {:.4g}{}{}\n", p.name, p.value, unit,
                           r.to.prior ? fmt::format(" (prior {:.4g}{})", p.prior, unit) : "");
    }
    return out;
}

}  // namespace

int print_report(const tune_summary& r) {
    const std::string launch = launch_line(r);
    if (!r.o.plot.empty())
        write_file_atomically(r.o.plot, plot_svg(r.space, r.a, "mmgp tune: " + (r.s.name.empty() ? r.s.file : r.s.name)));
    if (r.o.json) std::cout << json_report(r, launch) << std::flush;
    else std::cout << text_head(r, launch) + text_table(r) << std::flush;
    if (r.a.has_chosen) return 0;
    // A decision that decided nothing is not a success.
    std::cerr << "mmgp: tune: nothing chosen: " << why_none(r.a) << " (" << stop_name(r) << ")"
              << (r.journal.empty() ? std::string() : "; the runs are kept in " + r.journal) << '\n';
    return 1;
}

}  // namespace mmgp::cli
