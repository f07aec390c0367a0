// The local backend of mmgp tune: each run is the launcher's command (mpirun, mpiexec, srun) or, with the local
// launcher, the processes mmgp starts itself; one run at a time. Called by the loop (tune_loop.cpp) through
// tune_backend; runs processes through process_backend (tune_runs.hpp). With --progress-regex, a full run's log is
// read as it grows, and the run stopped once its projected time is clearly past its bound (mmgp::project_progress).
// srun's runs with --oversubscribe inside an allocation are told its CPUs (slurm_env.hpp).
#include <cmath>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
// libstdc++ 12's <regex> trips -Wmaybe-uninitialized inside its own automaton when built at -O1 with the
// sanitizers (CI's -Werror build): a false positive in the library, silenced for that header alone.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <regex>
#pragma GCC diagnostic pop
#include <string>

#include "slurm_env.hpp"
#include "tune_backend.hpp"
#include "tune_runs.hpp"

namespace mmgp::run {

namespace {

// One run's progress: the lines its log gains, the counts REGEX captures from them (kept when they grow), the
// projection, and whether it is clearly past the run's bound.
class progress_watch {
public:
    progress_watch(std::string log, const progress_settings& settings, const run_request& request)
        : log_(std::move(log)), rx_(settings.regex), total_(settings.total), run_bound_(request.bound_s),
          bound_(progress_bound(request)), noise_(request.noise_sd) {}

    bool operator()(double age_s) {
        read_new_lines(age_s);
        projection_ = project_progress(points_, total_);
        past_ = past_ || progress_past_bound(projection_, bound_, noise_);
        return past_;
    }
    // The run's bound tightened in flight: its progress is judged against no later a bound.
    void set_bound(double bound_s) {
        run_bound_ = bound_s;
        if (tighter_bound(bound_s, bound_)) bound_ = bound_s;
    }
    // What the run's journal line keeps: its timeline and, stopped, the projection that stopped it.
    void add_fields(nlohmann::json& line) const {
        nlohmann::json timeline = nlohmann::json::array();
        for (const auto& p : points_) timeline.push_back({p.t_s, p.count});
        line["progress"] = timeline;
        if (!past_) return;
        mark_progress_stop(line, progress_low_end(projection_, noise_), bound_, run_bound_);
        line["projected_s"] = projection_.total_s;
        line["projected_sd_s"] = projection_.sd_s;
    }

private:
    void read_new_lines(double age_s) {
        std::ifstream in(log_, std::ios::binary);
        if (!in) return;
        in.seekg(static_cast<std::streamoff>(offset_));
        std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        offset_ += chunk.size();
        partial_ += chunk;
        std::size_t from = 0;
        double reached = points_.empty() ? -HUGE_VAL : points_.back().count;
        for (std::size_t at = partial_.find_first_of("\r\n"); at != std::string::npos;
             at = partial_.find_first_of("\r\n", from)) {
            reached = std::max(reached, count_of(partial_.substr(from, at - from)));
            from = at + 1;
        }
        partial_.erase(0, from);
        // The lines read now were written since the last look: one point, the count they reached, at this age.
        if (points_.empty() ? reached > -HUGE_VAL : reached > points_.back().count) points_.push_back({age_s, reached});
        if (points_.size() > max_points) thin();
    }
    // The count a line's match captures (-infinity: none).
    double count_of(const std::string& line) const {
        std::smatch m;
        if (!std::regex_search(line, m, rx_) || m.size() < 2) return -HUGE_VAL;
        char* end = nullptr;
        const std::string text = m[1].str();
        const double count = std::strtod(text.c_str(), &end);
        return end == text.c_str() || !std::isfinite(count) ? -HUGE_VAL : count;
    }

    // A program that prints its progress very often: every other point dropped (the first kept), so that the
    // journal line stays small and the fit cheap.
    static constexpr std::size_t max_points = 2000;
    void thin() {
        std::vector<progress_point> kept;
        for (std::size_t i = 0; i < points_.size(); ++i)
            if (i == 0 || i % 2 == 1 || i + 1 == points_.size()) kept.push_back(points_[i]);
        points_ = std::move(kept);
    }

    std::string log_;
    std::regex rx_;
    double total_, run_bound_, bound_, noise_;  // run_bound_: the run's own; bound_: what its progress is judged against
    std::size_t offset_ = 0;
    std::string partial_;
    std::vector<progress_point> points_;
    progress_projection projection_;
    bool past_ = false;
};

class local_runs final : public process_backend {
public:
    explicit local_runs(launch_setup setup) : setup_(std::move(setup)), node_cpus_(tune_srun_node_cpus(setup_.kind == launcher_kind::srun, setup_.oversubscribe)) {}

    run_start start(const run_request& request, nlohmann::json& journal_line) override {
        const launch_plan plan = setup_.plan(request.config, request.short_run, node_cpus_);
        journal_line["command"] = journal_command(shell_command(plan));
        std::vector<run_process> procs;
        if (plan.kind == launcher_kind::local)
            for (const auto& lp : plan.processes) procs.push_back({lp.argv, lp.env});
        else
            procs.push_back({plan.argv, {}});
        journal_line["load1"] = load1();
        std::string log;
        if (!logs_.empty()) {
            log = logs_ + "/run-" + std::to_string(request.number) + ".log";
            journal_line["log"] = log;
        }
        std::shared_ptr<progress_watch> watch;
        if (!setup_.progress.regex.empty() && !log.empty() && !request.short_run)
            watch = std::make_shared<progress_watch>(log, setup_.progress, request);
        const int id = launch(procs, request.bound_s, {}, {}, log,
                              watch ? run_watch([watch](double age) { return (*watch)(age); }) : run_watch());
        if (watch) watches_[id] = watch;
        return {start_verdict::started, id};
    }

    // The program's output and errors go to one log per run beside the journal (JOURNAL.logs/run-N.log), not
    // into mmgp's progress lines. Without a journal, or when the folder cannot be made: stderr as before.
    void attach_journal(const std::string& journal_path) override {
        std::error_code ec;
        const std::string dir = journal_path + ".logs";
        std::filesystem::create_directories(dir, ec);
        logs_ = ec || journal_path.empty() ? std::string() : dir;
    }

    bool tighten_bound(int id, double bound_s) override {
        if (const auto it = watches_.find(id); it != watches_.end()) it->second->set_bound(bound_s);
        return process_backend::tighten_bound(id, bound_s);
    }

    void release(int id) override { watches_.erase(id); }

protected:
    void read_end(run_end& end) override {
        if (const auto it = watches_.find(end.id); it != watches_.end()) it->second->add_fields(end.journal_fields);
    }

private:
    launch_setup setup_;
    std::optional<int> node_cpus_;  // a node's CPUs as the allocation says them (tune_srun_node_cpus), or none
    std::string logs_;
    std::map<int, std::shared_ptr<progress_watch>> watches_;  // the runs in flight watched for their progress
};

}  // namespace

std::unique_ptr<tune_backend> local_backend(launch_setup setup) { return std::make_unique<local_runs>(std::move(setup)); }

}  // namespace mmgp::run
