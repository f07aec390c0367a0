// The Slurm batch backend of mmgp tune (--launcher srun --parallel K outside an allocation): each run is its own
// batch job (sbatch --wait) whose script times the step itself and applies the bound with timeout(1), so that the
// time in the queue is not the program's. The jobs' files (script, id, output, start stamp, result) live in a
// directory beside the journal. Called by the loop (tune_loop.cpp) through tune_backend; runs sbatch through
// process_backend (tune_runs.hpp) and asks Slurm (sinfo, scontrol, scancel) the rest.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <unistd.h>

#include <fmt/format.h>

#include "process.hpp"
#include "mmgp/io.hpp"
#include "tune_backend.hpp"
#include "tune_runs.hpp"

namespace mmgp::run {

namespace {

/// What the partitions offer (sinfo): the CPUs of the largest node and the nodes in all. A run no node could
/// hold is recorded as failed without a job (Slurm would keep it pending for ever).
struct partitions {
    long long cpus = 0, nodes = 0;
};

partitions query_partitions() {
    partitions found;
    std::string said;             // what sinfo said that is not a node line (its error)
    std::set<std::string> names;  // a node is listed once per partition it is in
    char name[256];
    for (const std::string& line : command_lines("sinfo -h -N -e -o '%N %c' 2>&1")) {
        long long c = 0;
        if (std::sscanf(line.c_str(), "%255s %lld", name, &c) == 2 && c > 0) {
            found.cpus = std::max(found.cpus, c);
            names.insert(name);
        } else if (said.empty()) {
            said = line;
        }
    }
    found.nodes = static_cast<long long>(names.size());
    while (!said.empty() && said.back() == ' ') said.pop_back();
    if (found.cpus == 0)
        throw mmgp::error("--parallel: expected a Slurm allocation (salloc/sbatch) or a Slurm cluster to submit batch "
                          "jobs to (sinfo), found neither" + (said.empty() ? std::string() : " (sinfo: " + said + ")"));
    return found;
}

std::string read_text_file_or_empty(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The files of a run's batch job (its script, id, output, start stamp and result).
void remove_job_files(const std::string& base) {
    if (base.empty()) return;
    std::error_code ec;
    for (const char* ext : {".sh", ".id", ".out", ".started", ".result", ".result.tmp"})
        std::filesystem::remove(base + ext, ec);
}

// The job's id as sbatch --parsable printed it ("id" or "id;cluster"); empty before it has.
std::string batch_job_id(const std::string& base) {
    std::string id = read_text_file_or_empty(base + ".id");
    id = id.substr(0, id.find_first_of(";\n"));
    return id.find_first_not_of("0123456789") == std::string::npos ? id : std::string();
}

// The job's state once Slurm has finished with it (COMPLETING first, for a few seconds at most).
std::string final_job_state(const std::string& id) {
    std::string state;
    for (int tries = 0; !id.empty() && tries < 100; ++tries) {
        state.clear();
        for (const std::string& line : command_lines("scontrol show job -o " + id + " 2>/dev/null")) state += line + " ";
        const std::size_t at = state.find("JobState=");
        state = at == std::string::npos ? std::string() : state.substr(at + 9, state.find(' ', at) - at - 9);
        if (state != "COMPLETING") break;
        usleep(100000);
    }
    return state;
}

// The job's script: the step's times and status written by the job itself, the bound applied by timeout(1).
std::string job_script(int number, const std::string& base, double bound_s, const std::string& step) {
    std::string sh = "#!/bin/sh\n# mmgp tune: run " + std::to_string(number) + "\ns=$(date +%s.%N)\necho $s > " +
                     shell_quote(base + ".started") + "\n";
    if (bound_s > 0) sh += fmt::format("timeout -s TERM -k 2 {:.3f} ", bound_s);
    sh += step;
    sh += "rc=$?\ne=$(date +%s.%N)\necho \"$s $e $rc\" > " + shell_quote(base + ".result.tmp") + " && mv " +
          shell_quote(base + ".result.tmp") + " " + shell_quote(base + ".result") + "\nexit $rc\n";
    return sh;
}

class slurm_batch_runs final : public process_backend {
public:
    slurm_batch_runs(launch_setup setup, partitions offered)
        : setup_(std::move(setup)), offered_(offered),
          node_cpus_(setup_.cores_per_node ? *setup_.cores_per_node : offered.cpus) {}

    // The job files go to JOURNAL.jobs/.
    void attach_journal(const std::string& journal_path) override {
        dir_ = journal_path + ".jobs";
        std::error_code ec;
        std::filesystem::create_directories(dir_, ec);
        if (ec) throw input_error(dir_, "(directory)", "a directory for the runs' batch job scripts", ec.message());
        dir_ = std::filesystem::absolute(dir_).string();
    }

    run_start start(const run_request& request, nlohmann::json& journal_line) override {
        const configuration& c = request.config;
        if (c.nodes > offered_.nodes ||
            (!setup_.oversubscribe && static_cast<long long>(c.m) * c.p > offered_.cpus)) {
            journal_line["command"] = fmt::format("(none: no node of the partitions holds it, {} nodes of at most {} "
                                                  "CPUs)",
                                                  offered_.nodes, offered_.cpus);
            return {start_verdict::refused, 0};
        }
        // The step knows the node's CPUs: past them (--oversubscribe), each task asks its share, as mmgp launch's.
        const launch_plan step_plan = setup_.plan(c, request.short_run, static_cast<int>(node_cpus_));
        const std::string step = shell_command(step_plan);
        const std::string base = fmt::format("{}/run-{}.{}", dir_, request.number, getpid());
        remove_job_files(base);
        write_file_atomically(base + ".sh", job_script(request.number, base, request.bound_s, step));
        const std::vector<std::string> argv = sbatch_argv(c, base, step_plan.argv);
        launch_plan job;
        job.kind = launcher_kind::srun;
        job.argv = argv;
        std::string line = shell_command(job);
        line.pop_back();  // its newline: the step's line follows as a comment
        journal_line["command"] = line + "  # " + step;
        journal_line["load1"] = load1();
        const int id = launch({{argv, {}}}, 0, base + ".id", base + ".result");
        jobs_[id] = {base, request.bound_s};
        return {start_verdict::started, id};
    }

    void release(int id) override {
        const auto it = jobs_.find(id);
        if (it == jobs_.end()) return;
        remove_job_files(it->second.base);
        jobs_.erase(it);
    }

    bool tighten_bound(int, double) override { return false; }  // a batch job's bound is in its script

    void close() override {
        process_backend::close();
        for (const auto& [id, job] : jobs_) remove_job_files(job.base);
        std::error_code ec;
        if (!dir_.empty()) std::filesystem::remove(dir_, ec);  // left in place when not empty
    }

protected:
    // Since its script started (0 while it queued).
    double spent_s(int id) const override {
        double started = 0;
        const std::string st = read_text_file_or_empty(jobs_.at(id).base + ".started");
        if (std::sscanf(st.c_str(), "%lf", &started) != 1) return 0.0;
        return std::max(0.0, std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count() -
                                 started);
    }

    void cancel_outside(int id) override {
        if (std::string job = batch_job_id(jobs_.at(id).base); !job.empty())
            (void)run::quietly("scancel " + job);
    }

    void read_end(run_end& end) override;

private:
    struct job_files {
        std::string base;  // the files of its job: .sh, .id, .out, .started, .result
        double bound_s = 0;
    };

    // sbatch prints the job id and then waits; through stdbuf, unbuffered, the id reaches its file at once (mmgp
    // cancels the job by it). The job asks what its step asks (an srun step's --cpus-per-task and --overcommit:
    // p CPUs a task, or a share of the node's where m·p exceeds them), so that the step fits its job.
    std::vector<std::string> sbatch_argv(const configuration& c, const std::string& base,
                                         const std::vector<std::string>& step) const {
        std::string cpt = "--cpus-per-task=" + std::to_string(c.p);
        bool overcommit = false;
        for (const std::string& w : step) {  // srun's words, up to its --export (the command follows)
            if (w.rfind("--export=", 0) == 0) break;
            if (w.rfind("--cpus-per-task=", 0) == 0) cpt = w;
            overcommit = overcommit || w == "--overcommit";
        }
        std::vector<std::string> argv = {"stdbuf", "-o0", "sbatch", "--wait", "--parsable", "-J", "mmgp-tune", "-N",
                                         std::to_string(c.nodes), "--ntasks-per-node=" + std::to_string(c.m),
                                         cpt, "-o", base + ".out"};
        if (overcommit) argv.push_back("--overcommit");
        if (static_cast<long long>(c.m) * c.p >= node_cpus_) argv.push_back("--exclusive");  // shared with no run
        argv.push_back(base + ".sh");
        return argv;
    }

    launch_setup setup_;
    partitions offered_;
    long long node_cpus_;  // CPUs of one node: a run that needs them all takes its node whole
    std::string dir_;
    std::map<int, job_files> jobs_;
};

// The job's own account: start, end and the exit status of its step. Without one, the job never ran its step:
// cancelled (scancel, a limit) or failed (refused, node failure).
void slurm_batch_runs::read_end(run_end& end) {
    const job_files& job = jobs_.at(end.id);
    double js = 0, je = 0;
    int rc = -1;
    const std::string res = read_text_file_or_empty(job.base + ".result");
    if (std::sscanf(res.c_str(), "%lf %lf %d", &js, &je, &rc) == 3 && je >= js) {
        const double b = job.bound_s;
        end.exit_status = rc;
        // timeout(1): 124 when the step ended on SIGTERM, 137 when it needed the SIGKILL; a program that exits
        // 124 by itself before the bound is a failure.
        const bool at_bound = b > 0 && (rc == 124 || rc == 137) && je - js >= b - 0.05;
        end.outcome = at_bound ? run_outcome::censored : rc != 0 ? run_outcome::failed : run_outcome::ok;
        end.wall_s = at_bound ? b : je - js;
        return;
    }
    const std::string state = final_job_state(batch_job_id(job.base));
    end.journal_fields["job_state"] = state;
    end.outcome = state == "CANCELLED" ? run_outcome::cancelled : run_outcome::failed;
    if (end.exit_status == 0) end.exit_status = 1;
}

}  // namespace

std::unique_ptr<tune_backend> slurm_batch_backend(launch_setup setup) {
    return std::make_unique<slurm_batch_runs>(std::move(setup), query_partitions());
}

}  // namespace mmgp::run
