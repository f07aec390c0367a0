// The replay backend of mmgp tune (--replay RUNS.csv): nothing runs; each run's time is drawn from the recorded
// repetitions of its configuration, and the runs in flight are laid out on a simulated clock, --parallel at a time.
// Called by the loop (tune_loop.cpp) through tune_backend; reads the runs file (libmmgp's read_runs).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "mmgp/fit.hpp"
#include "mmgp/io.hpp"
#include "tune_backend.hpp"
#include "mmgp/words.hpp"

namespace mmgp::run {

namespace {

// The work values of the rows: none (no column), one (full runs) or two (short and full). With --work, its two.
void read_work_values(recorded_runs& d, const std::vector<measurement>& measured,
                      std::optional<std::pair<std::int64_t, std::int64_t>> work_wanted) {
    std::set<std::int64_t> works;
    for (const auto& m : measured) works.insert(m.work);
    if (works.size() > 2 || (works.size() == 2 && works.count(0)))
        throw input_error(d.file, "column work", "one work value (full runs) or two (short and full runs) in every row",
                          std::to_string(works.size()) + " different values");
    if (work_wanted) {
        const std::set<std::int64_t> want{work_wanted->first, work_wanted->second};
        if (works != want)
            throw input_error(d.file, "column work",
                              fmt::format("the work values of --work {}:{}", work_wanted->first, work_wanted->second),
                              works.count(0) ? std::string("no work column")
                                             : fmt::format("{}", fmt::join(works, " and ")));
    }
    d.work_full = *works.rbegin();
    d.work_short = works.size() == 2 ? *works.begin() : 0;
}

// "t:count;t:count;...": seconds since the run started and the count reached, both growing (empty: none).
std::vector<progress_point> parse_timeline(const std::string& text, const std::string& file, const std::string& where) {
    std::vector<progress_point> out;
    std::size_t from = 0;
    while (from < text.size()) {
        const std::size_t end = std::min(text.find(';', from), text.size());
        const std::string item = text.substr(from, end - from);
        const std::size_t colon = item.find(':');
        char *e1 = nullptr, *e2 = nullptr;
        const std::string t = colon == std::string::npos ? item : item.substr(0, colon);
        const std::string c = colon == std::string::npos ? std::string() : item.substr(colon + 1);
        const double ts = std::strtod(t.c_str(), &e1), count = std::strtod(c.c_str(), &e2);
        if (colon == std::string::npos || t.empty() || c.empty() || e1 != t.c_str() + t.size() ||
            e2 != c.c_str() + c.size() || !std::isfinite(ts) || !std::isfinite(count) || ts < 0 ||
            (!out.empty() && (ts < out.back().t_s || count <= out.back().count)))
            throw input_error(file, where + ", column progress",
                              "a timeline t:count;t:count;... (seconds from the run's start and the count its output "
                              "reached, both growing)",
                              "\"" + utf8_prefix(item, 40) + "\"");
        out.push_back({ts, count});
        from = end + 1;
    }
    return out;
}

// The progress column of each data row, by its row number ("row N", as read_runs names rows).
std::map<std::string, std::vector<progress_point>> progress_column(const std::string& path) {
    std::string text;
    {
        std::ifstream in(path, std::ios::binary);
        text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    std::string lf;
    for (std::size_t i = 0; i < text.size(); ++i)
        if (text[i] != '\r') lf += text[i];
        else if (i + 1 >= text.size() || text[i + 1] != '\n') lf += '\n';
    std::istringstream in(lf);
    std::string line;
    int row = 0, col = -1;
    std::map<std::string, std::vector<progress_point>> out;
    while (std::getline(in, line)) {
        ++row;
        std::size_t a = line.find_first_not_of(" \t"), b = line.find_last_not_of(" \t");
        if (a == std::string::npos || line[a] == '#') continue;
        std::vector<std::string> f;
        std::stringstream ss(line.substr(a, b - a + 1));
        for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
        if (!line.empty() && line.back() == ',') f.emplace_back();
        if (col < 0) {
            for (std::size_t i = 0; i < f.size(); ++i)
                if (f[i] == "progress") col = static_cast<int>(i);
            if (col < 0) return out;
            continue;
        }
        const std::string where = "row " + std::to_string(row);
        if (static_cast<std::size_t>(col) < f.size()) out[where] = parse_timeline(f[static_cast<std::size_t>(col)], path, where);
    }
    return out;
}

// The rows of the tune's sharing mode `want.sharing`: the rule of fit and validate (assign_sharing_mode) first, then
// a row stating another of the platform's modes is left out; none left is refused.
void keep_sharing_mode(std::vector<measurement>& measured, const replay_request& want, const std::string& path) {
    if (measured.empty()) throw input_error(path, "(document)", "runs, a row each, below the header", "none");
    const auto& modes = want.platform_modes;
    for (measurement& m : measured)
        if (!assign_sharing_mode(m, modes))
            throw input_error(path, (m.runs.empty() ? std::string("row ?") : m.runs.front().where) + ", column sharing",
                              sharing_modes_expected(modes, want.platform_name), std::string(to_string(m.c.share)));
    std::set<std::string> others;
    std::erase_if(measured, [&](const measurement& m) {
        const bool other = m.c.share != want.sharing;
        if (other) others.insert(std::string(to_string(m.c.share)));
        return other;
    });
    if (measured.empty())
        throw input_error(path, "column sharing",
                          fmt::format("rows of the tune's sharing mode {} (--set 'search.sharing=[\"...\"]' tunes "
                                      "another; rows without the column are the platform's first mode, {})",
                                      to_string(want.sharing), to_string(modes.front())),
                          fmt::format("rows of {} only", fmt::join(others, " and ")));
}

// With --work, every configuration was recorded at both work values: a replayed tune asks a configuration for a
// short run before a full one, and one never recorded short could only be refused at every ask.
void check_both_works(const recorded_runs& d, const std::map<std::string, configuration>& configs) {
    for (const auto& [k, c] : configs) {
        const bool full = d.reps.count(k) > 0, shorts = d.short_reps.count(k) > 0;
        if (full && shorts) continue;
        throw input_error(d.file, "column work",
                          fmt::format("rows at both work values {} and {} for every configuration (--work)",
                                      d.work_short, d.work_full),
                          fmt::format("{} with none at {}", label(c), full ? d.work_short : d.work_full));
    }
}

}  // namespace

recorded_runs read_recorded_runs(const std::string& path, const replay_request& want) {
    const std::optional<std::int64_t>& units_wanted = want.units;
    const auto& work_wanted = want.work;
    const bool with_progress = want.with_progress;
    recorded_runs d;
    d.file = path;
    std::vector<measurement> measured = read_runs(path, &d.ignored_columns);
    keep_sharing_mode(measured, want, path);
    std::set<std::int64_t> units;
    for (const auto& m : measured) units.insert(m.units);
    if (units_wanted) {
        std::erase_if(measured, [&](const measurement& m) { return m.units != *units_wanted; });
        if (measured.empty())
            throw input_error(path, "column units", "rows with units = " + std::to_string(*units_wanted) + " (--units)",
                              "none");
        d.units = *units_wanted;
    } else if (units.size() > 1) {
        throw input_error(path, "column units", "one units value (rows of one program input; --units picks one)",
                          std::to_string(units.size()) + " different values");
    } else {
        d.units = *units.begin();
    }
    read_work_values(d, measured, work_wanted);
    std::map<std::string, std::vector<progress_point>> timelines;
    if (with_progress) {
        if (std::find(d.ignored_columns.begin(), d.ignored_columns.end(), "progress") == d.ignored_columns.end())
            throw input_error(path, "(header)", "a progress column (each run's timeline, with --progress-total)",
                              "no progress column");
        std::erase(d.ignored_columns, std::string("progress"));
        timelines = progress_column(path);
    }
    std::map<std::string, configuration> configs;  // each key's configuration, for the check below
    for (const auto& [m, r] : runs_in_order(measured)) {
        const std::string k = key_of(m->c);
        configs.emplace(k, m->c);
        // A censored row's time is the bound it was stopped at (bound_s when given).
        const double time_s = r->is_censored() && r->bound_s > 0 ? r->bound_s : r->time_s;
        if (d.work_short > 0 && m->work == d.work_short) {  // without --work, the short rows are not drawn
            if (work_wanted) d.short_reps[k].push_back({time_s, r->is_censored(), {}});
            continue;
        }
        auto& v = d.reps[k];
        if (v.empty()) d.space.push_back(m->c);
        v.push_back({time_s, r->is_censored(), timelines[r->where]});
    }
    if (work_wanted) check_both_works(d, configs);
    return d;
}

namespace {

std::uint64_t splitmix(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

class replay_runs final : public tune_backend {
public:
    replay_runs(recorded_runs runs, unsigned long long seed, bool slowest_first, progress_settings progress)
        : runs_(std::move(runs)), seed_(seed), slowest_first_(slowest_first), progress_(std::move(progress)) {}

    void recorded(const configuration& c, bool short_run) override {
        started_.insert(key_of(c) + (short_run ? "/short" : ""));
    }
    void begin() override {}
    double now() const override { return clock_s_; }

    run_start start(const run_request& request, nlohmann::json& journal_line) override {
        const std::string k = key_of(request.config);
        const auto found = request.short_run ? runs_.short_reps.find(k) : runs_.reps.end();
        if (request.short_run && found == runs_.short_reps.end()) return {start_verdict::refused, 0};  // none recorded
        const auto& reps = request.short_run ? found->second : runs_.reps.at(k);
        const std::uint64_t draw = splitmix(seed_ * 0x100000001B3ULL + static_cast<std::uint64_t>(request.number));
        const bool first = started_.insert(k + (request.short_run ? "/short" : "")).second;
        const recorded_run& r =
            slowest_first_ && first
                ? *std::max_element(reps.begin(), reps.end(), [](const recorded_run& x, const recorded_run& y) {
                      return x.time_s < y.time_s;
                  })
                : reps[draw % reps.size()];
        journal_line["command"] = "replay " + runs_.file;
        flight f;
        f.id = next_id_++;
        f.start_s = clock_s_;
        if (request.bound_s > 0 && r.time_s > request.bound_s) f.outcome = run_outcome::censored, f.wall_s = request.bound_s;
        else if (r.censored) f.outcome = run_outcome::censored, f.wall_s = r.time_s;
        else f.outcome = run_outcome::ok, f.wall_s = r.time_s;
        if (progress_.total > 0 && !request.short_run) stop_by_progress(r, request, f, journal_line);
        f.end_s = f.start_s + f.wall_s;
        flights_.push_back(f);
        return {start_verdict::started, f.id};
    }

    // The run that ends first (the first started of those that end together); once stopped, the first started.
    std::optional<run_end> wait_any() override {
        std::size_t i = 0;
        if (!stopped_)
            for (std::size_t j = 1; j < flights_.size(); ++j)
                if (flights_[j].end_s < flights_[i].end_s) i = j;
        const flight f = flights_.at(i);
        flights_.erase(flights_.begin() + static_cast<std::ptrdiff_t>(i));
        if (stopped_) return run_end{f.id, run_outcome::cancelled, clock_s_ - f.start_s, 0};
        clock_s_ = f.end_s;
        return run_end{f.id, f.outcome, f.wall_s};
    }

    bool tighten_bound(int id, double bound_s) override {
        for (flight& f : flights_)
            if (f.id == id && f.end_s > f.start_s + bound_s) {
                f.end_s = std::max(clock_s_, f.start_s + bound_s);
                f.outcome = run_outcome::censored;
                f.wall_s = f.end_s - f.start_s;
            }
        return true;
    }

    void stop_all() override { stopped_ = true; }

private:
    struct flight {
        int id = 0;
        double start_s = 0, end_s = 0, wall_s = 0;  // known when it starts
        run_outcome outcome = run_outcome::ok;
    };

    // The recorded timeline read as a live run's log would be, look by look (every progress_look_s) until the run
    // would end: the lines written since the last look are one point, the count they reached at the look's time
    // (a burst of lines is one point, as live); the first look at which the projection is clearly past the bound
    // stops the run there (censored at its bound, its machine time the time it had run: past_bound_s).
    void stop_by_progress(const recorded_run& r, const run_request& request, flight& f, nlohmann::json& line) const {
        std::vector<progress_point> seen;
        double reached = -HUGE_VAL;
        for (std::size_t i = 0; i < r.progress.size(); ++i) {
            const double look = std::ceil(r.progress[i].t_s / progress_look_s) * progress_look_s;
            if (look >= f.wall_s) break;
            reached = std::max(reached, r.progress[i].count);
            if (i + 1 < r.progress.size() && r.progress[i + 1].t_s <= look) continue;  // read at the same look
            if (!seen.empty() && !(reached > seen.back().count)) continue;
            seen.push_back({look, reached});
            const progress_projection proj = project_progress(seen, progress_.total);
            if (!progress_past_bound(proj, progress_bound(request), request.noise_sd)) continue;
            f.outcome = run_outcome::censored;
            f.wall_s = look;
            mark_progress_stop(line, progress_low_end(proj, request.noise_sd), progress_bound(request), request.bound_s);
            line["projected_s"] = proj.total_s;
            line["projected_sd_s"] = proj.sd_s;
            return;
        }
    }
    recorded_runs runs_;
    unsigned long long seed_;
    bool slowest_first_;
    progress_settings progress_;
    std::set<std::string> started_;  // configurations drawn at least once (the journal's included, on resume)
    std::vector<flight> flights_;  // in the order started
    double clock_s_ = 0;
    int next_id_ = 1;
    bool stopped_ = false;
};

}  // namespace

std::unique_ptr<tune_backend> replay_backend(recorded_runs runs, unsigned long long seed, bool slowest_first,
                                             progress_settings progress) {
    return std::make_unique<replay_runs>(std::move(runs), seed, slowest_first, std::move(progress));
}

}  // namespace mmgp::run
